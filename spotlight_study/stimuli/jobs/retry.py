"""The one retry schedule of the LLM jobs (generation here, machine coding in ``annotation``).

Two layers retry an LLM request, each for its own kind of failure:

1. the ``openai`` client retries each request (429, 408, 409, 5xx, honouring ``Retry-After``;
   ``OPENAI_MAX_RETRIES``) - short blips;
2. if the error outlasts those retries, the run raises
   :class:`~..errors.TransientGenerationError` and the whole run is tried again later, up to
   :data:`MAX_TRANSIENT_RETRIES` times - longer outages. This module is that layer.

Layer 2 has one schedule whatever runs the job: Celery's ``retry_backoff`` (exponential, full
jitter, capped), with the parameters below. The Celery tasks pass :data:`CELERY_RETRY_OPTIONS`
to ``shared_task``; the in-process runner (:func:`.runner.job_run_now`: the ``thread`` and
``manual`` runners) waits :func:`retry_delay_s`, which is Celery's own formula. Celery's was
kept because it is the production path, and its jitter keeps jobs that failed together (one
rate limit, one outage) from all coming back at the same moment.
"""
from __future__ import annotations

from celery.utils.time import get_exponential_backoff_interval

from ..errors import TransientGenerationError

#: Whole-run retries after a transient error; the run after the last retry marks the job failed.
MAX_TRANSIENT_RETRIES = 5
#: The wait before retry ``n`` (0-based) is at most ``RETRY_BACKOFF_S * 2**n`` seconds...
RETRY_BACKOFF_S = 1
#: ... and never more than this.
RETRY_BACKOFF_MAX_S = 600

#: ``shared_task`` options of every LLM job's task: the schedule above, for the error above.
CELERY_RETRY_OPTIONS = {
    "autoretry_for": (TransientGenerationError,),
    "retry_backoff": RETRY_BACKOFF_S,
    "retry_backoff_max": RETRY_BACKOFF_MAX_S,
    "retry_jitter": True,
    "max_retries": MAX_TRANSIENT_RETRIES,
}


def retry_delay_s(retries: int) -> int:
    """Seconds to wait before retry number ``retries`` (0 for the first), as Celery would.

    A random whole number from 0 to ``min(RETRY_BACKOFF_MAX_S, RETRY_BACKOFF_S * 2**retries)``
    ("full jitter"; ``celery.utils.time.get_exponential_backoff_interval``).
    """
    return get_exponential_backoff_interval(
        factor=RETRY_BACKOFF_S, retries=retries, maximum=RETRY_BACKOFF_MAX_S, full_jitter=True
    )
