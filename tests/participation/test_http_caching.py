"""The participant pages, the CSRF failure page included, carry Django's never_cache headers."""
from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

#: What Django's ``never_cache`` writes into an empty ``Cache-Control``.
NEVER_CACHE_CONTROL = "max-age=0, no-cache, no-store, must-revalidate, private"


def test_participant_pages_carry_the_headers(client, demo_study):
    from ..conftest import new_id

    before = time.time()
    entry = client.get(f"/s/{demo_study.slug}/", {"PROLIFIC_PID": new_id(), "STUDY_ID": new_id(),
                                                   "SESSION_ID": new_id()})
    page = client.get(entry["Location"])
    after = time.time()
    assert (entry.status_code, page.status_code) == (302, 200)
    for response in (entry, page):
        assert response["Cache-Control"] == NEVER_CACHE_CONTROL
        # Expires is "now" (max-age=0), to the second: between the clock read before the requests
        # and the one after, however long they took.
        expires = parsedate_to_datetime(response["Expires"]).timestamp()
        assert int(before) <= expires <= after, (before, expires, after)


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
