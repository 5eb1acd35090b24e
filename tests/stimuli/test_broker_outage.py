"""A stimulus job started while the Celery broker is down: the page says it is waiting and
offers Resume, and it is sent once the broker is back.

The broker is a redis-server of the test's own (``own_redis``, never the shared one), stopped
while the job is created. The job is created and resumed in subprocesses with
``STIMULI_JOB_RUNNER=celery`` and ``CELERY_BROKER_URL`` on that server, as the web process runs.
"""
from __future__ import annotations

import subprocess
import time

import redis

from spotlight_study.stimuli.models import WAITING_FOR_BROKER, GenerationJob, JobStatus

from ..processes import run_python
from ..security.conftest import own_redis  # noqa: F401 (a fixture)
from .conftest import subprocess_env

CREATE = """
import django; django.setup()
from spotlight_study.stimuli.services import generation_job_create
job = generation_job_create(title="doctors", prompt_group1="Dr. Smith", prompt_group2="Dr. Li",
                            model="test-model", n_per_group=3, seed=1)
print("JOB", job.pk)
"""
RESUME = """
import sys, django; django.setup()
from spotlight_study.stimuli.services import job_resume
job_resume(kind="generation", job_id=int(sys.argv[1]))
"""


def _run(code: str, broker_url: str, *args: str) -> subprocess.CompletedProcess:
    env = subprocess_env(CELERY_BROKER_URL=broker_url, STIMULI_JOB_RUNNER="celery", LOG_LEVEL="WARNING")
    return run_python("-c", code, *args, env=env)


def test_a_job_started_while_the_broker_is_down_waits_and_is_sent_on_resume(transactional_db, own_redis, staff_client):
    """Broker down: the job is created, one warning, no traceback, the page says waiting with
    Resume; broker back: Resume puts one message on the queue and clears the note."""
    own_redis.stop()
    started = time.monotonic()
    created = _run(CREATE, own_redis.url)
    elapsed = time.monotonic() - started
    assert created.returncode == 0, created.stderr
    job_id = int(created.stdout.split("JOB")[1])
    assert "Traceback" not in created.stderr
    assert created.stderr.count("the broker cannot be reached") == 1, created.stderr
    print(f"creating the job with the broker down took {elapsed:.1f} s (Python start included)")

    job = GenerationJob.objects.get(pk=job_id)
    assert job.status == JobStatus.QUEUED and job.error == WAITING_FOR_BROKER
    page = staff_client.get(f"/stimuli/sets/{job.stimulus_set_id}/").content.decode()
    assert "Waiting for the job queue" in page
    assert f"/stimuli/jobs/generation/{job_id}/resume/" in page

    own_redis.start()
    resumed = _run(RESUME, own_redis.url, str(job_id))
    assert resumed.returncode == 0, resumed.stderr
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.error == ""
    assert redis.Redis(port=own_redis.port).llen("celery") == 1
