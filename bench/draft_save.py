#!/usr/bin/env python
"""CPU of one typed-draft save (``POST /s/<slug>/draft/``, static/js/draft.js) through the WSGI
application, as the web server calls it.

As ``bench/profile_wsgi.py``: no HTTP server and no test client, each request a WSGI environ
with a browser's urlencoded body, ``DEBUG`` off, CSRF on, the production middleware, and the
draft rate limit on (``DRAFT_RATE_LIMIT`` set high enough that no save is refused, so its
counting is measured). ``--participants`` participants are walked to main task 1; then
``--saves`` drafts are sent round-robin, each a longer prefix of a 600-character answer, as a
participant's pauses in typing would send them. Every save must answer 204.

Prints the CPU time (``time.process_time``) per save of this process (the WSGI handler, the
building of each environ included), and on PostgreSQL also its backend's CPU per save, read from
``/proc``; the budget is 1 ms of server CPU per save.

    .venv/bin/python bench/draft_save.py --database sqlite|postgres [--saves 3000] [--participants 30]

PostgreSQL uses (drops and re-creates) ``spotlight_bench_draft``; SQLite a temporary file.
"""
from __future__ import annotations

import argparse
import io
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SLUG = "spotlight-replication"
PG_URL = "postgres://postgres@127.0.0.1:5432/spotlight_bench_draft"
ANSWER = (
    "Group 2 describes the person more often as a woman and mentions family and children; "
    "group 1 is more about work, the office and the career. "
) * 5
BUDGET_MS = 1.0


def _configure(database: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "spotlight_study.settings"
    os.environ["DEBUG"] = "false"
    os.environ["ALLOWED_HOSTS"] = "127.0.0.1,localhost"
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["ENTRY_RATE_LIMIT"] = "off"
    os.environ["DRAFT_RATE_LIMIT"] = "1000000/m"
    if database == "postgres":
        os.environ["DATABASE_URL"] = PG_URL
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='spotlight-draft-')}/db.sqlite3"


def _to_task_1(app):
    """A new participant walked to main task 1: its browser and the page's draft fields."""
    import random

    from bench.flow import parse_page, post_data
    from bench.profile_wsgi import Browser

    rng = random.Random(5)  # post_data's choices; the flow's pages are the same for any seed
    b = Browser(app)
    step = f"/s/{SLUG}/step/"
    q = urlencode({"PROLIFIC_PID": secrets.token_hex(12), "STUDY_ID": secrets.token_hex(12),
                   "SESSION_ID": secrets.token_hex(12)})
    assert b.request("GET", f"/s/{SLUG}/", q)[0] == 302
    for _ in range(3):  # consent, instructions, training
        status, _, html = b.request("GET", step)
        assert status == 200, status
        assert b.request("POST", step, data=post_data(parse_page(html), rng))[0] == 302
    status, _, html = b.request("GET", step)
    page = parse_page(html)
    assert page.kind == "task", page.kind
    (box,) = [n for n in page.textareas if n.startswith("answer_")]
    return b, {"csrfmiddlewaretoken": page.hidden["csrfmiddlewaretoken"], "token": page.token}, box


def _environ(person, path: str, text: str) -> dict:
    """The WSGI environ of a draft save of ``text`` by ``person`` (``wsgi.input`` as bytes)."""
    browser, hidden, box = person
    body = urlencode({**hidden, box: text}).encode()
    return {
        "REQUEST_METHOD": "POST", "PATH_INFO": path, "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1", "REMOTE_ADDR": "127.0.0.1",
        "HTTP_USER_AGENT": "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0", "HTTP_ACCEPT": "*/*",
        "wsgi.url_scheme": "http", "wsgi.input": body, "wsgi.errors": sys.stderr,
        "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
        "wsgi.version": (1, 0),
        "HTTP_COOKIE": "; ".join(f"{k}={v}" for k, v in browser.cookies.items()),
        "CONTENT_TYPE": "application/x-www-form-urlencoded;charset=UTF-8",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_ORIGIN": "http://127.0.0.1", "HTTP_REFERER": f"http://127.0.0.1/s/{SLUG}/step/",
    }


def _call(app, environ: dict) -> int:
    """Hand ``environ`` to the WSGI application; the response's status."""
    captured = []
    chunks = app(environ, lambda status, headers, exc_info=None: captured.append(status))
    b"".join(chunks)
    if hasattr(chunks, "close"):
        chunks.close()
    return int(captured[0].split()[0])


def _backend_cpu(connection) -> float:
    """CPU seconds of this connection's PostgreSQL backend so far (utime + stime)."""
    with connection.cursor() as c:
        c.execute("SELECT pg_backend_pid()")
        pid = c.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--saves", type=int, default=3000)
    ap.add_argument("--participants", type=int, default=30)
    ap.add_argument("--profile", type=int, default=0, help="then this many saves under cProfile")
    args = ap.parse_args()
    _configure(args.database)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from bench.load import DEFAULT_FIXTURE
    from spotlight_study.participation.models import Participant
    from spotlight_study.wsgi import application

    if args.database == "postgres":
        from bench.server import recreate_postgres

        recreate_postgres(PG_URL, allow_any_name=False, force=True)
    call_command("migrate", verbosity=0)
    call_command("import_study", str(DEFAULT_FIXTURE), verbosity=0)
    people = [_to_task_1(application) for _ in range(args.participants)]
    url = f"/s/{SLUG}/draft/"
    lengths = [40 + (i * 37) % (len(ANSWER) - 40) for i in range(args.saves)]

    # The bodies and environs are built before the clock starts: the driver's own urlencode of
    # a 600-character answer costs a fifth of a save.
    environs = [_environ(people[i % len(people)], url, ANSWER[: lengths[i]]) for i in range(args.saves)]

    def save(i: int) -> int:
        environ = dict(environs[i])
        environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"])
        return _call(application, environ)

    for i in range(min(200, args.saves)):  # warm-up: compiled statements, plan, cache
        assert save(i) == 204
    db0 = _backend_cpu(connection) if args.database == "postgres" else 0.0
    wall0, c0 = time.perf_counter(), time.process_time()
    statuses = [save(i) for i in range(args.saves)]
    cpu_ms = (time.process_time() - c0) / args.saves * 1000
    wall_ms = (time.perf_counter() - wall0) / args.saves * 1000
    db_ms = (_backend_cpu(connection) - db0) / args.saves * 1000 if args.database == "postgres" else 0.0
    bad = {s: statuses.count(s) for s in set(statuses) if s != 204}
    if bad:
        raise SystemExit(f"saves not kept: {bad}")
    kept = Participant.objects.filter(draft__typed=True).count()
    total = cpu_ms + db_ms
    print(f"{args.database}: {args.saves} draft saves over {args.participants} participants, "
          f"all 204; {kept} drafts stored")
    print(f"  per save: {cpu_ms:.3f} ms CPU of this process (WSGI handler)"
          + (f" + {db_ms:.3f} ms of the PostgreSQL backend = {total:.3f} ms" if db_ms else "")
          + f"; {wall_ms:.3f} ms wall")
    verdict = "within" if total <= BUDGET_MS else "OVER"
    print(f"  budget {BUDGET_MS:.1f} ms of server CPU per save: {verdict}")
    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile(time.process_time)
        prof.runcall(lambda: [save(i % args.saves) for i in range(args.profile)])
        out = io.StringIO()
        stats = pstats.Stats(prof, stream=out)
        stats.sort_stats("tottime").print_stats(30)
        stats.sort_stats("cumulative").print_stats(45)
        print(out.getvalue())


if __name__ == "__main__":
    main()
