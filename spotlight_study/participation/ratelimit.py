"""The arrival rate limit: how many new participants one client address may start.

Each new participant holds a place in a cell until they finish or the abandonment timeout
passes, so a script that opens the study link with made-up IDs could fill every cell. The
``ENTRY_RATE_LIMIT`` setting (``"30/m"`` by default: 30 per minute; ``N/s``, ``N/m``, ``N/h``,
``N/d`` or ``off``) caps the new arrivals per address. Resumes of an existing participant are not
counted: the view asks only for arrivals that would create one.

The counter is django-ratelimit's fixed-window count in Django's cache (``CACHES["default"]``):
Redis when ``CACHE_URL`` or ``REDIS_URL`` is set, otherwise the memory of the one server process
of the embedded default. IPv6 addresses are counted per /64 network, the block one household or
host usually gets. If the cache cannot be reached, arrivals are let through
(``RATELIMIT_FAIL_OPEN``): turning away paid participants would be worse than a brief gap.

The typed drafts (``POST /s/<slug>/draft/``, :mod:`.drafts`) have a limit of the same kind,
``DRAFT_RATE_LIMIT`` (``"120/m"`` by default), counted per participant (the study and the id of
the signed binding cookie) rather than per address: ``static/js/draft.js`` saves at most about
once a second of typing, so a participant stays far below it, and a script that repeats the
request is refused with 429 before anything is written.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from spotlight_study.client_address import forwarded_client_address

GROUP = "participation.entry"
DRAFT_GROUP = "participation.draft"
IPV6_PREFIX = 64


@dataclass(frozen=True)
class ArrivalAllowance:
    """Whether a new arrival may go ahead; ``retry_after_s`` (seconds, >= 1) when it may not."""

    allowed: bool
    retry_after_s: int = 0


def client_address(request: HttpRequest) -> str:
    """The address a request comes from, as counted by the limit.

    :func:`spotlight_study.client_address.forwarded_client_address` (``REMOTE_ADDR``, or the
    address the trusted proxies report), with IPv6 addresses reduced to their /64 network.
    """
    address = forwarded_client_address(request)
    if address is None:
        return "unknown"
    parsed = ipaddress.ip_address(address)
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/{IPV6_PREFIX}", strict=False).network_address)
    return address


def arrival_admit(request: HttpRequest) -> ArrivalAllowance:
    """Count one new arrival from the request's address and say whether it is within the limit.

    Call it only for an arrival that would create a participant. With ``ENTRY_RATE_LIMIT=off``
    nothing is counted and every arrival is allowed.
    """
    rate = settings.ENTRY_RATE_LIMIT
    if rate == "off":
        return ArrivalAllowance(allowed=True)
    usage = get_usage(
        request,
        group=GROUP,
        key=lambda _group, req: client_address(req),
        rate=rate,
        increment=True,
    )
    if usage is None or not usage["should_limit"]:
        return ArrivalAllowance(allowed=True)
    return ArrivalAllowance(allowed=False, retry_after_s=max(1, int(usage["time_left"])))


def draft_admit(request: HttpRequest, *, slug: str, participant_id: int) -> ArrivalAllowance:
    """Count one typed draft of participant ``participant_id`` of study ``slug``; whether it is
    within ``DRAFT_RATE_LIMIT`` (``off``: always). ``retry_after_s`` (s) when it is not."""
    rate = settings.DRAFT_RATE_LIMIT
    if rate == "off":
        return ArrivalAllowance(allowed=True)
    usage = get_usage(
        request,
        group=DRAFT_GROUP,
        key=lambda _group, _req: f"{slug}:{participant_id}",
        rate=rate,
        increment=True,
    )
    if usage is None or not usage["should_limit"]:
        return ArrivalAllowance(allowed=True)
    return ArrivalAllowance(allowed=False, retry_after_s=max(1, int(usage["time_left"])))
