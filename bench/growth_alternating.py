"""The growth table measured against a reference in alternating rounds (``bench/load.py --sizes
... --alternate``), so that the machine's drift cancels out of it (issue 39).

Why: on this shared 2-CPU machine the server CPU per flow of one unchanged server drifts by a
third within a minute (36-52 ms per flow in successive 20 s windows of one 10,000-participant
run, with no trend; docs/benchmarks.md). A size measured in its own minutes then says as much
about those minutes as about the size, and the plain ``--sizes`` table compares a 10 s run at
400 participants with a 6-minute run at 10,000.

How: one server (G) on a fresh database grows through every size; for each size N it is filled
to N - W participants without measuring, then its last W flows (``--window``, default 400) are
measured in rounds alternated with a reference server (R) on another fresh database that never
holds more than W participants (a new one for each size): R G G R, each round W / 2 flows.
The table names each size by the participants the growing study held at the end of its window
(the first size may be a few more than asked: the warm-up's flows, 3 per uWSGI worker, are
participants of that study too).
Both servers are the Procfile's web command with the same settings; each round's CPU is read
from that server's uWSGI processes and its own database's PostgreSQL backends (SQLite runs in
the workers). The figure of size N is G's CPU per completed flow over its last W flows; the
*ratio* is that figure over R's in the same minutes. A participant's cost is flat when the
ratio at the largest size stays within :data:`bench.growth.TARGET_GROWTH` of 1; at the first
size (G and R both hold at most W participants) the ratio shows the method's own noise.
"""
from __future__ import annotations

import json
import secrets
from urllib.parse import urlsplit

from bench import server as srv
from bench.checks import db_checks
from bench.cpu import CpuMeter
from bench.driver import run_load
from bench.growth import TARGET_GROWTH


def _reference_url(database: str, url: str) -> str:
    """The reference server's PostgreSQL URL: the run's database name with ``_ref``."""
    if database != "postgres":
        return url
    parts = urlsplit(url)
    return parts._replace(path=parts.path.rstrip("/") + "_ref").geturl()


class _Side:
    """One server on its own fresh database: its URL, uWSGI master and database URL."""

    def __init__(self, args, database_url: str, slug: str, fixture):
        self.database_url = srv.fresh_database(args.database, database_url,
                                               allow_drop_any=args.allow_drop_any, force_drop=args.force_drop)
        self.env = srv.production_env(self.database_url, secret_key=secrets.token_urlsafe(50),
                                      workers=args.workers, threads=args.threads, preload=args.preload,
                                      access_log=not args.no_access_log)
        srv.setup(self.env, fixture)
        self.server = srv.start(self.env, slug=slug, port=srv.free_port())
        self.pids: list[str] = []
        self.completed = 0

    def stop(self) -> None:
        srv.stop(self.server)


def alternating_rows(rows: list[tuple[int, float, float, float, float, float]], window: int) -> list[str]:
    """The table's lines (Markdown, as docs/benchmarks.md records it) and a last verdict line.

    ``rows`` holds, per size: participants, the growing study's CPU per completed flow over its
    last ``window`` flows, of which uWSGI, of which the database (all ms), the reference's CPU
    per flow in the same minutes (ms), and the ratio of the two. The verdict compares the ratio
    at the largest size with 1 + :data:`bench.growth.TARGET_GROWTH`, and also prints the
    unpaired growth from the first size to the last.
    """
    lines = [
        f"| participants (N) | server CPU per flow, the last {window} flows at N | of which uWSGI "
        f"| of which the database | reference (at most {window}), the same minutes | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for n, g_ms, web, db_ms, r_ms, ratio in rows:
        lines.append(f"| {n:,} | {g_ms:.1f} ms | {web:.1f} ms | {db_ms:.1f} ms | {r_ms:.1f} ms | {ratio:.2f} |")
    last_ratio = rows[-1][5]
    plain = rows[-1][1] / rows[0][1] - 1
    verdict = "PASS" if last_ratio <= 1 + TARGET_GROWTH else "FAIL"
    lines.append(f"growth at {rows[-1][0]:,} against the reference: {last_ratio - 1:+.1%} "
                 f"(target <= {TARGET_GROWTH:.0%}): {verdict}; "
                 f"unpaired, {rows[-1][0]:,} against {rows[0][0]:,}: {plain:+.1%}")
    return lines


def run_alternating(args, sizes: list[int], slug: str, completion_code: str) -> int:
    """Measure ``sizes`` as the module docstring says; print each round, the table and the
    verdict. Returns the exit status: 0 when every flow completed, the database checks found
    nothing and the ratio at the largest size is within the target, else 1. Raises SystemExit
    with a message for an odd or too small ``--window`` or sizes that do not increase from at
    least ``--window``."""
    window = args.window
    if window < 2 or window % 2:
        raise SystemExit("--window must be an even number >= 2")
    if sizes != sorted(sizes) or sizes[0] < window:
        raise SystemExit(f"--alternate needs increasing sizes, the first at least --window ({window})")
    is_pg = args.database == "postgres"
    common = dict(slug=slug, completion_code=completion_code, concurrency=args.concurrency,
                  processes=args.processes, split="request", timeout=args.timeout,
                  request_timeout=args.request_timeout, drafts_per_task=args.drafts_per_task)
    workers = args.workers or srv.default_workers()

    def load(side: _Side, n: int, measure: bool):
        meter = CpuMeter([side.server.proc.pid], side.database_url if is_pg else None)
        if measure:
            meter.start()
        result = run_load(base_urls=[side.server.base_url], n=n, **common)
        cpu = meter.stop() if measure else None
        side.pids += [f.pid for f in result.flows]
        ok = sum(1 for f in result.flows if f.ok)
        side.completed += ok
        return ok, len(result.flows) - ok, cpu

    print(f"=== alternating growth: sizes {', '.join(f'{n:,}' for n in sizes)}, window {window} "
          f"(rounds R G G R of {window // 2} flows) ===")
    grow = _Side(args, args.database_url, slug, args.fixture)
    failed = 0
    rows = []
    try:
        load(grow, 3 * workers, measure=False)  # warm-up, not counted
        done = 3 * workers
        for n in sizes:
            fill = n - window - done
            if fill > 0:
                ok, bad, _ = load(grow, fill, measure=False)
                failed += bad
                done += fill
            ref = _Side(args, _reference_url(args.database, args.database_url), slug, args.fixture)
            try:
                load(ref, 3 * workers, measure=False)
                sums = {"G": [0.0, 0.0, 0], "R": [0.0, 0.0, 0]}  # web s, database s, completed
                for label in "RGGR":
                    side = grow if label == "G" else ref
                    ok, bad, cpu = load(side, window // 2, measure=True)
                    failed += bad
                    if label == "G":
                        done += window // 2
                    sums[label][0] += cpu.web_s
                    sums[label][1] += cpu.pg_backends_s
                    sums[label][2] += ok
                    print(f"  size {n:,}: round {label} ({'growing study' if label == 'G' else 'reference'}"
                          f"): {ok} completed, {bad} failed, "
                          f"{1000 * (cpu.web_s + cpu.pg_backends_s) / max(1, ok):.1f} ms per flow "
                          f"(busy machine {cpu.machine_busy:.0%})", flush=True)
            finally:
                ref.stop()
            g, r = sums["G"], sums["R"]
            g_ms = 1000 * (g[0] + g[1]) / max(1, g[2])
            r_ms = 1000 * (r[0] + r[1]) / max(1, r[2])
            rows.append((done, g_ms, 1000 * g[0] / max(1, g[2]), 1000 * g[1] / max(1, g[2]), r_ms, g_ms / r_ms))
    finally:
        grow.stop()
    db = None if args.skip_db_checks else db_checks(grow.database_url, slug, grow.pids)
    print("\nGrowth, alternated with a fresh reference study (this run):")
    lines = alternating_rows(rows, window)
    print("\n".join(lines))
    ok = "): PASS;" in lines[-1]
    problems: list[str] = []
    if db is not None:
        problems = db.problems(grow.completed)
        print(f"database of the growing study: {db.participants:,} participants, duplicate answers "
              f"{db.dup_setting + db.dup_position}, cell spread {db.spread}, {failed} failed flows"
              + (f"; PROBLEMS: {problems}" if problems else ""))
    if args.json:
        args.json.write_text(json.dumps({
            "window": window, "failed": failed, "problems": problems,
            "rows": [dict(zip(("participants", "cpu_ms_per_flow", "web_ms_per_flow", "db_ms_per_flow",
                               "reference_ms_per_flow", "ratio"), row)) for row in rows],
            "verdict": lines[-1],
        }, indent=2))
    ok &= not problems
    return 0 if ok and not failed else 1
