#!/usr/bin/env python
"""Same-run comparison with the paper's original study app (issue 39 §4): server CPU per
completed participant flow of this project against the original, in alternating rounds.

The original (a small Flask app published with the Spotlight paper) is not part of this
repository and this script neither fetches nor builds it: start it yourself, served by the same
uWSGI (2 workers, 1 thread each) on 127.0.0.1, and pass its URL and its uWSGI master's pid. This
script starts this project's server itself (the Procfile's web command, a fresh database, as
``bench/load.py`` does), then runs the rounds given by ``--rounds``: ``A`` a round of the
original, ``B`` one of this project, each ``--n`` flows, ``--concurrency`` at a time. Both
servers stay up for the whole run, so every round of one variant follows the same study growth.

Each participant follows the pages' forms as a browser does: this project's flow through
``bench.flow.walk`` without typed drafts (``drafts_per_task=0``: the original has none), the
original's by :func:`walk_original` (its start link, every form with its hidden fields, the
textareas filled, the first choice of each radio group, 302/303 followed with GET and 307 with
the same POST). CPU is read from each server's own process tree (``bench.cpu.web_server_cpu``:
the uWSGI master and its workers); on SQLite both databases run inside their workers. Each
driver is one process (the original's is this one, this project's ``bench.driver`` child), so
that neither server shares the machine's CPUs with more driver processes than the other: with
two driver processes for this project and one for the original (until 2026-12-07) the ratio
read higher (docs/benchmarks.md). The machine's load average (``/proc/loadavg``) is printed
with each round, since a shared machine drifts.

Empty the original's database before each run (its ``flask --app userstudy init-db``): its
arrival counts the finished participants with scans of its whole table, so its cost per flow
grows with every run made on the same file (docs/benchmarks.md), while this script gives this
project a fresh database each time.

Usage (from the repository root, with the repo's venv):

    .venv/bin/python bench/original_compare.py --original-url http://127.0.0.1:8152 \\
        --original-pid 12345 --n 300 --rounds ABBA --database sqlite
"""
from __future__ import annotations

import argparse
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: import bench.*

from bench import server as srv  # noqa: E402
from bench.cpu import web_server_cpu  # noqa: E402
from bench.driver import Browser, Stats, _parse_servers, run_load  # noqa: E402
from bench.flow import FlowError  # noqa: E402
from bench.original_flow import participant  # noqa: E402
from bench.transport import Loop  # noqa: E402

DEFAULT_FIXTURE = srv.REPO / "fixtures" / "spotlight-replication.yaml"


async def walk_original(send, pid: str) -> int:
    """One participant through the original app (:func:`bench.original_flow.participant`), each
    request sent by ``send``. Returns the number of requests; FlowError on a status other than
    200, 302, 303 or 307, or a flow longer than ``original_flow.MAX_PAGES`` pages."""
    flow = participant(pid)
    request = next(flow)
    while True:
        r = await send(*request)
        try:
            request = flow.send((r.status, r.headers.get("location", ""), r.body.decode("utf-8", "replace")))
        except StopIteration as end:
            return end.value


def run_original(base_url: str, n: int, concurrency: int, timeout: float) -> tuple[int, int, float]:
    """``n`` participants through the original at ``base_url``, ``concurrency`` at a time, in
    this process. Returns (completed flows, failed flows, wall seconds)."""
    servers = _parse_servers([base_url])
    stats = Stats()
    todo = iter(range(n))
    done = [0, 0]
    tag = secrets.token_hex(4)

    async def participant_loop() -> None:
        for i in todo:
            browser = Browser(servers, split="request", request_timeout=60.0, stats=stats)
            try:
                await walk_original(browser.send, f"cmp{tag}{i:06d}")
                done[0] += 1
            except FlowError:
                done[1] += 1
            finally:
                browser.close()

    loop = Loop()
    for _ in range(min(concurrency, n)):
        loop.spawn(participant_loop())
    t0 = time.monotonic()
    loop.run(t0 + timeout)
    return done[0], done[1], time.monotonic() - t0


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    """Run the rounds; print each round's CPU per completed flow and the ratio of the means."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--original-url", required=True, help="the running original app, http://127.0.0.1:PORT")
    p.add_argument("--original-pid", type=int, required=True, help="its uWSGI master's pid")
    p.add_argument("--n", type=int, default=300, help="flows per round")
    p.add_argument("--concurrency", "-c", type=int, default=20)
    p.add_argument("--rounds", default="ABBA", help="A: the original, B: this project")
    p.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/spotlight_bench")
    p.add_argument("--timeout", type=float, default=900.0)
    args = p.parse_args()
    if set(args.rounds) - {"A", "B"}:
        p.error("--rounds takes only A and B")
    import yaml

    study = yaml.safe_load(DEFAULT_FIXTURE.read_text())
    slug, code = study["slug"], study["completion_codes"]["completed"]
    database_url = srv.fresh_database(args.database, args.database_url)
    env = srv.production_env(database_url, secret_key=secrets.token_urlsafe(50))
    srv.setup(env, DEFAULT_FIXTURE)
    server = srv.start(env, slug=slug, port=srv.free_port())
    per_flow: dict[str, list[float]] = {"A": [], "B": []}
    try:
        workers = srv.default_workers()
        run_load(base_urls=[server.base_url], slug=slug, completion_code=code, n=3 * workers,
                 concurrency=workers, processes=1, drafts_per_task=0)
        run_original(args.original_url, 3 * workers, workers, args.timeout)  # its warm-up
        for label in args.rounds:
            before_load = _loadavg()
            if label == "A":
                c0 = web_server_cpu([args.original_pid])
                ok, failed, wall = run_original(args.original_url, args.n, args.concurrency, args.timeout)
                cpu = web_server_cpu([args.original_pid]) - c0
            else:
                c0 = web_server_cpu([server.proc.pid])
                t0 = time.monotonic()
                load = run_load(base_urls=[server.base_url], slug=slug, completion_code=code, n=args.n,
                                concurrency=args.concurrency, processes=1, timeout=args.timeout,  # as the original's
                                drafts_per_task=0)
                cpu = web_server_cpu([server.proc.pid]) - c0
                wall = time.monotonic() - t0
                ok = sum(1 for f in load.flows if f.ok)
                failed = len(load.flows) - ok
            ms = 1000 * cpu / max(1, ok)
            per_flow[label].append(ms)
            name = "original" if label == "A" else "this project"
            print(f"round {label} ({name}): {ok} completed, {failed} failed, {wall:.1f} s, "
                  f"server CPU {ms:.1f} ms per completed flow; loadavg {before_load} -> {_loadavg()}",
                  flush=True)
    finally:
        srv.stop(server)
    if per_flow["A"] and per_flow["B"]:
        a = sum(per_flow["A"]) / len(per_flow["A"])
        b = sum(per_flow["B"]) / len(per_flow["B"])
        print(f"mean: original {a:.1f} ms, this project {b:.1f} ms per flow: ratio {b / a:.2f}x (target <= 1.8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
