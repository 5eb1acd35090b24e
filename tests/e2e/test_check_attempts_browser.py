"""The instruction check with a second attempt, in Chromium: a participant fails the example
task once, reads the instructions again, passes on the second try and completes the study."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from spotlight_study.participation.models import InstructionCheckAttempt, Participant, TaskResponse

from .conftest import DEMO_STUDY_FILE
from .participant import PROLIFIC_COMPLETE, enter, expect_task, fill_survey, submit, to_training

FAILING = "I clicked through without reading what this is about."
PASSING = "The first group fishes by day, the second group fishes at night."


@pytest.fixture
def live_two_attempts(live_server):
    """The demo study with ``instruction_check_attempts: 2``, for the live server."""
    from spotlight_study.studies.schema import parse_study_file
    from spotlight_study.studies.services import study_import

    data = parse_study_file(DEMO_STUDY_FILE)
    data["instruction_check_attempts"] = 2
    return study_import(data=data)


def test_a_failed_first_check_is_followed_by_a_second_try_that_passes(page, live_server, live_two_attempts):
    """Fail once, see the neutral re-read page, answer the example again, pass and finish."""
    study = live_two_attempts
    pid = enter(page, live_server.url, study.slug)
    to_training(page)
    page.locator("textarea").fill(FAILING)
    submit(page)

    expect(page.get_by_role("heading", name="Please read the instructions again")).to_be_visible()
    expect(page.locator(".progress")).to_have_text("Instructions, once more")
    page.get_by_role("button", name="Continue to the example task").click()

    expect_task(page, "Instructions, step 2 of 2")
    expect(page.locator("textarea")).to_have_value("")  # a fresh box, not the first answer
    page.locator("textarea").fill(PASSING)
    submit(page)

    for n in (1, 2):
        expect_task(page, f"Task {n} of 2")
        page.locator("textarea").fill(f"Task {n}: group 1 and group 2 differ in who does the work.")
        submit(page)
    expect(page.get_by_role("heading", name="A few questions about the tasks")).to_be_visible()
    fill_survey(page)
    page.get_by_role("button", name="Finish and return to Prolific").click()
    page.wait_for_url(f"{PROLIFIC_COMPLETE}?cc={study.completion_code}")

    participant = Participant.objects.get(study=study, prolific_pid=pid)
    assert (participant.status, participant.instruction_check_passed) == ("completed", True)
    first = InstructionCheckAttempt.objects.get(participant=participant)
    assert (first.attempt, first.answer, first.passed) == (1, FAILING, False)
    training = TaskResponse.objects.get(participant=participant, position=0)
    assert training.answer == PASSING and training.time_on_task_ms > 0
