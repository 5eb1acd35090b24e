"""End-to-end tests of the participant flow in a real browser (headless Chromium).

Each test imports the demo study (``fixtures/spotlight-replication.yaml``), enters it as a fresh
Prolific participant through the live server and clicks through the pages like a participant.
Database checks come before or after the browser work where possible.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse

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

PATTERN_BOX = ".pattern-box"
PASTED = "Group 2 mostly describes female doctors, group 1 mostly male ones."


def _pattern_box_visible(page: Page) -> bool:
    return page.locator(PATTERN_BOX).filter(has_text="more often in group").is_visible()


def _consent_instructions_training(page: Page) -> bool:
    """Agree, continue the instructions, pass the training task; return its pattern box state."""
    to_training(page)
    training_box = _pattern_box_visible(page)
    page.locator("textarea").fill("The people in group 2 go fishing at night.")
    submit(page)
    return training_box


def test_whole_demo_study_ends_on_prolific_completion_url(page, live_server, live_demo_study):
    """A fresh participant completes the whole demo study and is sent to Prolific with the code."""
    study = live_demo_study
    pid = enter(page, live_server.url, study.slug)
    training_box = _consent_instructions_training(page)

    # Main task 1: paste text into the answer (a real paste event) and submit.
    expect_task(page, "Task 1 of 2")
    main_boxes = [_pattern_box_visible(page)]
    answer = page.locator("textarea")
    answer.focus()
    page.evaluate(
        """(text) => {
            const ta = document.querySelector("textarea[data-answer]");
            const data = new DataTransfer();
            data.setData("text/plain", text);
            ta.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
        }""",
        PASTED,
    )
    answer.fill(PASTED)  # a synthetic paste event does not insert the text itself
    submit(page)

    # Main task 2: an empty answer is refused and the page does not advance.
    expect_task(page, "Task 2 of 2")
    main_boxes.append(_pattern_box_visible(page))
    submit(page)
    expect(page.get_by_text(EMPTY_ANSWER_ERROR)).to_be_visible()
    expect(page.locator(".progress")).to_have_text("Task 2 of 2")
    page.locator("textarea").fill("Group 1 harvests maize and beans, group 2 wheat, corn and apples.")
    submit(page)

    # Survey: one option per item, a comment, then back to Prolific.
    expect(page.get_by_role("heading", name="A few questions about the tasks")).to_be_visible()
    fill_survey(page)
    page.locator("textarea[name=comment]").fill("Clear instructions, thank you.")
    page.get_by_role("button", name="Finish and return to Prolific").click()
    expected_url = f"{PROLIFIC_COMPLETE}?cc={study.completion_code}"
    page.wait_for_url(expected_url)
    assert page.url == expected_url
    expect(page.get_by_role("heading", name="Submission complete")).to_be_visible()

    assert training_box, "the training page must show the pattern box"
    participant = Participant.objects.get(study=study)
    assert participant.prolific_pid == pid
    assert participant.status == Participant.Status.COMPLETED
    assert participant.instruction_check_passed is True
    # The box is shown on exactly the main task whose condition is "pattern".
    assert sum(main_boxes) == 1
    assert main_boxes == [task["condition"] == "pattern" for task in participant.cell_plan]

    responses = {r.position: r for r in TaskResponse.objects.filter(participant=participant)}
    assert sorted(responses) == [0, 1, 2]
    for r in responses.values():
        assert r.answered_at is not None and r.time_on_task_ms > 0, r.position
    assert responses[1].answer == PASTED
    assert responses[1].paste_count >= 1
    assert responses[1].paste_chars == len(PASTED)
    assert responses[2].paste_count == 0
    assert SurveyAnswer.objects.filter(participant=participant).count() == 2 * 3 + 4
    assert participant.comment == "Clear instructions, thank you."


def test_back_button_resubmit_stores_no_second_answer(page, live_server, live_demo_study):
    """Going back after main task 1 and re-submitting its page stores nothing and says so."""
    study = live_demo_study
    enter(page, live_server.url, study.slug)
    _consent_instructions_training(page)
    expect_task(page, "Task 1 of 2")
    old_page_html = page.content()
    page.locator("textarea").fill("First answer to task 1.")
    submit(page)
    expect_task(page, "Task 2 of 2")
    step_url = page.url

    # The step pages are never_cache, so Chromium's back button fetches the current step again.
    page.go_back()
    expect_task(page, "Task 2 of 2")
    page.go_forward()
    expect_task(page, "Task 2 of 2")

    # A browser that kept the old page (bfcache, an old copy) shows task 1 again: serve that copy
    # for the next GET of the step URL, and go back once more.
    served_old = []

    def old_copy(route):
        if route.request.method == "GET" and not served_old:
            served_old.append(True)
            route.fulfill(status=200, content_type="text/html; charset=utf-8", body=old_page_html)
        else:
            route.continue_()

    page.route(step_url, old_copy)
    page.go_back()
    expect_task(page, "Task 1 of 2")
    count_before = TaskResponse.objects.filter(participant__study=study).count()
    answered_before = TaskResponse.objects.filter(
        participant__study=study, answered_at__isnull=False
    ).count()

    page.locator("textarea").fill("A second answer to task 1 that must not be stored.")
    submit(page)
    expect_task(page, "Task 2 of 2")
    expect(page.locator(".messages")).to_contain_text("already submitted")
    assert served_old == [True]

    participant = Participant.objects.get(study=study)
    assert participant.step == "task" and participant.task_index == 1
    assert TaskResponse.objects.filter(participant=participant).count() == count_before == 3
    assert (
        TaskResponse.objects.filter(participant=participant, answered_at__isnull=False).count()
        == answered_before
        == 2
    )
    assert TaskResponse.objects.get(participant=participant, position=1).answer == (
        "First answer to task 1."
    )


def test_decline_asks_again_by_keyboard_and_back_returns_to_the_consent_form(
    page, live_server, live_demo_study
):
    """A misclicked 'I do not agree' only asks; 'Back to the consent form' and the browser's
    Back both return to the form, and nothing is saved until the confirmation is pressed
    (all by keyboard)."""
    study = live_demo_study
    pid = enter(page, live_server.url, study.slug)
    decline = page.get_by_role("button", name="I do not agree")
    decline.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Not taking part?")).to_be_focused()
    participant = Participant.objects.get(prolific_pid=pid)
    assert participant.status == Participant.Status.IN_PROGRESS and participant.finished_at is None

    page.get_by_role("link", name="Back to the consent form").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="I agree and want to take part")).to_be_visible()
    page.go_back()
    expect(page.get_by_role("heading", name="Not taking part?")).to_be_visible()
    page.reload()
    expect(page.get_by_role("heading", name="Not taking part?")).to_be_visible()

    confirm = page.get_by_role("button", name="Yes, I do not agree: end the study")
    # On a phone the two choices stack; they must not touch, or a slip hits the other one.
    page.set_viewport_size({"width": 390, "height": 844})
    boxes = [page.get_by_role("link", name="Back to the consent form").bounding_box(),
             confirm.bounding_box()]
    if abs(boxes[0]["y"] - boxes[1]["y"]) < 1:  # side by side
        left, right = sorted(boxes, key=lambda b: b["x"])
        gap = right["x"] - (left["x"] + left["width"])
    else:
        upper, lower = sorted(boxes, key=lambda b: b["y"])
        gap = lower["y"] - (upper["y"] + upper["height"])
    assert gap >= 8, boxes
    confirm.focus()
    # The request to Prolific is what matters. Playwright's offline route for Prolific did not
    # catch the navigation that Space on the button started (a click's is caught), so the
    # page's arrival there is not waited for.
    with page.expect_request(f"{PROLIFIC_COMPLETE}?cc={study.no_consent_code}"):
        page.keyboard.press("Space")
    participant.refresh_from_db()
    assert participant.status == Participant.Status.NO_CONSENT and participant.finished_at
