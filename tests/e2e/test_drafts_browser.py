"""No typed word is lost, in Chromium: what a participant types (static/js/draft.js) survives a
reload, a closed tab, a frozen and discarded tab and a second tab, and never changes an answer.

Each test ends by checking what the database holds. The drafts are sent by the page's own
JavaScript, so these are browser tests: Django's test client cannot show when a browser sends
them (a pause in typing, a hidden, frozen or closing page).
"""
from __future__ import annotations

import os
import signal

import pytest
from playwright.sync_api import Page, expect

from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse

from .contexts import close_context
from .drafts import box, draft_ready, saved, stored_draft
from .participant import expect_task, fill_survey, hex24, submit, to_training

pytestmark = pytest.mark.browser

# This module's Chromium keeps no spare renderer ready for the next page: the discarded-tab test
# kills the renderers that appeared with its page, one of them could be that spare, and the next
# page was then given the killed process ("Target crashed", seen once in a full run).
CHROMIUM_EXTRA_ARGS = ["--disable-features=SpareRendererForSitePerProcess"]

TYPED = "In group 2 the people go fishing at night, under the stars"


def _entry_url(base_url: str, slug: str) -> tuple[str, str]:
    """A study link of a fresh participant, and its PID."""
    pid = hex24()
    return f"{base_url}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={hex24()}&SESSION_ID={hex24()}", pid


def _at_training(page: Page, base_url: str, slug: str) -> tuple[str, Participant]:
    """Open a fresh participant's link and go to the training task; the link and participant."""
    url, pid = _entry_url(base_url, slug)
    page.goto(url)
    expect(page.get_by_role("heading", name="Consent")).to_be_visible()
    to_training(page)
    draft_ready(page)
    return url, Participant.objects.get(prolific_pid=pid)


def test_typed_text_is_back_after_a_reload_and_back_forward(page, live_server, live_demo_study):
    """Type, wait, then reload (and Back, Forward): the text is there, and no answer is stored."""
    url, participant = _at_training(page, live_server.url, live_demo_study.slug)
    box(page).press_sequentially(TYPED, delay=5)
    saved(page)
    page.reload()
    expect_task(page, "Instructions, step 2 of 2")
    expect(box(page)).to_have_value(TYPED)
    page.go_back()
    expect_task(page, "Instructions, step 2 of 2")
    expect(box(page)).to_have_value(TYPED)
    page.go_forward()
    expect_task(page, "Instructions, step 2 of 2")
    expect(box(page)).to_have_value(TYPED)
    # flow.js's counter counts the restored text.
    expect(page.locator("#answer-counter")).to_have_text(f"{len(TYPED):,} of at most 5,000 characters.")
    participant.refresh_from_db()
    assert participant.step == "training"
    assert not TaskResponse.objects.filter(participant=participant, answered_at__isnull=False).exists()


def test_typed_text_is_back_after_closing_the_tab_and_opening_the_link_again(
    page, browser, live_server, live_demo_study
):
    """Type, close the page at once (no pause: the page's close sends it), open the entry link
    again in a fresh browser context: the text is there, from the server."""
    url, participant = _at_training(page, live_server.url, live_demo_study.slug)
    box(page).fill(TYPED)
    page.close()
    stored_draft(participant, contains=TYPED)

    context = browser.new_context()
    try:
        again = context.new_page()
        again.goto(url)
        expect_task(again, "Instructions, step 2 of 2")
        expect(box(again)).to_have_value(TYPED)
    finally:
        close_context(context)


def _renderer_pids(browser) -> set[int]:
    """The process ids of Chromium's renderers (DevTools ``SystemInfo.getProcessInfo``)."""
    session = browser.new_browser_cdp_session()
    try:
        info = session.send("SystemInfo.getProcessInfo")
    finally:
        session.detach()
    return {p["id"] for p in info["processInfo"] if p["type"] == "renderer"}


def test_typed_text_survives_a_frozen_then_discarded_tab(browser, live_server, live_demo_study):
    """Type, freeze the page, then discard it: the text is there when the link is opened again.

    What a phone does to a background tab: it is hidden, frozen (the page gets its ``freeze``
    event, then runs no more timers) and later discarded without any further event. Here:

    - the text typed before a pause is saved by the 1 s debounce; more text typed right before
      the freeze is sent by draft.js's ``freeze`` handler at once (the form's state is "saving"
      as the event returns, not "typing", which waits for the pause);
    - the freeze goes through the DevTools protocol (``Page.setWebLifecycleState`` ``frozen``).
      This headless Chromium accepts it but neither fires ``freeze`` nor stops timers on a page
      that headless mode keeps visible, so the test also dispatches the page's ``freeze`` event;
    - Chromium's discard cannot be asked for through the protocol in headless mode (and
      ``Page.crash`` never answers), so it is simulated as a phone's memory pressure ends a tab:
      the page's renderer process is killed (SIGKILL), so no ``pagehide``, ``visibilitychange``
      or ``beforeunload`` runs. The row is checked before the kill.
    """
    before = _renderer_pids(browser)
    context = browser.new_context()
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        url, participant = _at_training(page, live_server.url, live_demo_study.slug)
        ours = _renderer_pids(browser) - before
        assert ours, "the new context's page got no renderer of its own"
        box(page).fill(TYPED)
        saved(page)
        box(page).press_sequentially(", and more just before the freeze", delay=5)
        cdp = context.new_cdp_session(page)
        cdp.send("Page.setWebLifecycleState", {"state": "frozen"})
        state = page.evaluate(
            """() => {
                document.dispatchEvent(new Event("freeze"));
                return document.querySelector("form[data-draft]").getAttribute("data-draft-state");
            }"""
        )
        assert state in ("saving", "saved"), state
        full = TYPED + ", and more just before the freeze"
        draft = stored_draft(participant, contains=full)
        assert draft["data"] == {"answer_0": full}
        with page.expect_event("crash"):
            for pid in ours:
                os.kill(pid, signal.SIGKILL)
        again = context.new_page()
        again.goto(url)
        expect_task(again, "Instructions, step 2 of 2")
        expect(box(again)).to_have_value(full)
    finally:
        close_context(context)


def test_two_tabs_the_later_draft_wins_and_no_saved_answer_changes(page, live_server, live_demo_study):
    """Two tabs of one participant: the later draft wins, and after a submit the other tab's
    typing changes neither the saved answer nor the next task's draft, and shows no error."""
    url, participant = _at_training(page, live_server.url, live_demo_study.slug)
    first = page
    box(first).fill("typed in the first tab")
    saved(first)
    second = first.context.new_page()
    second.goto(first.url)
    expect_task(second, "Instructions, step 2 of 2")
    draft_ready(second)
    expect(box(second)).to_have_value("typed in the first tab")
    box(second).fill(TYPED + " (second tab, later)")
    saved(second)
    # The first tab, hidden and shown again or reloaded, never sends its older text back.
    first.reload()
    expect_task(first, "Instructions, step 2 of 2")
    expect(box(first)).to_have_value(TYPED + " (second tab, later)")

    submit(first)
    expect_task(first, "Task 1 of 2")
    draft_ready(first)
    box(first).fill("the first task, typed")
    saved(first)
    # The second tab still shows the training page; its typing now belongs to a submitted page.
    box(second).fill("the second tab goes on typing on the training page")
    expect(second.locator("form[data-draft-state=stale]")).to_have_count(1)
    expect(second.locator(".messages, .errorlist, [role=alert]")).to_have_count(0)
    second.close()  # its close sends nothing more

    training = TaskResponse.objects.get(participant=participant, position=0)
    assert training.answer == TYPED + " (second tab, later)"
    draft = stored_draft(participant, contains="the first task, typed")
    assert draft["data"] == {"answer_1": "the first task, typed"}
    first.reload()
    expect(box(first)).to_have_value("the first task, typed")


def test_survey_comment_and_a_choice_are_back_after_a_reload(page, live_server, live_demo_study):
    """On the survey, a choice and the comment are kept as a draft and shown after a reload."""
    _, participant = _at_training(page, live_server.url, live_demo_study.slug)
    for progress, text in (
        ("Instructions, step 2 of 2", TYPED),
        ("Task 1 of 2", "Group 2 describes the doctor as a woman more often."),
        ("Task 2 of 2", "Group 1 grows maize and beans, group 2 wheat and apples."),
    ):
        expect_task(page, progress)
        box(page).fill(text)
        submit(page)
    expect(page.get_by_role("heading", name="A few questions about the tasks")).to_be_visible()
    draft_ready(page)
    items = page.locator(".survey .item")
    items.nth(2).locator("input[type=radio]").nth(3).check()
    page.locator("textarea[name=comment]").fill("The second text was hard to read.")
    saved(page)
    page.reload()
    expect(page.get_by_role("heading", name="A few questions about the tasks")).to_be_visible()
    expect(page.locator(".survey input[type=radio]:checked")).to_have_count(1)
    expect(items.nth(2).locator("input[type=radio]").nth(3)).to_be_checked()
    expect(page.locator("textarea[name=comment]")).to_have_value("The second text was hard to read.")
    expect(page.locator(".error-summary")).to_have_count(0)
    assert not SurveyAnswer.objects.filter(participant=participant).exists()
    # Finishing saves what the form posts; the draft is gone.
    fill_survey(page)
    page.get_by_role("button", name="Finish and return to Prolific").click()
    page.wait_for_url("https://app.prolific.com/**")
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED and participant.draft is None
    assert participant.comment == "The second text was hard to read."
    assert SurveyAnswer.objects.filter(participant=participant).count() == 10
