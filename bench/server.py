"""The server under test, run as in production: the Procfile's ``web`` command with DEBUG off.

A fresh database (PostgreSQL: dropped and re-created; SQLite: a new file in a temporary
directory), then ``migrate``, ``collectstatic`` and ``import_study``, then the Procfile's web
command exactly as written (so with ``uwsgi.ini``) in a shell, with ``--http-socket 0.0.0.0:``
turned into ``127.0.0.1:`` and the web server's knobs given through the environment variables
that uWSGI reads (``WEB_CONCURRENCY``, ``UWSGI_<SETTING>``). The environment is production's (``.env.example``): ``DEBUG=false``,
a random ``SECRET_KEY`` (shared by all app servers of a run, which must sign alike),
WhiteNoise's compressed manifest storage after ``collectstatic``, ``CONN_MAX_AGE`` as the
settings default it, plus ``ENTRY_RATE_LIMIT=off``: every simulated participant arrives from
127.0.0.1, and the per-address limit would turn all but the first few away.
"""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

REPO = Path(__file__).resolve().parent.parent
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def is_local_database(url: str) -> bool:
    """Whether the PostgreSQL ``url`` points at this machine: a host in :data:`LOCAL_HOSTS`, or
    a Unix socket directory (``postgres://postgres@/spotlight_bench?host=/var/run/postgresql``,
    the form that both libpq and django-environ read)."""
    parts = urlsplit(url)
    host = parts.hostname or dict(parse_qsl(parts.query)).get("host", "")
    return host in LOCAL_HOSTS or host.startswith("/")
def _ports(spec: str) -> range:
    """``"8300-8399"`` as a range of ports (both ends included)."""
    first, _, last = spec.partition("-")
    return range(int(first), int(last or first) + 1)


# This benchmark's port range on the shared machine; BENCH_PORTS=8610-8619 picks another.
PORTS = _ports(os.environ.get("BENCH_PORTS", "8300-8399"))
# Scale-out runs share one Redis; this database number is the benchmark's own (flushed).
# BENCH_REDIS_URL picks another: the test suite passes each parallel worker's own database, which
# its other tests may also empty, but never while this runs (tests/parallel.py).
REDIS_URL = os.environ.get("BENCH_REDIS_URL") or "redis://127.0.0.1:6379/13"
# Variables of the caller's shell that would change the server from production's defaults.
_CLEARED = ("HTTPS", "SECURE_SSL_REDIRECT", "CONN_MAX_AGE", "LOG_LEVEL", "CACHE_URL", "REDIS_URL",
            "CELERY_BROKER_URL", "WEB_CONCURRENCY", "DEBUG")
# uWSGI reads any setting from UWSGI_<SETTING>: none of the caller's may leak into a run.
_CLEARED_PREFIXES = ("UWSGI_",)

_DB_LOCK_CONN = None  # holds the run's advisory lock until the process exits


@dataclass
class Server:
    """A running app server: uWSGI's master process, its URL, a description, its log."""

    proc: subprocess.Popen
    base_url: str
    config: str
    log_path: Path


def default_workers() -> int:
    """uwsgi.ini's default number of workers on this machine (one per CPU, at least 2)."""
    return max(2, os.cpu_count() or 1)


def free_port(exclude: set[int] = frozenset()) -> int:
    """A free TCP port of 127.0.0.1 in :data:`PORTS`; RuntimeError if none is free."""
    for port in PORTS:
        if port in exclude:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


def recreate_postgres(url: str, allow_any_name: bool = False, force: bool = False) -> None:
    """Drop and create the PostgreSQL database of ``url`` (local host, name with 'bench' unless
    ``allow_any_name``).

    Two runs on one database would drop each other's data, so the run takes an advisory lock
    named after the database (held until this process exits) and refuses while other sessions
    are connected to it (a server or another run), unless ``force``. Exits with a message when
    it refuses.
    """
    global _DB_LOCK_CONN
    import psycopg
    from psycopg import sql

    if _DB_LOCK_CONN is not None:  # a second database of this run (researcher.py's sizes)
        _DB_LOCK_CONN.close()
        _DB_LOCK_CONN = None

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    if not is_local_database(url):
        sys.exit(f"Refusing to drop a database on a non-local host: {parts.hostname}")
    if not name or ("bench" not in name and not allow_any_name):
        sys.exit(f"Refusing to drop database {name!r}: its name has no 'bench' (use --allow-drop-any).")
    conn = psycopg.connect(url, dbname="postgres", autocommit=True)
    if not conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (f"spotlight-bench:{name}",)).fetchone()[0]:
        sys.exit(f"Another bench run is using database {name!r}; not dropping it (wait, or use another --database-url).")
    others = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (name,)
    ).fetchone()[0]
    if others and not force:
        sys.exit(f"{others} session(s) are connected to database {name!r} (a server or another run?); "
                 "not dropping it. Stop them, use another --database-url, or pass --force-drop.")
    conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    _DB_LOCK_CONN = conn
    print(f"database: dropped and created PostgreSQL {name!r}")


def fresh_database(kind: str, postgres_url: str, *, allow_drop_any: bool = False, force_drop: bool = False) -> str:
    """A new empty database for the run; returns its ``DATABASE_URL``.

    ``kind`` is ``"postgres"`` (``postgres_url`` is dropped and re-created, see
    :func:`recreate_postgres`) or ``"sqlite"`` (a new file in a fresh temporary directory).
    """
    if kind == "postgres":
        recreate_postgres(postgres_url, allow_drop_any, force_drop)
        return postgres_url
    path = Path(tempfile.mkdtemp(prefix="spotlight-bench-sqlite-")) / "db.sqlite3"
    print(f"database: new SQLite file {path}")
    return f"sqlite:///{path}"


def production_env(database_url: str, *, secret_key: str | None = None, redis: bool = False,
                   workers: int | None = None, threads: int | None = None,
                   preload: bool | None = None, access_log: bool = True,
                   timeout_s: int | None = None) -> dict[str, str]:
    """The environment of a production web process for the benchmark (see the module docstring).

    ``redis``: Django's cache and the Celery broker in :data:`REDIS_URL` (scale-out). The web
    server's knobs become ``WEB_CONCURRENCY``, ``UWSGI_THREADS``, ``UWSGI_LAZY_APPS`` (no
    preload), ``UWSGI_DISABLE_LOGGING`` (no access log) and ``timeout_s`` ``UWSGI_HARAKIRI``;
    None leaves ``uwsgi.ini``'s default.
    """
    env = {k: v for k, v in os.environ.items()
           if k not in _CLEARED and not k.startswith(_CLEARED_PREFIXES)}
    env.update(
        DJANGO_SETTINGS_MODULE="spotlight_study.settings",
        DATABASE_URL=database_url,
        SECRET_KEY=secret_key or secrets.token_urlsafe(50),
        DEBUG="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        STATICFILES_BACKEND="whitenoise.storage.CompressedManifestStaticFilesStorage",
        WHITENOISE_USE_FINDERS="false",
        ENTRY_RATE_LIMIT="off",
        PYTHONUNBUFFERED="1",
        # The project's virtualenv first, as a platform's PATH would have it.
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    if redis:
        env.update(CACHE_URL=REDIS_URL, CELERY_BROKER_URL=REDIS_URL)
    if workers:
        env["WEB_CONCURRENCY"] = str(workers)
    if threads and threads > 1:
        env["UWSGI_THREADS"] = str(threads)
    if preload is False:
        env["UWSGI_LAZY_APPS"] = "1"
    if not access_log:
        env["UWSGI_DISABLE_LOGGING"] = "1"
    if timeout_s:
        env["UWSGI_HARAKIRI"] = str(timeout_s)
    return env


def _manage(args: list[str], env: dict[str, str]) -> None:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=900)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-4000:])
        sys.stderr.write(r.stderr[-4000:])
        sys.exit(f"failed: manage.py {' '.join(args)}")
    print(f"  manage.py {' '.join(args)}  ({time.perf_counter() - t0:.1f}s)")


def setup(env: dict[str, str], fixture: Path) -> None:
    """``migrate``, ``collectstatic`` and ``import_study <fixture>`` (the Procfile's release)."""
    print("setup:")
    _manage(["migrate", "--noinput"], env)
    _manage(["collectstatic", "--noinput"], env)
    _manage(["import_study", str(fixture)], env)


def flush_redis() -> None:
    """Empty :data:`REDIS_URL`'s database, so that a run starts with an empty shared cache."""
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()
    print(f"redis: flushed {REDIS_URL}")


def procfile_web_command() -> str:
    """The ``web:`` command of the Procfile, as written (a shell command line)."""
    for line in (REPO / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            return line.removeprefix("web:").strip()
    raise RuntimeError("The Procfile has no web: process.")


def start(env: dict[str, str], *, slug: str, port: int) -> Server:
    """Start the Procfile's web command on 127.0.0.1:``port`` with ``env``; wait until every
    worker has booted. Exits with a message (and the log's path) if it does not come up."""
    command = procfile_web_command()
    if "--http-socket 0.0.0.0:" not in command:
        sys.exit(f"the Procfile's web command has no '--http-socket 0.0.0.0:': {command}")
    command = command.replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:")
    if env.get("UWSGI_HARAKIRI"):
        # uwsgi.ini's own harakiri wins over the environment's UWSGI_HARAKIRI; the command
        # line wins over both (the researcher benchmark's zip of 20,000 participants took
        # longer than uwsgi.ini's 30 s on the busy shared machine, and the worker was killed).
        command += f" --harakiri {int(env['UWSGI_HARAKIRI'])}"
    env = {**env, "PORT": str(port)}
    workers = int(env.get("WEB_CONCURRENCY") or default_workers())
    log_path = Path(tempfile.mkdtemp(prefix="spotlight-bench-")) / f"uwsgi-{port}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=REPO, env=env,
                                stdout=log, stderr=subprocess.STDOUT)
    threads = int(env.get("UWSGI_THREADS") or 1)
    db = urlsplit(env["DATABASE_URL"])
    config = (f"Procfile web ({command}); {workers} uWSGI workers x {threads} threads, preload "
              f"{'off' if env.get('UWSGI_LAZY_APPS') else 'on'}, access log "
              f"{'off' if env.get('UWSGI_DISABLE_LOGGING') else 'on'}, DEBUG=false, "
              f"{db.scheme} {db.path.lstrip('/')}" + (f", cache+broker {env['CACHE_URL']}" if "CACHE_URL" in env else ""))
    server = Server(proc, f"http://127.0.0.1:{port}", config, log_path)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"uWSGI exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
        if _answers(port, slug) and log_path.read_text(errors="replace").count("spawned uWSGI worker") >= workers:
            time.sleep(0.5)  # the last worker's import; its boot CPU stays out of the run
            print(f"server: {server.base_url}  log {log_path}")
            return server
        time.sleep(0.3)
    stop(server)
    sys.exit(f"uWSGI did not come up within 90 s; see {log_path}")


def _answers(port: int, slug: str) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(f"GET /s/{slug}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            return s.recv(12).startswith(b"HTTP/1.1 ")
    except OSError:
        return False


def stop(server: Server) -> None:
    """Stop uWSGI gracefully (SIGTERM to the master, as a platform does), else kill it."""
    if server.proc.poll() is None:
        server.proc.terminate()
        try:
            server.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait(timeout=10)
