#!/usr/bin/env python
"""Load benchmark of the participant flow: many simulated Prolific participants at once.

Starts the server as in production (the Procfile's web command, DEBUG off) on a fresh PostgreSQL
or SQLite database, sends ``--n`` participants through the whole flow, ``--concurrency`` at a
time, from a lean multi-process driver, then checks the database and prints throughput, latency
percentiles, server CPU per completed flow (uWSGI + database, from /proc) and the driver's own
CPU per request. ``--servers 2`` runs the scale-out check: two app servers sharing one PostgreSQL
and Redis, the load split between them.

Usage (from the repository root, with the repo's venv):

    .venv/bin/python bench/load.py --n 400 --concurrency 50 --database postgres
    .venv/bin/python bench/load.py --n 400 --concurrency 50 --database sqlite
    .venv/bin/python bench/load.py --n 400 --concurrency 50 --servers 2
    .venv/bin/python bench/load.py --sizes 400,2400,10000 --concurrency 50   # the growth table
    .venv/bin/python bench/load.py --sizes 400,2400,10000 --alternate        # ... against a reference
    .venv/bin/python bench/load.py --n 100 -c 20 --base-url http://127.0.0.1:8000 \\
        --database-url postgres://postgres@127.0.0.1:5432/spotlight

Modules: ``bench.flow`` (one participant), ``bench.driver`` (the load), ``bench.server`` (the
server under test), ``bench.cpu`` (/proc), ``bench.checks`` (the database), ``bench.report``.
See bench/README.md for what is measured and the targets.
"""
from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: import bench.*

from bench import server as srv  # noqa: E402
from bench.checks import db_checks  # noqa: E402
from bench.cpu import CpuMeter, machine_busy  # noqa: E402
from bench.driver import run_load  # noqa: E402
from bench.growth import growth_rows, parse_sizes  # noqa: E402
from bench.report import figures, print_report  # noqa: E402

DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/spotlight_bench"
DEFAULT_FIXTURE = srv.REPO / "fixtures" / "spotlight-replication.yaml"


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--n", type=int, default=400, help="simulated participants")
    ap.add_argument("--sizes", help="study sizes, e.g. 400,2400,10000: one run per size, each on a fresh "
                    "database, then the growth table (replaces --n)")
    ap.add_argument("--alternate", action="store_true",
                    help="with --sizes: measure each size's last --window flows in rounds alternated with a "
                         "reference study on a fresh database (R G G R), so that the machine's drift cancels "
                         "(bench/growth_alternating.py)")
    ap.add_argument("--window", type=int, default=400, help="with --alternate: flows measured at each size")
    ap.add_argument("--concurrency", "-c", type=int, default=50, help="participants in flight")
    ap.add_argument("--database", choices=("postgres", "sqlite"), default="postgres",
                    help="the started server's database (a fresh one)")
    ap.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_POSTGRES_URL),
                    help="PostgreSQL database to drop and re-create (--database postgres), or the "
                         "database the checks read (--base-url)")
    ap.add_argument("--servers", type=int, default=1,
                    help="app servers (uWSGI instances); 2 or more share PostgreSQL and Redis")
    ap.add_argument("--split", choices=("request", "flow"), default="request",
                    help="with several servers: round-robin per request, or one server per participant")
    ap.add_argument("--processes", type=int, default=2, help="driver processes")
    ap.add_argument("--warmup", type=int, default=None,
                    help="flows before the measurement, not counted (default: 3 per uWSGI worker)")
    ap.add_argument("--workers", type=int, help="uWSGI workers (WEB_CONCURRENCY; default: uwsgi.ini's)")
    ap.add_argument("--threads", type=int, help="uWSGI threads per worker (UWSGI_THREADS)")
    ap.add_argument("--preload", action=argparse.BooleanOptionalAction, default=None,
                    help="app imported in the master before the fork (off: UWSGI_LAZY_APPS=1; default: uwsgi.ini's, on)")
    ap.add_argument("--no-access-log", action="store_true", help="uWSGI without its access log (UWSGI_DISABLE_LOGGING=1)")
    ap.add_argument("--start-server", action="store_true", help="(the default) start the server here")
    ap.add_argument("--base-url", action="append",
                    help="instead, a running server on 127.0.0.1/localhost (repeat for several); "
                         "the checks read --database-url, which must be its database")
    ap.add_argument("--server-pid", type=int, action="append", default=[],
                    help="with --base-url: a uWSGI master pid, to measure its CPU")
    ap.add_argument("--fixture", type=Path, default=DEFAULT_FIXTURE, help="study file (slug, completion code)")
    ap.add_argument("--slug", help="study slug (default: from the fixture)")
    ap.add_argument("--completion-code", help="expected completion code (default: from the fixture)")
    ap.add_argument("--allow-drop-any", action="store_true", help="allow dropping a database without 'bench' in its name")
    ap.add_argument("--force-drop", action="store_true", help="drop the database even while others are connected")
    ap.add_argument("--timeout", type=float, default=600, help="limit of the whole load phase, s")
    ap.add_argument("--request-timeout", type=float, default=30, help="limit of one request, s")
    ap.add_argument("--drafts-per-task", type=int, default=3,
                    help="typed drafts (POST /s/<slug>/draft/) before each task's answer (0: none)")
    ap.add_argument("--skip-db-checks", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the headline figures to this file")
    args = ap.parse_args()
    try:
        args.sizes = parse_sizes(args.sizes) if args.sizes else None
    except ValueError as exc:
        ap.error(str(exc))
    if args.sizes and args.base_url:
        ap.error("--sizes needs a fresh database per size: it cannot use --base-url")
    if args.n < 1 or args.concurrency < 1 or args.servers < 1 or args.processes < 1:
        ap.error("--n, --concurrency, --servers and --processes must be >= 1")
    if args.servers > 1 and args.database != "postgres":
        ap.error("--servers 2 or more needs --database postgres (they share one PostgreSQL and Redis)")
    for url in args.base_url or []:
        if urlsplit(url).hostname not in srv.LOCAL_HOSTS:
            ap.error(f"--base-url must point at 127.0.0.1/localhost, not {url!r}")
    return args


def main() -> int:
    """Run the benchmark (once, or once per ``--sizes`` entry with the growth table); exit
    status 0 for PASS, 1 for FAIL."""
    args = _args()
    if not args.sizes:
        if args.alternate:
            raise SystemExit("--alternate needs --sizes")
        return 0 if run_once(args, args.n)[0] else 1
    if args.alternate:
        import yaml

        from bench.growth_alternating import run_alternating

        study_file = yaml.safe_load(args.fixture.read_text())
        return run_alternating(args, args.sizes, args.slug or study_file["slug"],
                               args.completion_code or study_file["completion_codes"]["completed"])
    results, all_ok = [], True
    for n in args.sizes:
        print(f"\n=== {n:,} participants, fresh database ===")
        ok, fig = run_once(args, n)
        all_ok &= ok
        results.append((n, fig))
    print("\nGrowth (each size on a fresh database, this run):")
    lines = growth_rows(results)
    print("\n".join(lines))
    return 0 if all_ok and not lines[-1].endswith("FAIL") else 1


def run_once(args: argparse.Namespace, n: int) -> tuple[bool, dict]:
    """One measurement of ``n`` participants: PASS or not, and the headline figures."""
    import yaml

    study_file = yaml.safe_load(args.fixture.read_text())
    slug = args.slug or study_file["slug"]
    completion_code = args.completion_code or study_file["completion_codes"]["completed"]

    servers: list[srv.Server] = []
    if args.base_url:
        base_urls, configs = args.base_url, ["external (configuration unknown)"]
        database_url, masters = args.database_url, args.server_pid
    else:
        database_url = srv.fresh_database(args.database, args.database_url,
                                          allow_drop_any=args.allow_drop_any, force_drop=args.force_drop)
        scale_out = args.servers > 1
        env = srv.production_env(database_url, secret_key=secrets.token_urlsafe(50), redis=scale_out,
                                 workers=args.workers, threads=args.threads, preload=args.preload,
                                 access_log=not args.no_access_log)
        srv.setup(env, args.fixture)
        if scale_out:
            srv.flush_redis()
        used: set[int] = set()
        try:
            for _ in range(args.servers):
                port = srv.free_port(used)
                used.add(port)
                servers.append(srv.start(env, slug=slug, port=port))
        except BaseException:
            for s in servers:
                srv.stop(s)
            raise
        base_urls, configs = [s.base_url for s in servers], [s.config for s in servers]
        masters = [s.proc.pid for s in servers]
    is_pg = database_url.startswith("postgres")
    # Warm-up: each worker's first requests import views, compile templates and open its
    # database connection; a production server has long done so.
    workers = args.workers or srv.default_workers()
    warmup = args.warmup if args.warmup is not None else (3 * workers * len(base_urls) if servers else 0)
    if warmup:
        w = run_load(base_urls=base_urls, slug=slug, completion_code=completion_code, n=warmup,
                     concurrency=workers * len(base_urls), processes=1, split=args.split,
                     timeout=args.timeout, request_timeout=args.request_timeout,
                     drafts_per_task=args.drafts_per_task)
        bad = [f.error for f in w.flows if not f.ok]
        print(f"warm-up: {warmup} flows ({len(bad)} failed{': ' + bad[0] if bad else ''}), not counted")
    busy_before = machine_busy()
    meter = CpuMeter(masters, database_url if is_pg else None) if masters else None
    try:
        if meter:
            meter.start()
        load = run_load(base_urls=base_urls, slug=slug, completion_code=completion_code, n=n,
                        concurrency=args.concurrency, processes=args.processes, split=args.split,
                        timeout=args.timeout, request_timeout=args.request_timeout,
                        drafts_per_task=args.drafts_per_task)
        cpu = meter.stop() if meter else None
    finally:
        for s in servers:
            srv.stop(s)
    db = None
    if not args.skip_db_checks:
        try:
            db = db_checks(database_url, slug, [f.pid for f in load.flows])
        except Exception as exc:
            print(f"database checks FAILED to run against {database_url}: {type(exc).__name__}: {exc}")
    label = f"{'postgres' if is_pg else 'sqlite'} {urlsplit(database_url).path.lstrip('/')}"
    ok = print_report(load=load, cpu=cpu, db=db, n=n, concurrency=args.concurrency, slug=slug,
                      base_urls=base_urls, configs=configs, busy_before=busy_before,
                      database_label=label, json_path=args.json)
    return ok, figures(load, cpu, db, n)


if __name__ == "__main__":
    sys.exit(main())
