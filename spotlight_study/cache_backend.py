"""Django's Redis and file caches, made to fail soft: a cache that cannot be reached or written
is a cache miss, not a 500.

Django's cache holds only counters and results that can be recomputed: the arrival rate limit
(``participation/ratelimit.py``), the API throttles (bad tokens per address, requests per staff
user) and the annotation overview's agreement figures. None of them is worth turning a
participant away for. Two backends are made to fail soft, each for its own kind of outage:

- :class:`FailSoftRedisCache` (``CACHE_URL=redis://…``, production): Redis stopped, restarting
  or unreachable (connection refused or dropped, timeouts);
- :class:`FailSoftFileBasedCache` (``CACHE_URL=filecache://…``, what ``scripts/serve.sh`` sets
  so that its uWSGI workers share the counters): the cache directory cannot be written or read,
  above all a full disk (``OSError`` ``ENOSPC``), but also a quota, a read-only file system or
  lost permissions.

During such an outage the cache answers like an empty cache that keeps nothing:

- ``get``/``get_many`` give the default, ``has_key`` is ``False``, ``add``/``touch`` are
  ``False``, ``set``/``set_many``/``delete``/``clear`` do nothing;
- ``incr`` raises ``ValueError`` as for a missing key: django-ratelimit then finds no count and,
  with ``RATELIMIT_FAIL_OPEN``, lets the request through (as it does with memcached, whose
  client hides outages the same way).

So the arrival limit and the throttles fail open. One warning is logged per
``CACHE_OUTAGE_WARNING_SECONDS`` (60 s by default) and process, not one per request. The login
lockout (django-axes) counts in the database and is not affected. For Redis, connecting and each
command time out after ``socket_connect_timeout``/``socket_timeout`` (1 s by default,
settings.py), so a Redis that hangs costs a request at most about a second.
"""
from __future__ import annotations

import errno
import logging
import threading
import time

from django.conf import settings
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

#: What a Redis outage raises: refused or dropped connections and timeouts. Other Redis errors
#: (a wrong type under a key, say) are bugs and still raise.
OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError)
#: What a file cache's outage raises: any error of the file system (Django's file cache already
#: turns a missing file into a miss itself).
FILE_OUTAGE_ERRORS = (OSError,)

_warning_lock = threading.Lock()
_last_warning_at: float | None = None


def _warn_outage(what: str, exc: Exception) -> None:
    """Log one warning per ``CACHE_OUTAGE_WARNING_SECONDS`` (monotonic clock, per process)."""
    global _last_warning_at
    interval_s = getattr(settings, "CACHE_OUTAGE_WARNING_SECONDS", 60)
    now = time.monotonic()
    with _warning_lock:
        if _last_warning_at is not None and now - _last_warning_at < interval_s:
            return
        _last_warning_at = now
    reason = errno.errorcode.get(exc.errno, "") if isinstance(exc, OSError) and exc.errno else ""
    logger.warning(
        "%s (%s%s: %s): the arrival limit and the API throttles let requests through until it "
        "is back. This warning repeats at most every %s s.",
        what, type(exc).__name__, f" {reason}" if reason else "", exc, interval_s,
    )


def outage_warning_reset() -> None:
    """Forget the last warning, so that the next outage warns at once (for tests)."""
    global _last_warning_at
    with _warning_lock:
        _last_warning_at = None


class _FailSoft:
    """Mixin before a Django cache backend: each operation answers as an empty cache that keeps
    nothing when the backend raises one of :attr:`outage_errors` (see the module docstring)."""

    #: The exceptions that mean "the cache is out", not a bug.
    outage_errors: tuple[type[Exception], ...] = ()
    #: The start of the warning, naming the cache and what is wrong with it.
    outage_what = "The cache cannot be reached"

    def _outage(self, exc: Exception) -> None:
        _warn_outage(self.outage_what, exc)

    def add(self, *args, **kwargs):
        """The backend's ``add``; ``False`` (not added) during an outage."""
        try:
            return super().add(*args, **kwargs)
        except self.outage_errors as exc:
            self._outage(exc)
            return False

    def get(self, key, default=None, version=None):
        """The backend's ``get``; ``default`` during an outage."""
        try:
            return super().get(key, default, version)
        except self.outage_errors as exc:
            self._outage(exc)
            return default

    def set(self, *args, **kwargs):
        """The backend's ``set``; nothing is stored during an outage."""
        try:
            return super().set(*args, **kwargs)
        except self.outage_errors as exc:
            self._outage(exc)
            return None

    def touch(self, *args, **kwargs):
        """The backend's ``touch``; ``False`` during an outage."""
        try:
            return super().touch(*args, **kwargs)
        except self.outage_errors as exc:
            self._outage(exc)
            return False

    def delete(self, *args, **kwargs):
        """The backend's ``delete``; ``False`` during an outage."""
        try:
            return super().delete(*args, **kwargs)
        except self.outage_errors as exc:
            self._outage(exc)
            return False

    def get_many(self, keys, version=None):
        """The backend's ``get_many``; ``{}`` during an outage."""
        try:
            return super().get_many(keys, version)
        except self.outage_errors as exc:
            self._outage(exc)
            return {}

    def has_key(self, key, version=None):
        """The backend's ``has_key``; ``False`` during an outage."""
        try:
            return super().has_key(key, version)
        except self.outage_errors as exc:
            self._outage(exc)
            return False

    def incr(self, key, delta=1, version=None):
        """The backend's ``incr``; raises ``ValueError`` (as for a missing key) during an
        outage."""
        try:
            return super().incr(key, delta, version)
        except self.outage_errors as exc:
            self._outage(exc)
            raise ValueError(f"Key '{key}' not found: the cache cannot be reached.") from None

    def set_many(self, *args, **kwargs):
        """The backend's ``set_many``; nothing is stored during an outage (``[]``)."""
        try:
            return super().set_many(*args, **kwargs)
        except self.outage_errors as exc:
            self._outage(exc)
            return []

    def delete_many(self, *args, **kwargs):
        """The backend's ``delete_many``; nothing happens during an outage."""
        try:
            return super().delete_many(*args, **kwargs)
        except self.outage_errors as exc:
            self._outage(exc)
            return None

    def clear(self):
        """The backend's ``clear``; nothing happens during an outage."""
        try:
            return super().clear()
        except self.outage_errors as exc:
            self._outage(exc)
            return False


class FailSoftRedisCache(_FailSoft, RedisCache):
    """Django's ``RedisCache``; while Redis is unreachable an empty cache that keeps nothing."""

    outage_errors = OUTAGE_ERRORS
    outage_what = "The cache (Redis) cannot be reached"


class FailSoftFileBasedCache(_FailSoft, FileBasedCache):
    """Django's ``FileBasedCache``; while its directory cannot be written or read (a full disk:
    ``OSError`` ``ENOSPC``) an empty cache that keeps nothing."""

    outage_errors = FILE_OUTAGE_ERRORS
    outage_what = "The cache (files) cannot be written or read"

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        """``FileBasedCache.add`` (``has_key``, then ``set``); ``False`` when the value cannot be
        stored, where Django's would call the fail-soft ``set`` and answer ``True``."""
        if self.has_key(key, version):
            return False
        try:
            FileBasedCache.set(self, key, value, timeout, version)
        except self.outage_errors as exc:
            self._outage(exc)
            return False
        return True

    def incr(self, key, delta=1, version=None):
        """``BaseCache.incr`` (a ``get`` then a ``set``), raising ``ValueError`` as for a missing
        key when the new count cannot be stored, so the limit fails open as for Redis."""
        value = self.get(key, self._missing_key, version=version)
        if value is self._missing_key:
            raise ValueError(f"Key '{key}' not found.")
        new_value = value + delta
        try:
            FileBasedCache.set(self, key, new_value, version=version)
        except self.outage_errors as exc:
            self._outage(exc)
            raise ValueError(f"Key '{key}' not found: the cache cannot be written.") from None
        return new_value
