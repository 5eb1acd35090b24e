"""Steps of a participant in the browser, shared by the e2e tests of the participant flow.

Each helper drives the real pages of the live server the way a participant does (Playwright's
sync API) and waits for the page it leads to, so a test reads as the participant's path.
"""
from __future__ import annotations

import re
import secrets

from playwright.sync_api import Page, expect

#: Where the survey page sends a participant who finished (served locally by ``conftest.prolific_completion``).
PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete"
#: The refusal shown under an empty answer box.
EMPTY_ANSWER_ERROR = "Please describe the differences you see before continuing."


def hex24() -> str:
    """A fresh Prolific-style ID: 24 hex digits."""
    return secrets.token_hex(12)


def enter(page: Page, base_url: str, slug: str) -> str:
    """Open the study as a fresh Prolific participant (new PID, study and session IDs); wait for
    the consent page and return the PID used."""
    pid = hex24()
    page.goto(f"{base_url}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={hex24()}&SESSION_ID={hex24()}")
    expect(page.get_by_role("heading", name="Consent")).to_be_visible()
    return pid


def expect_task(page: Page, progress: str) -> None:
    """Wait until the task page with this progress line (``"Task 1 of 2"``) is shown and flow.js
    has run: the script rewrites the character counter on load, so this also proves the
    telemetry script is active."""
    expect(page.locator(".progress")).to_have_text(progress)
    expect(page.locator("#answer-counter")).to_have_text(
        re.compile(r"^[\d,]+ of at most 5,000 characters\.$")
    )


def submit(page: Page) -> None:
    """Click the task page's submit button (no wait: the caller expects what follows)."""
    page.get_by_role("button", name="Submit and continue").click()


def to_training(page: Page) -> None:
    """From the consent page: agree, continue the instructions, and wait for the training task."""
    page.get_by_role("button", name="I agree and want to take part").click()
    expect(page.locator(".progress")).to_have_text("Instructions, step 1 of 2")
    page.get_by_role("button", name="Continue").click()
    expect_task(page, "Instructions, step 2 of 2")


def fill_survey(page: Page) -> None:
    """Answer each of the demo study's 10 survey items (option ``i % 5`` of item ``i``)."""
    items = page.locator(".survey .item")
    expect(items).to_have_count(10)
    for i in range(items.count()):
        items.nth(i).locator("input[type=radio]").nth(i % 5).check()
