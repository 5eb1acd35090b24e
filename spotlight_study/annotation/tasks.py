"""Celery tasks of the annotation app: the machine coder's job (ids in, one idempotent service).

``acks_late`` with ``reject_on_worker_lost``: a task whose worker dies is delivered again and the
job continues with the items that have no machine label yet.
"""

from __future__ import annotations

import uuid

from celery import shared_task

from spotlight_study.stimuli.generation import TransientGenerationError

from .machine_coding import MAX_TRANSIENT_RETRIES, machine_coding_job_run


@shared_task(
    name="annotation.machine_coding_job_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(TransientGenerationError,),
    retry_backoff=True,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=MAX_TRANSIENT_RETRIES,
)
def machine_coding_job_run_task(self, job_id: int) -> None:
    """Label the items of machine-coding job ``job_id`` that have no label yet (see
    :func:`~.machine_coding.machine_coding_job_run`); the last retry marks the job failed."""
    machine_coding_job_run(
        job_id=job_id,
        run_id=self.request.id or uuid.uuid4().hex,
        final_attempt=self.request.retries >= self.max_retries,
    )
