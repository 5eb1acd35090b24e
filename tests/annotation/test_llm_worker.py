"""Integration: a real Celery worker runs the machine coder's job (Redis DB 15, test database)."""

from __future__ import annotations

import secrets

import pytest

from spotlight_study.annotation.machine_coding import machine_coding_job_create
from spotlight_study.annotation.models import MachineLabel
from spotlight_study.stimuli.models import JobStatus
from tests.openai_server import FakeCoder
from tests.processes import start_celery_worker, stop_process
from tests.stimuli.conftest import subprocess_env, wait_for
from tests.stimuli.test_celery_worker import REDIS_URL, redis_db  # noqa: F401  (fixture)

from .conftest import complete_participants


@pytest.mark.django_db(transaction=True)
def test_real_worker_labels_a_study(redis_db, demo_data, settings):  # noqa: F811
    """llm_annotate's job, sent to Redis, is run by a real worker: every answer labelled once."""
    from spotlight_study.celery import app
    from spotlight_study.studies.services import study_import

    api_key = f"sk-test-{secrets.token_hex(16)}"
    coder = FakeCoder(api_key).start()
    env = subprocess_env(
        CELERY_BROKER_URL=REDIS_URL, OPENAI_BASE_URL=coder.url, OPENAI_API_KEY=api_key,
        STIMULI_JOB_RUNNER="celery", LOG_LEVEL="INFO",
    )
    proc = start_celery_worker("llm-test", env=env)
    try:
        study = study_import(data=demo_data)
        complete_participants(study.slug, 2)
        settings.STIMULI_JOB_RUNNER = "manual"  # the task is sent below, to Redis DB 15
        settings.OPENAI_BASE_URL = coder.url
        job = machine_coding_job_create(study=study, model="gpt-test")
        from spotlight_study.annotation.tasks import machine_coding_job_run_task

        with app.connection_for_write(REDIS_URL) as conn:
            machine_coding_job_run_task.apply_async(args=[job.pk], connection=conn)

        def finished():
            job.refresh_from_db()
            return job.status not in (JobStatus.QUEUED, JobStatus.RUNNING)

        wait_for(finished, timeout_s=90, interval_s=0.2, what="the machine-coding task")
        assert (job.status, job.done, job.total) == (JobStatus.SUCCEEDED, 6, 6), job.error
        assert MachineLabel.objects.filter(job=job, status="labelled").count() == 6
        assert len(coder.bodies) == 6
    finally:
        log = stop_process(proc, timeout_s=20)
        coder.stop()
    assert "annotation.machine_coding_job_run" in log and api_key not in log
