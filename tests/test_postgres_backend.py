"""The PostgreSQL backend's health check: no SELECT 1 per request, and a connection the server
ended is replaced before the request's first query."""
from __future__ import annotations

import socket

import pytest
from django.db import DEFAULT_DB_ALIAS
from django.db.utils import ConnectionHandler

from spotlight_study.postgres_backend.base import connection_looks_open

from .processes import run_python, wait_until_ready

ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"


def _reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=2):
            return True
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _reachable(), reason="needs PostgreSQL on 127.0.0.1:5432")


def _terminate(pid: int) -> None:
    """End backend ``pid`` and return once it has exited: a backend sends its goodbye (the FATAL
    message) before it leaves pg_stat_activity, so the client's socket has it by then."""
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

        def gone() -> bool:
            return admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone() is None

        wait_until_ready(gone, timeout_s=60, interval_s=0.02, what=f"backend {pid} to exit")


def _last_query(pid: int) -> str:
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        row = admin.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
    return row[0]


def test_a_plain_psycopg_connection_is_judged_by_its_socket():
    """Idle and quiet: open. Inside a transaction, terminated by the server, or closed: not."""
    import psycopg

    conn = psycopg.connect(ADMIN_URL)
    conn.execute("SELECT 1")
    assert not connection_looks_open(conn)  # a transaction is open
    conn.commit()
    assert connection_looks_open(conn)
    _terminate(conn.info.backend_pid)
    assert not connection_looks_open(conn)
    conn.close()
    assert not connection_looks_open(conn)
    assert not connection_looks_open(None)


@pytest.fixture
def wrapper(django_db_blocker):
    """A Django connection with the project's engine, persistent and health-checked, to the
    server's ``postgres`` database (outside the test database, on either test pass)."""
    handler = ConnectionHandler(
        {
            DEFAULT_DB_ALIAS: {
                "ENGINE": "spotlight_study.postgres_backend",
                "NAME": "postgres",
                "USER": "postgres",
                "HOST": "127.0.0.1",
                "PORT": 5432,
                "CONN_MAX_AGE": 60,
                "CONN_HEALTH_CHECKS": True,
            }
        }
    )
    conn = handler[DEFAULT_DB_ALIAS]
    with django_db_blocker.unblock():
        yield conn
        conn.close()


def _request(conn, sql: str):
    """What Django does around a request: the obsolete check at its start, then a query."""
    conn.close_if_unusable_or_obsolete()
    with conn.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


def test_a_healthy_connection_is_reused_without_a_select_1(wrapper):
    """The second request runs on the same backend, and that backend's last statement is the
    first request's: no SELECT 1 was sent in between."""
    pid = _request(wrapper, "SELECT pg_backend_pid() AS first_request")
    wrapper.close_if_unusable_or_obsolete()
    wrapper.close_if_health_check_failed()  # as the next request's first cursor does
    assert "first_request" in _last_query(pid)
    assert _request(wrapper, "SELECT pg_backend_pid()") == pid


def test_a_connection_the_server_ended_is_replaced_before_the_first_query(wrapper):
    """After pg_terminate_backend (as in a database restart) the next request gets a new
    backend and its query succeeds, instead of failing with 'terminating connection'."""
    pid = _request(wrapper, "SELECT pg_backend_pid()")
    _terminate(pid)
    new_pid = _request(wrapper, "SELECT pg_backend_pid()")
    assert new_pid != pid
    assert _request(wrapper, "SELECT 7") == 7


def _settings_database(**env) -> dict:
    """``settings.DATABASES["default"]`` as a fresh process builds it from this environment."""
    import json
    import os

    code = ("import json, django; from django.conf import settings; django.setup(); "
            "d = settings.DATABASES['default']; "
            "print(json.dumps({k: d[k] for k in ('ENGINE', 'OPTIONS', 'CONN_HEALTH_CHECKS')}))")
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "spotlight_study.settings",
                   "SECRET_KEY": os.environ["SECRET_KEY"], **env}
    out = run_python("-c", code, env=environment)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_settings_use_this_backend_with_prepared_statements_unless_switched_off():
    """PostgreSQL gets this engine, health checks and prepared statements; the switch turns
    only the prepared statements off; SQLite gets its own engine without them."""
    url = "postgres://postgres@127.0.0.1:5432/spotlight_settings_probe"
    on = _settings_database(DATABASE_URL=url)
    assert on["ENGINE"] == "spotlight_study.postgres_backend" and on["CONN_HEALTH_CHECKS"]
    assert on["OPTIONS"]["server_side_binding"] is True and on["OPTIONS"]["prepare_threshold"] == 5
    off = _settings_database(DATABASE_URL=url, DATABASE_PREPARED_STATEMENTS="off")
    assert off["ENGINE"] == "spotlight_study.postgres_backend"
    assert "prepare_threshold" not in off["OPTIONS"] and "server_side_binding" not in off["OPTIONS"]
    sqlite = _settings_database(DATABASE_URL="sqlite:////tmp/spotlight-settings-probe.sqlite3")
    assert sqlite["ENGINE"] == "spotlight_study.sqlite_backend"
    assert "prepare_threshold" not in sqlite["OPTIONS"]


def test_a_statement_run_five_times_is_prepared_on_the_server(django_db_blocker):
    """With the settings' options PostgreSQL holds the plan after the fifth run (seen in
    pg_prepared_statements of that connection), and the results stay right."""
    options = _settings_database(DATABASE_URL="postgres://postgres@127.0.0.1:5432/x")["OPTIONS"]
    handler = ConnectionHandler({DEFAULT_DB_ALIAS: {
        "ENGINE": "spotlight_study.postgres_backend", "NAME": "postgres", "USER": "postgres",
        "HOST": "127.0.0.1", "PORT": 5432, "OPTIONS": options,
    }})
    conn = handler[DEFAULT_DB_ALIAS]
    with django_db_blocker.unblock():
        try:
            with conn.cursor() as cursor:
                results = []
                for n in range(6):
                    cursor.execute("SELECT %s::int * 2 AS doubled", [n])
                    results.append(cursor.fetchone()[0])
                cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
                               ["%doubled%"])
                prepared = cursor.fetchone()[0]
        finally:
            conn.close()
    assert results == [0, 2, 4, 6, 8, 10]
    assert prepared == 1


def test_a_connection_inside_a_transaction_gets_django_s_select_1(wrapper):
    """Not idle (a statement already ran in a transaction): the check sends SELECT 1 as Django
    does, and keeps the connection."""
    wrapper.ensure_connection()
    wrapper.set_autocommit(False)
    try:
        with wrapper.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid() AS inside_transaction")
            pid = cursor.fetchone()[0]
        wrapper.health_check_done = False
        wrapper.close_if_health_check_failed()
        assert wrapper.connection is not None
        assert _last_query(pid) == "SELECT 1"
    finally:
        wrapper.rollback()
        wrapper.set_autocommit(True)
