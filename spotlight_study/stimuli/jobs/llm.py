"""What every LLM run shares: its client, and how a run that did not complete ends.

Used by the generation run (:mod:`.generation_run`) and the machine coder's run
(``annotation.machine_coding_run``). The server is the job's ``base_url`` (copied from
``OPENAI_BASE_URL`` when the job was created); the key is ``OPENAI_API_KEY``, never stored and
removed from every message (:func:`~..generation.safe_error_message`).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.conf import settings

from .. import generation
from ..errors import TransientGenerationError
from ..models import Job, JobStatus
from .state import job_finish, job_record_stop, job_requeue_for_retry

if TYPE_CHECKING:  # openai takes about 0.5 s to import; generation.make_client imports it
    import openai

logger = logging.getLogger(__name__)


def llm_client(*, base_url: str) -> openai.OpenAI:
    """An ``openai`` client for ``base_url`` with the ``OPENAI_*`` settings (key, retries per
    request, timeout per request in seconds). The caller closes it."""
    return generation.make_client(
        base_url=base_url,
        api_key=settings.OPENAI_API_KEY,
        max_retries=settings.OPENAI_MAX_RETRIES,
        timeout_s=settings.OPENAI_TIMEOUT_SECONDS,
    )


def llm_run_wrap_up(
    model: type[Job],
    *,
    job_id: int,
    run_id: str,
    stopped: bool,
    error: BaseException | None,
    final_attempt: bool,
    done: int,
) -> bool:
    """Record how a run ended that did not complete, with ``done`` units stored.

    Returns ``False`` if the run neither ``stopped`` nor met an ``error``: it completed, and the
    caller records its outcome. A run that ``stopped`` (its job was cancelled or taken over)
    records ``done`` and leaves the status to whoever changed it. For an ``error`` from the API:
    a transient error (:func:`~..generation.is_transient`: 429, 5xx, connection) on a run
    that is not the final attempt queues the job again ("Will try again: ...") and raises, so
    that the caller retries on the schedule of :mod:`.retry`. Otherwise the job fails with the
    server's message ("Gave up after retries: ..." for a transient error).

    Raises
    ------
    TransientGenerationError
        As said above; the message never contains the API key.
    """
    if stopped:
        job_record_stop(model, job_id=job_id, done=done)
        return True
    if error is None:
        return False
    message = generation.safe_error_message(error, secret=settings.OPENAI_API_KEY)
    transient = generation.is_transient(error)
    if transient and not final_attempt:
        job_requeue_for_retry(model, job_id=job_id, run_id=run_id, message=message, done=done)
        raise TransientGenerationError(message)
    if transient:
        message = f"Gave up after retries: {message}"
    job_finish(model, job_id=job_id, run_id=run_id, status=JobStatus.FAILED, done=done, error=message)
    logger.warning("%s %s failed: %s", model._meta.verbose_name, job_id, message)
    return True
