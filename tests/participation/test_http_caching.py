"""The participant pages' no-caching headers are Django's never_cache headers, value for value."""
from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

from django.http import HttpResponse
from django.utils.cache import add_never_cache_headers

from spotlight_study.participation.http_caching import (
    NEVER_CACHE_CONTROL,
    add_participant_never_cache_headers,
)


def _both(make):
    ours, django = make(), make()
    add_participant_never_cache_headers(ours)
    add_never_cache_headers(django)
    return ours, django


def test_a_fresh_response_gets_exactly_what_never_cache_gives():
    for _ in range(3):  # a second boundary between the two calls would differ by one second
        ours, django = _both(lambda: HttpResponse("x"))
        if ours["Expires"] == django["Expires"]:
            break
    assert ours["Cache-Control"] == django["Cache-Control"] == NEVER_CACHE_CONTROL
    assert ours["Expires"] == django["Expires"]
    assert abs(parsedate_to_datetime(ours["Expires"]).timestamp() - time.time()) < 2


def test_a_response_with_its_own_cache_headers_goes_through_django():
    def with_headers():
        response = HttpResponse("x")
        response["Cache-Control"] = "public, max-age=60"
        response["Expires"] = "Thu, 01 Jan 2037 00:00:00 GMT"
        return response

    ours, django = _both(with_headers)
    assert ours["Cache-Control"] == django["Cache-Control"]
    assert ours["Expires"] == django["Expires"] == "Thu, 01 Jan 2037 00:00:00 GMT"


def test_participant_pages_carry_the_headers(client, demo_study):
    from ..conftest import new_id

    entry = client.get(f"/s/{demo_study.slug}/", {"PROLIFIC_PID": new_id(), "STUDY_ID": new_id(),
                                                   "SESSION_ID": new_id()})
    page = client.get(entry["Location"])
    assert (entry.status_code, page.status_code) == (302, 200)
    for response in (entry, page):
        assert response["Cache-Control"] == NEVER_CACHE_CONTROL
        assert abs(parsedate_to_datetime(response["Expires"]).timestamp() - time.time()) < 5


def test_the_csrf_failure_page_is_not_stored_either(demo_study):
    """A form refused by the CSRF check answers 403 with the same no-caching headers."""
    from django.test import Client

    from ..conftest import new_id

    browser = Client(enforce_csrf_checks=True)
    entry = browser.get(f"/s/{demo_study.slug}/", {"PROLIFIC_PID": new_id(), "STUDY_ID": new_id(),
                                                    "SESSION_ID": new_id()})
    refused = browser.post(entry["Location"], {"decision": "agree", "token": "x"})
    assert refused.status_code == 403
    assert refused["Cache-Control"] == NEVER_CACHE_CONTROL and refused.has_header("Expires")
