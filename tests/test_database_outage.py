"""spotlight_study/database_outage.py: which database errors are an outage (a 503) and which
are bugs (a 500 with the traceback), from real errors of real connections."""
from __future__ import annotations

import logging

import pytest
from django.db import DatabaseError
from django.db.utils import ConnectionHandler

from spotlight_study import database_outage
from spotlight_study.database_outage import FULL, UNREACHABLE, outage_kind

from .processes import free_port


def _raised(connection, sql: str) -> DatabaseError:
    with pytest.raises(DatabaseError) as caught:
        with connection.cursor() as cursor:
            cursor.execute(sql)
    return caught.value


@pytest.fixture
def probe(django_db_blocker):
    """Connections of the test's own (not the test database), closed at the end."""
    handlers = []
    django_db_blocker.unblock()

    def make(settings: dict):
        handler = ConnectionHandler({"default": settings})
        handlers.append(handler)
        return handler["default"]

    yield make
    for handler in handlers:
        handler.close_all()
    django_db_blocker.restore()


def test_postgresql_refusing_the_connection_is_unreachable(probe):
    """Connecting to a port where no PostgreSQL listens: "unreachable"."""
    conn = probe({"ENGINE": "django.db.backends.postgresql", "NAME": "nothing", "USER": "postgres",
                  "HOST": "127.0.0.1", "PORT": str(free_port()), "OPTIONS": {"connect_timeout": 5}})
    with pytest.raises(DatabaseError) as caught:
        conn.ensure_connection()
    assert outage_kind(caught.value) == UNREACHABLE


def test_sqlite_full_is_full_and_a_missing_table_is_a_bug(probe, tmp_path):
    """SQLite over its page limit ("database or disk is full", SQLITE_FULL): "full"; a missing
    table (also an OperationalError) and a syntax error: None, so they stay 500s."""
    conn = probe({"ENGINE": "django.db.backends.sqlite3", "NAME": str(tmp_path / "small.sqlite3")})
    with conn.cursor() as cursor:
        cursor.execute("CREATE TABLE t (x TEXT)")
        cursor.execute("PRAGMA max_page_count = 3")
    full = _raised(conn, "INSERT INTO t VALUES (printf('%.*c', 100000, 'x'))")
    assert "database or disk is full" in str(full)
    assert outage_kind(full) == FULL
    assert outage_kind(_raised(conn, "SELECT * FROM no_such_table")) is None
    assert outage_kind(_raised(conn, "SELEC 1")) is None


@pytest.mark.django_db
def test_a_bug_on_the_test_database_is_not_an_outage():
    """A query on a table that does not exist, on the suite's database (SQLite or PostgreSQL):
    None."""
    from django.db import connection, transaction

    with pytest.raises(DatabaseError) as caught:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table_here")
    assert outage_kind(caught.value) is None
    assert outage_kind(ValueError("x")) is None and outage_kind(None) is None


def test_one_warning_per_outage_then_one_when_back(probe, settings, caplog):
    """Five failed requests of one outage: one warning; a new connection afterwards: one
    "reachable again" line with the count; the next outage warns again."""
    settings.DATABASE_OUTAGE_WARNING_SECONDS = 60
    database_outage.outage_state_reset()
    conn = probe({"ENGINE": "django.db.backends.postgresql", "NAME": "nothing", "USER": "postgres",
                  "HOST": "127.0.0.1", "PORT": str(free_port()), "OPTIONS": {"connect_timeout": 5}})
    with pytest.raises(DatabaseError) as caught:
        conn.ensure_connection()
    sqlite = probe({"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"})
    with caplog.at_level(logging.WARNING, logger="spotlight_study.database_outage"):
        for _ in range(5):
            database_outage.outage_note(UNREACHABLE, caught.value)
        sqlite.ensure_connection()  # any new connection: the signal says the database is back
        database_outage.outage_note(UNREACHABLE, caught.value)
    lines = [r.getMessage() for r in caplog.records]
    assert [line.split(" (")[0].split(",")[0] for line in lines] == [
        "The database cannot be reached", "The database can be reached again", "The database cannot be reached"], lines
    assert "5 requests were answered 503" in lines[1]
    assert all(r.exc_info is None for r in caplog.records)
    database_outage.outage_state_reset()
