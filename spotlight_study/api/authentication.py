"""Token authentication with a limit on bad tokens per client address.

DRF checks throttles only after authentication and permissions, so its throttle classes never
see a request whose token is wrong: that request is already refused with 401. Guessing tokens is
limited here instead: :class:`ThrottledTokenAuthentication` counts failed token lookups per
client address and, past the ``token_failure`` rate (``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``,
env ``API_TOKEN_FAILURE_RATE``, default ``20/min``), answers 429 with ``Retry-After`` without
looking the token up. The counter lives in Django's default cache.

A key that no token can have (longer than the 40 characters of ``Token.key``, or holding a
control character such as NUL, which PostgreSQL refuses in a query with an error) is refused
with the same 401 and counted as a failure, without a lookup: SQLite and PostgreSQL answer alike.
"""
from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.throttling import SimpleRateThrottle


class TokenFailureThrottle(SimpleRateThrottle):
    """Failed token authentications per client address (DRF's sliding-window history).

    Unlike DRF's throttles, checking does not count: :meth:`exceeded` only looks, and
    :meth:`record_failure` adds one failure.
    """

    scope = "token_failure"

    def get_cache_key(self, request, view=None) -> str:
        """One counter per client address (``REMOTE_ADDR``, or X-Forwarded-For behind
        ``NUM_PROXIES`` trusted proxies)."""
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def _load(self, request) -> None:
        self.key = self.get_cache_key(request)
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()

    def exceeded(self, request) -> bool:
        """Whether this address already has ``num_requests`` failures within the window."""
        if self.rate is None:
            return False
        self._load(request)
        return len(self.history) >= self.num_requests

    def record_failure(self, request) -> None:
        """Count one failed token authentication from this address."""
        if self.rate is None:
            return
        self._load(request)
        self.history.insert(0, self.now)
        self.cache.set(self.key, self.history, self.duration)


class ThrottledTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, refused with 429 after too many bad keys from one address.

    Raises ``Throttled`` (429, ``Retry-After`` in seconds) while the address is over the limit,
    even for a valid key, and ``AuthenticationFailed`` (401) for a bad key, as DRF does.
    Requests without a token header are not counted.
    """

    def authenticate(self, request):
        """``(user, token)``, or ``None`` without a token header; raises as described above."""
        throttle = TokenFailureThrottle()
        words = get_authorization_header(request).split()
        has_token = bool(words) and words[0].lower() == self.keyword.lower().encode()
        if has_token and throttle.exceeded(request):
            raise exceptions.Throttled(wait=throttle.wait())
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            throttle.record_failure(request)
            raise

    def authenticate_credentials(self, key):
        """DRF's lookup of ``key``; a key no token can have is refused (401) before any query."""
        max_length = self.get_model()._meta.get_field("key").max_length
        if len(key) > max_length or not key.isprintable():
            # PostgreSQL refuses NUL in a query (a DataError, so a 500); no token has it.
            raise exceptions.AuthenticationFailed("Invalid token.")
        return super().authenticate_credentials(key)

