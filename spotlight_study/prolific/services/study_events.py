"""Writes of study-level webhook events: Prolific's study status (paused, awaiting review, ...).

A ``study.status.change`` event names the study (``resource_id``) and its new ``status``. The
status is stored on :class:`~..models.ProlificStudy` (``prolific_status`` and
``prolific_status_at``), shown on the researcher's study page, unless a later observation is
already stored (events may arrive out of order). The event itself is stored by the webhook.
"""
from __future__ import annotations

import logging
import re
from datetime import datetime

from django.db.models import Q

from ..models import ProlificStudy

logger = logging.getLogger(__name__)

#: Prolific's study statuses (Prolific: "The study object").
STUDY_STATUSES = (
    "UNPUBLISHED", "PUBLISHING", "SCHEDULED", "ACTIVE", "PAUSED", "AWAITING REVIEW", "COMPLETED",
)
_CANONICAL = {re.sub(r"[\s_\-]+", "", s): s for s in STUDY_STATUSES}


def study_status_normalize(value: object) -> str | None:
    """``"awaiting_review"`` -> ``"AWAITING REVIEW"``; ``None`` for anything unknown."""
    if not isinstance(value, str):
        return None
    return _CANONICAL.get(re.sub(r"[\s_\-]+", "", value).upper())


def study_status_event_apply(
    *, prolific_id: str, raw_status: object, observed_at: datetime, scope: Q = Q()
) -> str:
    """Store the study status of a webhook event; returns the event's outcome: ``applied``,
    ``stale`` (a later status is stored), ``unchanged``, ``unmatched`` (no study here, or none
    in ``scope``, a filter of :class:`ProlificStudy`: the studies the event's webhook secret may
    change) or ``unknown_status`` (logged by study, left unchanged)."""
    ps = ProlificStudy.objects.filter(scope, prolific_id=prolific_id).exclude(prolific_id="").first()
    if ps is None:
        return "unmatched"
    status = study_status_normalize(raw_status)
    if status is None:
        logger.warning("Study %s: unknown Prolific study status in a webhook event; ignored.", ps.study_id)
        return "unknown_status"
    # One conditional UPDATE: only an observation newer than the stored one wins.
    newer = Q(prolific_status_at__isnull=True) | Q(prolific_status_at__lt=observed_at)
    updated = ProlificStudy.objects.filter(Q(pk=ps.pk) & newer).update(
        prolific_status=status, prolific_status_at=observed_at
    )
    if not updated:
        return "stale"
    return "unchanged" if status == ps.prolific_status else "applied"
