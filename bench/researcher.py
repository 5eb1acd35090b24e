#!/usr/bin/env python
"""Researcher-side benchmark: the pages and exports on a large generated study.

For each size (default 1,000 and 10,000 participants, 2 main answers each, both labelled by two
annotators): a fresh database, the demo study imported, the data set generated
(``bench/dataset.py``: templates through the real services, copies by ``bulk_create``; then
``ANALYZE`` on PostgreSQL, as its autovacuum would do in production), then

- in process: each page's query count and time (Django's test client, ``CaptureQueriesContext``)
  and ``manage.py export_results`` (by ``call_command``);
- over HTTP, against the production server (the Procfile's web command, ``bench.server``) as a
  logged-in researcher: the study dashboard, the monitor (page and its rows), the annotation
  overview and the zip download, each requested 3 times from one worker (the first request,
  cold, and the median of the others, warm); then the overview 5 times, each right after one
  label changed in the database (its agreement computed afresh, as while annotators work).
  The in-process measures have shown the overview once before the server starts, so the
  server's first request reads the summary they stored (``OverviewSnapshot``), as a worker
  started after any other process showed the overview does; the computation itself is what
  the rows after a label change measure.

Prints one table per measure, sizes side by side, so that a query count that grows with the
number of participants shows. Targets (issue 11): each page < 500 ms, ``export_results`` and the
zip < 10 s, no query count that grows with participants.

    .venv/bin/python bench/researcher.py [--sizes 1000 10000] [--database sqlite|postgres]
"""
from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: import bench.*

import httpx  # noqa: E402

from bench import server as srv  # noqa: E402
from bench.dataset import PAGES, SLUG  # noqa: E402
from bench.report import code_version  # noqa: E402

FIXTURE = srv.REPO / "fixtures" / "spotlight-replication.yaml"
PAGE_TARGET_MS = 500.0
EXPORT_TARGET_S = 10.0
REPEATS = 3
LABEL_CHANGES = 5
AFTER_LABEL_CHANGE = "overview, label changed"


def _login(client: httpx.Client, username: str, password: str) -> None:
    page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    r = client.post("/accounts/login/", data={"username": username, "password": password,
                                              "csrfmiddlewaretoken": token},
                    headers={"Referer": f"{client.base_url}accounts/login/", "Origin": str(client.base_url).rstrip("/")})
    if r.status_code != 302:
        raise RuntimeError(f"login failed: HTTP {r.status_code}")


def _flip_a_label(database_url: str, rng: random.Random) -> None:
    """Invert the ``identified`` flag of one annotation picked at random, in the database itself
    (as an annotator's save changes a label): the overview's content-keyed caches miss."""
    sql_count = "SELECT COUNT(*) FROM annotation_annotation"
    sql_flip = ("UPDATE annotation_annotation SET identified = NOT identified WHERE id = "
                "(SELECT id FROM annotation_annotation ORDER BY id LIMIT 1 OFFSET {offset})")
    if database_url.startswith("sqlite:///"):
        import sqlite3

        db = sqlite3.connect(database_url.removeprefix("sqlite:///"), timeout=30)
        try:
            (n,) = db.execute(sql_count).fetchone()
            db.execute(sql_flip.format(offset=rng.randrange(n)))
            db.commit()
        finally:
            db.close()
        return
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as db:
        (n,) = db.execute(sql_count).fetchone()
        db.execute(sql_flip.format(offset=rng.randrange(n)))


def measure_http(base_url: str, username: str, password: str, database_url: str) -> dict:
    """Each page of ``PAGES`` over HTTP, :data:`REPEATS` times: status, bytes, the first request's
    ms (cold: the worker's lazy imports and caches) and the median ms of the others (warm).

    Then the annotation overview :data:`LABEL_CHANGES` times, each right after one label changed
    (:func:`_flip_a_label`), as a researcher sees it while annotators work: the median ms."""
    out = {}
    with httpx.Client(base_url=base_url, timeout=900, trust_env=False, follow_redirects=False) as client:
        _login(client, username, password)
        for name, path in PAGES.items():
            times, status, size = [], 0, 0
            for _ in range(REPEATS):
                t0 = time.perf_counter()
                try:
                    r = client.get(path)
                    status, size = r.status_code, len(r.content)
                except httpx.HTTPError as exc:
                    status, size = f"{type(exc).__name__}", 0
                times.append((time.perf_counter() - t0) * 1000)
            out[name] = {"status": status, "first_ms": round(times[0], 1),
                         "median_ms": round(statistics.median(times[1:] or times), 1), "bytes": size}
        rng, times, status = random.Random(11), [], 0
        for _ in range(LABEL_CHANGES):
            _flip_a_label(database_url, rng)
            t0 = time.perf_counter()
            status = client.get(PAGES["annotation overview"]).status_code
            times.append((time.perf_counter() - t0) * 1000)
        out[AFTER_LABEL_CHANGE] = {"status": status, "first_ms": round(times[0], 1),
                                   "median_ms": round(statistics.median(times), 1), "bytes": 0}
    return out


def run_size(n: int, args) -> dict:
    """Fresh database, data set of ``n`` participants, in-process and HTTP figures."""
    print(f"\n--- {n} participants ---")
    url = srv.fresh_database(args.database, args.database_url, force_drop=args.force_drop)
    # A slow page is measured, not killed at uWSGI's production harakiri (30 s); the report
    # says when a page took longer than that.
    env = srv.production_env(url, workers=args.workers, access_log=False, timeout_s=900)
    srv.setup(env, FIXTURE)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, str(Path(__file__).with_name("dataset.py")), "--participants", str(n),
                            "--out", str(out)] + (["--profile"] if args.profile else []), cwd=srv.REPO, env=env, capture_output=True, text=True, timeout=3600)
        if r.returncode != 0:
            sys.stderr.write(r.stdout[-3000:] + r.stderr[-6000:])
            sys.exit(f"bench/dataset.py failed for {n} participants")
        figures = json.loads(out.read_text())
    print(f"  data set: {figures['counts']}  ({time.perf_counter() - t0:.1f} s with the in-process measures)")
    server = srv.start(env, slug=SLUG, port=args.port or srv.free_port())
    try:
        figures["http"] = measure_http(server.base_url, *figures.pop("login"), url)
    finally:
        srv.stop(server)
    return figures


def print_tables(results: dict[int, dict]) -> bool:
    """Print the figures side by side; True if every target is met."""
    sizes = sorted(results)
    ok = True
    head = "".join(f"{n:>22,}" for n in sizes)
    print("\n=== researcher pages and exports (participants across) ===")
    print(f"code: {code_version()}")
    print(f"{'rows':<24}{head}")
    for key in ("participants", "main_answers", "survey_answers", "items", "annotations"):
        print(f"  {key:<22}" + "".join(f"{results[n]['counts'][key]:>22,}" for n in sizes))
    print(f"{'HTTP (first / warm median ms)':<24}{head}")
    for name in (*PAGES, AFTER_LABEL_CHANGE):
        cells = []
        for n in sizes:
            h = results[n]["http"][name]
            cells.append(f"{h['first_ms']:.0f} / {h['median_ms']:.0f}" + ("" if h["status"] == 200 else f" ({h['status']})"))
            limit = EXPORT_TARGET_S * 1000 if name == "zip download" else PAGE_TARGET_MS
            ok &= h["status"] == 200 and h["median_ms"] < limit
        print(f"  {name:<22}" + "".join(f"{c:>22}" for c in cells))
    print(f"{'in process: queries, ms (2nd request)':<24}{head}")
    for name in PAGES:
        row = [results[n]["in_process"][name] for n in sizes]
        print(f"  {name:<22}" + "".join(f"{r['queries']:>10} q {r['ms']:>7.0f} ms" for r in row))
        if any(r["first_queries"] != r["queries"] for r in row):
            print(f"    (first request: {', '.join(str(r['first_queries']) + ' q ' + str(round(r['first_ms'])) + ' ms' for r in row)})")
        counts = [r["queries"] for r in row]
        if len(set(counts)) > 1:
            print(f"    ^ query count changes with the number of participants: {counts}")
            ok &= max(counts) - min(counts) <= 2
    print(f"  {'export_results (s)':<22}" + "".join(f"{results[n]['in_process']['export_results']['s']:>22.2f}" for n in sizes))
    ok &= all(results[n]["in_process"]["export_results"]["s"] < EXPORT_TARGET_S for n in sizes)
    largest = results[sizes[-1]]["in_process"]
    for name, fig in largest.items():
        if "profile" in fig:
            print(f"\n--- profile of {name} at {sizes[-1]:,} participants ---\n{fig['profile']}")
    print(("PASS" if ok else "FAIL") + f": targets = pages < {PAGE_TARGET_MS:.0f} ms (warm median over HTTP), "
          f"export_results and zip < {EXPORT_TARGET_S:.0f} s, query counts flat across sizes")
    return ok


def main() -> int:
    """Run every size; exit status 0 if all targets are met."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], help="participants per run")
    ap.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/spotlight_bench_researcher",
                    help="PostgreSQL database to drop and re-create (--database postgres)")
    ap.add_argument("--force-drop", action="store_true")
    ap.add_argument("--workers", type=int, default=1,
                    help="uWSGI workers (1: every repeat reaches the worker the first one warmed)")
    ap.add_argument("--port", type=int, default=0,
                    help="the server's port (default: a free one of bench.server.PORTS); on the shared "
                         "machine each session has its own range")
    ap.add_argument("--json", type=Path, help="also write every figure to this file")
    ap.add_argument("--profile", action="store_true",
                    help="print a cProfile summary of each page and export (largest size)")
    args = ap.parse_args()
    results = {n: run_size(n, args) for n in args.sizes}
    ok = print_tables(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
