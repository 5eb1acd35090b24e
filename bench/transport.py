"""The driver's transport: plain sockets, one epoll loop per process, coroutines driven by hand.

Why not asyncio: its tasks, futures, handles and transports cost the driver about 1 ms of CPU
per request on this machine (measured), twice its budget, and the uWSGI workers close the
connection after each response, so every request pays for a connection set-up. Here a request is
``socket()``, ``connect()`` (immediate on the loopback), ``send()``, one epoll registration
and a ``recv()`` or two; the participants stay ordinary ``async def`` coroutines
(``bench.flow.walk``) whose only ``await`` on I/O is :func:`exchange`, which hands the socket to
:class:`Loop` and is resumed with the whole response.
"""
from __future__ import annotations

import re
import select
import socket
import time
from collections.abc import Coroutine
from typing import Any

_CONTENT_LENGTH_RE = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)")
_CHUNKED_RE = re.compile(rb"\r\ntransfer-encoding:[^\r]*chunked")
UNTIL_CLOSE, CHUNKED = -3, -2


class Conn:
    """One HTTP/1.1 connection and the state of the response being read on it.

    ``head_end`` is the index after the blank line that ends the head (-1 until seen);
    ``length`` the body length from Content-Length, :data:`CHUNKED` or :data:`UNTIL_CLOSE`.
    """

    __slots__ = ("sock", "buf", "head_end", "length", "closed", "used")

    def __init__(self, server: tuple[str, int]):
        # No create_connection(): its getaddrinfo() is a tenth of a request's CPU, and the
        # servers are IP literals on the loopback, where connect() completes at once.
        self.sock = socket.socket(socket.AF_INET6 if ":" in server[0] else socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.connect(server)
        self.sock.setblocking(False)  # requests are a few kB: send() takes them whole
        self.buf = bytearray()
        self.head_end = -1
        self.length = -1
        self.closed = False
        self.used = False

    def complete(self) -> bool:
        """True once ``buf`` holds a whole response (or the server closed the connection)."""
        if self.head_end < 0:
            i = self.buf.find(b"\r\n\r\n")
            if i < 0:
                return self.closed
            self.head_end = i + 4
            head = bytes(self.buf[:i]).lower()
            m = _CONTENT_LENGTH_RE.search(head)
            if m:
                self.length = int(m.group(1))
            elif _CHUNKED_RE.search(head):
                self.length = CHUNKED
            elif head[9:12] in (b"204", b"304") or head[9:10] == b"1":
                self.length = 0
            else:
                self.length = UNTIL_CLOSE
        if self.closed:
            return True
        if self.length >= 0:
            return len(self.buf) - self.head_end >= self.length
        if self.length == CHUNKED:
            return self.buf.endswith(b"0\r\n\r\n")
        return False

    def whole(self) -> bool:
        """True if the response in ``buf`` is whole (not cut off by a closed connection)."""
        if self.head_end < 0:
            return False
        if self.length >= 0:
            return len(self.buf) - self.head_end >= self.length
        return self.length == UNTIL_CLOSE or self.buf.endswith(b"0\r\n\r\n")

    def close(self) -> None:
        """Close the socket (idempotent)."""
        self.closed = True
        self.sock.close()


class _Exchange:
    """The awaitable of one request: yields itself to the :class:`Loop`, resumed with None."""

    __slots__ = ("conn", "request", "deadline")

    def __init__(self, conn: Conn, request: bytes, deadline: float):
        self.conn, self.request, self.deadline = conn, request, deadline

    def __await__(self):
        yield self


async def exchange(conn: Conn, request: bytes, timeout: float) -> bytes:
    """Send ``request`` on ``conn`` and return the whole response (head and body) as bytes.

    Raises ConnectionResetError if the server closed the connection before a whole response,
    TimeoutError after ``timeout`` seconds, OSError for other socket errors.
    """
    conn.buf.clear()
    conn.head_end, conn.length = -1, -1
    conn.used = True
    await _Exchange(conn, request, time.monotonic() + timeout)
    if not conn.whole():
        raise ConnectionResetError(f"connection closed after {len(conn.buf)} bytes of the response")
    return bytes(conn.buf)


class Loop:
    """Runs coroutines that await :func:`exchange` until all are done or ``deadline`` passes."""

    def __init__(self):
        self.epoll = select.epoll()
        self.waiting: dict[int, tuple[Coroutine, _Exchange]] = {}

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Start ``coro``: run it to its first exchange."""
        self._step(coro, None)

    def _step(self, coro: Coroutine, exc: BaseException | None) -> None:
        while True:
            try:
                op = coro.throw(exc) if exc is not None else coro.send(None)
            except StopIteration:
                return
            try:
                sent = op.conn.sock.send(op.request)
                if sent < len(op.request):  # a full socket buffer: finish blocking (rare)
                    op.conn.sock.setblocking(True)
                    op.conn.sock.sendall(op.request[sent:])
                    op.conn.sock.setblocking(False)
                fd = op.conn.sock.fileno()
                self.epoll.register(fd, select.EPOLLIN | select.EPOLLRDHUP)
            except OSError as e:  # e.g. a broken pipe on a connection the server closed
                op.conn.closed = True
                exc = e
                continue
            self.waiting[fd] = (coro, op)
            return

    def _resume(self, fd: int, exc: BaseException | None = None) -> None:
        coro, op = self.waiting.pop(fd)
        self.epoll.unregister(fd)
        self._step(coro, exc)

    def run(self, deadline: float) -> bool:
        """Serve the sockets until no coroutine waits; False if ``deadline`` (monotonic s) came
        first (the waiting coroutines are then closed)."""
        next_sweep = time.monotonic() + 0.5
        while self.waiting:
            now = time.monotonic()
            if now >= deadline:
                for fd, (coro, op) in list(self.waiting.items()):
                    self.epoll.unregister(fd)
                    op.conn.close()
                    coro.close()
                self.waiting.clear()
                return False
            if now >= next_sweep:  # request timeouts
                next_sweep = now + 0.5
                for fd, (_, op) in list(self.waiting.items()):
                    if now >= op.deadline:
                        self._resume(fd, TimeoutError("no response within the request timeout"))
            for fd, _ in self.epoll.poll(0.5):
                entry = self.waiting.get(fd)
                if entry is None:
                    continue
                conn = entry[1].conn
                try:
                    data = conn.sock.recv(262144)
                except BlockingIOError:
                    continue
                except OSError as e:
                    conn.closed = True
                    self._resume(fd, e)
                    continue
                if data:
                    conn.buf += data
                else:
                    conn.closed = True
                if conn.complete():
                    self._resume(fd)
        return True
