#!/usr/bin/env python
"""Slow clients against the study server while participants take the study (issue 38, §3).

Up to 200 slow connections (``bench/slow_clients.py``: request heads or bodies sent a few bytes
every 5 s) are held for up to 60 s, on the loopback only, while simulated participants
(``bench/flow.py`` through ``bench/driver.py``) walk the whole flow. Two set-ups:

- ``deploy``: the deployment as ``scripts/deploy_check.sh`` sets it up: Caddy (Debian's package)
  with ``deploy/Caddyfile.in`` in front of uWSGI with ``uwsgi.ini``, ``TRUSTED_PROXY_COUNT=1``.
  The site is served on plain ``http://127.0.0.1:<port>`` instead of ``tls internal`` (the
  driver speaks plain HTTP/1.1); everything else in the file is as rendered for production.
- ``serve``: ``scripts/serve.sh``'s bare uWSGI (the same ``uwsgi.ini`` and ``--http-socket``).

The bar (issue 38): participants' request p99 under 1 s and no failed flow; a flow that has not
finished when the slow clients stop counts as failed.

Usage (repository root, the project's venv; ports from ``BENCH_PORTS``, default 8300-8399):

    .venv/bin/python bench/slowloris.py --setup deploy
    .venv/bin/python bench/slowloris.py --setup serve --connections 200 --seconds 60
    .venv/bin/python bench/slowloris.py --setup both --kind mixed --repeat 2
    .venv/bin/python bench/slowloris.py --setup deploy --connections 0     # the baseline

Exit status 0 if every measured set-up met the bar, 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: import bench.*

from bench import server as srv  # noqa: E402
from bench.driver import run_load  # noqa: E402
from bench.report import pct  # noqa: E402
from bench.slow_clients import KINDS, MAX_CONNECTIONS, MAX_SECONDS, check_bounds, run_slow_clients  # noqa: E402

P99_BAR_MS = 1000.0
RAMP_S = 3.0  # the slow connections are all open before the first participant arrives


def render_caddyfile(*, work: Path, port: int, upstream_port: int) -> Path:
    """``deploy/Caddyfile.in`` rendered as ``scripts/deploy_check.sh`` does, but with the site on
    plain ``http://127.0.0.1:<port>`` (no TLS); returns the file's path."""
    global_options = "\n".join([
        "\tadmin off", "\tauto_https off", "\tdefault_bind 127.0.0.1",
        f"\tstorage file_system {work}/caddy",
        "\tlog {", f"\t\toutput file {work}/caddy-errors.log", "\t}",
    ])
    text = (srv.REPO / "deploy" / "Caddyfile.in").read_text()
    text = (text.replace("@GLOBAL@", global_options).replace("@SITE@", f"http://127.0.0.1:{port}")
            .replace("@TLS@", "").replace("@UPSTREAM@", f"127.0.0.1:{upstream_port}")
            .replace("@STATIC_ROOT@", str(srv.REPO / "staticfiles")))
    path = work / "Caddyfile"
    path.write_text(text)
    return path


def start_caddy(*, port: int, upstream_port: int) -> tuple[subprocess.Popen, Path]:
    """Start ``caddy run`` in front of ``upstream_port``; waits until /healthz answers through
    it. Exits with the log's tail if it does not come up."""
    if shutil.which("caddy") is None:
        sys.exit("caddy is not installed (Debian: apt-get install caddy)")
    work = Path(tempfile.mkdtemp(prefix="spotlight-slowloris-caddy-"))
    config = render_caddyfile(work=work, port=port, upstream_port=upstream_port)
    env = {**os.environ, "HOME": str(work), "XDG_DATA_HOME": str(work / "data"), "XDG_CONFIG_HOME": str(work / "config")}
    log = (work / "caddy.log").open("w")
    proc = subprocess.Popen(["caddy", "run", "--adapter", "caddyfile", "--config", str(config)],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"caddy exited with {proc.returncode}:\n{(work / 'caddy.log').read_text()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
                s.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
                if s.recv(12).startswith(b"HTTP/1.1 200"):
                    print(f"caddy: http://127.0.0.1:{port} -> 127.0.0.1:{upstream_port}  config {config}")
                    return proc, work
        except OSError:
            pass
        time.sleep(0.3)
    proc.kill()
    sys.exit(f"caddy did not come up within 60 s; see {work}/caddy.log")


def _slow_child(kwargs: dict, pipe) -> None:
    pipe.send(asdict(run_slow_clients(**kwargs)))
    pipe.close()


def measure(*, front_port: int, slug: str, completion_code: str, args: argparse.Namespace) -> dict:
    """One run: slow clients for ``args.seconds`` and participants meanwhile; the figures."""
    loadavg_before = Path("/proc/loadavg").read_text().split()[:3]
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    slow = ctx.Process(target=_slow_child, daemon=True, args=(dict(
        host="127.0.0.1", port=front_port, slug=slug, connections=args.connections,
        seconds=args.seconds, kind=args.kind, interval_s=args.interval), send))
    slow.start()
    send.close()
    time.sleep(RAMP_S)
    load = run_load(base_urls=[f"http://127.0.0.1:{front_port}"], slug=slug, completion_code=completion_code,
                    n=args.participants, concurrency=args.concurrency, processes=1,
                    timeout=args.seconds - RAMP_S, request_timeout=args.seconds)
    slow_stats = recv.recv()
    slow.join()
    answered = load.stats.latencies_ms
    # A request still unanswered when the run ended waited at least until then: counted with
    # that (lower-bound) latency, so a server that answers nobody cannot show a good p99.
    unanswered = max(0, load.stats.requests - len(answered))
    latencies = answered + [load.wall_s * 1000] * unanswered
    failed = [f for f in load.flows if not f.ok]
    return {
        "flows_completed": sum(f.ok for f in load.flows),
        "flows_failed": len(failed) + load.not_run,
        "first_error": failed[0].error if failed else ("not finished in time" if load.not_run else None),
        "requests": len(answered),
        "unanswered": unanswered,
        "p50_ms": round(pct(latencies, 50), 1),
        "p99_ms": round(pct(latencies, 99), 1),
        "max_ms": round(max(latencies), 1) if latencies else float("nan"),
        "statuses": dict(load.stats.statuses),
        "slow": slow_stats,
        "loadavg_before": " ".join(loadavg_before),
        "loadavg_after": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
    }


def run_setup(setup: str, args: argparse.Namespace, *, slug: str, completion_code: str) -> list[dict]:
    """Bring up ``setup`` (``deploy`` or ``serve``) on a fresh database, measure
    ``args.repeat`` times, stop everything; the figures of each run."""
    database_url = srv.fresh_database(args.database, args.database_url, force_drop=args.force_drop)
    env = srv.production_env(database_url, secret_key=secrets.token_urlsafe(50))
    if setup == "deploy":
        env["TRUSTED_PROXY_COUNT"] = "1"  # as deploy/install.sh writes it: Caddy is the one proxy
    srv.setup(env, args.fixture)
    used: set[int] = set()
    web_port = srv.free_port(used)
    used.add(web_port)
    server = srv.start(env, slug=slug, port=web_port)
    caddy = None
    try:
        front = web_port
        if setup == "deploy":
            front = srv.free_port(used)
            caddy, _ = start_caddy(port=front, upstream_port=web_port)
        # Warm-up, not counted: each worker imports views and opens its database connection.
        run_load(base_urls=[f"http://127.0.0.1:{front}"], slug=slug, completion_code=completion_code,
                 n=4, concurrency=2, processes=1)
        runs = []
        for i in range(args.repeat):
            fig = measure(front_port=front, slug=slug, completion_code=completion_code, args=args)
            fig.update(setup=setup, run=i + 1, connections=args.connections, kind=args.kind,
                       seconds=args.seconds, participants=args.participants, concurrency=args.concurrency)
            fig["meets_bar"] = fig["flows_failed"] == 0 and fig["p99_ms"] < P99_BAR_MS
            print_figures(fig)
            runs.append(fig)
        return runs
    finally:
        if caddy is not None:
            caddy.terminate()
            caddy.wait(timeout=30)
        srv.stop(server)


def print_figures(fig: dict) -> None:
    """One run's figures as a few plain lines."""
    s = fig["slow"]
    print(f"\n[{fig['setup']} run {fig['run']}] {fig['connections']} slow connections ({fig['kind']}), "
          f"{fig['seconds']:.0f} s; {fig['participants']} participants, {fig['concurrency']} at a time")
    print(f"  flows: {fig['flows_completed']} completed, {fig['flows_failed']} failed"
          + (f" (first: {fig['first_error']})" if fig["first_error"] else ""))
    print(f"  participants' requests: {fig['requests']} answered, {fig['unanswered']} unanswered at the end "
          f"(counted as waiting until then); p50 {fig['p50_ms']} ms, p99 {fig['p99_ms']} ms, "
          f"max {fig['max_ms']} ms; statuses {fig['statuses']}")
    print(f"  slow connections: {s['opened']} opened, {s['ended_by_server']} ended by the server, "
          f"{s['refused']} refused, at most {s['max_open']} open, {s['open_at_end']} open at the end")
    print(f"  load average before {fig['loadavg_before']}, after {fig['loadavg_after']} (2 CPUs, shared)")
    print(f"  bar (p99 < {P99_BAR_MS:.0f} ms, no failed flow): {'PASS' if fig['meets_bar'] else 'FAIL'}")


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--setup", choices=("deploy", "serve", "both"), default="both")
    ap.add_argument("--connections", type=int, default=MAX_CONNECTIONS, help=f"slow connections (0..{MAX_CONNECTIONS})")
    ap.add_argument("--seconds", type=float, default=MAX_SECONDS, help=f"length of a run (at most {MAX_SECONDS:.0f})")
    ap.add_argument("--kind", choices=KINDS, default="mixed", help="slow heads, slow bodies, or half each")
    ap.add_argument("--interval", type=float, default=5.0, help="seconds between a slow client's bytes")
    ap.add_argument("--participants", type=int, default=60, help="participant flows per run")
    ap.add_argument("--concurrency", type=int, default=4, help="participants in flight")
    ap.add_argument("--repeat", type=int, default=1, help="runs per set-up")
    ap.add_argument("--database", choices=("postgres", "sqlite"), default="sqlite")
    ap.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL",
                                                             "postgres://postgres@127.0.0.1:5432/spotlight_bench"))
    ap.add_argument("--force-drop", action="store_true")
    ap.add_argument("--fixture", type=Path, default=srv.REPO / "fixtures" / "spotlight-replication.yaml")
    ap.add_argument("--json", type=Path, help="also write every run's figures to this file")
    args = ap.parse_args()
    try:
        check_bounds(host="127.0.0.1", connections=args.connections, seconds=args.seconds, kind=args.kind)
    except ValueError as exc:
        ap.error(str(exc))
    if args.seconds <= RAMP_S + 5 or args.participants < 1 or args.concurrency < 1 or args.repeat < 1:
        ap.error(f"--seconds must be over {RAMP_S + 5:.0f}; --participants, --concurrency, --repeat >= 1")
    return args


def main() -> int:
    """Run the chosen set-ups; exit status 0 if every run met the bar."""
    import yaml

    args = _args()
    study = yaml.safe_load(args.fixture.read_text())
    slug, code = study["slug"], study["completion_codes"]["completed"]
    runs = []
    for setup in (("deploy", "serve") if args.setup == "both" else (args.setup,)):
        print(f"\n=== {setup} ===")
        runs += run_setup(setup, args, slug=slug, completion_code=code)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))
    print("\nsummary:")
    for fig in runs:
        print(f"  {fig['setup']:6} run {fig['run']}: {fig['flows_completed']} ok / {fig['flows_failed']} failed, "
              f"p99 {fig['p99_ms']} ms, max {fig['max_ms']} ms, load {fig['loadavg_before']} -> "
              f"{'PASS' if fig['meets_bar'] else 'FAIL'}")
    return 0 if all(f["meets_bar"] for f in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
