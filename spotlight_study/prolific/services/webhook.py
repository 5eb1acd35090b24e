"""Writes of Prolific's webhook: store a verified event once, then apply it.

The view (:func:`spotlight_study.prolific.views.webhook`) checks the signature, the size and the
timestamp over the raw body (:mod:`spotlight_study.prolific.webhooks`, pure); this module stores
the event, deduplicated by its id, and applies a ``submission.status.change`` through
:func:`~.submissions.submission_status_apply`, so a late event never moves a submission back.
"""
from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from spotlight_study.participation.models import Participant

from .. import webhooks
from ..errors import WebhookEventInvalid
from ..models import ProlificStudy, Submission, WebhookEvent
from ..statuses import STATUS_RANK, TRANSIENT_STATUSES, status_display_name, status_normalize
from .study_events import study_status_event_apply
from .submissions import submission_status_apply, unknown_statuses_record

logger = logging.getLogger(__name__)


def webhook_event_receive(
    *, event_id: str, event_type: str, payload: dict[str, Any], sent_at: datetime
) -> tuple[WebhookEvent, bool]:
    """Store a verified webhook event once and apply it.

    ``submission.status.change`` events (``resource_id`` = submission id, ``participant_id``,
    ``status``) go through :func:`submission_status_apply` with ``sent_at`` as the observation
    time, so an event that arrives late never moves a submission backwards. A submission not
    known yet is matched to the participant who arrived with it (its SESSION_ID); without one the
    event is kept as ``unmatched`` and the next sync catches up. Other event types are stored
    and ignored. The status may be spelled in any case and with spaces, hyphens or underscores;
    an unknown status is kept with the outcome ``unknown_status``, logged by name and shown on
    the review page (:func:`unknown_statuses_record`).

    NUL characters and lone surrogates are removed from the payload and the ids first
    (:func:`~spotlight_study.prolific.webhooks.strip_unstorable`): PostgreSQL's ``jsonb`` and
    ``text`` cannot store them, and removing them on every database keeps SQLite and
    PostgreSQL alike.

    Returns ``(event, created)``; ``created`` is false for a duplicate ``X-Event-ID`` (nothing
    is applied again). Raises :class:`WebhookEventInvalid` (nothing stored) for an event without
    an id or an ``event_type``.
    """
    payload = webhooks.strip_unstorable(payload)
    event_id = webhooks.strip_unstorable(event_id)[:100]
    event_type = webhooks.strip_unstorable(event_type)
    resource_id = str(payload.get("resource_id") or "")[:64]
    raw_status = payload.get("status")
    status = status_normalize(raw_status) or status_display_name(raw_status)
    with transaction.atomic():
        existing = WebhookEvent.objects.filter(event_id=event_id).first()
        if existing is not None:
            return existing, False
        event = WebhookEvent(
            event_id=event_id,
            event_type=event_type[:60],
            resource_id=resource_id,
            status=status,
            sent_at=sent_at,
            payload=payload,
        )
        try:
            event.full_clean(validate_unique=False)
        except ValidationError as exc:
            fields = ", ".join(sorted(exc.message_dict))
            raise WebhookEventInvalid(f"The event cannot be stored: check {fields}.") from None
        try:
            with transaction.atomic():
                event.save()
        except IntegrityError:  # the same event delivered twice at the same instant
            return WebhookEvent.objects.get(event_id=event_id), False
        event.outcome = _apply_event(event, payload)
        event.save(update_fields=["outcome"])
    return event, True


def _event_prolific_study(resource_id: str, *, prolific_pid: str = "") -> ProlificStudy | None:
    """The Prolific settings of a submission id: from its mirror row, else from the participant
    who arrived with it as SESSION_ID (who must have ``prolific_pid``, when one is given)."""
    sub = Submission.objects.select_related("prolific_study").filter(submission_id=resource_id).first()
    if sub is not None:
        return sub.prolific_study
    participant = Participant.objects.filter(prolific_session_id=resource_id).first()
    if participant is None or (prolific_pid and participant.prolific_pid != prolific_pid):
        return None
    return ProlificStudy.objects.filter(study_id=participant.study_id).first()


def _apply_event(event: WebhookEvent, payload: dict[str, Any]) -> str:
    """Apply a stored event; returns its outcome (``ignored``, ``unknown_status``, ``unmatched``,
    or one of :func:`~.submissions.submission_status_apply`'s, ``created`` counted as ``applied``)."""
    if event.event_type == "study.status.change" and event.resource_id:
        return study_status_event_apply(
            prolific_id=event.resource_id, raw_status=payload.get("status"), observed_at=event.sent_at
        )
    if event.event_type != "submission.status.change" or not event.resource_id:
        return "ignored"
    if event.status not in STATUS_RANK:
        if event.status not in TRANSIENT_STATUSES:
            ps = _event_prolific_study(event.resource_id)
            if ps is not None:
                unknown_statuses_record(
                    prolific_study_id=ps.pk, statuses=[event.status], seen_at=event.sent_at,
                    source="webhook",
                )
            else:
                logger.warning(
                    "Prolific webhook: unknown submission status %r for a submission of no "
                    "study here; ignored.", event.status,
                )
        return "unknown_status"
    pid = str(payload.get("participant_id") or "")[:64]
    ps = _event_prolific_study(event.resource_id, prolific_pid=pid)
    if ps is None:
        return "unmatched"
    _, outcome = submission_status_apply(
        prolific_study=ps,
        submission_id=event.resource_id,
        prolific_pid=pid,
        status=event.status,
        observed_at=event.sent_at,
    )
    return "applied" if outcome in ("created", "applied") else outcome

