"""Helpers of the browser tests of typed drafts (``static/js/draft.js``): the answer box, the
states draft.js writes on its form (``data-draft-state``), the tab's own copy of the unsent text
(sessionStorage) and the participant's stored draft.
"""
from __future__ import annotations

import time

from playwright.sync_api import Page, expect

from spotlight_study.participation.models import Participant

#: The prefix of draft.js's sessionStorage keys (``DRAFT_KEY_PREFIX`` in static/js/draft.js).
TAB_COPY_PREFIX = "spotlight.draft|"


def box(page: Page):
    """The page's answer box (a task page has exactly one textarea in its form)."""
    return page.locator("form textarea")


def draft_ready(page: Page) -> None:
    """Wait until draft.js runs on the page (it marks the form ``data-draft-state``)."""
    expect(page.locator("form[data-draft-state]")).to_have_count(1)


def saved(page: Page) -> None:
    """Wait until the page's last draft was kept by the server (204)."""
    expect(page.locator("form[data-draft-state=saved]")).to_have_count(1)


def stored_draft(participant: Participant, *, contains: str, timeout_s: float = 10.0) -> dict:
    """Poll the participant's row until its draft holds ``contains``; return the draft.

    Raises ``AssertionError`` with the row's draft if none does within ``timeout_s`` seconds (a
    bound on the wait, not a speed target).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        participant.refresh_from_db()
        data = (participant.draft or {}).get("data") or {}
        if any(contains in v for v in data.values()):
            return participant.draft
        if time.monotonic() > deadline:
            raise AssertionError(f"no draft with {contains!r}; the row holds {participant.draft!r}")
        time.sleep(0.05)


def tab_copies(page: Page) -> dict[str, str]:
    """The draft copies in the page's sessionStorage: ``{key: stored JSON text}``."""
    return page.evaluate(
        """(prefix) => {
            const out = {};
            for (let i = 0; i < sessionStorage.length; i++) {
                const key = sessionStorage.key(i);
                if (key.startsWith(prefix)) { out[key] = sessionStorage.getItem(key); }
            }
            return out;
        }""",
        TAB_COPY_PREFIX,
    )
