"""Where background jobs run, chosen by the ``STIMULI_JOB_RUNNER`` setting.

- ``celery`` (production, with ``CELERY_BROKER_URL=redis://...``): the job is sent to the broker
  after commit and a separate ``celery -A spotlight_study worker`` runs its task.
- ``thread`` (the default when the broker is ``memory://``, i.e. the embedded default): after
  commit a daemon thread of the web process runs the job, so the request returns at once. If the
  process stops, the job stops too; it shows as stale and can be resumed from its page, with
  ``manage.py run_stimulus_jobs`` or ``llm_annotate --resume``.
- ``manual``: nothing starts by itself; ``manage.py run_stimulus_jobs --wait`` runs queued
  generation and mining jobs.

Every runner calls the same idempotent run of the job's :class:`JobKind`, so any of them can
continue a job another one started. A kind is declared next to its Celery task (``tasks.py`` of
its app), so this module imports no app's tasks.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Callable

from celery import Task
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, transaction
from kombu.exceptions import OperationalError as KombuOperationalError

from ..errors import TransientGenerationError
from ..models import WAITING_FOR_BROKER, Job, JobStatus
from .retry import MAX_TRANSIENT_RETRIES, retry_delay_s

logger = logging.getLogger(__name__)

RUNNERS = ("celery", "thread", "manual")


@dataclass(frozen=True)
class JobKind:
    """One kind of background job: how each runner starts it.

    Attributes
    ----------
    name : str
        Shown in logs, thread names and ``run_stimulus_jobs --job NAME:ID``.
    model : type
        The :class:`~..models.Job` subclass whose rows this kind runs.
    run : callable
        The idempotent run, ``run(job_id=, run_id=)``; with ``final_attempt=`` too if
        ``retries_transient``.
    task : celery.Task
        The Celery task that calls ``run`` with the job id (the ``celery`` runner).
    retries_transient : bool
        An LLM run: it raises :class:`~..errors.TransientGenerationError` unless
        ``final_attempt``, and is retried on the schedule of :mod:`.retry`.
    """

    name: str
    model: type[Job]
    run: Callable[..., None]
    task: Task
    retries_transient: bool = False


def job_dispatch(kind: JobKind, *, job_id: int) -> None:
    """Start job ``job_id`` of ``kind`` once the current transaction commits.

    Raises ``ImproperlyConfigured`` for an unknown ``STIMULI_JOB_RUNNER``.
    """
    runner = settings.STIMULI_JOB_RUNNER
    if runner == "celery":
        # robust as a last resort: whatever sending raises, the researcher's request has
        # committed and must not become an error page.
        transaction.on_commit(lambda: job_send(kind, job_id=job_id), robust=True)
    elif runner == "thread":
        transaction.on_commit(lambda: job_start_thread(kind, job_id=job_id), robust=True)
    elif runner != "manual":
        raise ImproperlyConfigured(
            f"STIMULI_JOB_RUNNER must be one of {', '.join(RUNNERS)}, not '{runner}'."
        )


def job_send(kind: JobKind, *, job_id: int) -> bool:
    """Send job ``job_id`` of ``kind`` to the Celery broker now; ``True`` if it was sent.

    If the broker cannot be reached (kombu's ``OperationalError`` after Celery's publish
    retries, about a second), the job stays queued with :data:`~..models.WAITING_FOR_BROKER`
    as its error: its page says so and offers Resume, and ``stimuli.jobs_dispatch_waiting``
    (beat, every minute, and each worker start) sends it once the broker is back. One warning
    line is logged, without a traceback.
    """
    try:
        kind.task.delay(job_id)
    except (KombuOperationalError, OSError) as exc:
        logger.warning(
            "%s job %s: the broker cannot be reached (%s); the job waits and is sent when it "
            "returns.", kind.name, job_id, str(exc).rstrip(".") or type(exc).__name__,
        )
        kind.model.objects.filter(pk=job_id, status=JobStatus.QUEUED, run_id="").update(
            error=WAITING_FOR_BROKER
        )
        return False
    kind.model.objects.filter(pk=job_id, status=JobStatus.QUEUED, error=WAITING_FOR_BROKER).update(
        error=""
    )
    return True


def job_run_now(kind: JobKind, *, job_id: int, run_id: str | None = None) -> None:
    """Run a job in this process until it finishes, fails or is cancelled.

    An LLM run's transient errors are retried up to
    :data:`~.retry.MAX_TRANSIENT_RETRIES` times, waiting :func:`~.retry.retry_delay_s` seconds
    (the Celery tasks' schedule) before each retry. ``run_id`` defaults to a random id.
    """
    run_id = run_id or uuid.uuid4().hex
    if not kind.retries_transient:
        kind.run(job_id=job_id, run_id=run_id)
        return
    for attempt in range(MAX_TRANSIENT_RETRIES + 1):
        try:
            kind.run(job_id=job_id, run_id=run_id, final_attempt=attempt == MAX_TRANSIENT_RETRIES)
            return
        except TransientGenerationError as exc:
            delay = retry_delay_s(attempt)
            logger.warning("%s job %s: %s (trying again in %s s)", kind.name, job_id, str(exc).rstrip("."), delay)
            time.sleep(delay)


def _thread_main(kind: JobKind, job_id: int) -> None:
    try:
        job_run_now(kind, job_id=job_id)
    except Exception:
        logger.exception("%s job %s failed in its background thread.", kind.name, job_id)
    finally:
        connections.close_all()  # this thread's own connections


def job_start_thread(kind: JobKind, *, job_id: int) -> threading.Thread:
    """Run the job in a daemon thread of this process; returns the started thread."""
    thread = threading.Thread(
        target=_thread_main, args=(kind, job_id), name=f"{kind.name}-{job_id}", daemon=True
    )
    thread.start()
    return thread
