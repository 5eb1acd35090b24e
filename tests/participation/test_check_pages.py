"""The check pages a study file inserts (``pages:``, issue 36 §2): ``attention_check`` and
``comprehension_quiz``. Validation with path-named errors, the flow with a pass and a fail under
each policy, the stored tries with server timing, double submit and stale tabs, the preview, the
pilot, the monitor, the export and the review evidence."""
from __future__ import annotations

import re

import pytest
from django.utils import timezone

from spotlight_study.participation.models import PageAnswer, Participant
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.participation.steps.checks import failed_checks
from spotlight_study.results.exports import export_rows, participant_columns
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.schema import validate_study_data
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import

from ..conftest import Walker

QUIZ = {
    "kind": "comprehension_quiz", "at": "after_instructions", "max_tries": 2,
    "questions": [
        {"question": "What do you describe?", "options": ["Single texts", "Differences between the groups"],
         "correct": "Differences between the groups"},
        {"question": "Must a difference occur in every text?", "options": ["Yes", "No"], "correct": "No"},
    ],
}
CHECK = {
    "kind": "attention_check", "at": "between_tasks", "question": "To show you read this, choose Blue.",
    "options": ["Red", "Blue", "Green"], "correct": "Blue", "on_fail": "flag",
}
DEBRIEF = {"kind": "info", "at": "end", "title": "Debrief", "text": "The study was about patterns."}


def _study(demo_data, slug: str, *, check=None, quiz=None):
    pages = [QUIZ if quiz is None else quiz, CHECK if check is None else check, DEBRIEF]
    study_import(data={**demo_data, "pages": pages, "slug": slug})
    return study_get_with_settings(slug=slug)


@pytest.fixture
def checked_study(db, demo_data):
    """The demo study with a quiz after the instructions, an attention check between the tasks
    (``on_fail: flag``) and a debrief at the end."""
    return _study(demo_data, "checked-demo")


def _errors(data: dict) -> dict:
    with pytest.raises(StudyFileError) as exc:
        validate_study_data(data)
    return exc.value.errors


def test_check_pages_are_validated_with_path_named_errors(demo_data):
    """A wrong correct option, a repeated option, a bad policy, a quiz's second attempt and an unknown key are named by path."""
    errors = _errors({**demo_data, "pages": [
        {**CHECK, "correct": "Purple", "on_fail": "later"},
        {**QUIZ, "on_fail": "second_attempt", "questions": [{**QUIZ["questions"][0], "options": ["A", "A"]}]},
        {**DEBRIEF, "colour": "x"},
    ]})
    assert errors["pages[0].on_fail"] == ["`later` is not a policy: use one of flag, end, return, second_attempt."]
    assert errors["pages[1].on_fail"] == ["`second_attempt` is not a policy: use one of flag, end, return."]
    assert errors["pages[1].questions[0].options"] == ["Each option may appear only once."]
    assert "pages[2].colour" in errors
    # The options are checked against each other once each key is valid on its own.
    errors = _errors({**demo_data, "pages": [{**CHECK, "correct": "Purple"}]})
    assert "`Purple` is not one of the options" in errors["pages[0].correct"][0]
    valid = validate_study_data({**demo_data, "pages": [QUIZ, CHECK, DEBRIEF]})
    assert [p["kind"] for p in valid["pages"]] == ["comprehension_quiz", "attention_check", "info"]


def test_check_pages_round_trip_through_the_exported_study_file(checked_study):
    """export_study writes the check pages back as they validate."""
    exported = study_file_data(checked_study)
    assert validate_study_data(exported)["pages"] == exported["pages"]
    assert [p["kind"] for p in exported["pages"]] == ["comprehension_quiz", "attention_check", "info"]


def _choose(w: Walker, answers: list[str]):
    """Post the options with these texts on the current check page (read from the page)."""
    html = w.page().content.decode()
    data = {"try_number": re.search(r'name="try_number" value="(\d+)"', html).group(1)}
    for i, text in enumerate(answers, start=1):
        m = re.search(rf'name="q{i}" value="(\d+)"[^>]*> {re.escape(text)}</label>', html)
        assert m, (i, text)
        data[f"q{i}"] = m.group(1)
    return w.post(data)


def _step(w: Walker) -> Participant:
    return Participant.objects.get(prolific_pid=w.pid)


def _to_quiz(w: Walker) -> None:
    w.enter()
    w.consent()
    w.instructions()


def test_a_failed_quiz_shows_the_instructions_again_and_stores_each_try(client, checked_study):
    """The first failed try shows the instructions again; the second passes; both tries are stored with server times."""
    w = Walker(client, checked_study.slug)
    _to_quiz(w)
    assert _step(w).step == "quiz_after_instr"
    html = w.page().content.decode()
    assert "Questions about the instructions" in html and "What you will do" not in html
    _choose(w, ["Single texts", "No"])
    p = _step(w)
    assert p.step == "quiz_after_instr"
    html = w.page().content.decode()
    assert "What you will do" in html and "try 2 of 2" in html
    _choose(w, ["Differences between the groups", "No"])
    p = _step(w)
    assert p.step == "training"
    tries = list(PageAnswer.objects.filter(participant=p).order_by("try_number"))
    assert [(t.try_number, t.passed, t.outcome) for t in tries] == [(1, False, "retry"), (2, True, "passed")]
    assert tries[0].answer == ["Single texts", "No"]
    assert all(t.time_ms is not None and t.answered_at >= t.served_at for t in tries)
    assert tries[1].served_at >= tries[0].answered_at


def test_a_stale_try_and_a_double_submit_change_nothing(client, checked_study):
    """The first try's page posted again after it failed (stale tab, Back) is not a second try; a check posted twice is saved once."""
    w = Walker(client, checked_study.slug)
    _to_quiz(w)
    html = w.page().content.decode()
    token = w.token()
    first = {"try_number": "1", "q1": "0", "q2": "1"}
    w.post(first, token=token)
    again = w.post(first, token=token)  # the stale first-try page
    assert PageAnswer.objects.filter(participant=_step(w), answered_at__isnull=False).count() == 1
    assert "already submitted" in client.get(again["Location"]).content.decode()
    assert html  # the first page was served
    _choose(w, ["Differences between the groups", "No"])
    w.answer("The first group fishes by day, the second at night.")
    assert _step(w).step == "check_between_tasks"
    w.page()
    token = w.token()
    data = {"try_number": "1", "q1": "1"}
    w.post(data, token=token)
    w.post(data, token=token)
    p = _step(w)
    assert (p.step, p.task_index) == ("task", 0)
    rows = PageAnswer.objects.filter(participant=p, step="check_between_tasks")
    assert [(r.try_number, r.passed, r.answer) for r in rows] == [(1, True, "Blue")]


def test_a_reload_keeps_the_server_start_of_a_try(client, checked_study):
    """Loading the check page again keeps the first serving's time stamp: time on the page is server time from the first load."""
    w = Walker(client, checked_study.slug)
    _to_quiz(w)
    w.page()
    first = PageAnswer.objects.get(participant=_step(w), step="quiz_after_instr")
    PageAnswer.objects.filter(pk=first.pk).update(served_at=timezone.now() - timezone.timedelta(seconds=40))
    w.page()  # the reload
    _choose(w, ["Differences between the groups", "No"])
    first.refresh_from_db()
    assert first.try_number == 1 and first.time_ms >= 40_000


def test_an_empty_check_is_refused_with_a_message_and_nothing_stored(client, checked_study):
    """A check posted without a choice is shown again with its error; no try is stored."""
    w = Walker(client, checked_study.slug)
    _to_quiz(w)
    w.page()
    r = w.post({"try_number": "1"})
    assert "Please choose one of the options." in client.get(r["Location"]).content.decode()
    assert not PageAnswer.objects.filter(answered_at__isnull=False).exists()


def _to_check(client, study) -> Walker:
    w = Walker(client, study.slug)
    _to_quiz(w)
    _choose(w, ["Differences between the groups", "No"])
    w.answer("The first group fishes by day, the second at night.")
    assert _step(w).step == "check_between_tasks"
    return w


@pytest.mark.parametrize("policy", ["flag", "end", "return", "second_attempt"])
def test_a_failed_attention_check_follows_its_policy(db, client, demo_data, policy):
    """flag continues, end ends with the failed-check code, return ends asking for a return without a code, second_attempt asks once more."""
    study = _study(demo_data, f"check-{policy.replace('_', '-')}", check={**CHECK, "on_fail": policy})
    w = _to_check(client, study)
    _choose(w, ["Red"])
    p = _step(w)
    done = w.page().content.decode()
    if policy == "flag":
        assert (p.step, p.status) == ("task", "in_progress")
        assert failed_checks([p.pk]) == {p.pk: [
            {"step": "check_between_tasks", "kind": "attention_check", "tries": 1, "outcome": "flag"}
        ]}
    elif policy == "end":
        assert (p.step, p.status) == ("done", "failed_check")
        assert study.failed_check_code in done and "check question" in done
    elif policy == "return":
        assert (p.step, p.status) == ("done", "failed_check")
        assert study.failed_check_code not in done and "Return submission" in done
    else:
        assert (p.step, p.status) == ("check_between_tasks", "in_progress")
        assert "Try 2 of 2." in done
        _choose(w, ["Blue"])
        p = _step(w)
        assert (p.step, p.status) == ("task", "in_progress")
        assert failed_checks([p.pk]) == {}


def test_a_quiz_failed_at_its_last_try_applies_its_policy(db, client, demo_data):
    """A quiz with on_fail: end ends the study after max_tries failed tries, with the failed-check code."""
    study = _study(demo_data, "quiz-end", quiz={**QUIZ, "max_tries": 1, "on_fail": "end"})
    w = Walker(client, study.slug)
    _to_quiz(w)
    _choose(w, ["Single texts", "Yes"])
    p = _step(w)
    assert (p.step, p.status) == ("done", "failed_check")
    assert study.failed_check_code in w.page().content.decode()


def test_the_checks_are_in_the_export_preview_pilot_and_monitor(client, staff_client, checked_study):
    """participants.csv has the study's check columns only, the preview shows each check, pilots take them."""
    w = _to_check(client, checked_study)
    _choose(w, ["Red"])
    rows = export_rows(study=checked_study)["participants"]
    columns = participant_columns(rows, checked_study)
    assert "check_between_tasks_passed" in columns and "quiz_after_instr_tries" in columns
    assert "check_end_passed" not in columns
    (row,) = rows
    assert (row["check_between_tasks_passed"], row["check_between_tasks_answer"]) == (False, "Red")
    assert (row["quiz_after_instr_tries"], row["quiz_after_instr_passed"]) == (1, True)
    slug = checked_study.slug
    for cell in range(4):  # the demo study's four cells
        for name, words in (("quiz_after_instr", "Must a difference occur"),
                            ("check_between_tasks", "choose Blue")):
            page = staff_client.get(f"/researcher/{slug}/preview/{cell}/{name}/")
            assert page.status_code == 200 and words in page.content.decode(), (cell, name)
    assert not PageAnswer.objects.filter(participant__study=checked_study, participant__is_pilot=False,
                                         try_number__gt=1).exists()  # the preview records nothing
    report = pilot_run(study=checked_study, participants=10, seed=36)
    print("pilot seed 36", report)
    pilots = Participant.objects.filter(study=checked_study, is_pilot=True)
    assert PageAnswer.objects.filter(participant__in=pilots, step="check_between_tasks").exists()
    assert PageAnswer.objects.filter(participant__in=pilots, step="quiz_after_instr", passed=False).exists()


def test_a_failed_check_is_shown_in_the_monitor_and_the_review_evidence(client, staff_client, checked_study):
    """The monitor names the failed check and its policy; the participant's evidence page lists each try with its answer and time."""
    from spotlight_study.participation.selectors import participant_pseudonym
    from spotlight_study.researcher.monitor import MonitorFilters, monitor_page

    w = _to_check(client, checked_study)
    _choose(w, ["Red"])
    (row,) = monitor_page(study=checked_study, filters=MonitorFilters()).rows
    assert row.checks == ("attention check (between_tasks) failed: flag",)
    html = staff_client.get(f"/researcher/{checked_study.slug}/monitor/rows/").content.decode()
    assert "attention check (between_tasks) failed: flag" in html
    pseudonym = participant_pseudonym(study=checked_study, prolific_pid=w.pid)
    page = staff_client.get(f"/researcher/{checked_study.slug}/participants/{pseudonym}/").content.decode()
    assert 'id="check-evidence"' in page
    assert "attention check (between_tasks)" in page and "comprehension quiz (after_instructions)" in page
    assert "<td>Red</td>" in page and "<strong>failed</strong>" in page


def test_the_monitor_counts_idle_minutes_in_words(staff_client, demo_study):
    """The monitor's end-filtered link says "1 minute", not "1 minutes" (ngettext)."""
    html = staff_client.get(f"/researcher/{demo_study.slug}/monitor/?idle=1").content.decode()
    assert "idle for more than 1 minute…" in html
    html = staff_client.get(f"/researcher/{demo_study.slug}/monitor/?idle=5").content.decode()
    assert "idle for more than 5 minutes…" in html


@pytest.mark.parametrize("code,quiz_title,check_title", [
    ("de", "Fragen zur Anleitung", "Eine Kontrollfrage"),
    ("es", "Preguntas sobre las instrucciones", "Una pregunta de control"),
    ("fr", "Questions sur les instructions", "Une question de contrôle"),
])
def test_the_check_pages_speak_the_study_language(db, client, demo_data, code, quiz_title, check_title):
    """A study in de, es or fr shows the quiz and the attention check with the platform's words translated."""
    study_import(data={**demo_data, "pages": [QUIZ, CHECK, DEBRIEF], "slug": f"checked-{code}", "language": code})
    study = study_get_with_settings(slug=f"checked-{code}")
    w = Walker(client, study.slug)
    _to_quiz(w)
    assert f"<h1>{quiz_title}</h1>" in w.page().content.decode()
    _choose(w, ["Single texts", "No"])
    html = w.page().content.decode()
    assert "Single texts" in html and quiz_title in html and "What you will do" not in html
    _choose(w, ["Differences between the groups", "No"])
    w.answer("The first group fishes by day, the second at night.")
    assert f"<h1>{check_title}</h1>" in w.page().content.decode()
