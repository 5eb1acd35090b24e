"""A job's state in the database: claim, heartbeat and finish for runs; cancel and reopen for
services.

Works for any concrete :class:`~spotlight_study.stimuli.models.Job` subclass (``model``). The
run that holds a job is named by ``run_id`` (a Celery task id or a random id). Every write a run
makes is filtered on ``run_id`` and ``status=running``, so a run that lost its job (cancelled, or
taken over after going stale) changes nothing and learns it from the return value.
"""
from __future__ import annotations

from typing import TypeVar

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from spotlight_study.exceptions import DomainError

from ..errors import JobStateError
from ..models import ACTIVE_STATUSES, Job, JobStatus
from ..selectors import job_is_stale, job_is_waiting_for_broker

J = TypeVar("J", bound=Job)

#: A run reports (and so notices a cancel) at least this often, in seconds; well below
#: ``STIMULI_JOB_STALE_SECONDS``, after which a silent job counts as stale.
HEARTBEAT_SECONDS = 5


def job_claim(model: type[J], *, job_id: int, run_id: str) -> J | None:
    """Mark the job running for ``run_id`` and return it.

    Returns ``None`` (and changes nothing) if the job is gone or finished, or if another run
    holds it and is still reporting (not :func:`~..selectors.job_is_stale`). A stale job is taken
    over. The same ``run_id`` may claim again (a retry of the same Celery task).
    """
    now = timezone.now()
    with transaction.atomic():
        job = model.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status not in ACTIVE_STATUSES:
            return None
        held_elsewhere = job.status == JobStatus.RUNNING and job.run_id not in ("", run_id)
        if held_elsewhere and not job_is_stale(job, now=now):
            return None
        job.status = JobStatus.RUNNING
        job.run_id = run_id
        job.heartbeat_at = now
        job.started_at = job.started_at or now
        job.error = ""
        job.save(
            update_fields=["status", "run_id", "heartbeat_at", "started_at", "error", "updated_at"]
        )
    return job


def job_report(model: type[Job], *, job_id: int, run_id: str, **fields) -> bool:
    """Store progress ``fields`` (e.g. ``done=``, ``stage=``) and a heartbeat.

    Returns ``False`` if the job was cancelled or taken over: the run should stop.
    """
    now = timezone.now()
    updated = model.objects.filter(pk=job_id, run_id=run_id, status=JobStatus.RUNNING).update(
        heartbeat_at=now, updated_at=now, **fields
    )
    return updated == 1


def job_finish(model: type[Job], *, job_id: int, run_id: str, status: str, **fields) -> bool:
    """End the run's job with ``status`` (succeeded or failed) and ``fields``.

    Returns ``False`` (nothing changed) if the run no longer holds the job.
    """
    now = timezone.now()
    updated = model.objects.filter(pk=job_id, run_id=run_id, status=JobStatus.RUNNING).update(
        status=status, finished_at=now, heartbeat_at=now, updated_at=now, **fields
    )
    return updated == 1


def job_requeue_for_retry(model: type[Job], *, job_id: int, run_id: str, message: str, **fields) -> None:
    """Put the run's job back to queued, with ``"Will try again: <message>"`` as its error.

    For a transient error that will be retried (see :mod:`.retry`); ``run_id`` is kept, so the
    retry of the same run claims the job again while other runners leave it alone until stale.
    """
    now = timezone.now()
    model.objects.filter(pk=job_id, run_id=run_id).update(
        status=JobStatus.QUEUED,
        error=f"Will try again: {message}",
        heartbeat_at=now,
        updated_at=now,
        **fields,
    )


def job_record_stop(model: type[Job], *, job_id: int, **fields) -> None:
    """Store ``fields`` (the final count) of a job whose run stopped because it lost the job.

    The status is left to whoever cancelled or took over the job.
    """
    model.objects.filter(pk=job_id).update(updated_at=timezone.now(), **fields)


def _label(model: type[Job], job_id: int) -> str:
    return f"{str(model._meta.verbose_name).capitalize()} {job_id}"


def job_cancel(model: type[J], *, job_id: int, error: type[DomainError] = JobStateError) -> J:
    """Cancel a queued or running job; what it stored so far is kept.

    A running job's run stops at its next report. Raises ``error`` (default
    :class:`~..errors.JobStateError`) if the job has finished, ``model.DoesNotExist`` for an
    unknown id.
    """
    with transaction.atomic():
        job = model.objects.select_for_update().get(pk=job_id)
        if job.status not in ACTIVE_STATUSES:
            raise error(
                f"{_label(model, job_id)} has already finished ({job.get_status_display().lower()})."
            )
        job.status = JobStatus.CANCELLED
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "finished_at", "updated_at"])
    return job


def job_reopen(model: type[J], *, job_id: int, error: type[DomainError] = JobStateError) -> J:
    """Queue a failed, cancelled, stale or broker-waiting job again (no run holds it); the caller
    dispatches it.

    Raises ``error`` (default :class:`~..errors.JobStateError`) if the job succeeded, or is
    still running and reporting; ``model.DoesNotExist`` for an unknown id.
    """
    with transaction.atomic():
        job = model.objects.select_for_update().get(pk=job_id)
        if job.status == JobStatus.SUCCEEDED:
            raise error(f"{_label(model, job_id)} has already finished.")
        if job.status in ACTIVE_STATUSES and not (job_is_stale(job) or job_is_waiting_for_broker(job)):
            raise error(
                f"{_label(model, job_id)} is still running. It can be resumed once it has not "
                f"reported for {settings.STIMULI_JOB_STALE_SECONDS} seconds."
            )
        job.status = JobStatus.QUEUED
        job.run_id = ""
        job.error = ""
        job.finished_at = None
        job.save(update_fields=["status", "run_id", "error", "finished_at", "updated_at"])
    return job
