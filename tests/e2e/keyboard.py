"""Keyboard helpers of the e2e tests."""
from __future__ import annotations

from playwright.sync_api import Page


def focus_nothing(page: Page) -> None:
    """Wait until the page's scripts have run (its load event: a key press that navigated is
    not waited for by Playwright), then take the focus off any field, so that the next key
    press goes to the page's hotkeys.

    Clicking the body instead clicks whatever lies at its centre, which depends on the item's
    text: an 's' went nowhere once in CI, and a label there would tick a box.
    """
    page.wait_for_load_state("load")
    page.evaluate("() => { if (document.activeElement) { document.activeElement.blur(); } }")
