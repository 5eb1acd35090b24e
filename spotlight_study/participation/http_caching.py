"""The no-caching headers of the participant pages, set at a fraction of Django's cost.

Every participant response must not be stored or reused by a browser or proxy: a page shows one
participant's state at one moment, and Back must ask the server again. Django's ``never_cache``
does this, but ``add_never_cache_headers`` parses and rebuilds ``Cache-Control`` and formats
``Expires`` through ``email.utils`` on every response: about 12 µs each, 13 times per flow.
:func:`participant_never_cache` sets the same two headers, with the same values, from a
constant and a date string formatted once per second; a response that already has either header
(none of the participant views sets one) goes through Django's own function.
``tests/participation/test_http_caching.py`` compares the headers with Django's.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers
from django.utils.http import http_date

#: What ``add_never_cache_headers`` writes into an empty ``Cache-Control``.
NEVER_CACHE_CONTROL = "max-age=0, no-cache, no-store, must-revalidate, private"

_expires: tuple[int, str] = (0, "")  # (second, its HTTP date)


def _http_date_now() -> str:
    """``http_date(time.time())``, formatted once per second."""
    global _expires
    now = int(time.time())
    second, text = _expires  # one read of the pair: another thread may replace it meanwhile
    if second != now:
        text = http_date(now)
        _expires = (now, text)
    return text


def add_participant_never_cache_headers(response: HttpResponse) -> None:
    """Add ``Expires`` (now) and ``Cache-Control`` (:data:`NEVER_CACHE_CONTROL`) to
    ``response``, as ``django.utils.cache.add_never_cache_headers`` does."""
    headers = response.headers
    if "Cache-Control" in headers or "Expires" in headers:
        add_never_cache_headers(response)
        return
    headers["Expires"] = _http_date_now()
    headers["Cache-Control"] = NEVER_CACHE_CONTROL


def participant_never_cache(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Django's ``never_cache`` for the participant views (sync views only)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        add_participant_never_cache_headers(response)
        return response

    return wrapper
