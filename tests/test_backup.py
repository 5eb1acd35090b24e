"""scripts/backup.sh, scripts/restore.sh and manage.py check_data: a backup taken in the middle of
a load of participant flows on the Procfile's uWSGI restores every answer committed before it
began, on the suite's database (SQLite or PostgreSQL); refusals and retention."""
from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from .conftest import REPO, new_id
from .processes import run_python, run_script
from .security.conftest import _start_server, procfile_web_command
from .stimuli.conftest import database_url_for_subprocess

sys.path.insert(0, str(REPO))
from bench.flow import parse_page, post_data  # noqa: E402

# pytest-timeout's 300 s (pyproject.toml) would cut the longer limits these tests give their
# installs, loads and backups on a busy machine; they keep their own.
pytestmark = pytest.mark.timeout(900)

THREADS = 4
FLOWS_PER_THREAD = 6


def _script(name: str, *args: str, database_url: str | None, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    return run_script(f"scripts/{name}", *args, env=env, timeout=timeout)


def _manage(*args: str, database_url: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "spotlight_study.settings"}
    return run_python("manage.py", *args, env=env, timeout=300)


class Load:
    """Participants walking the demo study over HTTP in threads; each saved answer is recorded
    with the time its 302 came back (the answer was committed before that)."""

    def __init__(self, base_url: str, slug: str, seed: int):
        self.base_url, self.slug, self.seed = base_url, slug, seed
        self.saved: list[tuple[float, str, str]] = []  # (monotonic time, pid, answer)
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, args=(i,)) for i in range(THREADS)]

    def _flow(self, http: httpx.Client, rng: random.Random) -> None:
        pid = new_id()
        entry = http.get(f"/s/{self.slug}/", params={"PROLIFIC_PID": pid, "STUDY_ID": new_id(), "SESSION_ID": new_id()})
        assert entry.status_code == 302, entry.status_code
        for _ in range(20):
            page = parse_page(http.get(f"/s/{self.slug}/step/").text)
            data = post_data(page, rng)
            answer = None
            if page.kind in ("training", "task"):
                box = next(k for k in data if k.startswith("answer_"))
                answer = data[box] = f"backup check {pid} {page.step_and_index}: group 2 says she."
            response = http.post(f"/s/{self.slug}/step/", data=data)
            assert response.status_code == 302, (page.kind, response.status_code)
            if answer is not None:
                with self.lock:
                    self.saved.append((time.monotonic(), pid, answer))
            if response.headers["location"].startswith("https://app.prolific.com"):
                return
        raise AssertionError("the flow did not end")

    def _run(self, index: int) -> None:
        rng = random.Random(self.seed + index)
        try:
            for _ in range(FLOWS_PER_THREAD):
                with httpx.Client(base_url=self.base_url, timeout=60, follow_redirects=False, trust_env=False) as http:
                    self._flow(http, rng)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            with self.lock:
                self.errors.append(f"thread {index}: {exc!r}")

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=600)

    def saved_before(self, moment: float) -> set[tuple[str, str]]:
        with self.lock:
            return {(pid, answer) for t, pid, answer in self.saved if t < moment}


def _restored_answers(database_url: str) -> set[tuple[str, str]]:
    query = ("SELECT p.prolific_pid, r.answer FROM participation_taskresponse r JOIN participation_participant p "
             "ON p.id = r.participant_id WHERE r.answered_at IS NOT NULL")
    if database_url.startswith("sqlite"):
        with sqlite3.connect(database_url.removeprefix("sqlite:///")) as conn:
            return set(conn.execute(query).fetchall())
    import psycopg

    with psycopg.connect(database_url) as conn:
        return set(conn.execute(query).fetchall())


@pytest.fixture
def restore_target(tmp_path):
    """An empty database for the restore, of the suite's engine; dropped afterwards."""
    source = database_url_for_subprocess()
    if source.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'restored.sqlite3'}"
        return
    import psycopg

    base, name = source.rsplit("/", 1)
    target = f"{name}_restored"
    admin = f"{base}/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{target}"')
    yield f"{base}/{target}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{target}" WITH (FORCE)')


def test_a_backup_during_a_load_restores_every_answer_committed_before_it(
    transactional_db, demo_data, tmp_path, monkeypatch, restore_target, request
):
    """4 threads walk 24 participants through uWSGI; after about a fifth of the answers,
    backup.sh runs while they go on. Restored into an empty database, the backup has every
    answer committed before the backup began, and check_data finds no problem."""
    from spotlight_study.studies.services import study_import

    study_import(data=demo_data)
    monkeypatch.setenv("ENTRY_RATE_LIMIT", "off")
    server = _start_server(procfile_web_command().replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:"), tmp_path)
    seed = request.config.spotlight_test_seed
    print(f"load seed {seed}")
    load = Load(server.url, demo_data["slug"], seed)
    try:
        load.start()
        deadline = time.monotonic() + 300
        total = THREADS * FLOWS_PER_THREAD * 3  # training + 2 main tasks per participant, and some slack
        while len(load.saved) < total // 5 and time.monotonic() < deadline and not load.errors:
            time.sleep(0.05)
        began = time.monotonic()
        backup = _script("backup.sh", "--out", str(tmp_path / "backups"), database_url=database_url_for_subprocess())
        ended = time.monotonic()
        load.join()
    finally:
        server.stop()
    assert backup.returncode == 0, backup.stderr
    assert not load.errors, load.errors
    before = load.saved_before(began)
    after = {(pid, a) for t, pid, a in load.saved if t >= ended}
    print(f"answers: {len(before)} before the backup, {len(load.saved)} in all; backup took {ended - began:.2f} s")
    assert before and after, "the backup was not taken in the middle of the load"

    backup_file = Path(backup.stdout.strip())
    assert backup_file.is_file() and Path(f"{backup_file}.sha256").is_file()
    restored = _script("restore.sh", str(backup_file), database_url=restore_target)
    assert restored.returncode == 0, restored.stderr
    in_backup = _restored_answers(restore_target)
    missing = before - in_backup
    assert not missing, f"{len(missing)} answers committed before the backup are missing: {sorted(missing)[:3]}"
    assert len(in_backup) < len(load.saved)  # what came after the backup is not in it

    check = _manage("check_data", "--json", database_url=restore_target)
    assert check.returncode == 0, check.stdout + check.stderr
    assert '"problems": []' in check.stdout and '"orphans": {}' in check.stdout


def _small_sqlite(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE answer (id INTEGER PRIMARY KEY, text TEXT)")
        conn.execute("INSERT INTO answer (text) VALUES ('group 2 says she')")
    return f"sqlite:///{path}"


def test_restore_refuses_a_database_that_is_not_empty_unless_forced(tmp_path):
    """Restoring into a file with tables fails naming --force and leaves it as it was; with
    --force the backup replaces it."""
    url = _small_sqlite(tmp_path / "live.sqlite3")
    backup = _script("backup.sh", "--out", str(tmp_path / "b"), database_url=url)
    assert backup.returncode == 0, backup.stderr
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE keep (id INTEGER PRIMARY KEY)")
    refused = _script("restore.sh", backup.stdout.strip(), database_url=f"sqlite:///{other}")
    assert refused.returncode == 1 and "not empty" in refused.stderr and "--force" in refused.stderr
    with sqlite3.connect(other) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["keep"]
    forced = _script("restore.sh", backup.stdout.strip(), "--force", database_url=f"sqlite:///{other}")
    assert forced.returncode == 0, forced.stderr
    with sqlite3.connect(other) as conn:
        assert conn.execute("SELECT text FROM answer").fetchall() == [("group 2 says she",)]


def test_restore_refuses_a_damaged_backup_and_the_wrong_engine(tmp_path):
    """A backup whose bytes no longer match its .sha256 is refused; so is a SQLite backup for a
    PostgreSQL DATABASE_URL (checked before connecting)."""
    url = _small_sqlite(tmp_path / "live.sqlite3")
    backup = Path(_script("backup.sh", "--out", str(tmp_path / "b"), database_url=url).stdout.strip())
    wrong = _script("restore.sh", str(backup), database_url="postgres://nobody@127.0.0.1:1/none")
    assert wrong.returncode == 1 and "SQLite backup" in wrong.stderr.replace("sqlite", "SQLite")
    with backup.open("r+b") as f:
        f.seek(200)
        f.write(b"\xff\xff")
    damaged = _script("restore.sh", str(backup), database_url=f"sqlite:///{tmp_path / 'new.sqlite3'}")
    assert damaged.returncode == 1 and "checksum" in damaged.stderr
    assert not (tmp_path / "new.sqlite3").exists()


def test_backup_keeps_the_newest_n_and_rejects_bad_arguments(tmp_path):
    """Five runs with --keep 2 leave the two newest backups and their checksums; --keep 0 and an
    unknown engine are refused with a message."""
    url = _small_sqlite(tmp_path / "live.sqlite3")
    made = []
    for _ in range(5):
        result = _script("backup.sh", "--out", str(tmp_path / "b"), "--keep", "2", database_url=url)
        assert result.returncode == 0, result.stderr
        made.append(Path(result.stdout.strip()).name)
    left = sorted(p.name for p in (tmp_path / "b").iterdir())
    assert left == sorted([*made[-2:], *(f"{n}.sha256" for n in made[-2:])])
    assert _script("backup.sh", "--keep", "0", database_url=url).returncode == 1
    mysql = _script("backup.sh", database_url="mysql://root@127.0.0.1/x")
    assert mysql.returncode == 1 and "only PostgreSQL and SQLite" in mysql.stderr


def test_check_data_reports_an_orphan_and_a_completed_participant_without_answers(transactional_db, client, demo_study):
    """check_data on a whole database: no problem; after a completed participant's answer and
    a task's setting are removed behind the ORM's back, both are reported and the exit status is 1."""
    from django.core.management import CommandError, call_command
    from django.db import connection

    from .conftest import Walker

    Walker(client, demo_study.slug).complete()
    call_command("check_data")
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA foreign_keys = OFF")
        else:
            cursor.execute("SET session_replication_role = replica")
        cursor.execute("DELETE FROM participation_taskresponse WHERE position = 2")
        cursor.execute("UPDATE participation_taskresponse SET setting_id = 999999 WHERE position = 1")
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA foreign_keys = ON")
        else:
            cursor.execute("SET session_replication_role = DEFAULT")
    from spotlight_study.researcher.data_check import data_check

    result = data_check()
    assert result.orphans == {"participation_taskresponse.setting_id": 1}, result.orphans
    assert len(result.completed_missing_answers) == 1
    with pytest.raises(CommandError):
        call_command("check_data")
