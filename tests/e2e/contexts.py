"""Closing a browser context at the end of a test without hanging.

``BrowserContext.close()`` (Playwright 1.65, Chromium 156) can wait forever when a page is in
the middle of a navigation: a test that ends right after a click that posts a form (the page's
scripts also send a draft with a keepalive request as it unloads). Reproduced here with 80
contexts closed right after a step's submit: the plain close hung in each of three runs (at the
11th, the 15th and the 40th context); waiting for each page's load event first (this module),
80 of 80 closed in each of three runs. It hung this way in the full suite
twice, holding a worker until pytest-timeout ended the test after 300 s.
"""
from __future__ import annotations

from playwright.sync_api import BrowserContext, Error

#: How long (ms) to wait for a page's navigation to finish before closing it anyway.
SETTLE_MS = 10_000


def close_context(context: BrowserContext) -> None:
    """Wait until every page of ``context`` has finished loading (up to :data:`SETTLE_MS` each;
    a page that fails to is closed as it is), then close the context."""
    for page in context.pages:
        try:
            page.wait_for_load_state("load", timeout=SETTLE_MS)
        except Error:
            pass  # closed, crashed or still loading: close it anyway
    context.close()
