"""Integration: a real Celery worker (``celery -A spotlight_study worker``) with the Redis broker.

The worker runs in a subprocess against the test database and Redis DB 15 (flushed before and
after; no other database of the Redis server is touched). The test process sends the tasks
through a connection to the same Redis.
"""
from __future__ import annotations

import os
import signal

import pytest

from spotlight_study.stimuli.models import JobStatus, MiningJob, Output
from spotlight_study.stimuli.services import generation_job_create, mining_job_create

from tests.parallel import redis_test_url
from tests.processes import start_celery_worker, stop_process

from .conftest import subprocess_env, wait_for

# One Redis database per parallel worker (TEST_REDIS_URL picks another), so that runs side by side
# do not flush each other's.
REDIS_URL = redis_test_url()


@pytest.fixture
def redis_db():
    """The Redis DB of ``REDIS_URL``, empty; fails in CI and skips elsewhere if Redis is down."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        reason = "Redis is not running on 127.0.0.1:6379 (needed for the Celery integration test)."
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture
def celery_worker_process(redis_db, openai_server, api_key):
    """A Celery worker subprocess consuming from this worker's Redis database (``REDIS_URL``), using the test database."""
    env = subprocess_env(
        CELERY_BROKER_URL=REDIS_URL,
        OPENAI_BASE_URL=openai_server.url,
        OPENAI_API_KEY=api_key,
        STIMULI_JOB_RUNNER="celery",
        STIMULI_GENERATION_CONCURRENCY="3",
        LOG_LEVEL="INFO",
    )
    proc = start_celery_worker("stimuli-test", env=env)
    yield proc
    if proc.poll() is None:  # unless the test already stopped it to read its log
        stop_process(proc, timeout_s=20)  # SIGTERM: a warm shutdown


@pytest.mark.django_db(transaction=True)
def test_real_worker_generates_and_mines(openai_settings, openai_server, celery_worker_process, api_key):
    """A real worker runs a generation task (outputs stored, progress done/total) and then a Premise mining task."""
    from spotlight_study.celery import app
    from spotlight_study.stimuli.tasks import generation_job_run_task, mining_job_run_task

    n = 12
    job = generation_job_create(
        title="doctors",
        prompt_group1="Describe a doctor called Dr. Smith in 30 words.",
        prompt_group2="Describe a doctor called Dr. Li in 30 words.",
        model="test-model",
        n_per_group=n,
        seed=1,
    )
    with app.connection_for_write(REDIS_URL) as conn:
        generation_job_run_task.apply_async(args=[job.pk], connection=conn)

    def finished():
        job.refresh_from_db()
        return job.status not in (JobStatus.QUEUED, JobStatus.RUNNING)

    wait_for(finished, timeout_s=90, interval_s=0.2, what="the generation task")
    assert (job.status, job.done, job.total) == (JobStatus.SUCCEEDED, 2 * n, 2 * n), job.error
    assert [Output.objects.filter(stimulus_set=job.stimulus_set, group=g).count() for g in (1, 2)] == [n, n]
    assert openai_server.count == 2 * n

    mining = mining_job_create(stimulus_set=job.stimulus_set, method="premise")
    with app.connection_for_write(REDIS_URL) as conn:
        mining_job_run_task.apply_async(args=[mining.pk], connection=conn)
    wait_for(lambda: MiningJob.objects.get(pk=mining.pk).status == JobStatus.SUCCEEDED, timeout_s=60, interval_s=0.2, what="the mining task")
    she = next(p for p in MiningJob.objects.get(pk=mining.pk).patterns.all() if ["She"] in p.clauses)
    assert (she.group, she.count_group1, she.count_group2) == (2, 0, n)

    celery_worker_process.send_signal(signal.SIGTERM)
    log, _ = celery_worker_process.communicate(timeout=60)  # a hang guard for the warm shutdown
    assert "stimuli.generation_job_run" in log and "succeeded" in log
    assert api_key not in log
