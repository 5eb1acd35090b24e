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


#: An init script that records when the page last saw an input event (``window.__lastInputAt``,
#: ``performance.now()`` in ms), for :func:`reload_at_once`. Added by a test, not by the app.
LAST_INPUT_SCRIPT = """
document.addEventListener("input", () => { window.__lastInputAt = performance.now(); }, true);
"""
# In one task of the page: the draft's state ("typing": the text was not sent yet, draft.js waits
# 1 s after the last keystroke), the ms since the last keystroke, then the reload.
_RELOAD_NOW = """() => {
    const form = document.querySelector("form[data-draft]");
    const state = form ? form.getAttribute("data-draft-state") : null;
    const gap = performance.now() - (window.__lastInputAt === undefined ? NaN : window.__lastInputAt);
    location.reload();
    return [state, gap];
}"""


def reload_at_once(page: Page) -> tuple[str | None, float]:
    """Reload the page from its own script, at once, and wait for the new page's load event.

    Returns the draft's state when the reload began (``"typing"``: the last text was not sent
    yet) and the ms since the last input event (NaN without :data:`LAST_INPUT_SCRIPT`).
    """
    with page.expect_navigation(wait_until="load"):
        state, gap = page.evaluate(_RELOAD_NOW)
    return state, float("nan") if gap is None else gap


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
