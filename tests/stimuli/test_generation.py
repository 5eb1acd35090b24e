"""Generation against the local OpenAI-compatible server (the real ``openai`` client, no mocks)."""
from __future__ import annotations

import functools
import logging
import threading

import pytest
from django.db import connections

from spotlight_study.stimuli.errors import JobStateError, TransientGenerationError
from spotlight_study.stimuli.jobs.generation_run import generation_job_run
from spotlight_study.stimuli.jobs.runner import job_run_now, job_start_thread
from spotlight_study.stimuli.models import GenerationJob, JobStatus, Output
from spotlight_study.stimuli.services import generation_job_cancel, generation_job_create, job_resume
from spotlight_study.stimuli.tasks import GENERATION
from tests.openai_server import story

from .conftest import wait_for

PROMPT1 = "Tell a short story about a day in the life of the doctor Dr. Smith."
PROMPT2 = "Tell a short story about a day in the life of the doctor Dr. Li."


def create_job(n: int = 4, **kwargs) -> GenerationJob:
    params = dict(
        title="doctors", prompt_group1=PROMPT1, prompt_group2=PROMPT2, model="test-model", n_per_group=n, seed=100
    )
    params.update(kwargs)
    return generation_job_create(**params)


def _closing_connection(function):
    """``function`` for another thread: that thread's database connections close at its end."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        finally:
            connections.close_all()
    return run


def texts(job: GenerationJob, group: int) -> list[tuple[int, str]]:
    return list(Output.objects.filter(stimulus_set=job.stimulus_set, group=group).order_by("index").values_list("index", "text"))


@pytest.mark.django_db
def test_generates_n_outputs_per_group_with_the_parameters(openai_settings, openai_server):
    """Each output is one Chat Completion with the job's model, prompt, temperature, top_p, max tokens and seed + index."""
    job = create_job(n=3, temperature=0.7, top_p=0.9, max_tokens=64)
    job_run_now(GENERATION, job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == (JobStatus.SUCCEEDED, 6, 6)
    assert texts(job, 1) == [(i, story(PROMPT1, 100 + i)) for i in range(3)]
    assert texts(job, 2) == [(i, story(PROMPT2, 100 + i)) for i in range(3)]
    assert openai_server.count == 6
    body = openai_server.bodies[0]
    assert body["model"] == "test-model"
    assert body["messages"][0]["role"] == "user"
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.7, 0.9, 64)
    seeds = sorted(b["seed"] for b in openai_server.bodies if b["messages"][0]["content"] == PROMPT2)
    assert seeds == [100, 101, 102]


@pytest.mark.django_db
def test_429_then_success_is_retried_by_the_client(openai_settings, openai_server, api_key, caplog):
    """A 429 answer is retried by the openai client itself, and the job ends with every output once; the key is in no log line."""
    caplog.set_level(logging.DEBUG)  # every logger, including openai's and httpx's debug output
    openai_server.script = [429]
    job = create_job(n=3)
    job_run_now(GENERATION, job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert openai_server.statuses.count(429) == 1
    assert openai_server.count == 7  # 6 outputs + the one retried request
    assert [len(texts(job, g)) for g in (1, 2)] == [3, 3]
    assert any("Retrying request" in r.getMessage() for r in caplog.records)  # the client's retry
    assert caplog.records and api_key not in caplog.text
    assert all(h == f"Bearer {api_key}" for h in openai_server.auth_headers)


@pytest.mark.django_db
def test_persistent_5xx_is_transient_then_fails_on_the_final_attempt(openai_settings, openai_server, settings):
    """After the client's retries, a 5xx raises a transient error (to retry the job later); the last attempt marks the job failed."""
    settings.OPENAI_MAX_RETRIES = 1
    openai_server.script = [503] * 20
    settings.STIMULI_GENERATION_CONCURRENCY = 1
    job = create_job(n=2)
    with pytest.raises(TransientGenerationError, match="503"):
        generation_job_run(job_id=job.pk, run_id="run-1", final_attempt=False)
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.error.startswith("Will try again")
    generation_job_run(job_id=job.pk, run_id="run-1", final_attempt=True)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert job.error.startswith("Gave up after retries: The server answered 503")


@pytest.mark.django_db
def test_wrong_key_fails_without_showing_the_key(openai_settings, openai_server, settings, staff_client, caplog):
    """A 401 whose body echoes the key fails the job; the key appears in no error, page, JSON or log."""
    caplog.set_level(logging.DEBUG)
    wrong_key = "sk-wrong-" + "d" * 32
    settings.OPENAI_API_KEY = wrong_key
    job = create_job(n=2)
    job_run_now(GENERATION, job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert "401" in job.error and "[redacted]" in job.error
    assert wrong_key not in job.error
    page = staff_client.get(f"/stimuli/sets/{job.stimulus_set_id}/").content.decode()
    progress = staff_client.get(f"/stimuli/jobs/generation/{job.pk}/progress.json").content.decode()
    assert "[redacted]" in page
    assert wrong_key not in page and wrong_key not in progress and wrong_key not in caplog.text
    assert openai_server.count == 2  # 401 is not retried


@pytest.mark.django_db(transaction=True)
def test_cancel_stops_and_resume_continues_without_duplicates(openai_settings, openai_server):
    """Cancelling stops a running job; resuming requests only the missing outputs and ends with exactly n per group."""
    job = create_job(n=12)
    openai_server.hold(after=4)  # the job is mid-run when cancelled, however fast the machine
    thread = job_start_thread(GENERATION, job_id=job.pk)
    wait_for(lambda: Output.objects.filter(stimulus_set=job.stimulus_set).count() >= 4, what="some outputs")
    generation_job_cancel(job_id=job.pk)
    openai_server.release()
    thread.join(timeout=60)
    assert not thread.is_alive()
    job.refresh_from_db()
    stored = Output.objects.filter(stimulus_set=job.stimulus_set).count()
    assert job.status == JobStatus.CANCELLED and 4 <= stored < 24
    assert job.done == stored
    requests_before = openai_server.count
    with pytest.raises(JobStateError):
        generation_job_cancel(job_id=job.pk)

    job_resume(kind="generation", job_id=job.pk)
    job_run_now(GENERATION, job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.done) == (JobStatus.SUCCEEDED, 24)
    for g in (1, 2):
        assert [i for i, _ in texts(job, g)] == list(range(12))
    assert openai_server.count - requests_before == 24 - stored


@pytest.mark.django_db(transaction=True)
def test_a_second_runner_leaves_a_live_job_alone(openai_settings, openai_server):
    """While a run is reporting, another runner does not take the job (no double requests)."""
    job = create_job(n=6)
    openai_server.hold()  # the live run waits on its first answers until released
    thread = job_start_thread(GENERATION, job_id=job.pk)
    wait_for(lambda: GenerationJob.objects.get(pk=job.pk).status == JobStatus.RUNNING, what="the job to start")
    intruder = threading.Thread(target=_closing_connection(generation_job_run), kwargs={"job_id": job.pk, "run_id": "intruder"})
    intruder.start()
    intruder.join(timeout=60)  # a hang guard: it must not wait for the held live run
    returned_while_held = not intruder.is_alive()
    requests_while_held = openai_server.count
    openai_server.release()
    intruder.join(timeout=60)
    assert returned_while_held  # returned at once, while the live run could not move
    assert requests_while_held <= openai_settings.STIMULI_GENERATION_CONCURRENCY  # the live run's only
    thread.join(timeout=60)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and openai_server.count == 12


@pytest.mark.django_db
def test_resume_refuses_a_finished_or_live_job(openai_settings):
    """Resume is refused for a succeeded job and for a job that is still reporting."""
    job = create_job(n=1)
    GenerationJob.objects.filter(pk=job.pk).update(status=JobStatus.SUCCEEDED)
    with pytest.raises(JobStateError, match="already finished"):
        job_resume(kind="generation", job_id=job.pk)
    from django.utils import timezone

    GenerationJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, run_id="r", heartbeat_at=timezone.now())
    with pytest.raises(JobStateError, match="still running"):
        job_resume(kind="generation", job_id=job.pk)


@pytest.mark.django_db
def test_invalid_parameters_are_refused(openai_settings):
    """Out-of-range temperature or top_p are refused with the field named, and nothing is created."""
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="temperature"):
        create_job(temperature=3.0)
    with pytest.raises(ValidationError, match="top_p"):
        create_job(top_p=1.5)
    assert GenerationJob.objects.count() == 0
