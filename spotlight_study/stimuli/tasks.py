"""Celery tasks of the stimuli app, and the job kinds that pair each task with its run.

A task takes a job id and calls one idempotent run (:mod:`.jobs`). ``acks_late`` with
``reject_on_worker_lost``: a task whose worker process dies is delivered again, and the run
continues the job where it stopped (outputs and tokens already stored are kept). Task names follow
the scheme of :mod:`spotlight_study.celery`.

:data:`GENERATION`, :data:`MINING` and :data:`IMPORT` are what services hand to
:func:`~.jobs.runner.job_dispatch` and what ``run_stimulus_jobs`` runs in its own process.
"""
from __future__ import annotations

import uuid

from celery import shared_task

from .jobs.generation_run import generation_job_run
from .jobs.import_run import import_job_run
from .jobs.mining_run import mining_job_run
from .jobs.retry import CELERY_RETRY_OPTIONS
from .jobs.runner import JobKind
from .jobs.sweep import jobs_resume_stale
from .models import GenerationJob, ImportJob, MiningJob


@shared_task(
    name="stimuli.generation_job_run", bind=True, acks_late=True, reject_on_worker_lost=True,
    **CELERY_RETRY_OPTIONS,
)
def generation_job_run_task(self, job_id: int) -> None:
    """Generate the missing outputs of generation job ``job_id`` (see ``generation_job_run``).

    429, 5xx and connection errors are first retried by the openai client; if they persist, the
    task is retried on the schedule of :mod:`.jobs.retry`, and the last attempt marks the job
    failed.
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


@shared_task(name="stimuli.import_job_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def import_job_run_task(self, job_id: int) -> None:
    """Read the uploaded files of import job ``job_id`` and store their outputs (see
    ``import_job_run``)."""
    import_job_run(job_id=job_id, run_id=self.request.id or uuid.uuid4().hex)


GENERATION = JobKind(
    name="generation",
    model=GenerationJob,
    run=generation_job_run,
    task=generation_job_run_task,
    retries_transient=True,
)
MINING = JobKind(name="mining", model=MiningJob, run=mining_job_run, task=mining_job_run_task)
IMPORT = JobKind(name="import", model=ImportJob, run=import_job_run, task=import_job_run_task)


@shared_task(name="stimuli.jobs_resume_stale")
def jobs_resume_stale_task() -> list:
    """Resume jobs whose worker died and send again those the broker missed
    (:func:`~.jobs.sweep.jobs_resume_stale`); beat runs it every minute, each worker on start.
    Returns the ``[kind, id]`` pairs resumed."""
    return [list(pair) for pair in jobs_resume_stale(KINDS)]
#: The stimuli job kinds by name (``run_stimulus_jobs --job NAME:ID``, the job pages' URLs).
KINDS = {kind.name: kind for kind in (GENERATION, MINING, IMPORT)}
