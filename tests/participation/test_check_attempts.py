"""The instruction check with a second attempt (``instruction_check_attempts: 2``): the reread
detour step, both attempts kept and exported, the last one deciding; and the study-file keys of
the review (``holding_flags``)."""
from __future__ import annotations

import pytest
from django.test import Client

from spotlight_study.participation.models import InstructionCheckAttempt, Participant, TaskResponse
from spotlight_study.results.exports import export_rows
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import

from ..conftest import Walker

FAILING = "I just wrote something without reading the instructions."
PASSING = "The first group fishes by day, the second at night."


@pytest.fixture
def two_attempts(db, demo_data):
    """The demo study with ``instruction_check_attempts: 2``."""
    demo_data["instruction_check_attempts"] = 2
    study_import(data=demo_data)
    return study_get_with_settings(slug=demo_data["slug"])


def test_a_participant_who_failed_once_passes_on_the_second_attempt_and_completes(two_attempts):
    """Fail, see the neutral re-read page, answer the training again, pass and finish."""
    w = Walker(Client(), two_attempts.slug)
    w.enter()
    w.consent()
    w.instructions()
    w.answer(FAILING)
    first_token = w.token()
    reread = w.page().content.decode()
    assert "Please read the instructions again" in reread and "reread-form" in reread
    assert "did not" not in reread.lower()  # neutral: it does not say the answer failed
    p = Participant.objects.get(prolific_pid=w.pid)
    # Undecided while the second attempt is to come: no failed-check flag on the monitor yet.
    assert (p.step, p.instruction_check_passed) == ("reread", None)
    w.post({})
    page = w.page()
    assert 'name="answer_0"' in page.content.decode()
    # The first attempt's page is stale: its token no longer matches the second attempt's.
    assert w.token() != first_token
    stale = w.post({"answer_0": PASSING, "client_events": ""}, token=first_token)
    assert Participant.objects.get(pk=p.pk).step == "training" and stale.status_code in (200, 302)
    w.answer(PASSING)
    w.answer("Group 2 describes the doctor as a woman more often.")
    w.answer("Group 1 grows maize and beans, group 2 wheat.")
    w.survey()
    p.refresh_from_db()
    assert (p.status, p.instruction_check_passed) == ("completed", True)
    first = InstructionCheckAttempt.objects.get(participant=p)
    assert (first.attempt, first.passed, first.answer) == (1, False, FAILING)
    assert first.time_on_task_ms is not None and first.served_at <= first.answered_at
    training = TaskResponse.objects.get(participant=p, position=0)
    assert training.answer == PASSING and training.served_at > first.answered_at
    row = export_rows(study=two_attempts)["participants"][0]
    assert (row["instruction_check_attempts"], row["first_attempt_answer"], row["first_attempt_passed"]) == (
        2, FAILING, 0)
    assert (row["training_answer"], row["instruction_check_passed"]) == (PASSING, 1)


def test_two_failures_under_the_end_policy_end_the_session(db, demo_data):
    """The policy applies to the last attempt: a second failure ends the session."""
    demo_data.update(instruction_check_attempts=2, failed_check_policy="end")
    study_import(data=demo_data)
    w = Walker(Client(), demo_data["slug"])
    w.enter()
    w.consent()
    w.instructions()
    w.answer(FAILING)
    w.page()
    w.post({})
    w.answer("Still not about the example.")
    p = Participant.objects.get(prolific_pid=w.pid)
    assert (p.status, p.step, p.instruction_check_passed) == ("failed_check", "done", False)
    assert InstructionCheckAttempt.objects.filter(participant=p).count() == 1
    assert export_rows(study=p.study)["participants"][0]["instruction_check_attempts"] == 2


def test_one_attempt_by_default_never_shows_the_reread_page(demo_study):
    """Without the key a failed check goes on to the tasks (continue_and_flag), with no detour."""
    assert demo_study.instruction_check_attempts == 1
    w = Walker(Client(), demo_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    w.answer(FAILING)
    p = Participant.objects.get(prolific_pid=w.pid)
    assert (p.step, p.instruction_check_passed) == ("task", False)
    assert not InstructionCheckAttempt.objects.exists()
    row = export_rows(study=demo_study)["participants"][0]
    assert (row["instruction_check_attempts"], row["first_attempt_answer"]) == (1, "")


def test_passing_at_once_skips_the_reread_step(two_attempts):
    """A participant who passes the first time goes straight to the tasks."""
    w = Walker(Client(), two_attempts.slug)
    w.enter()
    w.consent()
    w.instructions()
    w.answer(PASSING)
    assert Participant.objects.get(prolific_pid=w.pid).step == "task"


@pytest.mark.parametrize("key,value,message", [
    ("instruction_check_attempts", 3, "instruction_check_attempts"),
    ("holding_flags", ["pasted", "typed_by_a_cat"], "Unknown flag(s): typed_by_a_cat"),
    ("holding_flags", ["pasted", "pasted"], "must not repeat"),
])
def test_bad_review_keys_are_refused_with_a_message(db, demo_data, key, value, message):
    """A bad value is named next to its key and nothing is imported."""
    demo_data[key] = value
    with pytest.raises(StudyFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        study_import(data=demo_data)


def test_review_keys_default_and_round_trip(db, demo_data):
    """Defaults: one attempt, holding on the writing-process flags but `near_duplicate`; both keys
    are exported as imported."""
    study_import(data=demo_data)
    study = study_get_with_settings(slug=demo_data["slug"])
    assert (study.instruction_check_attempts, study.holding_flags) == (1, [
        "pasted", "typed_implausibly_fast", "inserted_without_typing", "copied_from_shown_texts",
        "hidden_then_pasted"])
    demo_data.update(instruction_check_attempts=2, holding_flags=["pasted", "identical_answer"], slug="copy-two")
    study_import(data=demo_data)
    data = study_file_data(study_get_with_settings(slug="copy-two"))
    assert (data["instruction_check_attempts"], data["holding_flags"]) == (2, ["pasted", "identical_answer"])


def test_the_preview_shows_the_reread_page_only_with_two_attempts(staff_client, two_attempts, demo_data):
    """A two-attempt study's preview walks through the re-read page after the training task."""
    from spotlight_study.participation import steps

    names = [n for n, _, _ in steps.preview_pages(2, study=two_attempts)]
    assert names.index("reread") == names.index("training") + 1
    html = staff_client.get(f"/researcher/{two_attempts.slug}/preview/0/reread/").content.decode()
    assert "Please read the instructions again" in html
    assert "reread" not in [n for n, _, _ in steps.preview_pages(2)]


def test_pilot_participants_take_the_reread_detour(two_attempts):
    """The pilot's failed_check participant (profile 4 of 10) fails twice through the reread
    step; the others pass at once."""
    from spotlight_study.participation.pilot import pilot_run

    seed = 5
    print(f"pilot seed {seed}")
    pilot_run(study=two_attempts, participants=5, seed=seed)
    failed = Participant.objects.filter(study=two_attempts, is_pilot=True, instruction_check_passed=False)
    assert failed.count() == 1
    assert InstructionCheckAttempt.objects.filter(participant__in=failed, attempt=1, passed=False).count() == 1
    assert InstructionCheckAttempt.objects.count() == 1
