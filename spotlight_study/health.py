"""Health endpoints for a load balancer, a platform or systemd: ``/healthz`` and ``/readyz``.

- ``GET /healthz``: the process is alive and answers. It touches no database, cache or broker,
  so a database outage never makes a platform restart healthy web processes.
- ``GET /readyz``: the process can serve participants. The database answers, every migration
  this code ships is applied, and the cache and the Celery broker answer when they are
  configured (a shared cache in ``CACHE_URL``/``REDIS_URL``, a broker other than ``memory://``).
  200 when all pass; 503 otherwise. The JSON body names each check and the ones that failed.

Both answer ``{"status": ...}`` JSON with ``Cache-Control: no-store``. Neither shows a secret, a
host name, a dependency's version or any participant data: a failed check says only
``"unavailable"``; the exception goes to the server log (scrubbed like every log line).

They are answered by :class:`HealthCheckMiddleware`, first in the chain, before sessions, CSRF,
the login lockout, the HTTPS redirect and the ``ALLOWED_HOSTS`` check: a probe over plain HTTP
to the backend's own address (``http://127.0.0.1:8000/readyz``) gets the answer, not a redirect
or a 400, and costs no session lookup. The participant hot path pays one set lookup per request.
The arrival rate limit counts only arrivals (``participation/ratelimit.py``), so probes never
use up a client's allowance.
"""
from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)

HEALTHZ = "/healthz"
READYZ = "/readyz"
_PATHS = frozenset({HEALTHZ, f"{HEALTHZ}/", READYZ, f"{READYZ}/"})

OK = "ok"
UNAVAILABLE = "unavailable"
NOT_CONFIGURED = "not configured"
NOT_CHECKED = "not checked"  # migrations, while the database does not answer
# Seconds a cache or broker may take to answer before it counts as down: a probe's own timeout
# is usually 1-5 s, and a hanging check must not hold a web worker longer than that.
SERVICE_TIMEOUT_S = 1.0

# The migrations this code ships, as (app label, name) pairs: read from disk once per process
# (about 0.1 s), then each /readyz compares them with django_migrations in one query.
_expected_migrations: frozenset[tuple[str, str]] | None = None


def _json(status: int, body: dict) -> HttpResponse:
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return OK


def expected_migrations() -> frozenset[tuple[str, str]]:
    """Every migration of the installed apps as ``(app_label, name)``; loaded once per process."""
    global _expected_migrations
    if _expected_migrations is None:
        from django.db.migrations.loader import MigrationLoader

        loader = MigrationLoader(None, ignore_no_migrations=True, load=True)
        # The graph (not disk_migrations): a squashed migration stands for the ones it replaces,
        # and migrate records it once they are all applied.
        _expected_migrations = frozenset(loader.graph.nodes)
    return _expected_migrations


def _check_migrations() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT app, name FROM django_migrations")
        applied = {(app, name) for app, name in cursor.fetchall()}
    missing = [key for key in expected_migrations() if key not in applied]
    return OK if not missing else "pending"


def _shared_cache_configured() -> bool:
    backend = settings.CACHES["default"]["BACKEND"]
    return not backend.endswith(("LocMemCache", "DummyCache"))


def _check_cache() -> str:
    if not _shared_cache_configured():
        return NOT_CONFIGURED
    from django.core.cache import cache

    key = f"readyz:{secrets.token_hex(4)}"
    cache.set(key, "1", timeout=10)
    value = cache.get(key)
    cache.delete(key)
    return OK if value == "1" else UNAVAILABLE


def _check_broker() -> str:
    url = getattr(settings, "CELERY_BROKER_URL", "memory://") or "memory://"
    if url.startswith("memory://"):
        return NOT_CONFIGURED
    from kombu import Connection

    with Connection(url, connect_timeout=SERVICE_TIMEOUT_S,
                    transport_options={"socket_timeout": SERVICE_TIMEOUT_S,
                                       "socket_connect_timeout": SERVICE_TIMEOUT_S,
                                       "max_retries": 0}) as broker:
        broker.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=SERVICE_TIMEOUT_S)
    return OK


def _run(name: str, check: Callable[[], str], results: dict[str, str]) -> None:
    try:
        results[name] = check()
    except Exception as exc:  # noqa: BLE001 - any failure of a dependency means "not ready"
        # The class only: a database error's message can carry the host, user or database name.
        logger.warning("readyz: %s check failed (%s)", name, type(exc).__name__)
        results[name] = UNAVAILABLE
        if name in ("database", "migrations"):
            # A broken persistent connection would fail the next request too: open a new one.
            try:
                connection.close()
            except DatabaseError:
                pass


def readiness() -> tuple[bool, dict[str, str]]:
    """Run the readiness checks; return (ready, {check: "ok" | "not configured" | failure}).

    Checks: ``database`` (``SELECT 1``), ``migrations`` (every migration on disk recorded in
    ``django_migrations``; ``"pending"`` otherwise; ``"not checked"`` while the database is
    down), ``cache`` and ``broker``. Raises nothing:
    a failure is reported in the result. Takes about 1 ms with all services up; at most about
    ``SERVICE_TIMEOUT_S`` (1 s) per cache or broker that hangs.
    """
    results: dict[str, str] = {}
    _run("database", _check_database, results)
    if results["database"] == OK:
        _run("migrations", _check_migrations, results)
    else:
        results["migrations"] = NOT_CHECKED
    _run("cache", _check_cache, results)
    _run("broker", _check_broker, results)
    return not _failed(results), results


def _failed(results: dict[str, str]) -> list[str]:
    return sorted(name for name, value in results.items() if value not in (OK, NOT_CONFIGURED, NOT_CHECKED))


def healthz(request: HttpRequest) -> HttpResponse:
    """200 ``{"status": "ok"}``: the process answers. No database, cache or broker is touched."""
    return _json(200, {"status": OK})


def readyz(request: HttpRequest) -> HttpResponse:
    """200 when every check of :func:`readiness` passes, else 503; the body names the failures."""
    ready, checks = readiness()
    body = {"status": OK if ready else UNAVAILABLE, "checks": checks}
    if not ready:
        body["failed"] = _failed(checks)
    return _json(200 if ready else 503, body)


class HealthCheckMiddleware:
    """Answer ``/healthz`` and ``/readyz`` (GET or HEAD) before any other middleware runs.

    Any other path passes straight through. Another method on these paths gets 405.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        if path not in _PATHS:
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            response = _json(405, {"status": "method not allowed"})
            response["Allow"] = "GET, HEAD"
            return response
        return healthz(request) if path.rstrip("/") == HEALTHZ else readyz(request)
