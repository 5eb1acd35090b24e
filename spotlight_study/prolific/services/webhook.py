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
from django.db.models import Q

from spotlight_study.participation.models import Participant

from .. import webhooks
from ..errors import WebhookEventInvalid
from ..models import ProlificCredentials, ProlificStudy, Submission, WebhookEvent
from ..statuses import STATUS_RANK, TRANSIENT_STATUSES, status_display_name, status_normalize
from .study_events import study_status_event_apply
from .submissions import submission_status_apply, unknown_statuses_record

logger = logging.getLogger(__name__)


def webhook_scope(scope_study_id: int | None) -> Q:
    """The studies an event may change, as a filter of :class:`ProlificStudy`: only study
    ``scope_study_id`` for its own webhook URL (verified with its secret), else (the instance's
    URL, verified with ``PROLIFIC_WEBHOOK_SECRET``) every study without a webhook secret of its
    own. So an event signed with one study's secret never reaches another study."""
    if scope_study_id is not None:
        return Q(study_id=scope_study_id)
    own_secret = ProlificCredentials.objects.exclude(webhook_secret_encrypted="").values("study_id")
    return ~Q(study_id__in=own_secret)


def webhook_event_receive(
    *, event_id: str, event_type: str, payload: dict[str, Any], sent_at: datetime,
    scope_study_id: int | None = None,
) -> tuple[WebhookEvent, bool]:
    """Store a verified webhook event once and apply it, within its scope.

    ``scope_study_id`` is the study whose own URL and secret received the event (``None``: the
    instance's URL); the event changes only the studies of :func:`webhook_scope`, and its id is
    deduplicated within that scope.

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
    same = WebhookEvent.objects.filter(event_id=event_id, scope_study_id=scope_study_id)
    with transaction.atomic():
        existing = same.first()
        if existing is not None:
            return existing, False
        event = WebhookEvent(
            event_id=event_id,
            scope_study_id=scope_study_id,
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
            return same.get(), False
        event.outcome = _apply_event(event, payload, webhook_scope(scope_study_id))
        event.save(update_fields=["outcome"])
    return event, True


def _event_prolific_study(resource_id: str, scope: Q, *, prolific_pid: str = "") -> ProlificStudy | None:
    """The Prolific settings of a submission id, among the studies of ``scope``: from its mirror
    row, else from the participant who arrived with it as SESSION_ID (who must have
    ``prolific_pid``, when one is given)."""
    in_scope = ProlificStudy.objects.filter(scope)
    sub = (Submission.objects.select_related("prolific_study")
           .filter(submission_id=resource_id, prolific_study__in=in_scope).first())
    if sub is not None:
        return sub.prolific_study
    participant = (Participant.objects.filter(prolific_session_id=resource_id)
                   .filter(study_id__in=in_scope.values("study_id")).first())
    if participant is None or (prolific_pid and participant.prolific_pid != prolific_pid):
        return None
    return in_scope.filter(study_id=participant.study_id).first()


def _apply_event(event: WebhookEvent, payload: dict[str, Any], scope: Q) -> str:
    """Apply a stored event to the studies of ``scope`` only; returns its outcome (``ignored``,
    ``unknown_status``, ``unmatched``, or one of
    :func:`~.submissions.submission_status_apply`'s, ``created`` counted as ``applied``)."""
    if event.event_type == "study.status.change" and event.resource_id:
        return study_status_event_apply(
            prolific_id=event.resource_id, raw_status=payload.get("status"), observed_at=event.sent_at,
            scope=scope,
        )
    if event.event_type != "submission.status.change" or not event.resource_id:
        return "ignored"
    if event.status not in STATUS_RANK:
        if event.status not in TRANSIENT_STATUSES:
            ps = _event_prolific_study(event.resource_id, scope)
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
    ps = _event_prolific_study(event.resource_id, scope, prolific_pid=pid)
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

