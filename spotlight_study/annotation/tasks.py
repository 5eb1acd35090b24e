"""Celery tasks of the annotation app: the machine coder's job, and its job kind.

The task takes a job id and calls one idempotent run (:mod:`.machine_coding_run`), with the
shared job machinery and retry schedule of :mod:`spotlight_study.stimuli.jobs`. ``acks_late`` with
``reject_on_worker_lost``: a task whose worker dies is delivered again and the job continues with
the items that have no machine label yet. Task names follow the scheme of
:mod:`spotlight_study.celery`.
"""

from __future__ import annotations

import uuid

from celery import shared_task

from spotlight_study.stimuli.jobs.retry import CELERY_RETRY_OPTIONS
from spotlight_study.stimuli.jobs.runner import JobKind

from .machine_coding_run import machine_coding_job_run
from .models import MachineCodingJob


@shared_task(
    name="annotation.machine_coding_job_run", bind=True, acks_late=True, reject_on_worker_lost=True,
    **CELERY_RETRY_OPTIONS,
)
def machine_coding_job_run_task(self, job_id: int) -> None:
    """Label the items of machine-coding job ``job_id`` that have no label yet (see
    :func:`~.machine_coding_run.machine_coding_job_run`); the last retry marks the job failed."""
    machine_coding_job_run(
        job_id=job_id,
        run_id=self.request.id or uuid.uuid4().hex,
        final_attempt=self.request.retries >= self.max_retries,
    )


#: What :mod:`.machine_coding` dispatches and ``llm_annotate --sync`` runs in its own process.
MACHINE_CODING = JobKind(
    name="machine_coding",
    model=MachineCodingJob,
    run=machine_coding_job_run,
    task=machine_coding_job_run_task,
    retries_transient=True,
)
