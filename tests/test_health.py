"""/healthz and /readyz (spotlight_study/health.py): what they check, what they show, what they
skip, and /readyz through a PostgreSQL outage on a throwaway cluster."""
from __future__ import annotations

import json
import os
import socket
import time

import httpx
import pytest
from django.db import connection

from .conftest import Walker
from .processes import accepts_connections, path_with_venv_first, run_python, start_server
from .pgcluster import Cluster, postgres_bindir

# Ports of this test's own PostgreSQL cluster and uWSGI server (never the shared 5432).
CLUSTER_PORT = 8656
SERVER_PORT = 8657
CLOSED_PORT = 8659  # nothing listens here: a configured but unreachable cache or broker
# Connection attempts /readyz may make to it for the cache and the broker together: 3 measured
# (redis-py, kombu of requirements.lock), room for a library's extra retry, far below a retry loop.
MAX_ATTEMPTS = 6


def test_healthz_answers_without_touching_the_database(client, db, django_assert_num_queries):
    """/healthz is 200 {"status": "ok"} and runs no query."""
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


def test_readyz_is_200_and_names_each_check(client, db):
    """With the database migrated and no cache or broker configured, /readyz is 200."""
    response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body == {"status": "ok", "checks": {"database": "ok", "migrations": "ok",
                                                "cache": "not configured", "broker": "not configured"}}


def test_readyz_is_503_when_a_migration_is_not_applied(client, db):
    """A migration missing from django_migrations: 503, and the body names "migrations"."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM django_migrations WHERE app = 'participation'")
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["migrations"] and body["checks"]["migrations"] == "pending"


def test_readyz_is_503_when_the_cache_and_broker_are_configured_but_down(client, db, settings, monkeypatch):
    """A Redis cache and broker on a port where nothing listens: 503 naming both, after a few
    connection attempts each (each bounded by a 1 s timeout), never an endless retry."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": f"redis://127.0.0.1:{CLOSED_PORT}/1",
                                   "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}}
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{CLOSED_PORT}/0"
    attempts: list[object] = []
    real_connect = socket.socket.connect

    def counted_connect(sock, address):
        if isinstance(address, tuple) and address[1:2] == (CLOSED_PORT,):
            attempts.append(address)
        return real_connect(sock, address)

    # Counted, then made for real: the check is bounded by how often it tries, not by a clock.
    monkeypatch.setattr(socket.socket, "connect", counted_connect)
    started = time.monotonic()
    response = client.get("/readyz")
    elapsed = time.monotonic() - started
    print(f"/readyz with two services down: {len(attempts)} connection attempts, {elapsed:.2f} s")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["broker", "cache"], body
    assert body["checks"]["database"] == "ok"
    assert 2 <= len(attempts) <= MAX_ATTEMPTS, attempts
    assert str(CLOSED_PORT) not in response.content.decode()


@pytest.mark.skipif(not accepts_connections(6379), reason="needs Redis on 127.0.0.1:6379")
def test_readyz_checks_a_configured_redis_cache_and_broker(client, db, settings):
    """Redis as cache and broker (both up): /readyz is 200 with both "ok"."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:6379/1"}}
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/0"
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json()["checks"] == {"database": "ok", "migrations": "ok", "cache": "ok", "broker": "ok"}


def test_probes_skip_the_https_redirect_and_the_host_check(client, db, settings):
    """With HTTPS on and another ALLOWED_HOSTS, a plain-HTTP probe to the backend's address still
    gets its answer (not a 301 or a 400), while any other page is redirected."""
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["study.example.org"]
    for path in ("/healthz", "/readyz"):
        assert client.get(path, HTTP_HOST="10.1.2.3:8000").status_code == 200, path
    assert client.get("/accounts/login/", HTTP_HOST="study.example.org").status_code == 301


def test_probes_do_not_use_up_the_arrival_rate_limit(client, demo_study, settings):
    """Forty probes from one address, with a limit of 2 arrivals a minute: two participants from
    that address still get in, and the third is turned away (429)."""
    settings.ENTRY_RATE_LIMIT = "2/m"
    for _ in range(20):
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
    from django.test import Client

    statuses = [Walker(Client(), demo_study.slug).enter().status_code for _ in range(3)]
    assert statuses[:2] == [302, 302] and statuses[2] == 429, statuses


def test_other_methods_are_refused(client, db):
    """POST to a probe: 405 with Allow: GET, HEAD, and no check runs."""
    response = client.post("/readyz")
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"


def _get(path: str) -> httpx.Response:
    # Generous: on a machine busy with the rest of the suite, uWSGI's first answer can take long.
    return httpx.get(f"http://127.0.0.1:{SERVER_PORT}{path}", timeout=60)


@pytest.mark.skipif(postgres_bindir() is None, reason="needs PostgreSQL's initdb and pg_ctl")
def test_readyz_follows_a_postgresql_outage_on_a_real_server(tmp_path):
    """uWSGI (the Procfile's command) on a throwaway cluster: /readyz 200; cluster stopped: 503
    naming "database", /healthz still 200; cluster started again: 200 again."""
    if accepts_connections(CLUSTER_PORT) or accepts_connections(SERVER_PORT):
        pytest.skip(f"port {CLUSTER_PORT} or {SERVER_PORT} is taken")
    cluster = Cluster(CLUSTER_PORT)
    server = None
    try:
        cluster.start()
        database_url = f"postgres://postgres@127.0.0.1:{CLUSTER_PORT}/postgres"
        env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE",)}
        env.update({"DATABASE_URL": database_url, "DEBUG": "false", "SECRET_KEY": os.environ["SECRET_KEY"],
                    "WEB_CONCURRENCY": "1", "ALLOWED_HOSTS": "127.0.0.1", "CACHE_URL": "",
                    "CELERY_BROKER_URL": "memory://", "LOG_LEVEL": "WARNING",
                    "PATH": path_with_venv_first()})
        migrate = run_python("manage.py", "migrate", "--noinput", env=env, timeout=300)
        assert migrate.returncode == 0, migrate.stdout + migrate.stderr
        # Ready once the port accepts connections; the first answer may take long (see _get).
        server = start_server(["uwsgi", "--ini", "uwsgi.ini", "--http-socket", f"127.0.0.1:{SERVER_PORT}"],
                              port=SERVER_PORT, env=env, log_path=tmp_path / "uwsgi.log", ready_path=None,
                              timeout_s=180)

        up = _get("/readyz")
        assert up.status_code == 200, up.text

        cluster.stop()
        down = _get("/readyz")
        assert down.status_code == 503, down.text
        assert down.json()["failed"] == ["database"], down.text
        assert down.json()["checks"]["database"] == "unavailable"
        for secret in (str(CLUSTER_PORT), "postgres", "psycopg", "OperationalError"):
            assert secret not in down.text, (secret, down.text)
        assert _get("/healthz").status_code == 200

        cluster.start()
        deadline = time.monotonic() + 60  # a hang guard: the restarted cluster may be slow to accept
        again = _get("/readyz")
        while again.status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.5)
            again = _get("/readyz")
        assert again.status_code == 200 and json.loads(again.text)["status"] == "ok", again.text
    finally:
        if server is not None:
            server.stop(timeout_s=30)
        cluster.destroy()
