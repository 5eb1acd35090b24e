"""Correctness after a load run, read from the database itself (PostgreSQL or SQLite).

Straight SQL over the tables (no Django setup, so the checks do not share the server's code
paths): duplicate answers, participants by status, completed participants with missing or extra
answers, the run's PIDs that completed, and the participants per counterbalancing cell with the
spread (max - min), which must stay within 1.
"""
from __future__ import annotations

import json
import os
import secrets
import sqlite3
import sys
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from bench.server import REPO


@dataclass
class DbChecks:
    """What the database holds for the study after the run (see :func:`db_checks`)."""

    dup_setting: int
    dup_position: int
    status: dict[str, int]
    completed: int
    completed_this_run: int
    completed_incomplete_data: int
    cells: dict[int, int]

    @property
    def participants(self) -> int:
        """Every participant of the study."""
        return sum(self.status.values())

    @property
    def spread(self) -> int:
        """Max - min participants over the cells (every cell of the design, empty ones too)."""
        return max(self.cells.values()) - min(self.cells.values())

    def problems(self, completed_by_client: int) -> list[str]:
        """Broken guarantees (empty when all hold): duplicates, a spread over 1, a database
        that disagrees with what the client saw complete."""
        out = []
        if self.dup_setting or self.dup_position:
            out.append("duplicate answers")
        if self.spread > 1:
            out.append(f"cell spread {self.spread} > 1")
        if self.completed_this_run != completed_by_client or self.completed_incomplete_data:
            out.append("database disagrees with the client")
        return out


class _Db:
    """A DB-API connection that takes ``%s`` placeholders on both backends and decodes JSON."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        self.sqlite = parts.scheme.startswith("sqlite")
        if self.sqlite:
            # django-environ's form: sqlite:////absolute/path or sqlite:///path/relative/to/repo.
            path = REPO / unquote(url.split("://", 1)[1][1:])
            self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        else:
            import psycopg

            self.conn = psycopg.connect(url)

    def rows(self, query: str, params: tuple = ()) -> list[tuple]:
        if self.sqlite:
            query = query.replace("%s", "?")
        return self.conn.execute(query, params).fetchall()

    def json(self, value):
        return json.loads(value) if isinstance(value, (str, bytes)) else value

    def close(self) -> None:
        self.conn.close()


def db_checks(database_url: str, slug: str, pids: list[str]) -> DbChecks:
    """Check the study ``slug`` in the database of ``database_url``; ``pids`` are the Prolific
    IDs this run sent. Raises RuntimeError if the study is not there."""
    sys.path.insert(0, str(REPO))
    # The package's import reads Django's settings (spotlight_study/__init__.py loads Celery's
    # app), which refuse to load without a SECRET_KEY: the driver's process has none of its own.
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    from spotlight_study.studies.design import build_cells  # pure Python, no Django setup

    db = _Db(database_url)
    try:
        found = db.rows("SELECT id, conditions, survey FROM studies_study WHERE slug = %s", (slug,))
        if not found:
            raise RuntimeError(f"no study {slug!r} in the database")
        study_id, conditions, survey = found[0]
        conditions, survey = db.json(conditions), db.json(survey)
        keys = [k for (k,) in db.rows(
            "SELECT key FROM studies_setting WHERE study_id = %s AND kind = 'main' ORDER BY position", (study_id,))]
        n_cells = len(build_cells(keys, list(conditions)))
        dup_setting = db.rows(
            """SELECT count(*) FROM (
                 SELECT r.participant_id, r.setting_id FROM participation_taskresponse r
                 JOIN participation_participant p ON p.id = r.participant_id
                 WHERE p.study_id = %s GROUP BY 1, 2 HAVING count(*) > 1) d""", (study_id,))[0][0]
        dup_position = db.rows(
            """SELECT count(DISTINCT participant_id) FROM (
                 SELECT r.participant_id, r.position FROM participation_taskresponse r
                 JOIN participation_participant p ON p.id = r.participant_id
                 WHERE p.study_id = %s AND r.answered_at IS NOT NULL
                 GROUP BY 1, 2 HAVING count(*) > 1) d""", (study_id,))[0][0]
        status = dict(db.rows(
            "SELECT status, count(*) FROM participation_participant WHERE study_id = %s GROUP BY 1", (study_id,)))
        completed_pids = {p for (p,) in db.rows(
            "SELECT prolific_pid FROM participation_participant WHERE study_id = %s AND status = 'completed'",
            (study_id,))}
        # Completed participants whose stored answers do not match their plan: training + k tasks
        # answered, and one survey answer per (condition, item) and background item.
        n_cond_items = len(survey.get("condition_items", []))
        n_bg_items = len(survey.get("background_items", []))
        bad = 0
        for plan, answered, n_survey in db.rows(
            """SELECT p.cell_plan,
                      (SELECT count(*) FROM participation_taskresponse r
                        WHERE r.participant_id = p.id AND r.answered_at IS NOT NULL),
                      (SELECT count(*) FROM participation_surveyanswer s WHERE s.participant_id = p.id)
               FROM participation_participant p WHERE p.study_id = %s AND p.status = 'completed'""",
            (study_id,),
        ):
            plan = db.json(plan)
            n_conditions = len({t["condition"] for t in plan})
            if answered != 1 + len(plan) or n_survey != n_conditions * n_cond_items + n_bg_items:
                bad += 1
        cells = dict.fromkeys(range(n_cells), 0)
        for cell, n in db.rows(
            "SELECT cell_index, count(*) FROM participation_participant WHERE study_id = %s GROUP BY 1", (study_id,)
        ):
            cells[cell] = n
    finally:
        db.close()
    return DbChecks(
        dup_setting=dup_setting,
        dup_position=dup_position,
        status=status,
        completed=status.get("completed", 0),
        completed_this_run=len(completed_pids & set(pids)),
        completed_incomplete_data=bad,
        cells=cells,
    )
