"""Integration: a real Celery worker runs the analysis job (Redis DB of this test worker, the test
database), as production's "Run analysis" does with ``STIMULI_JOB_RUNNER=celery``."""
from __future__ import annotations

import pytest

from spotlight_study.researcher.analysis_jobs import analysis_job_create
from spotlight_study.researcher.models import AnalysisRun
from spotlight_study.stimuli.models import JobStatus
from tests.processes import start_celery_worker, stop_process
from tests.stimuli.conftest import subprocess_env, wait_for
from tests.stimuli.test_celery_worker import REDIS_URL, redis_db  # noqa: F401  (fixture)

from .analysis_helpers import annotate_demo_study


@pytest.mark.django_db(transaction=True)
def test_real_worker_runs_an_analysis(redis_db, demo_study, settings, tmp_path):  # noqa: F811
    """The run's task, sent to Redis, is run by a real worker: the run succeeds, with its stages
    done, and its outputs are in the storage the worker shares with this process."""
    from django.core.files.storage import storages

    from spotlight_study.celery import app
    from spotlight_study.researcher.tasks import analysis_job_run_task

    annotate_demo_study(demo_study)
    root = settings.STORAGES["analysis"]["OPTIONS"]["location"]
    env = subprocess_env(CELERY_BROKER_URL=REDIS_URL, STIMULI_JOB_RUNNER="celery",
                         ANALYSIS_ROOT=root, LOG_LEVEL="INFO")
    proc = start_celery_worker("analysis-test", env=env, log_path=tmp_path / "worker.log")
    try:
        settings.STIMULI_JOB_RUNNER = "manual"  # the task is sent below, to this test's Redis DB
        run = analysis_job_create(study=demo_study)
        with app.connection_for_write(REDIS_URL) as conn:
            analysis_job_run_task.apply_async(args=[run.pk], connection=conn)

        def finished():
            run.refresh_from_db()
            return not run.is_active

        wait_for(finished, timeout_s=180, interval_s=0.5, what="the analysis task")
    finally:
        stop_process(proc, timeout_s=20)
    log = (tmp_path / "worker.log").read_text()
    assert run.status == JobStatus.SUCCEEDED, (run.error, log[-3000:])
    assert (run.done, run.total) == (3, 3) and run.run_id  # the task's id
    assert storages["analysis"].exists(run.storage_prefix + "report.html")
    assert "researcher.analysis_job_run" in log
    assert AnalysisRun.objects.count() == 1
