"""Whole-database views for tests: every row of every table as text."""
from __future__ import annotations

from contextlib import contextmanager

from django.db import connection, transaction

#: Tables that change on any request and hold no study data (sessions, login-attempt logs).
VOLATILE_PREFIXES = ("django_session", "axes_")


def database_text(*, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Every row of every table as ``(table, text of the row)``, tables in name order.

    ``skip`` lists table-name prefixes to leave out.
    """
    rows = []
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.table_names(cursor)):
            if table.startswith(skip):
                continue
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            for row in sorted(map(repr, cursor.fetchall())):
                rows.append((table, row))
    return rows


def tables_holding(needle: str) -> set[str]:
    """The tables with a row whose text contains ``needle``."""
    return {table for table, text in database_text() if needle in text}


def stored_data() -> list[tuple[str, str]]:
    """:func:`database_text` without the :data:`VOLATILE_PREFIXES` tables."""
    return database_text(skip=VOLATILE_PREFIXES)


@contextmanager
def rolled_back():
    """Run the block in a transaction that is always rolled back (one fuzz example each)."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)
