"""The figures of a load run, printed, and the verdict against issue 11's targets.

Throughput is completed flows divided by the wall time of the load phase. Latency is per request,
timed on the client from sending to the last body byte (connecting included). Server CPU per
completed flow is the web server's (uWSGI) plus the database's (``bench.cpu``), divided by completed flows.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
from collections import Counter
from pathlib import Path

from bench.checks import DbChecks
from bench.cpu import CpuUsage
from bench.driver import DRIVER_CPU_BUDGET_MS, LoadResult
from bench.server import REPO

# Issue 11's targets (a 2-CPU machine, N=400, C=50).
TARGET_SERVER_CPU_MS_PER_FLOW = 25.0
TARGET_FLOWS_PER_S = 40.0
TARGET_P99_MS = 250.0


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile of ``values`` (``p`` in 0..100); NaN for no values."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def code_version() -> str:
    """The commit under test and how many paths differ from it (read-only git calls)."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                               text=True, timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha or 'unknown'} + {len(dirty)} uncommitted/untracked paths" if dirty else sha


def figures(load: LoadResult, cpu: CpuUsage | None, db: DbChecks | None, n: int) -> dict:
    """The run's headline figures as plain data (what ``--json`` writes and the verdict uses)."""
    completed = sum(1 for f in load.flows if f.ok)
    lat = load.stats.latencies_ms
    done = max(1, completed)
    out = {
        "n": n,
        "completed": completed,
        "errors": n - completed,
        "wall_s": round(load.wall_s, 3),
        "flows_per_s": round(completed / load.wall_s, 2) if load.wall_s else 0.0,
        "requests": load.stats.requests,
        "p50_ms": round(pct(lat, 50), 1),
        "p95_ms": round(pct(lat, 95), 1),
        "p99_ms": round(pct(lat, 99), 1),
        "max_ms": round(max(lat), 1) if lat else None,
        "driver_cpu_ms_per_request": round(load.driver_cpu_s / max(1, load.stats.requests) * 1000, 3),
    }
    if cpu:
        server_s = cpu.web_s + cpu.pg_backends_s + cpu.pg_background_s
        out.update(
            web_cpu_ms_per_flow=round(cpu.web_s / done * 1000, 1),
            db_cpu_ms_per_flow=round((cpu.pg_backends_s + cpu.pg_background_s) / done * 1000, 1),
            server_cpu_ms_per_flow=round(server_s / done * 1000, 1),
            machine_busy=round(cpu.machine_busy, 3),
        )
    if db:
        out.update(duplicates=db.dup_setting + db.dup_position, cells=db.cells, cell_spread=db.spread)
    return out


def verdict(fig: dict, db: DbChecks | None) -> list[str]:
    """The missed targets (empty: PASS)."""
    problems = []
    if fig["errors"]:
        problems.append(f"{fig['errors']} errors")
    if db is None:
        problems.append("no database checks")
    else:
        problems += db.problems(fig["completed"])
    if not fig["p99_ms"] < TARGET_P99_MS:
        problems.append(f"p99 {fig['p99_ms']:.0f} ms >= {TARGET_P99_MS:.0f} ms")
    if fig["flows_per_s"] < TARGET_FLOWS_PER_S:
        problems.append(f"{fig['flows_per_s']:.1f} flows/s < {TARGET_FLOWS_PER_S:.0f}")
    cpu = fig.get("server_cpu_ms_per_flow")
    if cpu is not None and cpu > TARGET_SERVER_CPU_MS_PER_FLOW:
        problems.append(f"server CPU {cpu:.0f} ms/flow > {TARGET_SERVER_CPU_MS_PER_FLOW:.0f}")
    return problems


def print_report(*, load: LoadResult, cpu: CpuUsage | None, db: DbChecks | None, n: int, concurrency: int,
                 slug: str, base_urls: list[str], configs: list[str], busy_before: float,
                 database_label: str, json_path: Path | None = None) -> bool:
    """Print every figure and the PASS/FAIL line; write ``json_path`` if given. True for PASS."""
    st = load.stats
    fig = figures(load, cpu, db, n)
    done = max(1, fig["completed"])
    print()
    print("=== spotlight participant-flow load benchmark ===")
    print(f"N={n}  concurrency={concurrency}  study={slug}  servers={' '.join(base_urls)}")
    for c in configs:
        print(f"server: {c}")
    print(f"code: {code_version()}")
    print(f"wall time: {load.wall_s:.2f} s{'  (hit --timeout!)' if load.timed_out else ''}")
    print(f"completed flows: {fig['completed']}/{n}  ->  {fig['flows_per_s']:.1f} completed flows/s")
    print(f"requests: {st.requests}  ({st.requests / max(load.wall_s, 1e-9):.0f} req/s; "
          f"statuses {dict(sorted(st.statuses.items()))})")
    if len(base_urls) > 1:
        print("  requests per server: " + ", ".join(f"{h}:{p} {k}" for (h, p), k in sorted(st.per_server.items())))
    print(f"latency ms over all requests: p50={fig['p50_ms']:.1f}  p95={fig['p95_ms']:.1f}  "
          f"p99={fig['p99_ms']:.1f}  max={fig['max_ms']}")
    print("  per request kind:            n    p50    p95    p99    max")
    for kind in sorted(st.by_kind, key=lambda k: -pct(st.by_kind[k], 50)):
        v = st.by_kind[kind]
        print(f"    {kind:<22} {len(v):6d} {pct(v, 50):6.1f} {pct(v, 95):6.1f} {pct(v, 99):6.1f} {max(v):6.1f}")
    failed = [f for f in load.flows if not f.ok]
    print(f"errors: {fig['errors']}  (failed flows {len(failed)}, of which transport errors {st.exceptions}; "
          f"flows not finished before --timeout {load.not_run})")
    for msg, k in Counter(f.error for f in failed).most_common(8):
        print(f"  {k} x {msg}")
    per_req = fig["driver_cpu_ms_per_request"]
    print(f"driver: {load.processes} processes, {load.driver_cpu_s:.2f} s CPU = {per_req:.3f} ms per request "
          f"({'within' if per_req <= DRIVER_CPU_BUDGET_MS else 'OVER'} its budget of {DRIVER_CPU_BUDGET_MS} ms)")
    if cpu:
        ncpu = os.cpu_count() or 1
        print(f"server CPU per completed flow: {fig['server_cpu_ms_per_flow']:.1f} ms "
              f"(target <= {TARGET_SERVER_CPU_MS_PER_FLOW:.0f}) = uWSGI {cpu.web_s / done * 1000:.1f} ms"
              + (f" + PostgreSQL backends {cpu.pg_backends_s / done * 1000:.1f} ms ({cpu.pg_backends_seen} seen)"
                 f" + PostgreSQL background {cpu.pg_background_s / done * 1000:.1f} ms (whole cluster)"
                 if database_label.startswith("postgres") else " (SQLite runs inside the workers)"))
        other = max(0.0, cpu.machine_s - cpu.web_s - cpu.pg_backends_s - cpu.pg_background_s - load.driver_cpu_s)
        print(f"machine: {cpu.machine_busy * 100:.0f}% busy of {ncpu} CPUs during the load "
              f"({busy_before * 100:.0f}% in the second before); other processes {other:.1f} s of "
              f"{cpu.machine_s:.1f} s busy CPU")
        server_ms = fig["server_cpu_ms_per_flow"]
        if server_ms:
            print(f"  CPU-bound ceiling: {ncpu} CPUs / {server_ms:.1f} ms per flow = {ncpu / server_ms * 1000:.0f} "
                  "flows/s for the server alone on this machine")
        if busy_before > 0.25 or other > 0.1 * cpu.machine_s:
            print("  WARNING: other processes used the CPU during this run; latency and flows/s are pessimistic "
                  "(CPU per flow is not).")
    if db:
        print(f"database ({database_label}, whole study):")
        print(f"  duplicate answers: {db.dup_setting} participant x setting pairs with > 1 TaskResponse; "
              f"{db.dup_position} participants with > 1 answer at one position")
        print(f"  participants: {db.participants}  by status {db.status}")
        print(f"  completed participants: {db.completed} (of this run's PIDs: {db.completed_this_run}); "
              f"completed but with missing/extra answers: {db.completed_incomplete_data}")
        print(f"  cell counts: {db.cells}  spread (max-min) = {db.spread}")
    problems = verdict(fig, db)
    ok = not problems
    print(("PASS" if ok else "FAIL") + f": target = no errors, no duplicate answers, cell spread <= 1, "
          f"server CPU <= {TARGET_SERVER_CPU_MS_PER_FLOW:.0f} ms/flow, p99 < {TARGET_P99_MS:.0f} ms, "
          f">= {TARGET_FLOWS_PER_S:.0f} completed flows/s" + (f"  -- missed: {'; '.join(problems)}" if problems else ""))
    if json_path:
        fig.update(concurrency=concurrency, servers=len(base_urls), database=database_label,
                   code=code_version(), pass_=ok, missed=problems)
        json_path.write_text(json.dumps(fig, indent=2, default=str) + "\n")
        print(f"figures written to {json_path}")
    return ok
