"""Jobs resume by themselves: the sweep that beat runs every minute and each worker runs on start.

A job whose worker was killed (``kill -9`` of the whole worker, a machine lost) stays
``running`` with a heartbeat that stops; one whose start could not reach the broker stays
``queued`` with the note :data:`~..models.WAITING_FOR_BROKER`. Neither waits for Redis's
visibility timeout or for someone to press Resume: :func:`jobs_resume_stale` reopens and
dispatches them, as Resume does, and the run continues where it stopped without duplicates
(the claim and the stored outputs, :mod:`.state`).
"""
from __future__ import annotations

import logging

from django.db import transaction

from spotlight_study.exceptions import DomainError

from ..models import JobStatus
from ..selectors import job_is_stale, job_is_waiting_for_broker, jobs_to_run
from .runner import JobKind, job_dispatch
from .state import job_reopen

logger = logging.getLogger(__name__)


def jobs_resume_stale(kinds: dict[str, JobKind]) -> list[tuple[str, int]]:
    """Resume the jobs of ``kinds`` (``{name: JobKind}``) that are running but have not reported
    for ``STIMULI_JOB_STALE_SECONDS``, or queued and waiting for the broker; returns their
    ``(kind, id)``, oldest first. A job another caller resumed or finished meanwhile is skipped.
    """
    resumed = []
    for name, job_id in jobs_to_run():
        kind = kinds.get(name)
        job = kind.model.objects.filter(pk=job_id).first() if kind else None
        if job is None or not (
            (job.status == JobStatus.RUNNING and job_is_stale(job)) or job_is_waiting_for_broker(job)
        ):
            continue
        try:
            with transaction.atomic():
                job_reopen(kind.model, job_id=job_id)
                job_dispatch(kind, job_id=job_id)
        except DomainError:
            continue  # resumed or finished by someone else meanwhile
        logger.warning("%s job %s had stopped reporting (or waited for the broker): resumed.", name, job_id)
        resumed.append((name, job_id))
    return resumed
