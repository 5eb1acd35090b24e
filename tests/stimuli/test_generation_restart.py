"""A generating process killed mid-run (SIGKILL) and a new one started: exactly n outputs per group."""
from __future__ import annotations

import os
import signal

import pytest

from spotlight_study.stimuli.models import GenerationJob, JobStatus, Output
from spotlight_study.stimuli.services import generation_job_create

from .conftest import manage, subprocess_env, wait_for

N = 15


@pytest.mark.django_db(transaction=True)
def test_killed_generation_continues_after_restart(openai_settings, openai_server, api_key):
    """After SIGKILL mid-run a restart requests only the missing outputs: exactly n per group, key in no log."""
    openai_server.hold(after=6)  # the process is mid-run when killed, however fast the machine
    job = generation_job_create(
        title="doctors",
        prompt_group1="Describe a doctor called Dr. Smith in 30 words.",
        prompt_group2="Describe a doctor called Dr. Li in 30 words.",
        model="test-model",
        n_per_group=N,
        seed=7,
    )
    env = subprocess_env(
        OPENAI_BASE_URL=openai_server.url,
        OPENAI_API_KEY=api_key,
        STIMULI_GENERATION_CONCURRENCY="2",
        STIMULI_JOB_RUNNER="manual",
        STIMULI_JOB_STALE_SECONDS="2",
    )
    first = manage("run_stimulus_jobs", "--job", f"generation:{job.pk}", env=env)
    try:
        wait_for(lambda: Output.objects.filter(stimulus_set=job.stimulus_set).count() >= 6, timeout_s=60, what="6 outputs")
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first_log, _ = first.communicate(timeout=30)
        openai_server.release()  # the dead process's held requests get their answers, unread
    assert first.returncode == -signal.SIGKILL

    job.refresh_from_db()
    stored = Output.objects.filter(stimulus_set=job.stimulus_set).count()
    assert job.status == JobStatus.RUNNING  # nobody could mark it: the process died
    assert 6 <= stored < 2 * N
    requests_before = openai_server.count

    # Once the dead run stops reporting (2 s here), any runner may continue the job.
    wait_for(lambda: not GenerationJob.objects.filter(pk=job.pk, heartbeat_at__gt=_seconds_ago(2.2)).exists(), timeout_s=60, what="staleness")
    second = manage("run_stimulus_jobs", env=env)
    second_log, _ = second.communicate(timeout=120)
    assert second.returncode == 0, second_log

    job.refresh_from_db()
    assert (job.status, job.done, job.total) == (JobStatus.SUCCEEDED, 2 * N, 2 * N), job.error
    for g in (1, 2):
        indices = list(Output.objects.filter(stimulus_set=job.stimulus_set, group=g).order_by("index").values_list("index", flat=True))
        assert indices == list(range(N))
    assert openai_server.count - requests_before == 2 * N - stored  # only the missing ones were asked for
    assert "Sending HTTP Request" in first_log + second_log  # the openai client's debug log was captured
    assert api_key not in first_log and api_key not in second_log


def _seconds_ago(seconds: float):
    from datetime import timedelta

    from django.utils import timezone

    return timezone.now() - timedelta(seconds=seconds)
