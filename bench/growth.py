"""The growth table of ``bench/load.py --sizes``: one row per study size, each measured on a
fresh database in the same run, and whether the cost per flow stayed flat (issue 39)."""
from __future__ import annotations

#: CPU per completed flow at the largest size may exceed the smallest size's by this share.
TARGET_GROWTH = 0.15


def parse_sizes(text: str) -> list[int]:
    """``"400,2400,10000"`` as ``[400, 2400, 10000]``; ValueError naming a bad entry."""
    sizes = []
    for part in text.split(","):
        part = part.strip().replace("_", "")
        if not part.isdigit() or int(part) < 1:
            raise ValueError(f"--sizes takes whole numbers >= 1 separated by commas, not {part!r}")
        sizes.append(int(part))
    if not sizes:
        raise ValueError("--sizes needs at least one size")
    return sizes


def growth_rows(results: list[tuple[int, dict]]) -> list[str]:
    """The table's lines (Markdown, as docs/benchmarks.md records it) and a last verdict line.

    ``results`` holds ``(participants, figures)`` per size, the figures of
    :func:`bench.report.figures` (CPU in ms per completed flow, flows/s, p99 in ms).
    """
    lines = [
        "| participants (N) | server CPU per completed flow | of which uWSGI | of which PostgreSQL "
        "| completed flows/s | p99 |",
        "|---|---|---|---|---|---|",
    ]
    for n, fig in results:
        def ms(key: str) -> str:
            value = fig.get(key)
            return "—" if value is None else f"{value:.1f} ms"
        lines.append(
            f"| {n:,} | {ms('server_cpu_ms_per_flow')} | {ms('web_cpu_ms_per_flow')} "
            f"| {ms('db_cpu_ms_per_flow')} | {fig.get('flows_per_s', 0):.1f} | {fig.get('p99_ms', 0):.0f} ms |"
        )
    first = results[0][1].get("server_cpu_ms_per_flow")
    last = results[-1][1].get("server_cpu_ms_per_flow")
    if len(results) > 1 and first and last:
        growth = last / first - 1
        ok = growth <= TARGET_GROWTH
        lines.append(
            f"growth {results[0][0]:,} -> {results[-1][0]:,}: {growth:+.1%} CPU per completed flow "
            f"(target <= {TARGET_GROWTH:.0%}): {'PASS' if ok else 'FAIL'}"
        )
    return lines
