"""The address a request comes from, with or without trusted proxies in front of the server.

One rule for everything that counts per client: the arrival rate limit
(``participation/ratelimit.py``) and the login lockout (django-axes, through
``AXES_CLIENT_IP_CALLABLE``); DRF's throttles apply the same rule through ``NUM_PROXIES``.
"""
from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def forwarded_client_address(request: HttpRequest) -> str | None:
    """``REMOTE_ADDR``, unless ``TRUSTED_PROXY_COUNT`` (n) proxies sit in front of the server:
    then the n-th address from the right of ``X-Forwarded-For``, the one the outermost trusted
    proxy saw (each proxy appends the address it received the request from; Caddy replaces a
    header sent by an untrusted client). A missing, short or malformed header falls back to
    ``REMOTE_ADDR``. Returns the address as text (IPv4 or IPv6, normalized), or None when there is
    no valid address at all (a request built without one, e.g. by ``Client.force_login``).
    """
    candidates = []
    proxies = getattr(settings, "TRUSTED_PROXY_COUNT", 0)
    if proxies:
        entries = [e.strip() for e in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if len(entries) >= proxies:
            candidates.append(entries[-proxies])
    candidates.append(request.META.get("REMOTE_ADDR", ""))
    for candidate in candidates:
        try:
            return str(ipaddress.ip_address(candidate))
        except ValueError:
            continue
    return None
