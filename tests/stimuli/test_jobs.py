"""The shared job machinery: one retry schedule for the LLM jobs, one task-naming scheme."""
from __future__ import annotations

import logging
import re

import pytest
from django.conf import settings as django_settings

from spotlight_study.stimuli.jobs import retry
from spotlight_study.stimuli.jobs.runner import job_run_now
from spotlight_study.stimuli.models import JobStatus
from spotlight_study.stimuli.services import generation_job_create
from spotlight_study.stimuli.tasks import GENERATION


def _registered_tasks() -> dict:
    """Every task of the project, as the worker registers them (autodiscovery included)."""
    from spotlight_study.celery import app

    app.loader.import_default_modules()
    return {name: task for name, task in app.tasks.items() if not name.startswith("celery.")}


def test_every_llm_task_uses_the_one_retry_schedule():
    """The generation and machine-coding tasks retry with the schedule the in-process runner uses."""
    from spotlight_study.annotation.tasks import MACHINE_CODING

    for kind in (GENERATION, MACHINE_CODING):
        task = kind.task
        assert kind.retries_transient
        assert (task.max_retries, task.retry_backoff, task.retry_backoff_max, task.retry_jitter) == (
            retry.MAX_TRANSIENT_RETRIES, retry.RETRY_BACKOFF_S, retry.RETRY_BACKOFF_MAX_S, True
        )
    for retries in range(retry.MAX_TRANSIENT_RETRIES):
        cap = min(retry.RETRY_BACKOFF_MAX_S, retry.RETRY_BACKOFF_S * 2**retries)
        assert all(0 <= retry.retry_delay_s(retries) <= cap for _ in range(50))


def test_task_names_follow_one_scheme_and_the_beat_schedule_uses_them():
    """Every task is named '<app>.<noun>_<verb>' after the app whose tasks.py declares it."""
    tasks = _registered_tasks()
    assert {"stimuli.generation_job_run", "stimuli.mining_job_run", "annotation.machine_coding_job_run",
            "prolific.submissions_sync", "participation.sessions_clear_expired"} <= set(tasks)
    for name, task in tasks.items():
        app_label = task.__module__.split(".")[1]
        assert re.fullmatch(rf"{app_label}\.[a-z]+(_[a-z]+)+", name), (name, task.__module__)
    for entry in django_settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in tasks


@pytest.mark.django_db
def test_in_process_runner_retries_a_transient_error(openai_settings, openai_server, settings, caplog):
    """A 5xx outlasting the client's retries is retried by the in-process runner, which then finishes."""
    caplog.set_level(logging.WARNING)
    settings.OPENAI_MAX_RETRIES = 0
    settings.STIMULI_GENERATION_CONCURRENCY = 1
    openai_server.script = [503]
    job = generation_job_create(
        title="doctors", prompt_group1="Dr. Smith", prompt_group2="Dr. Li", model="m", n_per_group=2, seed=1
    )
    job_run_now(GENERATION, job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.error) == (JobStatus.SUCCEEDED, 4, "")
    assert openai_server.statuses == [503, 200, 200, 200, 200]
    assert any("trying again in" in r.getMessage() for r in caplog.records)
