"""Where stimulus jobs run, chosen by the ``STIMULI_JOB_RUNNER`` setting.

- ``celery`` (production, with ``CELERY_BROKER_URL=redis://...``): the job is sent to the broker
  after commit and a separate ``celery -A spotlight_study worker`` runs it.
- ``thread`` (the default when the broker is ``memory://``, i.e. the embedded default): after
  commit a daemon thread of the web process runs the job, so the request returns at once. If the
  process stops, the job stops too; it shows as stale and can be resumed from its page or with
  ``manage.py run_stimulus_jobs``.
- ``manual``: nothing starts by itself; ``manage.py run_stimulus_jobs --wait`` runs queued jobs.

Every runner calls the same idempotent ``*_run`` services, so any of them can continue a job
another one started.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connections, transaction

logger = logging.getLogger(__name__)

KINDS = ("generation", "mining")
RUNNERS = ("celery", "thread", "manual")
# Retries of a whole generation run after transient errors (each request already had the
# openai client's own retries); the Celery task uses the same budget.
MAX_TRANSIENT_RETRIES = 5


def job_dispatch(*, kind: str, job_id: int) -> None:
    """Start job ``job_id`` of ``kind`` once the current transaction commits.

    Raises ``ImproperlyConfigured`` for an unknown ``STIMULI_JOB_RUNNER``.
    """
    if kind not in KINDS:
        raise ValueError(f"Unknown job kind '{kind}'.")
    runner = settings.STIMULI_JOB_RUNNER
    if runner == "celery":
        from .tasks import TASKS

        task = TASKS[kind]
        # robust: if the broker is down the job stays queued (and later shows as stale, to be
        # resumed) instead of turning the researcher's request into an error page.
        transaction.on_commit(lambda: task.delay(job_id), robust=True)
    elif runner == "thread":
        transaction.on_commit(lambda: start_thread(kind=kind, job_id=job_id), robust=True)
    elif runner != "manual":
        raise ImproperlyConfigured(f"STIMULI_JOB_RUNNER must be one of {', '.join(RUNNERS)}, not '{runner}'.")


def job_run_now(*, kind: str, job_id: int, run_id: str | None = None) -> None:
    """Run a job in this process until it finishes, fails or is cancelled.

    Transient generation errors are retried up to :data:`MAX_TRANSIENT_RETRIES` times with
    exponential backoff (1, 2, 4, ... seconds, at most 60), like the Celery task's
    ``retry_backoff``.
    """
    from . import services
    from .generation import TransientGenerationError

    run_id = run_id or uuid.uuid4().hex
    attempts = MAX_TRANSIENT_RETRIES + 1
    for attempt in range(attempts):
        try:
            if kind == "generation":
                services.generation_job_run(
                    job_id=job_id, run_id=run_id, final_attempt=attempt == attempts - 1
                )
            elif kind == "mining":
                services.mining_job_run(job_id=job_id, run_id=run_id)
            else:
                raise ValueError(f"Unknown job kind '{kind}'.")
            return
        except TransientGenerationError as exc:
            delay = min(2**attempt, 60)
            logger.warning("%s job %s: %s; trying again in %s s.", kind, job_id, exc, delay)
            time.sleep(delay)


def _thread_main(kind: str, job_id: int) -> None:
    try:
        job_run_now(kind=kind, job_id=job_id)
    except Exception:
        logger.exception("%s job %s failed in its background thread.", kind, job_id)
    finally:
        connections.close_all()  # this thread's own connections


def start_thread(*, kind: str, job_id: int) -> threading.Thread:
    """Run the job in a daemon thread of this process; returns the started thread."""
    thread = threading.Thread(
        target=_thread_main, args=(kind, job_id), name=f"stimuli-{kind}-{job_id}", daemon=True
    )
    thread.start()
    return thread
