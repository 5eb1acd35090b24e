#!/usr/bin/env python
"""CPU of one participant flow through the WSGI application itself, as the web server (uWSGI) calls it.

No HTTP server and no test client (whose bookkeeping costs CPU of its own): each request is a
WSGI environ handed to ``spotlight_study.wsgi.application`` with a browser's urlencoded body,
``DEBUG`` off, CSRF on, the production middleware. Prints the CPU per request kind and per flow
(this process; on PostgreSQL also its backend's CPU, read from ``/proc``), then an optional
cProfile of more flows.

    .venv/bin/python bench/profile_wsgi.py --database sqlite|postgres [--flows 200] [--profile 50] [--callers normalize_choices]
        [--prefill 10000]

``--prefill N`` runs N flows first, so that the figures are those of a study of N participants
(compare two sizes to find what grows with the study).

``--idle-us N`` sleeps N µs before each request (outside the measured CPU), as a served worker
waits between requests or for SQLite's write lock: on a virtual machine the CPU a request costs
grows with the idle time before it (cold caches), so compare the figure at 0 and at a few
hundred µs (docs/benchmarks.md). On SQLite the script also prints the CPU spent inside write
transactions (``BEGIN IMMEDIATE`` to the commit or rollback): the time the database's one
write lock is held, during which a second worker's write waits.

PostgreSQL uses (drops and re-creates) ``spotlight_bench_wsgi``; SQLite a temporary file.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import secrets
import sys
import tempfile
import time
from collections import defaultdict
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SLUG = "spotlight-replication"
PG_URL = "postgres://postgres@127.0.0.1:5432/spotlight_bench_wsgi"
_RNG = random.Random(11)  # the survey's choices; any seed will do
#: CPU seconds inside the WSGI application so far, summed over every request of this process
#: (building the environ and reading the cookies excluded): the figure that
#: bench/original_inprocess.py prints for the original app.
APP_CPU = [0.0]
#: Seconds slept before each request (``--idle-us``), outside APP_CPU.
IDLE_S = [0.0]


def _configure(database: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "spotlight_study.settings"
    os.environ["DEBUG"] = "false"
    os.environ["ALLOWED_HOSTS"] = "127.0.0.1,localhost"
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["ENTRY_RATE_LIMIT"] = "off"
    if database == "postgres":
        os.environ["DATABASE_URL"] = PG_URL
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='spotlight-wsgi-')}/db.sqlite3"


class Browser:
    """Cookies and one WSGI call per request; ``status``, ``headers`` and ``body`` of the last."""

    def __init__(self, app):
        self.app = app
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, query: str = "", data: dict | None = None):
        body = urlencode(data).encode() if data is not None else b""
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1", "REMOTE_ADDR": "127.0.0.1",
            "HTTP_USER_AGENT": "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0",
            "HTTP_ACCEPT": "text/html", "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr, "wsgi.multithread": False, "wsgi.multiprocess": True,
            "wsgi.run_once": False, "wsgi.version": (1, 0),
        }
        if self.cookies:
            environ["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if data is not None:
            environ["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
            environ["CONTENT_LENGTH"] = str(len(body))
            environ["HTTP_ORIGIN"] = "http://127.0.0.1"
            environ["HTTP_REFERER"] = f"http://127.0.0.1{path}"
        captured = {}

        def start_response(status, headers, exc_info=None):
            captured["status"] = int(status.split()[0])
            captured["headers"] = headers

        if IDLE_S[0]:
            time.sleep(IDLE_S[0])
        c0 = time.process_time()
        chunks = self.app(environ, start_response)
        body = b"".join(chunks)
        if hasattr(chunks, "close"):
            chunks.close()
        APP_CPU[0] += time.process_time() - c0
        for name, value in captured["headers"]:
            if name.lower() == "set-cookie":
                c = SimpleCookie()
                c.load(value)
                for key, morsel in c.items():
                    self.cookies[key] = morsel.value
        return captured["status"], dict(captured["headers"]), body.decode()


def one_flow(app, record=None) -> None:
    """One participant from the Prolific link to the completion redirect."""
    from bench.flow import parse_page, post_data

    b = Browser(app)
    step = f"/s/{SLUG}/step/"

    def call(label, method, path, query="", data=None):
        c0 = time.process_time()
        out = b.request(method, path, query, data)
        if record is not None:
            record[label].append(time.process_time() - c0)
        return out

    q = urlencode({"PROLIFIC_PID": secrets.token_hex(12), "STUDY_ID": secrets.token_hex(12),
                   "SESSION_ID": secrets.token_hex(12)})
    status, _, _ = call("GET entry", "GET", f"/s/{SLUG}/", q)
    assert status == 302, status
    for _ in range(14):
        status, _, html = call("GET step", "GET", step)
        assert status == 200, status
        page = parse_page(html)
        kind = page.kind
        if record is not None:
            record[f"GET {kind}"].append(record["GET step"].pop())
        data = post_data(page, _RNG)
        status, headers, _ = call(f"POST {kind}", "POST", step, data=data)
        assert status == 302, (kind, status)
        if "prolific.com" in headers.get("Location", ""):
            return
    raise RuntimeError("flow did not finish")


def _backend_cpu(connection) -> float:
    """CPU seconds of this connection's PostgreSQL backend so far (utime + stime)."""
    with connection.cursor() as c:
        c.execute("SELECT pg_backend_pid()")
        pid = c.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class WriteTransactionTimer:
    """CPU seconds of this process between each transaction's ``BEGIN`` and its commit or
    rollback on ``connection`` (Django's SQLite backend opens a transaction with
    ``_start_transaction_under_autocommit``: ``BEGIN IMMEDIATE`` here, which takes the write
    lock). Installed on the connection object only, for the measurement; :meth:`remove` takes it
    off. A savepoint inside a transaction is not a transaction of its own."""

    _METHODS = ("_start_transaction_under_autocommit", "_commit", "_rollback")

    def __init__(self, connection):
        self.connection = connection
        self.seconds = 0.0
        self.transactions = 0
        self._since: float | None = None
        start, commit, rollback = (connection._start_transaction_under_autocommit,
                                   connection._commit, connection._rollback)

        def timed_start():
            self._since = time.process_time()
            return start()

        def ended(method):
            def wrapper():
                try:
                    return method()
                finally:
                    if self._since is not None:
                        self.seconds += time.process_time() - self._since
                        self.transactions += 1
                        self._since = None
            return wrapper

        connection._start_transaction_under_autocommit = timed_start
        connection._commit, connection._rollback = ended(commit), ended(rollback)

    def remove(self) -> None:
        """Give the connection back its own methods."""
        for name in self._METHODS:
            delattr(self.connection, name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--flows", type=int, default=200)
    ap.add_argument("--profile", type=int, default=0, help="flows under cProfile (0: none)")
    ap.add_argument("--prefill", type=int, default=0,
                    help="flows run before the measurement, not counted: the study's size when it is measured")
    ap.add_argument("--idle-us", type=float, default=0.0,
                    help="sleep this many µs before each request, outside the measured CPU (default 0)")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--callers", metavar="PATTERN", help="also print the callers of the functions matching PATTERN (a pstats regex)")
    args = ap.parse_args()
    if args.idle_us < 0:
        ap.error("--idle-us must be >= 0")
    IDLE_S[0] = args.idle_us / 1e6
    _configure(args.database)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from bench.load import DEFAULT_FIXTURE
    from spotlight_study.wsgi import application

    if args.database == "postgres":
        from bench.server import recreate_postgres

        recreate_postgres(PG_URL, allow_any_name=False, force=True)
    call_command("migrate", verbosity=0)
    call_command("import_study", str(DEFAULT_FIXTURE), verbosity=0)
    for _ in range(5 + args.prefill):
        one_flow(application)
    record = defaultdict(list)
    writes = WriteTransactionTimer(connection) if args.database == "sqlite" else None
    db0 = _backend_cpu(connection) if args.database == "postgres" else 0.0
    c0, app0 = time.process_time(), APP_CPU[0]
    for _ in range(args.flows):
        one_flow(application, record)
    cpu = (time.process_time() - c0) / args.flows * 1000
    app_cpu = (APP_CPU[0] - app0) / args.flows * 1000
    db = (_backend_cpu(connection) - db0) / args.flows * 1000 if args.database == "postgres" else 0.0
    print(f"{args.database}: {args.flows} flows; per flow {cpu:.1f} ms CPU of this process "
          f"(driver included), of which the WSGI application {app_cpu:.2f} ms"
          + (f" + {db:.1f} ms of the PostgreSQL backend" if db else "")
          + (f"; idle {args.idle_us:g} µs before each request" if args.idle_us else ""))
    if writes is not None:
        held = writes.seconds / args.flows * 1000
        print(f"  inside write transactions (SQLite's write lock held): {held:.2f} ms per flow "
              f"({held / app_cpu:.0%} of the application), {writes.transactions / args.flows:.1f} per flow")
    for label, times in sorted(record.items()):
        if not times:
            continue
        per = sum(times) / len(times) * 1000
        print(f"  {label:<22} {len(times) / args.flows:4.1f} per flow  {per:6.2f} ms each")
    if args.profile:
        prof = cProfile.Profile(time.process_time)
        prof.enable()
        for _ in range(args.profile):
            one_flow(application)
        prof.disable()
        for sort in ("cumulative", "tottime"):
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats(sort).print_stats(args.top)
            print(f"\n--- cProfile by {sort} ({args.profile} flows) ---")
            text = s.getvalue()
            print(text[text.index("   ncalls"):] if "   ncalls" in text else text)
        if args.callers:
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats("cumulative").print_callers(args.callers)
            print(f"\n--- who calls {args.callers!r} ---\n{s.getvalue()}")


if __name__ == "__main__":
    main()
