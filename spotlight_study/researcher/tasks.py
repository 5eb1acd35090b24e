"""Celery tasks of the researcher app: the analysis run, and its job kind.

The task takes a run id and calls one idempotent run (:mod:`.analysis_execution`) with the shared
job machinery of :mod:`spotlight_study.stimuli.jobs`. ``acks_late`` with
``reject_on_worker_lost``: a task whose worker dies is delivered again and the run starts again
from the export (its stored files are replaced). Task names follow the scheme of
:mod:`spotlight_study.celery`.
"""
from __future__ import annotations

import uuid

from celery import shared_task

from spotlight_study.stimuli.jobs.runner import JobKind

from .analysis_execution import analysis_job_run
from .models import AnalysisRun


@shared_task(name="researcher.analysis_job_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def analysis_job_run_task(self, job_id: int) -> None:
    """Run analysis run ``job_id`` (see :func:`~.analysis_execution.analysis_job_run`); an error
    fails the run with its message, and is not retried (a rerun gives the same error)."""
    analysis_job_run(job_id=job_id, run_id=self.request.id or uuid.uuid4().hex)


#: What :mod:`.analysis_jobs` dispatches after commit (Celery task, thread or nobody).
ANALYSIS = JobKind(name="analysis", model=AnalysisRun, run=analysis_job_run, task=analysis_job_run_task)
