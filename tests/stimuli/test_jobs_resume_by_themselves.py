"""Jobs resume by themselves: after ``kill -9`` of the whole Celery worker, a generation job
that stopped reporting is resumed when the next worker starts (and by beat's sweep every
minute), and finishes with exactly the outputs it should have, none twice.

The broker is a redis-server of the test's own (``own_redis``); the worker is a real
``celery -A spotlight_study worker`` in its own process group, killed with SIGKILL.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from spotlight_study.stimuli.models import GenerationJob, JobStatus, Output
from spotlight_study.stimuli.services import generation_job_create
from spotlight_study.stimuli.tasks import jobs_resume_stale_task

from ..processes import start_celery_worker, stop_process
from ..security.conftest import own_redis  # noqa: F401 (a fixture)
from .conftest import subprocess_env, wait_for

STALE_S = 3


def _worker(broker_url: str, openai_url: str, api_key: str, log_path) -> subprocess.Popen:
    env = subprocess_env(
        CELERY_BROKER_URL=broker_url, OPENAI_BASE_URL=openai_url, OPENAI_API_KEY=api_key,
        STIMULI_JOB_RUNNER="celery", STIMULI_GENERATION_CONCURRENCY="1",
        STIMULI_JOB_STALE_SECONDS=str(STALE_S), LOG_LEVEL="INFO",
    )
    # A session of its own, so that kill -9 reaches the pool's child too.
    return start_celery_worker("resume-test", env=env, log_path=log_path, start_new_session=True)


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_worker_was_killed_resumes_when_the_next_worker_starts(
    openai_settings, openai_server, api_key, own_redis, tmp_path
):
    """kill -9 of the whole worker mid-job; a new worker resumes it by itself; exactly 2n outputs."""
    from spotlight_study.celery import app
    from spotlight_study.stimuli.tasks import generation_job_run_task

    openai_server.hold(after=5)  # the kill lands mid-job, however fast the machine
    n = 16
    job = generation_job_create(title="doctors", prompt_group1="Dr. Smith", prompt_group2="Dr. Li",
                                model="test-model", n_per_group=n, seed=1)
    first = _worker(own_redis.url, openai_server.url, api_key, tmp_path / "worker1.log")
    second = None
    try:
        with app.connection_for_write(own_redis.url) as conn:
            generation_job_run_task.apply_async(args=[job.pk], connection=conn)
        wait_for(lambda: GenerationJob.objects.get(pk=job.pk).done >= 5, timeout_s=60, interval_s=0.1,
                 what="the first outputs")
        os.killpg(first.pid, signal.SIGKILL)  # the whole worker: its main process and its child
        first.wait(timeout=10)
        openai_server.release()  # the dead worker's held request gets its answer, unread
        killed_at = GenerationJob.objects.get(pk=job.pk)
        assert killed_at.status == JobStatus.RUNNING and killed_at.done < 2 * n
        # The next worker resumes the job only once its heartbeat is older than STALE_S.
        wait_for(lambda: not GenerationJob.objects.filter(
            pk=job.pk, heartbeat_at__gt=timezone.now() - timedelta(seconds=STALE_S + 0.5)).exists(),
            timeout_s=60, what="the heartbeat to go stale")
        started = time.monotonic()
        second = _worker(own_redis.url, openai_server.url, api_key, tmp_path / "worker2.log")

        def finished():
            j = GenerationJob.objects.get(pk=job.pk)
            return j if j.status not in (JobStatus.QUEUED, JobStatus.RUNNING) else None

        done = wait_for(finished, timeout_s=90, interval_s=0.2, what="the resumed job")
        print(f"killed at {killed_at.done} of {2 * n}; resumed and finished {time.monotonic() - started:.1f} s "
              "after the new worker started")
    finally:
        stop_process(first, timeout_s=20, process_group=True)
        if second is not None:
            stop_process(second, timeout_s=20, process_group=True)
    assert (done.status, done.done, done.total) == (JobStatus.SUCCEEDED, 2 * n, 2 * n), done.error
    assert [Output.objects.filter(stimulus_set=job.stimulus_set, group=g).count() for g in (1, 2)] == [n, n]
    log = (tmp_path / "worker2.log").read_text()
    assert "stimuli.jobs_resume_stale" in log and "resumed" in log
    assert api_key not in log


@pytest.mark.django_db
def test_beats_sweep_resumes_a_stale_running_job_and_leaves_a_live_one(openai_settings):
    """The beat task reopens a running job silent for longer than STIMULI_JOB_STALE_SECONDS,
    and leaves one that reported recently and one that is merely queued."""
    jobs = [generation_job_create(title=f"t{i}", prompt_group1="a", prompt_group2="b", model="m", n_per_group=2)
            for i in range(3)]
    old = timezone.now() - timedelta(seconds=openai_settings.STIMULI_JOB_STALE_SECONDS + 30)
    GenerationJob.objects.filter(pk=jobs[0].pk).update(status=JobStatus.RUNNING, run_id="dead", heartbeat_at=old)
    GenerationJob.objects.filter(pk=jobs[1].pk).update(status=JobStatus.RUNNING, run_id="live", heartbeat_at=timezone.now())
    assert jobs_resume_stale_task() == [["generation", jobs[0].pk]]
    states = {j.pk: (j.status, j.run_id) for j in GenerationJob.objects.all()}
    assert states[jobs[0].pk] == (JobStatus.QUEUED, "")
    assert states[jobs[1].pk] == (JobStatus.RUNNING, "live")
    assert states[jobs[2].pk][0] == JobStatus.QUEUED
    assert jobs_resume_stale_task() == []  # nothing stale any more
