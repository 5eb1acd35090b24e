"""The tab's copy of unsent text (static/js/draft.js, sessionStorage) never brings an old text
back, in Chromium: Back to a submitted page, a second tab, a stale page, a page whose answer is
already saved (issue 37 §1).

Each test first checks that the tab really holds a copy of the text that must not come back, so
that it would fail if draft.js put copies back by the page's address alone, kept them after a
submit, or preferred them over a later draft of another tab. Each ends with what the database
holds.
"""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from spotlight_study.participation.models import Participant, TaskResponse

from .drafts import TAB_COPY_PREFIX, box, draft_ready, reload_at_once, saved, stored_draft, tab_copies
from .participant import enter, expect_task, fill_survey, submit, to_training

pytestmark = pytest.mark.browser

TRAINING = "In group 2 the people go fishing at night, under the stars"
TASK_1 = "Group 2 describes the doctor as a woman more often."


def _at_training(page: Page, live_server, study) -> Participant:
    """A fresh participant on the training task, draft.js running; the participant."""
    pid = enter(page, live_server.url, study.slug)
    to_training(page)
    draft_ready(page)
    return Participant.objects.get(prolific_pid=pid)


def _copied_texts(page: Page) -> list[str]:
    """The field values of every draft copy in the page's tab."""
    return [value for text in tab_copies(page).values() for _, value in json.loads(text)["fields"]]


def _second_tab(page: Page) -> Page:
    """The same step URL in a new tab of the same browser (its own, empty sessionStorage)."""
    other = page.context.new_page()
    other.goto(page.url)
    draft_ready(other)
    return other


def test_back_to_a_submitted_page_never_brings_its_text_back(page, live_server, live_demo_study):
    """Type on the training task and submit at once: the tab's copy is gone, and Back and
    Forward show task 1 with an empty box; task 1's own copy is what a reload brings back."""
    participant = _at_training(page, live_server, live_demo_study)
    box(page).fill(TRAINING)
    copies = tab_copies(page)
    assert len(copies) == 1 and _copied_texts(page) == [TRAINING]
    [key] = copies
    assert key.startswith(f"{TAB_COPY_PREFIX}/s/{live_demo_study.slug}/draft/|training:0:")
    submit(page)
    expect_task(page, "Task 1 of 2")
    draft_ready(page)
    assert tab_copies(page) == {}
    for move in (page.go_back, page.go_forward, page.go_back):
        move()
        expect_task(page, "Task 1 of 2")
        draft_ready(page)
        expect(box(page)).to_have_value("")
    # Task 1's own unsent text does come back after a reload at once, then Back.
    box(page).fill(TASK_1)
    reload_at_once(page)
    expect_task(page, "Task 1 of 2")
    expect(box(page)).to_have_value(TASK_1)
    # Kept by the leaving draft or by the one sent after the copy was put back, whichever came.
    stored_draft(participant, contains=TASK_1)
    page.go_back()
    expect_task(page, "Task 1 of 2")
    expect(box(page)).to_have_value(TASK_1)
    assert [k.split("|")[2].split(":")[:2] for k in tab_copies(page)] == [["task", "0"]]
    assert TaskResponse.objects.get(participant=participant, position=0).answer == TRAINING
    assert stored_draft(participant, contains=TASK_1)["data"] == {"answer_1": TASK_1}


def test_a_second_tab_never_brings_back_an_older_text(page, live_server, live_demo_study):
    """A tab holding a copy of its own older text shows the later draft another tab saved; a tab
    opened from it (window.open copies sessionStorage) shows the first tab's later text too."""
    participant = _at_training(page, live_server, live_demo_study)
    first = page
    box(first).fill("typed in the first tab")
    saved(first)
    second = _second_tab(first)
    expect(box(second)).to_have_value("typed in the first tab")
    box(second).fill("typed later in the second tab")
    saved(second)
    assert _copied_texts(first) == ["typed in the first tab"]
    reload_at_once(first)
    expect_task(first, "Instructions, step 2 of 2")
    draft_ready(first)
    expect(box(first)).to_have_value("typed later in the second tab")
    assert tab_copies(first) == {}  # the server's later draft won; the copy is dropped

    box(first).fill("the first tab again")
    saved(first)
    with first.expect_popup() as opened:
        first.evaluate("window.open(location.href)")
    third = opened.value
    draft_ready(third)
    expect(box(third)).to_have_value("the first tab again")
    assert _copied_texts(third) == ["the first tab again"]  # copied from the first tab
    box(first).fill("the first tab again, and more")
    saved(first)
    reload_at_once(third)
    draft_ready(third)
    expect(box(third)).to_have_value("the first tab again, and more")
    assert stored_draft(participant, contains="and more")["data"] == {"answer_0": "the first tab again, and more"}
    assert not TaskResponse.objects.filter(participant=participant, answered_at__isnull=False).exists()


def test_a_stale_page_never_brings_back_its_text(page, live_server, live_demo_study):
    """Two tabs still show the training task after a third submitted it: text typed on them,
    once refused as stale and once reloaded at once before any draft went, never comes back."""
    participant = _at_training(page, live_server, live_demo_study)
    waits, hurries = page, _second_tab(page)
    submitter = _second_tab(page)
    box(submitter).fill(TRAINING)
    submit(submitter)
    expect_task(submitter, "Task 1 of 2")

    box(waits).fill("typed on a stale page")
    expect(waits.locator("form[data-draft-state=stale]")).to_have_count(1)
    assert tab_copies(waits) == {}  # the 409 dropped it
    box(hurries).fill("typed on a stale page, reloaded at once")
    assert _copied_texts(hurries) == ["typed on a stale page, reloaded at once"]
    for tab in (waits, hurries):
        if tab is waits:
            tab.reload()
        else:
            reload_at_once(tab)
        expect_task(tab, "Task 1 of 2")
        draft_ready(tab)
        expect(box(tab)).to_have_value("")
        assert tab_copies(tab) == {}  # another page's copy: dropped
    assert TaskResponse.objects.get(participant=participant, position=0).answer == TRAINING
    participant.refresh_from_db()
    assert participant.draft is None


def test_a_page_whose_answer_is_saved_never_brings_back_its_text(page, live_server, live_demo_study):
    """Task 1's answer is saved from another tab while this tab holds unsent text of task 1: a
    reload shows task 2, empty. After the survey is finished, Back shows the completion page and
    the tab holds no copy."""
    participant = _at_training(page, live_server, live_demo_study)
    box(page).fill(TRAINING)
    submit(page)
    expect_task(page, "Task 1 of 2")
    draft_ready(page)
    box(page).fill("a draft of task 1")
    saved(page)
    other = _second_tab(page)
    expect(box(other)).to_have_value("a draft of task 1")
    box(other).fill(TASK_1)
    submit(other)
    expect_task(other, "Task 2 of 2")
    box(page).press_sequentially(", and more typed in this tab", delay=5)
    assert _copied_texts(page) == ["a draft of task 1, and more typed in this tab"]
    reload_at_once(page)
    expect_task(page, "Task 2 of 2")
    draft_ready(page)
    expect(box(page)).to_have_value("")
    assert tab_copies(page) == {}
    page.go_back()
    expect_task(page, "Task 2 of 2")
    expect(box(page)).to_have_value("")
    assert TaskResponse.objects.get(participant=participant, position=1).answer == TASK_1

    box(page).fill("Group 1 grows maize and beans, group 2 wheat and apples.")
    submit(page)
    expect(page.get_by_role("heading", name="A few questions about the tasks")).to_be_visible()
    draft_ready(page)
    fill_survey(page)
    page.locator("textarea[name=comment]").fill("The second text was hard to read.")
    assert len(tab_copies(page)) == 1
    page.get_by_role("button", name="Finish and return to Prolific").click()
    page.wait_for_url("https://app.prolific.com/**")
    page.go_back()
    expect(page.get_by_role("heading", name="Thank you")).to_be_visible()
    expect(page.locator("textarea")).to_have_count(0)
    assert tab_copies(page) == {}
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED and participant.draft is None
    assert participant.comment == "The second text was hard to read."


def test_text_the_server_never_got_comes_back_from_the_tab_and_counts_as_neither_typed_nor_inserted(
    page, live_server, live_demo_study, settings
):
    """With every draft refused (429, DRAFT_RATE_LIMIT), typed text still comes back after a
    reload, from the tab's copy alone, with flow.js's counter; once drafts are let through the
    server gets it, and the saved answer's telemetry counts only what was typed after the reload."""
    from django.core.cache import cache

    cache.clear()  # the limit's counters (the live server runs in this process)
    settings.DRAFT_RATE_LIMIT = "1/d"
    participant = _at_training(page, live_server, live_demo_study)
    box(page).fill("x")
    saved(page)  # the one draft the limit lets through; every later one gets 429
    box(page).fill("")
    box(page).press_sequentially(TRAINING, delay=5)
    reload_at_once(page)
    expect_task(page, "Instructions, step 2 of 2")
    expect(box(page)).to_have_value(TRAINING)
    expect(page.locator("#answer-counter")).to_have_text(f"{len(TRAINING)} of at most 5,000 characters.")
    expect(page.locator("form[data-draft-state=failed]")).to_have_count(1)  # its own send: 429
    participant.refresh_from_db()
    assert participant.draft["data"] == {"answer_0": "x"}  # the server never got the text
    settings.DRAFT_RATE_LIMIT = "off"
    box(page).focus()
    page.keyboard.press("Control+End")
    box(page).press_sequentially("!", delay=5)
    saved(page)
    assert stored_draft(participant, contains=TRAINING)["data"] == {"answer_0": TRAINING + "!"}
    submit(page)
    expect_task(page, "Task 1 of 2")
    response = TaskResponse.objects.get(participant=participant, position=0)
    assert response.answer == TRAINING + "!"
    assert (response.typed_chars, response.replaced_chars, response.insertions) == (1, 0, 1)
