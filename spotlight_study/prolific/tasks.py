"""Celery tasks of the Prolific app. They take ids and call one idempotent service.

The beat schedule (``CELERY_BEAT_SCHEDULE["prolific-sync-submissions"]``, every
``PROLIFIC_SYNC_INTERVAL_SECONDS``) runs :func:`prolific_sync_all`, which queues one
:func:`prolific_sync_study` per linked study. Syncing only reads Prolific and applies statuses
that never move backwards, so a task may run twice or be retried safely. Nothing here pays
bonuses: that is never done by a task (a retry could pay twice).
"""
from __future__ import annotations

import logging
import random

from celery import shared_task
from django.conf import settings

from . import selectors
from .credentials import studies_with_own_token
from .errors import ProlificAPIError, ProlificTransportError
from .services.submissions import submissions_sync

logger = logging.getLogger(__name__)


@shared_task(name="prolific.submissions_sync_all")
def prolific_sync_all() -> int:
    """Queue a sync of every linked study that has an API token in force (its own, else
    ``PROLIFIC_API_TOKEN``); returns how many were queued. Each study's sync then calls Prolific
    with that study's token (:func:`~.services.study.client_or_default`)."""
    syncable = selectors.syncable_prolific_studies()
    if not settings.PROLIFIC_API_TOKEN:
        syncable = syncable.filter(study_id__in=studies_with_own_token())
    ids = list(syncable.values_list("pk", flat=True))
    if not ids:
        logger.info("Prolific sync skipped: no linked study has an API token (PROLIFIC_API_TOKEN "
                    "or its own).")
    for pk in ids:
        prolific_sync_study.delay(pk)
    return len(ids)


def _countdown(retries: int) -> float:
    """The Prolific integration's one backoff schedule, in seconds before retry ``retries + 1``.

    Exponential with jitter: about 30 s, 60 s, 120 s, ... at most 10 min, each scaled by a random
    factor in [0.5, 1] so that the syncs of many studies do not retry in step. The HTTP client's
    own short retries (``transport.py``) come first, within one task run.
    """
    return min(600.0, 30.0 * 2**retries) * random.uniform(0.5, 1.0)


@shared_task(
    name="prolific.submissions_sync", bind=True, acks_late=True, max_retries=5
)
def prolific_sync_study(self, prolific_study_id: int) -> dict:
    """Pull the submissions of one study and apply their statuses (see ``submissions_sync``).

    Retried with backoff when Prolific cannot be reached or answers 429/5xx (the sync only reads
    Prolific and is idempotent); other errors (e.g. 401, a bad token) fail at once. Returns the
    :class:`~.services.submissions.SyncReport` as a dict.
    """
    try:
        report = submissions_sync(prolific_study_id=prolific_study_id)
    except ProlificTransportError as exc:
        raise self.retry(exc=exc, countdown=_countdown(self.request.retries)) from None
    except ProlificAPIError as exc:
        if not exc.retryable:
            raise
        raise self.retry(exc=exc, countdown=_countdown(self.request.retries)) from None
    return vars(report)
