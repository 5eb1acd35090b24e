"""The load driver: many simulated participants at once, from several processes, on a lean client.

Why not httpx: it costs about 5 ms of CPU per request on this machine, more than the server is
meant to spend, so the driver would be the bottleneck and take the CPU from the server. This
driver speaks HTTP/1.1 itself on plain sockets under one epoll loop per process
(``bench.transport``; one keep-alive connection per participant and server, reconnecting when
the server closes it, as the uWSGI workers do after every response), keeps cookies in a
dict, and parses pages with regular expressions (``bench.flow``).
It measures its own CPU (``time.process_time`` of every driver process) and reports it per
request, so a run shows whether the driver stayed under its budget of 0.5 ms per request.

Load model: a closed loop without think time. ``concurrency`` participants are in flight at any
time, spread over ``processes`` OS processes (each one event loop); each starts the next
participant as soon as one finishes. With several servers (scale-out), each participant's
requests go round-robin over the servers (``split="request"``, as a proxy without sticky
sessions would send them) or each participant stays on one server (``split="flow"``).
"""
from __future__ import annotations

import multiprocessing as mp
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from bench.flow import DRAFTS_PER_TASK, FlowError, FlowResult, Response, walk
from bench.transport import CHUNKED, UNTIL_CLOSE, Conn, Loop, exchange

USER_AGENT = "spotlight-bench/2"
_HEADER_RE = re.compile(r"\r\n([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\r]*?)[ \t]*(?=\r\n|$)")
DRIVER_CPU_BUDGET_MS = 0.5  # per request: the driver must not be the bottleneck


@dataclass
class Stats:
    """Latencies (ms) per request kind, HTTP statuses, request and exception counts."""

    by_kind: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter = field(default_factory=Counter)
    per_server: Counter = field(default_factory=Counter)
    requests: int = 0
    exceptions: int = 0

    def record(self, kind: str, ms: float, status: int) -> None:
        """Add one answered request (see ``bench.flow.Record``)."""
        self.by_kind[kind].append(ms)
        self.statuses[status] += 1

    def merge(self, other: "Stats") -> None:
        """Add another process's statistics to these."""
        for kind, values in other.by_kind.items():
            self.by_kind[kind].extend(values)
        self.statuses.update(other.statuses)
        self.per_server.update(other.per_server)
        self.requests += other.requests
        self.exceptions += other.exceptions

    @property
    def latencies_ms(self) -> list[float]:
        """All latencies, every kind together."""
        return [v for values in self.by_kind.values() for v in values]


@dataclass
class LoadResult:
    """A whole run: every flow's result, merged statistics, wall time of the load phase (s),
    the driver processes' CPU (s), how many flows did not finish before the timeout, and the
    number of driver processes."""

    flows: list[FlowResult]
    stats: Stats
    wall_s: float
    driver_cpu_s: float
    not_run: int
    timed_out: bool
    processes: int


def _dechunk(body: bytes) -> bytes:
    out, i = [], 0
    while True:
        j = body.index(b"\r\n", i)
        size = int(body[i:j].split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        out.append(body[j + 2:j + 2 + size])
        i = j + 2 + size + 2


class Browser:
    """One participant's browser: a cookie jar and one keep-alive connection per server.

    ``servers`` are ``(host, port)`` pairs; ``split`` is ``"request"`` (round-robin per request)
    or ``"flow"`` (the first server given only; the caller rotates the list per participant).
    """

    def __init__(self, servers: list[tuple[str, int]], *, split: str, request_timeout: float, stats: Stats):
        self.servers = servers if split == "request" else servers[:1]
        self.request_timeout = request_timeout
        self.stats = stats
        self.cookies: dict[str, str] = {}
        self.conns: dict[tuple[str, int], Conn] = {}
        self._next = 0

    def close(self) -> None:
        """Close every open connection."""
        for conn in self.conns.values():
            conn.close()
        self.conns.clear()

    async def send(self, method: str, path: str, body: bytes | None) -> Response:
        """One request (see ``bench.flow.Send``); FlowError on a transport error or timeout."""
        server = self.servers[self._next % len(self.servers)]
        self._next += 1
        self.stats.requests += 1
        self.stats.per_server[server] += 1
        t0 = time.perf_counter()
        try:
            status, headers, data = await self._exchange(server, self._request(server, method, path, body))
        except (OSError, ValueError, IndexError, TimeoutError) as exc:
            self.stats.exceptions += 1
            conn = self.conns.pop(server, None)
            if conn:
                conn.close()
            raise FlowError(f"{method} {path.split('?')[0]}: {type(exc).__name__}: {exc}") from None
        return Response(status, headers, data, (time.perf_counter() - t0) * 1000)

    def _request(self, server: tuple[str, int], method: str, path: str, body: bytes | None) -> bytes:
        host = f"{server[0]}:{server[1]}"
        head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {USER_AGENT}\r\nAccept: text/html\r\n"
        if self.cookies:
            head += "Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()) + "\r\n"
        if body is None:
            return (head + "\r\n").encode("latin-1")
        # Django's CSRF check over http compares Origin with the Host the server saw.
        head += (f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n"
                 f"Origin: http://{host}\r\nReferer: http://{host}{path}\r\n\r\n")
        return head.encode("latin-1") + body

    def _connect(self, server: tuple[str, int]) -> Conn:
        conn = self.conns[server] = Conn(server)
        return conn

    async def _exchange(self, server, request: bytes) -> tuple[int, dict[str, str], bytes]:
        conn = self.conns.get(server)
        if conn is not None and conn.closed:
            conn = None
        reused = conn is not None
        if conn is None:
            conn = self._connect(server)
        try:
            raw = await exchange(conn, request, self.request_timeout)
        except (ConnectionResetError, BrokenPipeError):
            conn.close()
            del self.conns[server]
            if not reused or conn.buf:
                raise
            # The server closed an idle keep-alive connection before reading this request (it
            # answered nothing): send it again on a new connection, as browsers do.
            conn = self._connect(server)
            raw = await exchange(conn, request, self.request_timeout)
        status, headers, close = self._parse_head(raw[:conn.head_end])
        data = raw[conn.head_end:]
        if conn.length == CHUNKED:
            data = _dechunk(data)
        if close or conn.closed or conn.length == UNTIL_CLOSE:
            conn.close()
            del self.conns[server]
        return status, headers, data

    def _parse_head(self, head: bytes) -> tuple[int, dict[str, str], bool]:
        text = head.decode("latin-1")
        headers: dict[str, str] = {}
        for name, value in _HEADER_RE.findall(text):
            name = name.lower()
            if name == "set-cookie":
                self._set_cookie(value)
            headers[name] = value
        close = text.startswith("HTTP/1.0") or headers.get("connection", "").lower() == "close"
        return int(text[9:12]), headers, close

    def _set_cookie(self, value: str) -> None:
        pair, _, attrs = value.partition(";")
        name, _, cookie = pair.strip().partition("=")
        attrs = attrs.lower()
        if "max-age=0" in attrs or "1970" in attrs:  # Django deletes with Max-Age=0 and a 1970 date
            self.cookies.pop(name, None)
        else:
            self.cookies[name] = cookie


def _parse_servers(base_urls: list[str]) -> list[tuple[str, int]]:
    out = []
    for url in base_urls:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"{url!r}: the driver speaks plain http://host:port only")
        out.append((parts.hostname, parts.port or 80))
    return out


def _run_process(cfg: dict, stats: Stats) -> tuple[list[FlowResult], bool]:
    """This process's share: ``cfg["concurrency"]`` participant loops on one :class:`Loop`.
    Returns the flows' results and whether the load timeout cut the run short."""
    servers = _parse_servers(cfg["base_urls"])
    todo = iter(range(cfg["n"]))
    results: list[FlowResult] = []

    async def participant_loop() -> None:
        for i in todo:
            # split="flow": participant i stays on server (offset + i) % k.
            k = (cfg["offset"] + i) % len(servers)
            browser = Browser(servers[k:] + servers[:k], split=cfg["split"],
                              request_timeout=cfg["request_timeout"], stats=stats)
            try:
                results.append(await walk(browser.send, stats.record, slug=cfg["slug"],
                                          completion_code=cfg["completion_code"],
                                          drafts_per_task=cfg["drafts_per_task"]))
            finally:
                browser.close()

    loop = Loop()
    for _ in range(min(cfg["concurrency"], cfg["n"])):
        loop.spawn(participant_loop())
    finished = loop.run(time.monotonic() + cfg["timeout"])
    return results, not finished


def _child(cfg: dict, start, pipe) -> None:
    """One driver process: wait for the common start, run its share, send back its results."""
    stats = Stats()
    start.wait()
    cpu0, t0 = time.process_time(), time.monotonic()
    results, timed_out = _run_process(cfg, stats)
    cpu, t1 = time.process_time() - cpu0, time.monotonic()
    stats.by_kind = dict(stats.by_kind)
    pipe.send((results, stats, t0, t1, cpu, cfg["n"] - len(results), timed_out))
    pipe.close()


def _shares(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def run_load(*, base_urls: list[str], slug: str, completion_code: str, n: int, concurrency: int,
             processes: int = 2, split: str = "request", timeout: float = 600.0,
             request_timeout: float = 30.0, drafts_per_task: int = DRAFTS_PER_TASK) -> LoadResult:
    """Send ``n`` participants, ``concurrency`` at a time, from ``processes`` driver processes.

    Parameters: ``base_urls`` (``http://host:port``, one per app server), the study ``slug`` and
    the ``completion_code`` the survey must redirect with; ``split`` as in the module docstring;
    ``timeout`` limits the whole load phase and ``request_timeout`` one request (seconds);
    ``drafts_per_task`` typed drafts before each task's POST (``bench.flow.walk``). Returns a :class:`LoadResult`. Raises ValueError for a URL that is not plain ``http``.
    """
    _parse_servers(base_urls)
    processes = max(1, min(processes, concurrency, n))
    ns, cs = _shares(n, processes), _shares(concurrency, processes)
    ctx = mp.get_context("fork")  # the children need nothing but this module: fork is cheapest
    start = ctx.Event()
    procs, pipes = [], []
    offset = 0
    for n_i, c_i in zip(ns, cs):
        cfg = dict(base_urls=base_urls, slug=slug, completion_code=completion_code, n=n_i,
                   concurrency=max(1, c_i), split=split, timeout=timeout,
                   request_timeout=request_timeout, offset=offset, drafts_per_task=drafts_per_task)
        offset += n_i
        recv, send = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_child, args=(cfg, start, send), daemon=True)
        p.start()
        send.close()
        procs.append(p)
        pipes.append(recv)
    time.sleep(0.2)  # let every child reach start.wait(), so they begin together
    start.set()
    flows: list[FlowResult] = []
    stats = Stats()
    t_start, t_end, cpu, not_run, timed_out = [], [], 0.0, 0, False
    for recv, p in zip(pipes, procs):
        try:
            results, st, t0, t1, c, nr, to = recv.recv()
        except EOFError:
            raise RuntimeError(f"driver process {p.pid} died (exit {p.exitcode})") from None
        flows += results
        stats.merge(st)
        t_start.append(t0)
        t_end.append(t1)
        cpu += c
        not_run += nr
        timed_out |= to
        p.join()
    return LoadResult(flows, stats, max(t_end) - min(t_start), cpu, not_run, timed_out, processes)
