"""A database outage is a 503, not a 500 (spotlight_study/database_outage.py, errors.py).

PostgreSQL stopped or restarting under the Procfile's uWSGI: participants, arrivals and the API
get 503 with ``Retry-After`` and the friendly text, the log says once per outage that the
database cannot be reached (no traceback), no answer is lost or doubled, and ``/readyz`` answers
as before. The database is a throwaway cluster of the test's own (``tests/pgcluster.py``), never
the shared one.

SQLite on a full disk under serve.sh's uWSGI: answer submits get the same 503. The disk is a
real one, a 16 MiB tmpfs filled to ``ENOSPC`` (``tests/tinyfs.py``).

These tests do not use the suite's test database, so they run the same in either pass.
"""
from __future__ import annotations

import asyncio
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import httpx
import psycopg
import pytest

from bench.flow import FlowError, Response, parse_page, post_data, walk

from ..conftest import DEMO_FILE
from ..pgcluster import Cluster, postgres_bindir
from ..processes import Server, free_port, path_with_venv_first, run_python, start_server
from ..tinyfs import fill, free, tiny_tmpfs
from .conftest import procfile_web_command, serve_sh_server_command

needs_postgres = pytest.mark.skipif(postgres_bindir() is None, reason="needs PostgreSQL's initdb and pg_ctl")

SLUG = "spotlight-replication"
COMPLETION_CODE = "SS0WTNJX"
OUTAGE_LINE = "The database cannot be reached ("
BACK_LINE = "The database can be reached again"
FRIENDLY = "Your previous answers are saved. Please wait a moment and reload this page"


@dataclass
class Site:
    """The throwaway cluster, uWSGI on it, a staff API token and the server's log file."""

    cluster: Cluster
    server: Server
    token: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def query(self, sql: str, *params) -> list[tuple]:
        with psycopg.connect(self.cluster.url, connect_timeout=10) as conn:
            return conn.execute(sql, params).fetchall()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A cluster with the demo study, served by the Procfile's uWSGI (one worker) on it."""
    tmp = tmp_path_factory.mktemp("db-outage")
    cluster = Cluster(free_port())
    server = None
    try:
        cluster.start()
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
        env.update({"DATABASE_URL": cluster.url, "DEBUG": "false", "WEB_CONCURRENCY": "1",
                    "ALLOWED_HOSTS": "127.0.0.1", "CACHE_URL": "", "CELERY_BROKER_URL": "memory://",
                    "DJANGO_SETTINGS_MODULE": "spotlight_study.settings",
                    "ENTRY_RATE_LIMIT": "off", "LOG_LEVEL": "WARNING", "PORT": str(port),
                    "PYTHONUNBUFFERED": "1", "PATH": path_with_venv_first()})
        for args in (("manage.py", "migrate", "--noinput"), ("manage.py", "import_study", str(DEMO_FILE))):
            done = run_python(*args, env=env, timeout=300)
            assert done.returncode == 0, done.stdout + done.stderr
        made = run_python("-c", "import django; django.setup(); "
                          "from django.contrib.auth.models import User; from rest_framework.authtoken.models import Token; "
                          "u = User.objects.create_user('outage-staff', is_staff=True); "
                          "print(Token.objects.create(user=u).key)", env=env, timeout=120)
        assert made.returncode == 0, made.stderr
        command = procfile_web_command().replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:")
        log_path = tmp / "uwsgi.log"
        server = start_server(["bash", "-c", f"exec {command}"], port=port, env=env, log_path=log_path)
        yield Site(cluster=cluster, server=server, token=made.stdout.strip(), log_path=log_path)
    finally:
        if server is not None:
            server.stop(timeout_s=30)
        cluster.destroy()


def _ids() -> dict[str, str]:
    return {"PROLIFIC_PID": secrets.token_hex(12), "STUDY_ID": secrets.token_hex(12), "SESSION_ID": secrets.token_hex(12)}


def _to_first_task(c: httpx.Client) -> tuple[str, dict[str, str]]:
    """Walk a new participant to the training task; return its PID and the answer form to post."""
    import random

    ids = _ids()
    assert c.get(f"/s/{SLUG}/", params=ids).status_code == 302
    for _ in range(2):  # consent, instructions
        page = parse_page(c.get(f"/s/{SLUG}/step/").text)
        assert c.post(f"/s/{SLUG}/step/", data=post_data(page, random.Random(0))).status_code == 302
    page = parse_page(c.get(f"/s/{SLUG}/step/").text)
    assert page.kind == "training", page
    return ids["PROLIFIC_PID"], post_data(page, random.Random(1))


def _assert_outage_answer(response: httpx.Response, *, json_api: bool = False) -> None:
    assert response.status_code == 503, (response.status_code, response.text[:500])
    assert int(response.headers["Retry-After"]) >= 1
    if json_api:
        assert response.json()["error"]["code"] == "database_unavailable", response.text
    else:
        assert FRIENDLY in response.text, response.text[:1000]
    for secret in ("Traceback", "psycopg", "OperationalError", "postgres"):
        assert secret not in response.text


@needs_postgres
def test_postgresql_stopped_gives_503_with_retry_after_and_one_log_line_per_outage(site):
    """Cluster stopped: answer submits, arrivals, the API and a step page are 503 with
    Retry-After and the friendly text; /readyz 503 and /healthz 200 as before. Started again:
    the same answers are accepted once. Two outages: two warning lines, two "back" lines, no
    traceback."""
    before = len(site.log())
    clients = [httpx.Client(base_url=site.server.url, timeout=60, trust_env=False) for _ in range(3)]
    try:
        pending = [(c, *_to_first_task(c)) for c in clients]
        for outage in range(2):
            site.cluster.stop()
            for c, _pid, form in pending:
                _assert_outage_answer(c.post(f"/s/{SLUG}/step/", data=form))
            _assert_outage_answer(clients[0].get(f"/s/{SLUG}/step/"))
            _assert_outage_answer(httpx.get(f"{site.server.url}/s/{SLUG}/", params=_ids(), timeout=60))
            _assert_outage_answer(httpx.get(f"{site.server.url}/api/studies/", timeout=60,
                                            headers={"Authorization": f"Token {site.token}"}), json_api=True)
            ready = httpx.get(f"{site.server.url}/readyz", timeout=60)
            assert ready.status_code == 503 and ready.json()["failed"] == ["database"], ready.text
            assert "Retry-After" not in ready.headers  # /readyz is as it was
            assert httpx.get(f"{site.server.url}/healthz", timeout=60).status_code == 200
            site.cluster.start()
            if outage == 0:
                for c, _pid, form in pending:  # the participant reloads: the answer is taken
                    assert c.post(f"/s/{SLUG}/step/", data=form).status_code == 302
                    assert c.post(f"/s/{SLUG}/step/", data=form).status_code in (200, 302, 409)  # a double submit
            else:
                assert clients[0].get(f"/s/{SLUG}/step/").status_code == 200
    finally:
        for c in clients:
            c.close()
    pids = [pid for _c, pid, _f in pending]
    rows = site.query(
        "SELECT p.prolific_pid, count(r.id), min(r.answer) FROM participation_participant p "
        "JOIN participation_taskresponse r ON r.participant_id = p.id AND r.answered_at IS NOT NULL "
        "WHERE p.prolific_pid = ANY(%s) GROUP BY p.prolific_pid", pids)
    assert sorted((pid, n) for pid, n, _a in rows) == sorted((pid, 1) for pid in pids), rows  # each once
    assert all(a.startswith("In group 1 the angler") for _p, _n, a in rows), rows
    log = site.log()[before:]
    assert log.count(OUTAGE_LINE) == 2, log[-4000:]
    assert log.count(BACK_LINE) == 2, log[-4000:]
    assert "Traceback" not in log and "Internal Server Error" not in log, log[-4000:]


@dataclass
class Tally:
    """What the participants' browsers saw: statuses, 503s without Retry-After or the text."""

    statuses: dict[int, int] = field(default_factory=dict)
    bad_503: list[str] = field(default_factory=list)
    requests: int = 0
    finished: int = 0


@needs_postgres
def test_a_postgresql_restart_under_load_loses_no_answer(site):
    """12 participants (6 at a time) walk the whole study while the cluster restarts: every
    503 has Retry-After and the friendly text, no 500, every flow completes with each answer
    stored once, and the log has one outage line and no traceback."""
    seed = int(os.environ.get("TEST_SEED", "20261206"))
    print(f"seed {seed}")
    tally = Tally()
    before = len(site.log())
    restarted = asyncio.Event()

    async def participant(pid: str) -> object:
        async with httpx.AsyncClient(base_url=site.server.url, timeout=60, trust_env=False) as c:
            async def send(method: str, path: str, body: bytes | None) -> Response:
                deadline = time.monotonic() + 120
                while True:
                    started = time.monotonic()
                    try:
                        r = await c.request(method, path, content=body, headers=(
                            {"Content-Type": "application/x-www-form-urlencoded"} if body is not None else None))
                    except httpx.TransportError as exc:
                        raise FlowError(f"{method} {path}: {exc!r}") from None
                    tally.requests += 1
                    tally.statuses[r.status_code] = tally.statuses.get(r.status_code, 0) + 1
                    if r.status_code != 503 or time.monotonic() > deadline:
                        return Response(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.content,
                                        (time.monotonic() - started) * 1000)
                    if "retry-after" not in r.headers or FRIENDLY not in r.text:
                        tally.bad_503.append(f"{method} {path}: {dict(r.headers)} {r.text[:200]}")
                    # A participant's reload after a moment; the restart itself is what we wait on.
                    await asyncio.wait_for(restarted.wait(), timeout=120)

            try:
                return await walk(send, lambda *_: None, slug=SLUG, completion_code=COMPLETION_CODE, pid=pid,
                                  drafts_per_task=1)
            finally:
                tally.finished += 1

    async def restart_mid_way(total_requests: int) -> None:
        for _ in range(2400):  # bounded: flows that all failed early must not hang the test
            if tally.requests >= total_requests or tally.finished == 12:
                break
            await asyncio.sleep(0.05)
        await asyncio.to_thread(site.cluster.stop)
        # Let the participants meet the outage before it ends (bounded by requests, not time).
        seen = tally.statuses.get(503, 0)
        for _ in range(200):
            if tally.statuses.get(503, 0) >= seen + 6:
                break
            await asyncio.sleep(0.05)
        await asyncio.to_thread(site.cluster.start)
        restarted.set()

    async def run() -> list:
        import random

        rng = random.Random(seed)
        pids = [f"{rng.getrandbits(96):024x}" for _ in range(12)]
        gate = asyncio.Semaphore(6)

        async def one(pid: str):
            async with gate:
                return await participant(pid)

        results = await asyncio.gather(restart_mid_way(40), *(one(pid) for pid in pids))
        return results[1:]

    flows = asyncio.run(run())
    assert [f.error for f in flows if not f.ok] == [], tally
    assert tally.statuses.get(503, 0) >= 1 and 500 not in tally.statuses, tally.statuses
    assert tally.bad_503 == [], tally.bad_503[:3]
    pids = [f.pid for f in flows]
    rows = site.query(
        "SELECT p.prolific_pid, count(r.id), count(r.answered_at) FROM participation_participant p "
        "JOIN participation_taskresponse r ON r.participant_id = p.id WHERE p.prolific_pid = ANY(%s) "
        "GROUP BY p.prolific_pid", pids)
    # Every participant has one answered response per task (training and main), none missing.
    assert len(rows) == 12 and {(n, answered) for _pid, n, answered in rows} == {(3, 3)}, rows
    log = site.log()[before:]
    assert log.count(OUTAGE_LINE) == 1 and log.count(BACK_LINE) == 1, log[-4000:]
    assert "Traceback" not in log, log[-4000:]
    assert re.search(r"answered 503", log), log[-4000:]


# -- SQLite on a full disk --------------------------------------------------------------------


@pytest.fixture
def sqlite_on_a_tiny_disk(tmp_path):
    """serve.sh's uWSGI command on a SQLite database in a 16 MiB tmpfs (migrated, the demo
    study imported); yields the server and the tmpfs directory."""
    with tiny_tmpfs(tmp_path / "disk", size_kib=16 * 1024) as disk:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
        env.update({"DATABASE_URL": f"sqlite:///{disk}/db.sqlite3", "DEBUG": "false", "WEB_CONCURRENCY": "1",
                    "ALLOWED_HOSTS": "127.0.0.1", "CACHE_URL": "", "CELERY_BROKER_URL": "memory://",
                    "DJANGO_SETTINGS_MODULE": "spotlight_study.settings", "ENTRY_RATE_LIMIT": "off",
                    "LOG_LEVEL": "WARNING", "PORT": str(port), "PYTHONUNBUFFERED": "1",
                    "PATH": path_with_venv_first()})
        for args in (("manage.py", "migrate", "--noinput"), ("manage.py", "import_study", str(DEMO_FILE))):
            done = run_python(*args, env=env, timeout=300)
            assert done.returncode == 0, done.stdout + done.stderr
        server = start_server(["bash", "-c", f"exec {serve_sh_server_command()}"], port=port, env=env,
                              log_path=tmp_path / "uwsgi.log")
        try:
            yield server, disk
        finally:
            server.stop(timeout_s=30)


def _checkpoint(disk: Path) -> None:
    """Move SQLite's write-ahead log into the database file and cut it to 0 bytes, so that the
    next write must grow the log (on a full disk: SQLITE_FULL) rather than reuse its space."""
    import sqlite3

    with sqlite3.connect(disk / "db.sqlite3", timeout=30) as conn:
        busy, _log, _moved = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0


def test_sqlite_on_a_full_disk_answers_submits_with_503_and_loses_nothing(sqlite_on_a_tiny_disk):
    """SQLite's disk full ("database or disk is full"): answer submits get 503 with Retry-After
    and the friendly text, one warning and no traceback in the log; with room again the same
    submits are accepted, each answer once, and the answers saved before are all there."""
    server, disk = sqlite_on_a_tiny_disk
    clients = [httpx.Client(base_url=server.url, timeout=60, trust_env=False) for _ in range(3)]
    try:
        pending = [(c, *_to_first_task(c)) for c in clients]
        _checkpoint(disk)
        print("filled", fill(disk), "bytes")
        for c, _pid, form in pending:
            _assert_outage_answer(c.post(f"/s/{SLUG}/step/", data=form))
        free(disk)
        for c, _pid, form in pending:
            assert c.post(f"/s/{SLUG}/step/", data=form).status_code == 302
    finally:
        for c in clients:
            c.close()
    log = server.stop()
    import sqlite3

    with sqlite3.connect(disk / "db.sqlite3") as conn:
        rows = conn.execute(
            "SELECT p.prolific_pid, count(r.id) FROM participation_participant p "
            "JOIN participation_taskresponse r ON r.participant_id = p.id AND r.answered_at IS NOT NULL "
            "GROUP BY p.prolific_pid").fetchall()
        consents = conn.execute("SELECT count(*) FROM participation_participant WHERE consented_at IS NOT NULL").fetchone()
    assert sorted(rows) == sorted((pid, 1) for _c, pid, _f in pending), rows
    assert consents == (3,)
    assert log.count("The database cannot be written: its disk is full (") == 1, log[-4000:]
    assert "Traceback" not in log and "Internal Server Error" not in log, log[-4000:]
