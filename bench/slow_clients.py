"""Slow clients ("slowloris"): connections that send a request a few bytes at a time and never
finish it, bounded and on the loopback only.

Two kinds, as the attacks of that name do:

- ``headers``: ``GET /s/<slug>/ HTTP/1.1`` and a ``Host`` line, then one more header line every
  ``interval_s`` seconds, never the blank line that ends the head;
- ``body``: a complete head of ``POST /s/<slug>/draft/`` announcing a 1 MB form, then one byte
  of the body every ``interval_s`` seconds.

A connection the server closes (or answers, e.g. 408 or 400) is opened again at once, so the
pressure stays at ``connections`` for the whole run, as an attacker's would. Used by
``bench/slowloris.py``, which measures participants' flows at the same time.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

#: Hard bounds of this driver (issue 38): it is a test of our own server, not a tool.
MAX_CONNECTIONS = 200
MAX_SECONDS = 60.0
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
KINDS = ("headers", "body", "mixed")
BODY_BYTES = 1_000_000


@dataclass
class SlowStats:
    """What the slow clients saw: connections opened, connections the server ended (closed or
    answered), connections refused, the most open at once, and how many were open at the end."""

    opened: int = 0
    ended_by_server: int = 0
    refused: int = 0
    max_open: int = 0
    open_at_end: int = 0


def check_bounds(*, host: str, connections: int, seconds: float, kind: str) -> None:
    """Raise ValueError unless ``host`` is the loopback, ``connections`` is 0..200, ``seconds``
    is over 0 and at most 60, and ``kind`` is one of :data:`KINDS`."""
    if host not in LOOPBACK:
        raise ValueError(f"slow clients go to the loopback only (127.0.0.1), not {host!r}")
    if not 0 <= connections <= MAX_CONNECTIONS:
        raise ValueError(f"at most {MAX_CONNECTIONS} slow connections, not {connections}")
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"a run lasts at most {MAX_SECONDS:.0f} s, not {seconds}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")


def _head(kind: str, host: str, port: int, slug: str, n: int) -> bytes:
    if kind == "headers":
        return (f"GET /s/{slug}/?slow={n} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                "User-Agent: spotlight-slowloris/1\r\n").encode()
    return (f"POST /s/{slug}/draft/ HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "User-Agent: spotlight-slowloris/1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {BODY_BYTES}\r\n\r\n").encode()


async def _one(n: int, kind: str, host: str, port: int, slug: str, interval_s: float, deadline: float,
               stats: SlowStats, open_now: list[int]) -> None:
    """Keep one slow connection open until ``deadline`` (monotonic), reopening it when ended."""
    while time.monotonic() < deadline:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout=5)
        except (OSError, asyncio.TimeoutError):
            stats.refused += 1
            await asyncio.sleep(0.5)
            continue
        stats.opened += 1
        open_now[0] += 1
        stats.max_open = max(stats.max_open, open_now[0])
        try:
            writer.write(_head(kind, host, port, slug, n))
            await writer.drain()
            sent = 0
            while time.monotonic() < deadline:
                try:
                    data = await asyncio.wait_for(reader.read(4096), timeout=interval_s)
                except asyncio.TimeoutError:
                    # Still waiting for us: one more header line, or one more body byte.
                    writer.write(f"X-Slow-{sent}: 1\r\n".encode() if kind == "headers" else b"a")
                    await writer.drain()
                    sent += 1
                    continue
                stats.ended_by_server += 1  # closed (b"") or answered (408, 400, ...)
                del data
                break
        except OSError:
            stats.ended_by_server += 1
        finally:
            open_now[0] -= 1
            writer.close()
        await asyncio.sleep(0.05)


async def _run(*, host: str, port: int, slug: str, connections: int, seconds: float, kind: str,
               interval_s: float) -> SlowStats:
    stats, open_now = SlowStats(), [0]
    deadline = time.monotonic() + seconds
    kinds = [kind] * connections if kind != "mixed" else [("headers", "body")[i % 2] for i in range(connections)]
    tasks = [asyncio.create_task(_one(i, k, host, port, slug, interval_s, deadline, stats, open_now))
             for i, k in enumerate(kinds)]
    # The count just before the end: the connections the server still let hang.
    await asyncio.sleep(max(0.0, seconds - 1.0))
    stats.open_at_end = open_now[0]
    await asyncio.gather(*tasks, return_exceptions=True)
    return stats


def run_slow_clients(*, host: str, port: int, slug: str, connections: int, seconds: float,
                     kind: str = "headers", interval_s: float = 5.0) -> SlowStats:
    """Hold ``connections`` slow connections to ``host:port`` for ``seconds`` (blocking).

    ``kind`` is ``headers``, ``body`` or ``mixed`` (half each); a header line or body byte is
    sent every ``interval_s`` seconds. Raises ValueError outside the bounds of
    :func:`check_bounds`.
    """
    check_bounds(host=host, connections=connections, seconds=seconds, kind=kind)
    if connections == 0:
        time.sleep(seconds)
        return SlowStats()
    return asyncio.run(_run(host=host, port=port, slug=slug, connections=connections, seconds=seconds,
                            kind=kind, interval_s=interval_s))
