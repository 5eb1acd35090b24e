"""Answer integrity in a real browser: Back, Forward, reload, the back-forward cache, two tabs
and a double click never store an answer the participant did not give on that page.

Chromium's form restoration, its back-forward cache and rapid double submits are browser
behaviour that Django's test client cannot show, hence headless Chromium. Every test ends by
checking what the database holds.
"""
from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse

from .contexts import close_context
from .participant import (
    EMPTY_ANSWER_ERROR,
    PROLIFIC_COMPLETE,
    enter,
    expect_task,
    fill_survey,
    submit,
    to_training,
)

pytestmark = pytest.mark.browser

TRAINING = "In group 2 the people go fishing at night, under the stars."
TASK_1 = "Group 2 describes the doctor as a woman more often."
TASK_2 = "Group 1 grows maize and beans, group 2 wheat and apples."


def _answer_box(page: Page):
    return page.locator("form textarea")


def _answers(participant: Participant) -> dict[int, str | None]:
    """``{position: answer or None if unanswered}`` as stored."""
    return {
        r.position: (r.answer if r.answered_at else None)
        for r in TaskResponse.objects.filter(participant=participant)
    }


def test_back_then_submit_on_task_1_never_saves_the_training_answer(page, live_server, live_demo_study):
    """The reported bug: Back from task 1 must not refill its box with the training answer."""
    study = live_demo_study
    enter(page, live_server.url, study.slug)
    to_training(page)
    _answer_box(page).fill(TRAINING)
    submit(page)
    expect_task(page, "Task 1 of 2")

    page.go_back()
    expect_task(page, "Task 1 of 2")
    assert _answer_box(page).input_value() == ""
    submit(page)
    expect(page.get_by_text(EMPTY_ANSWER_ERROR)).to_be_visible()
    expect_task(page, "Task 1 of 2")
    # The error page is a GET (POST-redirect-GET): reloading it posts nothing again.
    page.reload()
    expect(page.get_by_text(EMPTY_ANSWER_ERROR)).to_be_visible()

    participant = Participant.objects.get(study=study)
    assert participant.step == "task" and participant.task_index == 0
    assert _answers(participant) == {0: TRAINING, 1: None}


def test_back_forward_and_reload_at_every_step(page, live_server, live_demo_study):
    """At each step, reload, Back and Forward show the current step and change no stored answer."""
    study = live_demo_study
    enter(page, live_server.url, study.slug)
    participant = Participant.objects.get(study=study)

    def round_trip(check, *, first_page: bool = False, loaded=None) -> None:
        # ``loaded`` waits for the step to arrive first: reloading while the POST-redirect-GET
        # of a click is still under way detaches the page in Chromium (a flaky protocol error).
        if loaded is not None:
            loaded()
        page.reload()
        check()
        page.go_back()
        if not first_page:  # Back from the first page leaves the site (about:blank)
            check()
        page.go_forward()
        check()

    def consent_shown():
        expect(page.get_by_role("heading", name="Consent")).to_be_visible()

    round_trip(consent_shown, first_page=True)
    page.get_by_role("button", name="I agree and want to take part").click()

    def instructions_shown():
        expect(page.locator(".progress")).to_have_text("Instructions, step 1 of 2")

    round_trip(instructions_shown, loaded=instructions_shown)
    participant.refresh_from_db()
    assert participant.step == "instructions"
    page.get_by_role("button", name="Continue").click()

    # Each task: type something, then reload/Back/Forward. The box comes back with the typed
    # text (kept by the server as a draft, draft.js) and no answer is stored; then the real
    # answer is submitted. (Before typed drafts the box came back empty.)
    expected: dict[int, str | None] = {}
    for position, progress, text in (
        (0, "Instructions, step 2 of 2", TRAINING),
        (1, "Task 1 of 2", TASK_1),
        (2, "Task 2 of 2", TASK_2),
    ):
        expect_task(page, progress)
        typed = f"Typed but not submitted on {progress}."
        expect(page.locator("form[data-draft-state=ready]")).to_have_count(1)  # draft.js is on
        _answer_box(page).fill(typed)
        expect(page.locator("form[data-draft-state=saved]")).to_have_count(1)

        def task_shown(progress=progress, typed=typed):
            expect_task(page, progress)
            assert _answer_box(page).input_value() == typed

        round_trip(task_shown)
        expected[position] = None
        assert _answers(participant) == expected
        _answer_box(page).fill(text)
        submit(page)
        expected[position] = text

    # The survey's choices come back too (a typed draft), and none is stored as an answer.
    def survey_shown():
        expect(page.get_by_role("heading", name="A few questions about the tasks")).to_be_visible()
        expect(page.locator(".survey input[type=radio]:checked")).to_have_count(10)

    expect(page.locator("form[data-draft-state=ready]")).to_have_count(1)
    fill_survey(page)
    expect(page.locator("form[data-draft-state=saved]")).to_have_count(1)
    round_trip(survey_shown)
    assert not SurveyAnswer.objects.filter(participant=participant).exists()
    fill_survey(page)
    page.get_by_role("button", name="Finish and return to Prolific").click()
    page.wait_for_url(f"{PROLIFIC_COMPLETE}?cc={study.completion_code}")

    # Back from Prolific shows the completion page; reload and Forward change nothing.
    page.go_back()
    expect(page.get_by_role("heading", name="Thank you")).to_be_visible()
    page.reload()
    expect(page.get_by_role("heading", name="Thank you")).to_be_visible()

    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    assert _answers(participant) == expected
    assert SurveyAnswer.objects.filter(participant=participant).count() == 2 * 3 + 4


def test_double_click_on_submit_stores_one_answer_and_advances_once(page, live_server, live_demo_study):
    """A double click on Submit saves the answer once and moves one step, not two."""
    study = live_demo_study
    enter(page, live_server.url, study.slug)
    to_training(page)
    _answer_box(page).fill(TRAINING)
    page.get_by_role("button", name="Submit and continue").dblclick()
    expect_task(page, "Task 1 of 2")

    participant = Participant.objects.get(study=study)
    assert participant.step == "task" and participant.task_index == 0
    assert _answers(participant) == {0: TRAINING, 1: None}


def test_double_click_without_javascript_is_refused_by_the_server(browser, live_server, live_demo_study):
    """Without flow.js, the second of two rapid posts is recognized as stale and stores nothing."""
    study = live_demo_study
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        enter(page, live_server.url, study.slug)
        page.get_by_role("button", name="I agree and want to take part").click()
        page.get_by_role("button", name="Continue").click()
        expect(page.locator(".progress")).to_have_text("Instructions, step 2 of 2")
        _answer_box(page).fill(TRAINING)
        page.get_by_role("button", name="Submit and continue").dblclick()
        expect(page.locator(".progress")).to_have_text("Task 1 of 2")
    finally:
        close_context(context)

    participant = Participant.objects.get(study=study)
    assert participant.step == "task" and participant.task_index == 0
    assert _answers(participant) == {0: TRAINING, 1: None}


def test_two_tabs_on_the_same_task_store_the_first_submit_only(page, live_server, live_demo_study):
    """Two tabs show task 1; the second tab's submit stores nothing and shows the current step."""
    study = live_demo_study
    enter(page, live_server.url, study.slug)
    to_training(page)
    _answer_box(page).fill(TRAINING)
    submit(page)
    expect_task(page, "Task 1 of 2")

    tab_b = page.context.new_page()
    tab_b.goto(page.url)
    expect_task(tab_b, "Task 1 of 2")
    _answer_box(page).fill(TASK_1)
    _answer_box(tab_b).fill("The second tab's answer, which must not be stored.")
    submit(page)
    expect_task(page, "Task 2 of 2")
    submit(tab_b)
    expect_task(tab_b, "Task 2 of 2")
    expect(tab_b.locator(".messages")).to_contain_text("already submitted")
    assert _answer_box(tab_b).input_value() == ""

    participant = Participant.objects.get(study=study)
    assert participant.step == "task" and participant.task_index == 1
    assert _answers(participant) == {0: TRAINING, 1: TASK_1, 2: None}
    assert TaskResponse.objects.get(participant=participant, position=1).serve_count == 2


@pytest.fixture(scope="module")
def bfcache_browser(browser, chromium_executable, chromium_args):
    """A second Chromium with its back-forward cache on (Playwright turns it off by default).

    Launched through the module's Playwright instance: a second instance in the same thread is
    refused by Playwright's sync API.
    """
    cached = browser.browser_type.launch(
        executable_path=chromium_executable,
        headless=True,
        args=chromium_args,
        ignore_default_args=["--disable-back-forward-cache"],
    )
    yield cached
    cached.close()


def test_back_never_restores_a_step_page_from_the_back_forward_cache(bfcache_browser, live_server, live_demo_study):
    """With the back-forward cache on, Chromium refetches a step page on Back and says why."""
    study = live_demo_study
    context = bfcache_browser.new_context()
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Page.enable")
        not_cached: list[set[str]] = []
        cdp.on(
            "Page.backForwardCacheNotUsed",
            lambda e: not_cached.append({x["reason"] for x in e["notRestoredExplanations"]}),
        )
        enter(page, live_server.url, study.slug)
        to_training(page)
        _answer_box(page).fill(TRAINING)
        submit(page)
        expect_task(page, "Task 1 of 2")

        page.go_back()
        expect_task(page, "Task 1 of 2")
        # Playwright hands CDP events over only while the test waits on it: wait for the event
        # (a state), in short slices, with a generous limit that only stops a hang.
        deadline = time.monotonic() + 30
        while not not_cached and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        assert _answer_box(page).input_value() == ""
    finally:
        close_context(context)

    # The page was reached by POST-redirect-GET and is sent with Cache-Control: no-store.
    assert not_cached and not_cached[0] & {
        "HTTPMethodNotGET", "CacheControlNoStore", "CacheControlNoStoreCookieModified",
    }, not_cached
    participant = Participant.objects.get(study=study)
    assert _answers(participant) == {0: TRAINING, 1: None}


def test_a_page_restored_from_the_back_forward_cache_reloads_as_the_current_step(page, live_server, live_demo_study):
    """A restored old step page (pageshow with persisted) reloads as the current step; nothing old is saved.

    Chromium keeps no step page in its back-forward cache (previous test), and Playwright cannot
    drive a real restore, so this re-creates one for browsers that might: Back brings the old
    training page with its typed text, then the page gets the ``pageshow`` event of a restore.
    """
    study = live_demo_study
    enter(page, live_server.url, study.slug)
    to_training(page)
    old_training_page = page.content()
    step_url = page.url
    _answer_box(page).fill(TRAINING)
    submit(page)
    expect_task(page, "Task 1 of 2")

    served_old: list[bool] = []

    def old_copy(route):
        if route.request.method == "GET" and not served_old:
            served_old.append(True)
            route.fulfill(status=200, content_type="text/html; charset=utf-8", body=old_training_page)
        else:
            route.continue_()

    page.route(step_url, old_copy)
    page.go_back()
    expect_task(page, "Instructions, step 2 of 2")
    _answer_box(page).fill(TRAINING)  # the restored page keeps what was typed
    with page.expect_navigation():
        page.evaluate(
            "window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true}))"
        )
    expect_task(page, "Task 1 of 2")
    assert served_old == [True]
    assert _answer_box(page).input_value() == ""
    _answer_box(page).fill(TASK_1)
    submit(page)
    expect_task(page, "Task 2 of 2")

    participant = Participant.objects.get(study=study)
    assert _answers(participant) == {0: TRAINING, 1: TASK_1, 2: None}
