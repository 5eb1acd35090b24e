"""Study-file ``info`` pages in Chromium (issue 36 §2): a note after the instructions and a
debrief at the end, walked with Back and reload, each checked by axe-core at 1280 and 390 px."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from spotlight_study.participation.models import Participant

from .a11y import AxeLedger
from .conftest import DEMO_STUDY_FILE
from .participant import PROLIFIC_COMPLETE, enter, expect_task, fill_survey, submit

NOTE = {"kind": "info", "at": "after_instructions", "title": "Before the example",
        "text": "The example task comes next. Take your time."}
DEBRIEF = {"kind": "info", "at": "end", "title": "Debrief",
           "text": "This study asked whether highlighted patterns help people compare groups."}


@pytest.fixture
def live_paged_study(live_server):
    """The demo study with a note after the instructions and a debrief at the end."""
    from spotlight_study.studies.schema import parse_study_file
    from spotlight_study.studies.services import study_import

    data = parse_study_file(DEMO_STUDY_FILE)
    data["pages"] = [NOTE, DEBRIEF]
    return study_import(data=data)


def test_info_pages_show_at_their_places_survive_back_and_reload_and_pass_axe(page, live_server, live_paged_study):
    """The note follows the instructions, Back and reload keep the participant on the current page,
    the debrief comes before Prolific's completion page, and neither page has an axe-core violation."""
    study = live_paged_study
    axe = AxeLedger()
    pid = enter(page, live_server.url, study.slug)
    page.get_by_role("button", name="I agree and want to take part").click()
    expect(page.locator(".progress")).to_have_text("Instructions, step 1 of 2")
    page.get_by_role("button", name="Continue").click()

    expect(page.get_by_role("heading", name="Before the example")).to_be_visible()
    axe.check_widths(page, "info page (after the instructions)")
    page.reload()
    expect(page.get_by_role("heading", name="Before the example")).to_be_visible()
    page.get_by_role("button", name="Continue").focus()
    page.keyboard.press("Enter")
    expect_task(page, "Instructions, step 2 of 2")

    # Back to the note: the server shows the current page (the example task) again.
    page.go_back()
    expect_task(page, "Instructions, step 2 of 2")
    assert Participant.objects.get(study=study, prolific_pid=pid).step == "training"

    page.locator("textarea").fill("The first group fishes by day, the second group fishes at night.")
    submit(page)
    for n in (1, 2):
        expect_task(page, f"Task {n} of 2")
        page.locator("textarea").fill(f"Task {n}: group 1 and group 2 differ in who does the work.")
        submit(page)
    fill_survey(page)
    # A page follows the survey: its button continues rather than finishes.
    page.get_by_role("button", name="Continue").click()

    expect(page.get_by_role("heading", name="Debrief")).to_be_visible()
    expect(page.get_by_text("highlighted patterns help people")).to_be_visible()
    axe.check_widths(page, "info page (debrief at the end)")
    assert Participant.objects.get(study=study, prolific_pid=pid).status == "in_progress"
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url(f"{PROLIFIC_COMPLETE}?cc={study.completion_code}")
    participant = Participant.objects.get(study=study, prolific_pid=pid)
    assert (participant.status, participant.step) == ("completed", "done")
    axe.assert_none_blocking()


BREAK = {"kind": "info", "at": "between_tasks", "title": "A break", "text": "Rest a moment.", "min_seconds": 30}


@pytest.fixture
def live_break_study(live_server):
    """The demo study with a 30 s break between the example task and the main tasks."""
    from spotlight_study.studies.schema import parse_study_file
    from spotlight_study.studies.services import study_import

    data = parse_study_file(DEMO_STUDY_FILE)
    data.update(slug="break-demo", pages=[BREAK])
    return study_import(data=data)


def test_the_break_counts_down_on_the_page_without_a_reload(page, live_server, live_break_study):
    """The "continue in N seconds" line counts down each second of the page's clock and is gone at zero."""
    page.clock.install()  # the page's timers are Playwright's
    enter(page, live_server.url, live_break_study.slug)
    page.get_by_role("button", name="I agree and want to take part").click()
    page.get_by_role("button", name="Continue").click()
    expect_task(page, "Instructions, step 2 of 2")
    page.locator("textarea").fill("The first group fishes by day, the second group fishes at night.")
    submit(page)
    wait = page.locator("#info-wait")
    expect(wait).to_have_text("You can continue in 30 seconds.")
    page.clock.pause_at(page.evaluate("Date.now()") / 1_000 + 1)  # one second on: one tick
    expect(wait).to_have_text("You can continue in 29 seconds.")
    page.clock.run_for(1_000)
    expect(wait).to_have_text("You can continue in 28 seconds.")
    page.clock.run_for(27_000)
    expect(wait).to_have_text("You can continue in 1 second.")
    page.clock.run_for(1_000)
    expect(wait).to_be_hidden()
