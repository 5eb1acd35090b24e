"""Django's Redis cache, made to fail soft: an unreachable Redis is a cache miss, not a 500.

Django's cache holds only counters and results that can be recomputed: the arrival rate limit
(``participation/ratelimit.py``), the API throttles (bad tokens per address, requests per staff
user) and the annotation overview's agreement figures. None of them is worth turning a
participant away for. While Redis cannot be reached (stopped, restarting, network gone),
:class:`FailSoftRedisCache` answers like an empty cache that keeps nothing:

- ``get``/``get_many`` give the default, ``has_key`` is ``False``, ``add``/``touch`` are
  ``False``, ``set``/``set_many``/``delete``/``clear`` do nothing;
- ``incr`` raises ``ValueError`` as for a missing key: django-ratelimit then finds no count and,
  with ``RATELIMIT_FAIL_OPEN``, lets the request through (as it does with memcached, whose
  client hides outages the same way).

So the arrival limit and the throttles fail open. One warning is logged per
``CACHE_OUTAGE_WARNING_SECONDS`` (60 s by default) and process, not one per request. The login
lockout (django-axes) counts in the database and is not affected. Connecting and each command
time out after ``socket_connect_timeout``/``socket_timeout`` (1 s by default, settings.py), so a
Redis that hangs costs a request at most about a second.
"""
from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

#: What an outage raises: refused or dropped connections and timeouts. Other Redis errors (a
#: wrong type under a key, say) are bugs and still raise.
OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError)

_warning_lock = threading.Lock()
_last_warning_at: float | None = None


def _warn_outage(exc: Exception) -> None:
    """Log one warning per ``CACHE_OUTAGE_WARNING_SECONDS`` (monotonic clock, per process)."""
    global _last_warning_at
    interval_s = getattr(settings, "CACHE_OUTAGE_WARNING_SECONDS", 60)
    now = time.monotonic()
    with _warning_lock:
        if _last_warning_at is not None and now - _last_warning_at < interval_s:
            return
        _last_warning_at = now
    logger.warning(
        "The cache (Redis) cannot be reached (%s: %s): the arrival limit and the API throttles "
        "let requests through until it is back. This warning repeats at most every %s s.",
        type(exc).__name__, exc, interval_s,
    )


def outage_warning_reset() -> None:
    """Forget the last warning, so that the next outage warns at once (for tests)."""
    global _last_warning_at
    with _warning_lock:
        _last_warning_at = None


class FailSoftRedisCache(RedisCache):
    """Django's ``RedisCache``; during an outage an empty cache that keeps nothing (see above)."""

    def add(self, *args, **kwargs):
        """``RedisCache.add``; ``False`` (not added) while Redis is unreachable."""
        try:
            return super().add(*args, **kwargs)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return False

    def get(self, key, default=None, version=None):
        """``RedisCache.get``; ``default`` while Redis is unreachable."""
        try:
            return super().get(key, default, version)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return default

    def set(self, *args, **kwargs):
        """``RedisCache.set``; nothing is stored while Redis is unreachable."""
        try:
            return super().set(*args, **kwargs)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return None

    def touch(self, *args, **kwargs):
        """``RedisCache.touch``; ``False`` while Redis is unreachable."""
        try:
            return super().touch(*args, **kwargs)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return False

    def delete(self, *args, **kwargs):
        """``RedisCache.delete``; ``False`` while Redis is unreachable."""
        try:
            return super().delete(*args, **kwargs)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return False

    def get_many(self, keys, version=None):
        """``RedisCache.get_many``; ``{}`` while Redis is unreachable."""
        try:
            return super().get_many(keys, version)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return {}

    def has_key(self, key, version=None):
        """``RedisCache.has_key``; ``False`` while Redis is unreachable."""
        try:
            return super().has_key(key, version)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return False

    def incr(self, key, delta=1, version=None):
        """``RedisCache.incr``; raises ``ValueError`` (as for a missing key) while Redis is
        unreachable."""
        try:
            return super().incr(key, delta, version)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            raise ValueError(f"Key '{key}' not found: the cache cannot be reached.") from None

    def set_many(self, *args, **kwargs):
        """``RedisCache.set_many``; nothing is stored while Redis is unreachable (``[]``)."""
        try:
            return super().set_many(*args, **kwargs)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return []

    def delete_many(self, *args, **kwargs):
        """``RedisCache.delete_many``; nothing happens while Redis is unreachable."""
        try:
            return super().delete_many(*args, **kwargs)
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return None

    def clear(self):
        """``RedisCache.clear``; nothing happens while Redis is unreachable."""
        try:
            return super().clear()
        except OUTAGE_ERRORS as exc:
            _warn_outage(exc)
            return False
