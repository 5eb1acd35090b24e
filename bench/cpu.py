"""CPU accounting from /proc: the app servers, the database's processes and the whole machine.

- **the web server (uWSGI)**: each master process and its workers (``utime + stime`` of the live workers, plus
  the master's own and its reaped children's), so a worker restarted during the run still counts.
- **PostgreSQL backends**: the server processes connected to the benchmark's database, found in
  ``pg_stat_activity`` by a poller every 0.5 s (from a connection of its own, left out), each
  counted from its value at the start (or from zero when it started during the run) to the last
  value seen. Other databases' backends (other users of a shared PostgreSQL) are left out.
- **PostgreSQL background**: the postmaster's helpers (WAL writer, checkpointer, background
  writer, autovacuum); they work for every database of the cluster, so on a shared machine this
  figure is an upper bound of our share.
- With SQLite the database runs inside the uWSGI workers: its CPU is in theirs.

Units: seconds of CPU. ``/proc/<pid>/stat`` fields 14-17 (utime, stime, cutime, cstime) in
clock ticks (``SC_CLK_TCK``), see proc(5).
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """(comm, ppid, own ticks, reaped children's ticks) of ``pid``; None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm = text[text.index("(") + 1:text.rindex(")")]
    rest = text[text.rindex(")") + 2:].split()
    return comm, int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14])


def _all_procs() -> dict[int, tuple[str, int, int, int]]:
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            s = _stat(int(d))
            if s:
                out[int(d)] = s
    return out


def machine_cpu() -> tuple[float, float]:
    """(busy, total) clock ticks of the whole machine since boot, from /proc/stat."""
    f = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)
    return sum(f) - idle, sum(f)


def machine_busy(seconds: float = 1.0) -> float:
    """Share (0..1) of the machine's CPU that was busy over the next ``seconds``."""
    b0, t0 = machine_cpu()
    time.sleep(seconds)
    b1, t1 = machine_cpu()
    return (b1 - b0) / max(1.0, t1 - t0)


def web_server_cpu(master_pids: list[int]) -> float:
    """CPU seconds so far of the uWSGI masters ``master_pids`` and their workers."""
    procs = _all_procs()
    total = 0
    for pid, (_, ppid, own, children) in procs.items():
        if pid in master_pids:
            total += own + children
        elif ppid in master_pids:
            total += own
    return total / _TICK


def _postgres_background() -> float:
    """CPU seconds of the postmaster and its non-client helpers (cmdline without a client)."""
    total = 0
    for pid, (comm, _, own, _children) in _all_procs().items():
        if comm != "postgres":
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "(" not in cmd and "[local]" not in cmd:  # a client backend names its client's address
            total += own
    return total / _TICK


@dataclass
class CpuUsage:
    """CPU seconds used during a measurement, and the machine's busy share (0..1)."""

    web_s: float
    pg_backends_s: float
    pg_background_s: float
    pg_backends_seen: int
    machine_busy: float
    machine_s: float


class CpuMeter:
    """Measure CPU between :meth:`start` and :meth:`stop` (see the module docstring).

    ``database_url`` is a PostgreSQL URL (its backends are counted) or None (SQLite).
    """

    def __init__(self, master_pids: list[int], database_url: str | None):
        self.master_pids = master_pids
        self.database_url = database_url
        self._base: dict[int, int] = {}
        self._last: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn = None

    def _poll_backends(self, first: bool = False) -> None:
        if self._conn is None:
            return
        rows = self._conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
        for (pid,) in rows:
            s = _stat(pid)
            if s is None:
                continue
            self._base.setdefault(pid, s[2] if first else 0)
            self._last[pid] = s[2]

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            self._poll_backends()

    def start(self) -> None:
        """Take the starting values and start the backend poller (PostgreSQL only)."""
        if self.database_url:
            import psycopg

            self._conn = psycopg.connect(self.database_url, autocommit=True)
            self._poll_backends(first=True)
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        self._g0 = web_server_cpu(self.master_pids)
        self._bg0 = _postgres_background() if self.database_url else 0.0
        self._m0 = machine_cpu()

    def stop(self) -> CpuUsage:
        """Take the final values; return the :class:`CpuUsage` of the interval."""
        m1 = machine_cpu()
        g1 = web_server_cpu(self.master_pids)
        bg1 = _postgres_background() if self.database_url else 0.0
        if self._thread:
            self._stop.set()
            self._thread.join()
            self._poll_backends()
            self._conn.close()
        backends = sum(self._last[p] - self._base[p] for p in self._last) / _TICK
        busy_ticks, total_ticks = m1[0] - self._m0[0], m1[1] - self._m0[1]
        return CpuUsage(
            web_s=g1 - self._g0,
            pg_backends_s=backends,
            pg_background_s=bg1 - self._bg0,
            pg_backends_seen=len(self._last),
            machine_busy=busy_ticks / max(1.0, total_ticks),
            machine_s=busy_ticks / _TICK,
        )
