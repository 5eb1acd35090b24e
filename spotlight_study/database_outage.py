"""A database that cannot be reached or written is a 503 with ``Retry-After``, not a 500 with a
traceback per request.

While PostgreSQL is stopped or restarting, every request that touches the database raises;
before this module each was a 500 with a full traceback in the log (248 in about 6 s of a
restart). Likewise a full disk under SQLite made every answer submit a 500. Neither is a bug in
the code, and no answer is lost (the request's transaction is rolled back and the participant
sends the page again), so:

- :func:`outage_kind` tells such an error from a bug: ``"unreachable"`` (PostgreSQL refused or
  dropped the connection, is starting up or shutting down; SQLite cannot open its file or gets
  an I/O error) or ``"full"`` (PostgreSQL's ``disk_full``, SQLite's ``SQLITE_FULL`` "database
  or disk is full"); ``None`` for anything else, which stays a 500 with its traceback;
- ``handler500`` (``spotlight_study/errors.py``) answers such a request with **503**,
  ``Retry-After: DATABASE_OUTAGE_RETRY_AFTER_SECONDS`` (5 by default) and the same friendly page
  as a 500 (the JSON error body ``database_unavailable`` under the APIs);
- :func:`outage_note` writes **one warning line per outage** and process instead of a
  traceback per request: when the first request fails, then at most every
  ``DATABASE_OUTAGE_WARNING_SECONDS`` (60 by default) while it lasts, and one line when
  PostgreSQL can be reached again (Django's ``connection_created`` signal: the first new
  connection after the outage).

``/readyz`` (``spotlight_study/health.py``) checks the database itself and is not changed.
"""
from __future__ import annotations

import logging
import sqlite3
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

UNREACHABLE = "unreachable"
FULL = "full"

#: PostgreSQL's SQLSTATEs of a server going away or not yet there: class 08 (connection
#: exception) and admin_shutdown, crash_shutdown, cannot_connect_now. A connection that fails
#: on the client's side (refused, reset) has no SQLSTATE at all.
_PG_UNREACHABLE_CLASS = "08"
_PG_UNREACHABLE_STATES = frozenset({"57P01", "57P02", "57P03"})
_PG_FULL_STATES = frozenset({"53100"})  # disk_full
#: SQLite's primary result codes (``sqlite3.Error.sqlite_errorname``, Python 3.11+): a file that
#: cannot be opened or read, and a full disk.
_SQLITE_UNREACHABLE = ("SQLITE_CANTOPEN", "SQLITE_IOERR")
_SQLITE_FULL = ("SQLITE_FULL",)


def outage_kind(exc: BaseException | None) -> str | None:
    """``"unreachable"``, ``"full"`` or ``None``: whether ``exc`` (a Django database error, as a
    query or a connection raises it) means the database is out rather than a bug.

    Django wraps the driver's error; the driver's (psycopg's or sqlite3's) is its ``__cause__``
    and decides. A Django ``InterfaceError`` (a connection already closed) is ``"unreachable"``.
    """
    if isinstance(exc, InterfaceError):
        return UNREACHABLE
    if not isinstance(exc, OperationalError):
        return None
    cause = exc.__cause__
    if isinstance(cause, sqlite3.Error):
        name = getattr(cause, "sqlite_errorname", "") or ""
        if name.startswith(_SQLITE_FULL) or "database or disk is full" in str(cause):
            return FULL
        if name.startswith(_SQLITE_UNREACHABLE) or "unable to open database file" in str(cause):
            return UNREACHABLE
        return None
    state = getattr(cause, "sqlstate", "missing")
    if state == "missing":  # not psycopg's error (another driver): only Django's class is known
        return None
    if state is None or state.startswith(_PG_UNREACHABLE_CLASS) or state in _PG_UNREACHABLE_STATES:
        return UNREACHABLE
    if state in _PG_FULL_STATES:
        return FULL
    return None


@dataclass
class _Outage:
    since: float  # time.monotonic() of its first failed request
    warned_at: float
    requests: int = 1


_lock = threading.Lock()
_outages: dict[str, _Outage] = {}

_WHAT = {
    UNREACHABLE: "The database cannot be reached",
    FULL: "The database cannot be written: its disk is full",
}


def _reason(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    code = getattr(cause, "sqlstate", None) or getattr(cause, "sqlite_errorname", None)
    first_line = (str(cause).strip().splitlines() or [""])[0][:200]
    return f"{type(cause).__name__}{f' {code}' if code else ''}: {first_line}"


def outage_note(kind: str, exc: BaseException) -> None:
    """Count one request answered 503 for an outage of ``kind``; log a warning (one line, no
    traceback) if it is the outage's first or the last warning is
    ``DATABASE_OUTAGE_WARNING_SECONDS`` old."""
    interval_s = getattr(settings, "DATABASE_OUTAGE_WARNING_SECONDS", 60)
    now = time.monotonic()
    with _lock:
        outage = _outages.get(kind)
        if outage is None:
            _outages[kind] = _Outage(since=now, warned_at=now)
            first = True
        else:
            outage.requests += 1
            if now - outage.warned_at < interval_s:
                return
            outage.warned_at = now
            first = False
            requests, since = outage.requests, outage.since
    if first:
        logger.warning(
            "%s (%s): requests that need it are answered 503 with Retry-After until it is back. "
            "Logged once per outage (again every %s s while it lasts), without tracebacks.",
            _WHAT[kind], _reason(exc), interval_s,
        )
    else:
        logger.warning("%s still (%s): %d requests answered 503 in %.0f s.",
                       _WHAT[kind], _reason(exc), requests, now - since)


def _back(sender, connection, **kwargs) -> None:
    """``connection_created``: a new connection after an outage of kind ``"unreachable"`` means
    the database is back; say so once and forget the outage."""
    if UNREACHABLE not in _outages:
        return
    with _lock:
        outage = _outages.pop(UNREACHABLE, None)
    if outage is not None:
        logger.warning("The database can be reached again, after %.1f s; %d requests were answered 503.",
                       time.monotonic() - outage.since, outage.requests)


connection_created.connect(_back, dispatch_uid="spotlight_study.database_outage.back")


def outage_state_reset() -> None:
    """Forget every outage, so that the next one warns at once (for tests)."""
    with _lock:
        _outages.clear()


def retry_after_s() -> int:
    """The ``Retry-After`` of a 503 for a database outage, in seconds (at least 1)."""
    return max(1, int(getattr(settings, "DATABASE_OUTAGE_RETRY_AFTER_SECONDS", 5)))
