"""Django's PostgreSQL backend, with a per-request health check that costs no round trip.

``CONN_HEALTH_CHECKS`` makes Django run ``SELECT 1`` before the first query of every request
that reuses a persistent connection. On a participant flow that is 13 of 62 statements, each a
round trip with CPU in the app and in the PostgreSQL backend (docs/performance.md, part 4).

At the start of a request a healthy connection is idle and nothing is waiting on its socket:
libpq has read every reply. When the server ends the connection (a restart,
``pg_terminate_backend``, an idle timeout) it sends an error message and closes the socket, so
the socket becomes readable. The check here polls an idle connection's socket without waiting
(one ``poll`` system call, about 0.5 µs) and treats anything readable as unusable: Django then
closes the connection and opens a new one for the request, as after a failed ``SELECT 1``. A
connection that could be healthy but has unread data (an asynchronous notice) is only replaced,
never used wrongly. A connection that is not idle gets Django's ``SELECT 1`` as before.

What the poll cannot see, a server that vanished without closing the socket, ``SELECT 1`` could
not see either between its reply and the request's first query. After a database error inside a
request, Django still checks with the full ``SELECT 1`` (``is_usable``, unchanged).
"""
from __future__ import annotations

import select

import psycopg
from django.db.backends.postgresql import base as postgresql
from psycopg import pq


def connection_looks_open(connection) -> bool:
    """``True`` if the psycopg ``connection`` is open, idle and has nothing unread on its socket.

    Never blocks and sends nothing to the server. ``False`` for a closed or broken connection,
    one inside a transaction, and one whose socket is readable (the server has closed it or sent
    something unasked).
    """
    if connection is None or connection.closed:
        return False
    pgconn = connection.pgconn
    if pgconn.status != pq.ConnStatus.OK or pgconn.transaction_status != pq.TransactionStatus.IDLE:
        return False
    try:
        poller = select.poll()
        poller.register(pgconn.socket, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except (OSError, ValueError, psycopg.Error):  # no socket any more
        return False


class DatabaseWrapper(postgresql.DatabaseWrapper):
    """PostgreSQL as Django ships it, except the per-request health check (module docstring)."""

    def close_if_health_check_failed(self) -> None:
        """Close the connection if :func:`connection_looks_open` says no; once per request.

        A connection that is not idle (a transaction already under way, which a request never
        starts with) gets Django's own check, ``SELECT 1``, instead.
        """
        if (
            self.pool
            or self.connection is None
            or not self.health_check_enabled
            or self.health_check_done
        ):
            return
        raw = self.connection
        idle = not raw.closed and raw.pgconn.transaction_status == pq.TransactionStatus.IDLE
        usable = connection_looks_open(raw) if idle else self.is_usable()
        if not usable:
            self.close()
        self.health_check_done = True
