"""Study-file check pages in Chromium (issue 36, "Done when"): a comprehension quiz after the
instructions, an attention check between the tasks and an info debrief at the end, end to end.

One participant fails the quiz once (the instructions come again), passes it, reloads and goes
Back, fails the attention check under ``flag`` and finishes through the debrief; three more fail
the attention check under ``end``, ``return`` and ``second_attempt``. Every check page is checked
by axe-core at 1280 and 390 px. The export (``participants.csv``) and the analysis report show
each check."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from spotlight_study.participation.models import PageAnswer, Participant

from .a11y import AxeLedger
from .conftest import DEMO_STUDY_FILE
from .participant import PROLIFIC_COMPLETE, enter, expect_task, fill_survey, submit

QUIZ = {
    "kind": "comprehension_quiz", "at": "after_instructions", "max_tries": 2,
    "questions": [
        {"question": "What do you describe in your answer?",
         "options": ["Each text on its own", "General differences between the two groups"],
         "correct": "General differences between the two groups"},
        {"question": "Must a difference occur in every text of a group?", "options": ["Yes", "No"],
         "correct": "No"},
    ],
}
CHECK = {"kind": "attention_check", "at": "between_tasks",
         "question": "To show that you read this, choose the colour Blue.",
         "options": ["Red", "Blue", "Green"], "correct": "Blue", "on_fail": "flag"}
DEBRIEF = {"kind": "info", "at": "end", "title": "Debrief",
           "text": "This study asked whether highlighted patterns help people compare groups."}


def _import(slug: str, on_fail: str):
    from spotlight_study.studies.schema import parse_study_file
    from spotlight_study.studies.services import study_import

    data = parse_study_file(DEMO_STUDY_FILE)
    data.update(slug=slug, pages=[QUIZ, {**CHECK, "on_fail": on_fail}, DEBRIEF])
    return study_import(data=data)


@pytest.fixture
def live_checked_studies(live_server):
    """One study per attention-check policy, each with the quiz and the debrief."""
    return {policy: _import(f"checks-{policy.replace('_', '-')}", policy)
            for policy in ("flag", "end", "return", "second_attempt")}


def _pass_quiz(page) -> None:
    page.get_by_label("General differences between the two groups").check()
    page.get_by_label("No", exact=True).check()
    page.get_by_role("button", name="Continue").click()


def _to_quiz(page, base_url: str, slug: str) -> str:
    pid = enter(page, base_url, slug)
    page.get_by_role("button", name="I agree and want to take part").click()
    expect(page.locator(".progress")).to_have_text("Instructions, step 1 of 2")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="Questions about the instructions")).to_be_visible()
    return pid


def _to_check(page, base_url: str, slug: str) -> str:
    pid = _to_quiz(page, base_url, slug)
    _pass_quiz(page)
    expect_task(page, "Instructions, step 2 of 2")
    page.locator("textarea").fill("The first group fishes by day, the second group fishes at night.")
    submit(page)
    expect(page.get_by_role("heading", name="A check question")).to_be_visible()
    return pid


def test_check_pages_run_end_to_end_with_every_policy(page, live_server, live_checked_studies, tmp_path):
    """A quiz failed then passed, reload and Back, an attention check failed under flag, end,
    return and second_attempt, the debrief, axe-core at both widths, the export and the report."""
    studies = live_checked_studies
    axe = AxeLedger()
    flag = studies["flag"]

    # --- the quiz: a failed try shows the instructions again; the second passes -------------
    pid = _to_quiz(page, live_server.url, flag.slug)
    axe.check_widths(page, "comprehension quiz (try 1)")
    page.get_by_label("Each text on its own").check()
    page.get_by_label("Yes", exact=True).check()
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_text("Not all of your answers were right")).to_be_visible()
    expect(page.get_by_role("heading", name="What you will do")).to_be_visible()
    axe.check_widths(page, "comprehension quiz (try 2, the instructions again)")
    page.reload()  # a reload is the same try
    expect(page.get_by_text("try 2 of 2")).to_be_visible()
    _pass_quiz(page)
    expect_task(page, "Instructions, step 2 of 2")
    # Back to the quiz: the server shows the current page (the example task) again.
    page.go_back()
    expect_task(page, "Instructions, step 2 of 2")
    page.go_forward()
    expect_task(page, "Instructions, step 2 of 2")
    assert Participant.objects.get(study=flag, prolific_pid=pid).step == "training"
    assert PageAnswer.objects.filter(participant__prolific_pid=pid).count() == 2  # nothing new

    # --- the attention check, failed under flag: the study goes on ---------------------------
    page.locator("textarea").fill("The first group fishes by day, the second group fishes at night.")
    submit(page)
    expect(page.get_by_role("heading", name="A check question")).to_be_visible()
    axe.check_widths(page, "attention check")
    page.get_by_label("Red").check()
    page.get_by_role("button", name="Continue").click()
    for n in (1, 2):
        expect_task(page, f"Task {n} of 2")
        page.locator("textarea").fill(f"Task {n}: group 1 and group 2 differ in who does the work.")
        submit(page)
    fill_survey(page)
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="Debrief")).to_be_visible()
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url(f"{PROLIFIC_COMPLETE}?cc={flag.completion_code}")
    done = Participant.objects.get(study=flag, prolific_pid=pid)
    assert (done.status, done.step) == ("completed", "done")
    tries = PageAnswer.objects.filter(participant=done).order_by("step", "try_number")
    assert [(t.step, t.try_number, t.passed, t.outcome) for t in tries] == [
        ("check_between_tasks", 1, False, "flag"),
        ("quiz_after_instr", 1, False, "retry"),
        ("quiz_after_instr", 2, True, "passed"),
    ]

    # --- end: the failed-check code --------------------------------------------------------
    study = studies["end"]
    _to_check(page, live_server.url, study.slug)
    page.get_by_label("Green").check()
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="The study ends here")).to_be_visible()
    expect(page.get_by_text(study.failed_check_code)).to_be_visible()
    axe.check_widths(page, "done page after a failed attention check (end)")

    # --- return: asked to return the submission, no code ------------------------------------
    study = studies["return"]
    _to_check(page, live_server.url, study.slug)
    page.get_by_label("Red").check()
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="The study ends here")).to_be_visible()
    expect(page.get_by_text("Return submission")).to_be_visible()
    assert study.failed_check_code not in page.content()
    axe.check_widths(page, "done page after a failed attention check (return)")

    # --- second_attempt: once more, then on ------------------------------------------------
    study = studies["second_attempt"]
    pid = _to_check(page, live_server.url, study.slug)
    page.get_by_label("Red").check()
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_text("Try 2 of 2.")).to_be_visible()
    axe.check_widths(page, "attention check (second attempt)")
    page.get_by_label("Blue").check()
    page.get_by_role("button", name="Continue").click()
    expect_task(page, "Task 1 of 2")
    assert [a.passed for a in PageAnswer.objects.filter(
        participant__prolific_pid=pid, step="check_between_tasks").order_by("try_number")] == [False, True]
    axe.assert_none_blocking()

    # --- the export and the report show each check -----------------------------------------
    from analysis.checks import check_blocks, check_failures
    from analysis.document import to_markdown
    from analysis.sample import read_participants
    from spotlight_study.results.exports import results_export

    for policy, expected in (("flag", "flag"), ("end", "end"), ("return", "return")):
        out = tmp_path / policy
        results_export(study=studies[policy], out_dir=out)
        header = (out / "participants.csv").read_text(encoding="utf-8").splitlines()[0]
        assert "check_between_tasks_passed" in header and "quiz_after_instr_tries" in header
        checks = check_failures(read_participants(out)[0])
        assert checks["check_between_tasks"]["failed"] == 1, checks
        assert checks["check_between_tasks"]["outcomes"] == {expected: 1}
        report = to_markdown(check_blocks({"checks": checks}), {}, out)
        assert "## Check pages" in report and "check_between_tasks" in report and "quiz_after_instr" in report
