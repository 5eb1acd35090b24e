"""The page a locked-out login gets (django-axes' ``AXES_LOCKOUT_CALLABLE``).

django-axes (settings: ``AXES_*``, docs/security.md) counts failed logins per username and
client address in the database and, past ``AXES_FAILURE_LIMIT``, refuses that pair, even with
the right password, until ``AXES_COOLOFF_TIME`` has passed without another attempt. Because every
refused attempt starts the cool-off again (``AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT``),
the lockout ends exactly one cool-off after the request this page answers.
"""
from __future__ import annotations

import math

from axes.helpers import get_cool_off
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from spotlight_study.client_address import forwarded_client_address


def lockout_client_address(request: HttpRequest) -> str | None:
    """The address the lockout counts (``AXES_CLIENT_IP_CALLABLE``): the client's, also behind
    ``TRUSTED_PROXY_COUNT`` proxies (:func:`~spotlight_study.client_address.forwarded_client_address`).

    Without it, django-axes would count ``REMOTE_ADDR`` (django-ipware is not installed), i.e.
    behind Caddy the proxy's address: every client would share one counter per username, so an
    attacker anywhere could lock a researcher out (found by scripts/deploy_check.sh). None when
    the request has no valid address, as django-axes' own fallback gives.
    """
    return forwarded_client_address(request)


def lockout_response(request: HttpRequest, original_response=None, credentials=None) -> HttpResponse:
    """A 429 page saying when to try again, with a ``Retry-After`` header (seconds).

    Used for the site login (``/accounts/login/``) and the admin login alike. The username is
    not echoed back, so the page reveals nothing about which accounts exist.
    """
    cool_off = get_cool_off(request)
    seconds = max(0, math.ceil(cool_off.total_seconds())) if cool_off else 0
    context = {
        "retry_at": timezone.now() + cool_off if cool_off else None,
        "cool_off_minutes": math.ceil(seconds / 60),
    }
    response = render(request, "registration/lockout.html", context, status=429)
    if seconds:
        response["Retry-After"] = str(seconds)
    return response
