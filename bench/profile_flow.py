#!/usr/bin/env python
"""Where the time of one participant flow goes, in process (no HTTP server).

Drops and re-creates its own PostgreSQL database (default ``spotlight_bench_profile``; set
``DATABASE_URL`` to change it), migrates it and imports the demo study, then walks the flow with
Django's test ``Client`` (CSRF checks on, DEBUG off) and prints, per request, the number of SQL
queries, the time spent in SQL and the total time; then profiles ``--flows`` more flows with
cProfile and prints the top functions.

    .venv/bin/python bench/profile_flow.py [--flows 30] [--sql] [--top 35] [--no-setup]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import re
import secrets
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spotlight_study.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/spotlight_bench_profile")
os.environ["DEBUG"] = "false"
os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1,localhost"
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ["ENTRY_RATE_LIMIT"] = "off"  # every simulated participant arrives from one address

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from bench.flow import parse_page, post_data  # noqa: E402
from bench.load import DEFAULT_FIXTURE  # noqa: E402
from bench.server import recreate_postgres  # noqa: E402

SLUG = "spotlight-replication"
_CLIENT = Client(enforce_csrf_checks=True)
_RNG = random.Random(11)  # the survey's choices; any seed will do


def one_flow(record=None) -> None:
    """One participant; ``record(label, response, seconds, queries)`` after each request."""
    c = _CLIENT  # one handler (middleware loaded once, as in a uWSGI worker), fresh cookies
    c.cookies.clear()
    step = f"/s/{SLUG}/step/"

    def call(label, method, path, **kw):
        with CaptureQueriesContext(connection) as q:
            t0 = time.perf_counter()
            r = getattr(c, method)(path, **kw)
            dt = time.perf_counter() - t0
        if record:
            record(label, r, dt, q.captured_queries)
        return r

    r = call("GET entry", "get", f"/s/{SLUG}/", data={
        "PROLIFIC_PID": secrets.token_hex(12), "STUDY_ID": secrets.token_hex(12),
        "SESSION_ID": secrets.token_hex(12)})
    assert r.status_code == 302, r.status_code
    for _ in range(12):
        r = call("GET ?", "get", step)
        assert r.status_code == 200, r.status_code
        page = parse_page(r.content.decode())
        kind = page.kind
        if record:
            record.rename_last(f"GET {kind}")
        data = post_data(page, _RNG)
        r = call(f"POST {kind}", "post", step, data=data)
        assert r.status_code == 302, (kind, r.status_code)
        if "prolific.com" in r["Location"]:
            return
    raise RuntimeError("flow did not finish")


class Recorder:
    def __init__(self):
        self.rows = []

    def __call__(self, label, r, dt, queries):
        self.rows.append([label, r.status_code, dt, queries])

    def rename_last(self, label):
        self.rows[-1][0] = label


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, default=30)
    ap.add_argument("--sql", action="store_true", help="print every SQL statement of the first flow")
    ap.add_argument("--top", type=int, default=35)
    ap.add_argument("--no-setup", action="store_true", help="use the database as it is")
    args = ap.parse_args()
    if not args.no_setup:
        recreate_postgres(os.environ["DATABASE_URL"], allow_any_name=False)
        call_command("migrate", verbosity=0)
        call_command("import_study", str(DEFAULT_FIXTURE))

    one_flow()  # warm up (imports, template compilation, URL resolver)
    rec = Recorder()
    one_flow(rec)
    print("one flow, per request (warm):")
    print(f"  {'request':<20} {'status':>6} {'ms':>7} {'queries':>7} {'sql ms':>7}")
    tq = tt = 0
    for label, status, dt, queries in rec.rows:
        sql_ms = sum(float(q["time"]) for q in queries) * 1000
        tq += len(queries)
        tt += dt
        print(f"  {label:<20} {status:>6} {dt * 1000:7.1f} {len(queries):7d} {sql_ms:7.1f}")
        if args.sql:
            for q in queries:
                sql = re.sub(r"\s+", " ", q["sql"])[:220]
                print(f"        {float(q['time']) * 1000:6.2f}  {sql}")
    print(f"  {'total':<20} {'':>6} {tt * 1000:7.1f} {tq:7d}")

    # Aggregate query shapes over the flow.
    shapes = defaultdict(int)
    for _, _, _, queries in rec.rows:
        for q in queries:
            s = re.sub(r"'[^']*'|\b\d+\b", "?", q["sql"])
            s = re.sub(r"SELECT .*? FROM", "SELECT ... FROM", s, count=1)
            shapes[s[:160]] += 1
    print("\nquery shapes in one flow (count):")
    for s, n in sorted(shapes.items(), key=lambda kv: -kv[1])[:25]:
        print(f"  {n:3d}  {s}")

    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(args.flows):
        one_flow()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"\n{args.flows} flows in process, no profiler: {wall / args.flows * 1000:.1f} ms wall and "
          f"{cpu / args.flows * 1000:.1f} ms CPU of this process per flow "
          f"({cpu / args.flows / len(rec.rows) * 1000:.1f} ms CPU per request; the rest is waiting for PostgreSQL)")

    # CPU-time profile (waiting for the database does not count), so it shows what costs CPU.
    prof = cProfile.Profile(time.process_time)
    t0 = time.perf_counter()
    prof.enable()
    for _ in range(args.flows):
        one_flow()
    prof.disable()
    wall = time.perf_counter() - t0
    print(f"\n{args.flows} flows under cProfile (CPU-time timer): {wall:.2f} s wall")
    for sort in ("cumulative", "tottime"):
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats(sort).print_stats(args.top)
        text = s.getvalue()
        print(f"\n--- cProfile sorted by {sort} ---")
        print(text[text.index("   ncalls"):] if "   ncalls" in text else text)


if __name__ == "__main__":
    main()
