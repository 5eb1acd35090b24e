"""The machine coder's job: blinded requests, structured replies, storage, resume and cancel."""

from __future__ import annotations

import json
import secrets
import threading

import pytest

from spotlight_study.annotation.errors import MachineCodingError
from spotlight_study.annotation.machine_coding import (
    machine_coding_job_cancel,
    machine_coding_job_create,
    machine_coding_job_resume,
    machine_coding_run_now,
)
from spotlight_study.annotation.machine_coding_run import machine_coding_job_run
from spotlight_study.annotation.models import (
    Annotation,
    FinalLabel,
    Item,
    MachineCodingJob,
    MachineLabel,
)
from spotlight_study.annotation.overview import researcher_overview
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.stimuli.models import JobStatus
from spotlight_study.studies.models import TokenPattern

from tests.openai_server import FakeCoder

from .conftest import complete_participants, label, make_user

WOMAN = "Group 2 describes the doctor as a woman more often."


@pytest.fixture
def api_key() -> str:
    """A fresh secret key for one test."""
    return f"sk-test-{secrets.token_hex(16)}"


@pytest.fixture
def coder(api_key):
    """The fake coding server on 127.0.0.1."""
    server = FakeCoder(api_key).start()
    yield server
    server.stop()


@pytest.fixture
def llm_settings(settings, coder, api_key):
    """Point the app at the fake server; jobs run by hand; no client retries (fast errors)."""
    settings.OPENAI_BASE_URL = coder.url
    settings.OPENAI_API_KEY = api_key
    settings.OPENAI_MAX_RETRIES = 0
    settings.OPENAI_TIMEOUT_SECONDS = 60  # a hang guard: a retry after a timeout would change the counts
    settings.STIMULI_JOB_RUNNER = "manual"
    return settings


def _run(study, **kwargs) -> MachineCodingJob:
    job = machine_coding_job_create(study=study, model="gpt-test", **kwargs)
    machine_coding_run_now(job_id=job.pk)
    job.refresh_from_db()
    return job


def test_job_labels_every_answer_and_keeps_the_server_metadata(llm_settings, coder, demo_study, answered):
    """Every saved answer gets one machine label with model, fingerprint, finish reason, tokens."""
    job = _run(demo_study)
    assert (job.status, job.done, job.total) == (JobStatus.SUCCEEDED, 6, 6)
    labels = list(MachineLabel.objects.filter(job=job).select_related("item__response"))
    assert len(labels) == 6 and len(coder.bodies) == 6
    for m in labels:
        assert m.status == MachineLabel.Status.LABELLED
        assert (m.response_model, m.system_fingerprint, m.finish_reason) == (
            "coder-2026-01-01", "fp_coder_test", "stop"
        )
        assert (m.prompt_tokens, m.completion_tokens, m.total_tokens, m.attempts) == (100, 20, 120, 1)
        assert m.identified is (m.item.response.answer == WOMAN)
        assert m.tags == [] and m.exclusion == "none" and m.model == "gpt-test"
    body = coder.bodies[0]
    assert body["model"] == "gpt-test"
    schema = body["response_format"]
    assert schema["type"] == "json_schema" and schema["json_schema"]["strict"] is True
    assert schema["json_schema"]["schema"]["required"] == [
        "identified", "surface_difference", "no_difference", "tags", "exclusion"
    ]


def test_label_option_asks_only_for_the_chosen_fields(llm_settings, coder, demo_study, answered):
    """With fields=['identified'] the schema has that field only and the others stay empty."""
    _run(demo_study, fields=["identified"])
    assert coder.bodies[0]["response_format"]["json_schema"]["schema"]["required"] == ["identified"]
    m = MachineLabel.objects.first()
    assert m.identified is not None and m.exclusion is None and m.tags is None


@pytest.fixture
def canary_study(demo_study):
    """One participant whose PID, condition and pattern box hold canary strings."""
    (walker,) = complete_participants(demo_study.slug, 1)
    p = Participant.objects.get(prolific_pid=walker.pid)
    p.prolific_pid = "canarypidq7z3x9w2v"
    p.save()
    TaskResponse.objects.filter(participant=p).update(condition="canarycondition_x41r")
    for pattern in TokenPattern.objects.filter(setting__study=demo_study):
        pattern.tokens = ["canarypatterntok_z8"]
        pattern.save()
    return demo_study


def test_requests_never_hold_condition_pattern_pid_or_pseudonym(llm_settings, coder, canary_study):
    """The request bodies hold the allow-list (texts, target, codebook, answer) and no canary."""
    assert TokenPattern.objects.filter(setting__study=canary_study).exists()
    _run(canary_study)
    assert len(coder.bodies) == 3
    sent = json.dumps(coder.bodies)
    pseudonym = participant_pseudonym(study=canary_study, prolific_pid="canarypidq7z3x9w2v")
    for canary in ["canarypidq7z3x9w2v", "canarycondition_x41r", "canarypatterntok_z8", pseudonym,
                   "no_pattern", "more often in group", "pattern_with_distractors"]:
        assert canary not in sent, canary
    for item in Item.objects.filter(study=canary_study).select_related("setting", "response"):
        assert item.public_id not in sent  # not even the blind id: it is not needed
        prompt = next(
            b["messages"][-1]["content"] for b in coder.bodies
            if item.response.answer in b["messages"][-1]["content"]
        )
        s = item.setting
        positions = [prompt.index(t) for t in list(s.group1_texts) + list(s.group2_texts)]
        assert positions == sorted(positions)  # definition order
        assert s.target_description in prompt
        for tag in s.annotation_tags:
            assert tag in prompt


def test_invalid_reply_is_retried_once_then_recorded_missing(llm_settings, coder, demo_study, answered):
    """Two invalid replies make a missing label with both reasons; one is retried and kept."""
    coder.script = ["not json at all", json.dumps({"identified": 3}), "[]"]
    job = _run(demo_study)
    assert job.status == JobStatus.SUCCEEDED and len(coder.bodies) == 2 + 2 + 4
    first, second = MachineLabel.objects.order_by("item_id")[:2]
    assert first.status == MachineLabel.Status.MISSING and first.identified is None
    assert "attempt 1: the reply is not JSON" in first.missing_reason
    assert "attempt 2: the reply lacks" in first.missing_reason
    assert (first.attempts, first.total_tokens) == (2, 240)
    assert second.status == MachineLabel.Status.LABELLED and second.attempts == 2
    assert MachineLabel.objects.filter(status="missing").count() == 1


def test_a_tag_outside_the_codebook_is_an_invalid_reply(llm_settings, coder, demo_study, answered):
    """A reply naming a tag the codebook lacks is invalid (retried, then missing)."""
    bad = json.dumps({"identified": True, "surface_difference": False, "no_difference": False,
                      "tags": ["made-up-tag"], "exclusion": "none"})
    coder.script = [bad, bad]
    _run(demo_study)
    missing = MachineLabel.objects.get(status="missing")
    assert "tags not in the codebook: made-up-tag" in missing.missing_reason


def test_resume_after_a_failure_continues_without_duplicates(llm_settings, coder, demo_study, answered, settings):
    """A job that failed midway resumes with the unlabelled items only."""
    job = machine_coding_job_create(study=demo_study, model="gpt-test")
    settings.OPENAI_API_KEY = "sk-wrong"
    machine_coding_run_now(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "401" in job.error and "sk-wrong" not in job.error
    assert MachineLabel.objects.count() == 0
    settings.OPENAI_API_KEY = coder.api_key
    coder.script = [200, 200, 500]  # the third request fails for good on this last attempt
    machine_coding_job_resume(job_id=job.pk)
    machine_coding_job_run(job_id=job.pk, run_id="r2", final_attempt=True)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "Gave up after retries" in job.error
    assert MachineLabel.objects.count() == 2 and job.done == 2
    machine_coding_job_resume(job_id=job.pk)
    machine_coding_run_now(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, MachineLabel.objects.count()) == (JobStatus.SUCCEEDED, 6, 6)
    answers = [b["messages"][-1]["content"] for b in coder.bodies]
    assert len(answers) == 1 + 3 + 4  # the 401, then 2 and the 500, then the 4 left
    assert answers[3] == answers[4]  # the item whose request failed is asked again
    assert sorted(MachineLabel.objects.values_list("item_id", flat=True)) == sorted(
        Item.objects.filter(study=demo_study).values_list("pk", flat=True)
    )


def test_crashed_running_job_is_taken_over_once_stale(llm_settings, coder, demo_study, answered, settings):
    """A job left 'running' by a dead runner continues under a new run once it is stale."""
    job = machine_coding_job_create(study=demo_study, model="gpt-test")
    MachineCodingJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, run_id="dead")
    machine_coding_run_now(job_id=job.pk)  # the dead run is still fresh: nothing happens
    assert len(coder.bodies) == 0
    settings.STIMULI_JOB_STALE_SECONDS = 0
    machine_coding_run_now(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and MachineLabel.objects.count() == 6


def test_second_job_with_the_same_model_labels_only_new_answers(llm_settings, coder, demo_study, answered):
    """Answers already labelled by the model are not sent again."""
    _run(demo_study)
    complete_participants(demo_study.slug, 1)
    job = _run(demo_study)
    assert len(coder.bodies) == 9 and job.done == 9 and MachineLabel.objects.count() == 9


def test_only_one_active_job_per_model_and_bad_fields_are_refused(llm_settings, demo_study, answered):
    """A second job while one is queued, or an unknown field, is refused with a message."""
    machine_coding_job_create(study=demo_study, model="gpt-test")
    with pytest.raises(MachineCodingError, match="still queued"):
        machine_coding_job_create(study=demo_study, model="gpt-test")
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="Unknown label field"):
        machine_coding_job_create(study=demo_study, model="other", fields=["condition"])
    assert MachineCodingJob.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_cancel_stops_a_running_job(llm_settings, coder, demo_data):
    """Cancelling a running job stops it after the current item; labels so far are kept."""
    from spotlight_study.studies.services import study_import

    study = study_import(data=demo_data)
    complete_participants(study.slug, 2)
    coder.hold(after=1)  # the job is mid-run when cancelled, however fast the machine
    job = machine_coding_job_create(study=study, model="gpt-test")
    thread = threading.Thread(target=machine_coding_run_now, kwargs={"job_id": job.pk})
    thread.start()
    try:
        import time

        deadline = time.monotonic() + 60  # a hang guard; the first answer is not held
        while not MachineLabel.objects.filter(job=job).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        machine_coding_job_cancel(job_id=job.pk)
    finally:
        coder.release()
        thread.join(timeout=60)
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED
    assert 1 <= MachineLabel.objects.filter(job=job).count() < 6
    with pytest.raises(MachineCodingError, match="already finished"):
        machine_coding_job_cancel(job_id=job.pk)


def test_machine_labels_never_count_toward_k(llm_settings, demo_study, answered):
    """With machine labels on every item, one human label (k=2) makes no final label."""
    _run(demo_study)
    annotator = make_user("ann1", "annotators")
    item = assignment_next(study=demo_study, annotator=annotator)
    label_save(study=demo_study, annotator=annotator, public_id=item.public_id, label=label())
    assert demo_study.annotators_per_item == 2
    assert FinalLabel.objects.count() == 0 and Annotation.objects.count() == 1
    overview = researcher_overview(study=demo_study)
    assert overview["status"]["final"] == 0
    assert [a["username"] for a in overview["annotators"]] == ["ann1"]


def test_llm_annotate_command_runs_shows_and_refuses_finished_jobs(llm_settings, coder, demo_study, answered):
    """llm_annotate runs inline without Celery, --status shows it, cancel/resume of a finished job fail."""
    import io

    from django.core.management import CommandError, call_command

    out = io.StringIO()
    call_command("llm_annotate", demo_study.slug, "--model", "gpt-test", "--label", "identified", stdout=out)
    job = MachineCodingJob.objects.get()
    assert f"Job {job.pk} (llm:gpt-test): succeeded, 6/6 items, 0 missing" in out.getvalue()
    assert job.fields == ["identified"]
    out = io.StringIO()
    call_command("llm_annotate", demo_study.slug, "--status", str(job.pk), stdout=out)
    assert "succeeded, 6/6" in out.getvalue()
    with pytest.raises(CommandError, match="already finished"):
        call_command("llm_annotate", demo_study.slug, "--cancel", str(job.pk))
    with pytest.raises(CommandError, match="already finished"):
        call_command("llm_annotate", demo_study.slug, "--resume", str(job.pk))
    assert len(coder.bodies) == 6
