"""The completed real participants per cell of a study, counted by the database itself
(:class:`.models.CellPlaceCount`), so that an arrival reads one row per cell instead of counting
the study's participants (issue 39).

Triggers on ``participation_participant`` keep the counts on every write path, in each
database's own dialect (SQLite's inline triggers, a PL/pgSQL function on PostgreSQL). SQLite
drops a table's triggers when a later migration rebuilds the table (Django's ``_remake_table``
for many ``ALTER`` operations), so :func:`triggers_ensure` runs after every ``migrate``
(``apps.py``, ``post_migrate``): it re-creates missing triggers and counts again from the rows.
"""
from __future__ import annotations

SQLITE = [
    """
    CREATE TRIGGER participation_places_insert AFTER INSERT ON participation_participant
    WHEN NEW.status = 'completed' AND NOT NEW.is_pilot
    BEGIN
        INSERT INTO participation_cellplacecount (study_id, cell_index, completed)
        VALUES (NEW.study_id, NEW.cell_index, 1)
        ON CONFLICT (study_id, cell_index) DO UPDATE SET completed = completed + 1;
    END
    """,
    """
    CREATE TRIGGER participation_places_delete AFTER DELETE ON participation_participant
    WHEN OLD.status = 'completed' AND NOT OLD.is_pilot
    BEGIN
        UPDATE participation_cellplacecount SET completed = completed - 1
        WHERE study_id = OLD.study_id AND cell_index = OLD.cell_index;
    END
    """,
    """
    CREATE TRIGGER participation_places_update
    AFTER UPDATE OF status, is_pilot, cell_index, study_id ON participation_participant
    WHEN (OLD.status = 'completed' AND NOT OLD.is_pilot) OR (NEW.status = 'completed' AND NOT NEW.is_pilot)
    BEGIN
        UPDATE participation_cellplacecount SET completed = completed - 1
        WHERE OLD.status = 'completed' AND NOT OLD.is_pilot
          AND study_id = OLD.study_id AND cell_index = OLD.cell_index;
        INSERT INTO participation_cellplacecount (study_id, cell_index, completed)
        SELECT NEW.study_id, NEW.cell_index, 1 WHERE NEW.status = 'completed' AND NOT NEW.is_pilot
        ON CONFLICT (study_id, cell_index) DO UPDATE SET completed = completed + 1;
    END
    """,
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS participation_places_insert",
    "DROP TRIGGER IF EXISTS participation_places_delete",
    "DROP TRIGGER IF EXISTS participation_places_update",
]
POSTGRES = [
    """
    CREATE FUNCTION participation_places_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status = 'completed' AND NOT OLD.is_pilot THEN
            UPDATE participation_cellplacecount SET completed = completed - 1
            WHERE study_id = OLD.study_id AND cell_index = OLD.cell_index;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.status = 'completed' AND NOT NEW.is_pilot THEN
            INSERT INTO participation_cellplacecount (study_id, cell_index, completed)
            VALUES (NEW.study_id, NEW.cell_index, 1)
            ON CONFLICT (study_id, cell_index)
            DO UPDATE SET completed = participation_cellplacecount.completed + 1;
        END IF;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER participation_places_count
    AFTER INSERT OR DELETE OR UPDATE OF status, is_pilot, cell_index, study_id
    ON participation_participant FOR EACH ROW EXECUTE FUNCTION participation_places_count()
    """,
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS participation_places_count ON participation_participant",
    "DROP FUNCTION IF EXISTS participation_places_count()",
]
BACKFILL = """
    INSERT INTO participation_cellplacecount (study_id, cell_index, completed)
    SELECT study_id, cell_index, COUNT(*) FROM participation_participant
    WHERE status = 'completed' AND NOT is_pilot GROUP BY study_id, cell_index
"""

#: The trigger names each database must have.
_NAMES = {
    "sqlite": ("participation_places_insert", "participation_places_delete", "participation_places_update"),
    "postgresql": ("participation_places_count",),
}


def _present(connection) -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE 'participation_places_%%'")
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'participation_places_%'")
        return {row[0] for row in cursor.fetchall()}


def triggers_ensure(connection, *, force: bool = False) -> bool:
    """Create the triggers where any is missing (or ``force``), then count every study's
    completed real participants per cell again from the rows. Returns whether it did.

    Raises nothing for another database vendor: it has no triggers and the arrival counts
    from the rows (:func:`.selectors.cell_counts` checks :func:`kept`).
    """
    if connection.vendor not in _NAMES:
        return False
    if not force and set(_NAMES[connection.vendor]) <= _present(connection):
        return False
    drop, create = (POSTGRES_DROP, POSTGRES) if connection.vendor == "postgresql" else (SQLITE_DROP, SQLITE)
    with connection.cursor() as cursor:
        for sql in [*drop, *create, "DELETE FROM participation_cellplacecount", BACKFILL]:
            cursor.execute(sql)
    return True


def triggers_drop(connection) -> None:
    """Remove the triggers (the migration's reverse)."""
    if connection.vendor not in _NAMES:
        return
    with connection.cursor() as cursor:
        for sql in POSTGRES_DROP if connection.vendor == "postgresql" else SQLITE_DROP:
            cursor.execute(sql)


def kept(connection) -> bool:
    """Whether this database keeps the counts (SQLite and PostgreSQL do)."""
    return connection.vendor in _NAMES
