"""Celery tasks of the stimuli app. They take a job id and call one idempotent service.

``acks_late`` with ``reject_on_worker_lost``: a task whose worker process dies is delivered again,
and the service continues the job where it stopped (outputs and tokens already stored are kept).
"""
from __future__ import annotations

import uuid

from celery import shared_task

from .generation import TransientGenerationError
from .runner import MAX_TRANSIENT_RETRIES
from .services import generation_job_run, mining_job_run


@shared_task(
    name="stimuli.generation_job_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(TransientGenerationError,),
    retry_backoff=True,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=MAX_TRANSIENT_RETRIES,
)
def generation_job_run_task(self, job_id: int) -> None:
    """Generate the missing outputs of generation job ``job_id`` (see ``generation_job_run``).

    429, 5xx and connection errors are first retried by the openai client; if they persist, the
    task is retried with exponential backoff, and the last attempt marks the job failed.
    """
    generation_job_run(
        job_id=job_id,
        run_id=self.request.id or uuid.uuid4().hex,
        final_attempt=self.request.retries >= self.max_retries,
    )


@shared_task(name="stimuli.mining_job_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def mining_job_run_task(self, job_id: int) -> None:
    """Tokenize and mine for mining job ``job_id`` (see ``mining_job_run``)."""
    mining_job_run(job_id=job_id, run_id=self.request.id or uuid.uuid4().hex)


TASKS = {"generation": generation_job_run_task, "mining": mining_job_run_task}
