"""Writes of the Prolific app: the study on Prolific, submission statuses, review and bonuses.

Network calls to Prolific go through :class:`~.client.ProlificClient` and are made outside
database transactions; each service then records the outcome in one transaction. Statuses
observed on Prolific never move a submission backwards (:data:`~.models.STATUS_RANK`), and a
returned, timed-out or rejected submission frees its participant's place in the cell through
:func:`spotlight_study.participation.services.participant_prolific_status_set`.

Bonus payments are the one call that must never run twice: :func:`bonus_payment_pay` commits
``pay_sent_at`` before the pay request goes out and never retries it.
"""
from __future__ import annotations

import contextlib
import csv
import io
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone as dt_timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Iterator

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.participation.services import participant_prolific_status_set
from spotlight_study.studies.models import Study

from . import selectors, webhooks
from .client import (
    STUDY_ACTIONS,
    ProlificAPIError,
    ProlificClient,
    ProlificError,
    ProlificValidationError,
    validate_rejection,
)
from .models import BonusPayment, ProlificStudy, Submission, WebhookEvent
from .statuses import STATUS_RANK, TRANSIENT_STATUSES, status_display_name, status_normalize

logger = logging.getLogger(__name__)

PROLIFIC_ID_RE = re.compile(r"^[0-9a-f]{24}$")
PSEUDONYM_RE = re.compile(r"^p_[0-9a-f]{16}$")
RETURN_REASON = (
    "You did not pass the instruction check of this study, so we cannot use your answers. "
    "Please return your submission."
)


class ProlificServiceError(Exception):
    """An action on the Prolific side that cannot be done now; ``str()`` says why."""


class NotLinked(ProlificServiceError):
    """The study has no study on Prolific yet (create it or link it first)."""


class AlreadyCreated(ProlificServiceError):
    """The study was already created on Prolific (a second draft would duplicate it)."""


class StudyNotLive(ProlificServiceError):
    """Publishing on Prolific while the study here does not accept participants."""


class WebhookEventInvalid(ProlificServiceError):
    """A verified webhook event that cannot be stored (e.g. no ``event_type``); ``str()`` says why."""


class BonusCSVError(ProlificServiceError):
    """A bonus CSV with bad lines; ``errors`` lists ``(line number, message)`` (header is line 1)."""

    def __init__(self, errors: list[tuple[int, str]]):
        self.errors = errors
        super().__init__("; ".join(f"line {n}: {msg}" for n, msg in errors))


class BonusAlreadySent(ProlificServiceError):
    """The pay request of this bonus payment was already sent; it is never sent twice."""


class BonusPayFailed(ProlificServiceError):
    """The pay request failed. It may or may not have been paid: check on Prolific."""


@contextlib.contextmanager
def _api(client: ProlificClient | None) -> Iterator[ProlificClient]:
    """The given client, or one from settings that is closed afterwards."""
    if client is not None:
        yield client
        return
    own = ProlificClient.from_settings()
    try:
        yield own
    finally:
        own.close()


def _dt(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = parse_datetime(str(value))
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, dt_timezone.utc)
    return parsed


# --- the study on Prolific ---------------------------------------------------------------


def prolific_study_configure(
    *,
    study: Study,
    description: str,
    reward_minor_units: int,
    total_available_places: int = 0,
    device_compatibility: list[str] | None = None,
    filters: list[dict] | None = None,
    participant_group_id: str = "",
    completed_action: str = ProlificStudy.CompletedAction.MANUALLY_REVIEW,
    failed_check_review: str = ProlificStudy.FailedCheckReview.REQUEST_RETURN,
    rejection_category: str = "",
    rejection_message: str = "",
) -> ProlificStudy:
    """Create or update the study's Prolific settings (nothing is sent to Prolific).

    Parameters
    ----------
    reward_minor_units : int
        Reward per participant in minor currency units (pence, cents).
    total_available_places : int
        0 means the study's ``target_sample_size``.
    filters : list of dict
        Prolific filters (``{"filter_id": ..., "selected_values": [...]}``).
    participant_group_id : str
        A participant group on Prolific; see :func:`selectors.completion_codes`.

    Raises ``django.core.exceptions.ValidationError`` naming the bad field.
    """
    with transaction.atomic():
        ps = ProlificStudy.objects.select_for_update().filter(study=study).first() or ProlificStudy(
            study=study
        )
        ps.description = description
        ps.reward_minor_units = reward_minor_units
        ps.total_available_places = total_available_places
        ps.device_compatibility = list(device_compatibility or ["desktop"])
        ps.filters = list(filters or [])
        ps.participant_group_id = participant_group_id
        ps.completed_action = completed_action
        ps.failed_check_review = failed_check_review
        ps.rejection_category = rejection_category
        ps.rejection_message = rejection_message
        ps.full_clean()
        ps.save()
    return ps


def prolific_study_link(*, study: Study, prolific_id: str) -> ProlificStudy:
    """Link the study to a study that already exists on Prolific (e.g. made in Prolific's app).

    Raises :class:`AlreadyCreated` if it is linked to another Prolific study, and
    ``ValidationError`` for an id that is not 24 hex characters or is linked elsewhere.
    """
    if not PROLIFIC_ID_RE.match(prolific_id or ""):
        raise ValidationError({"prolific_id": "A Prolific study id is 24 lowercase hex characters."})
    with transaction.atomic():
        ps = ProlificStudy.objects.select_for_update().filter(study=study).first() or ProlificStudy(
            study=study
        )
        if ps.prolific_id and ps.prolific_id != prolific_id:
            raise AlreadyCreated(
                f"This study is already linked to Prolific study {ps.prolific_id}."
            )
        ps.prolific_id = prolific_id
        ps.full_clean()
        ps.save()
    return ps


def prolific_study_create(
    *, prolific_study_id: int, base_url: str | None = None, client: ProlificClient | None = None
) -> ProlificStudy:
    """Create the draft study on Prolific (``POST /studies/``) and record its id.

    ``base_url`` is this server's public origin (default ``settings.PROLIFIC_STUDY_BASE_URL``).
    The request is not retried: if it fails without an answer, check Prolific's app for a draft
    before trying again (then link it with :func:`prolific_study_link`).

    Raises
    ------
    AlreadyCreated
        If the study already has a Prolific id.
    ProlificValidationError
        If the draft is invalid (e.g. no description, no reward, no base URL).
    ProlificError
        If Prolific refuses or cannot be reached.
    """
    ps = ProlificStudy.objects.select_related("study").get(pk=prolific_study_id)
    if ps.prolific_id:
        raise AlreadyCreated(f"Already created on Prolific as {ps.prolific_id}.")
    base = base_url or settings.PROLIFIC_STUDY_BASE_URL
    if not base:
        raise ProlificValidationError(
            "Set PROLIFIC_STUDY_BASE_URL (or pass the base URL): the public https address of this server."
        )
    draft = selectors.study_draft(ps, base_url=base)
    with _api(client) as api:
        created = api.study_create(draft)
    with transaction.atomic():
        ps = ProlificStudy.objects.select_for_update().get(pk=prolific_study_id)
        ps.prolific_id = str(created.get("id") or "")
        ps.prolific_status = str(created.get("status") or "UNPUBLISHED")
        ps.external_study_url = draft.external_study_url
        ps.save(update_fields=["prolific_id", "prolific_status", "external_study_url", "updated_at"])
    return ps


def prolific_study_transition(
    *, prolific_study_id: int, action: str, client: ProlificClient | None = None
) -> ProlificStudy:
    """Publish, pause, start or stop the study on Prolific (``POST /studies/{id}/transition/``).

    Raises
    ------
    NotLinked
        If the study has no Prolific id.
    StudyNotLive
        For ``PUBLISH`` or ``START`` while the study here is not live (participants would be
        turned away).
    ProlificError
        If Prolific refuses or cannot be reached.
    """
    if action not in STUDY_ACTIONS:
        raise ValueError(f"action must be one of {', '.join(STUDY_ACTIONS)}.")
    ps = ProlificStudy.objects.select_related("study").get(pk=prolific_study_id)
    if not ps.prolific_id:
        raise NotLinked("Create the study on Prolific (or link it) first.")
    if action in ("PUBLISH", "START") and ps.study.status != Study.Status.LIVE:
        raise StudyNotLive(
            f"The study is {ps.study.get_status_display().lower()} here: set it live before "
            "publishing it on Prolific, or arriving participants are turned away."
        )
    with _api(client) as api:
        answer = api.study_transition(ps.prolific_id, action) or {}
    status = answer.get("status") if isinstance(answer, dict) else None
    if status:
        ProlificStudy.objects.filter(pk=ps.pk).update(prolific_status=str(status), updated_at=timezone.now())
        ps.prolific_status = str(status)
    return ps


# --- submission statuses -----------------------------------------------------------------


def _find_participant(study: Study, *, submission_id: str, prolific_pid: str) -> Participant | None:
    """The participant who arrived with this submission (its SESSION_ID), else with its PID."""
    p = Participant.objects.filter(study=study, prolific_session_id=submission_id).first()
    if p is not None and prolific_pid and p.prolific_pid != prolific_pid:
        # Named by study only: submission ids are SESSION_IDs, which stay out of the logs.
        logger.warning(
            "Study %s: a submission's PID on Prolific differs from the one it arrived with.", study.slug
        )
        return None
    if p is None and prolific_pid:
        p = Participant.objects.filter(study=study, prolific_pid=prolific_pid).first()
    return p


def submission_status_apply(
    *,
    prolific_study: ProlificStudy,
    submission_id: str,
    prolific_pid: str,
    status: str,
    observed_at: datetime,
    started_at: datetime | None = None,
    completed_at: datetime | None = None,
    study_code: str | None = None,
) -> tuple[Submission, str]:
    """Record a submission status seen on Prolific, never moving backwards.

    A status replaces the stored one if its rank (:data:`~.models.STATUS_RANK`) is higher, or
    if both are final and it was observed later. A returned, timed-out or rejected submission
    ends its participant (freeing the place in the cell) unless the same PID has another
    running or approved submission.

    Returns
    -------
    (Submission, str)
        The row and the outcome: ``created``, ``applied``, ``unchanged`` or ``stale`` (an older or
        lower status, ignored).

    ``status`` may be spelled in any case, with spaces, hyphens or underscores
    (:func:`~.statuses.status_normalize`); the canonical spelling is stored.

    Raises
    ------
    ValueError
        For a status that is not in :data:`~.statuses.STATUS_RANK` (callers skip those, e.g.
        Prolific's transient ``PROCESSING``, and record unknown ones with
        :func:`unknown_statuses_record`).
    """
    canonical = status_normalize(status)
    if canonical not in STATUS_RANK:
        raise ValueError(f"Unknown submission status {status_display_name(status)!r}.")
    status = canonical
    with transaction.atomic():
        sub = Submission.objects.select_for_update().filter(submission_id=submission_id).first()
        if sub is None:
            sub = Submission(
                prolific_study=prolific_study,
                submission_id=submission_id,
                prolific_pid=prolific_pid,
                status=status,
                status_at=observed_at,
            )
            outcome = "created"
        elif status == sub.status:
            outcome = "unchanged"
        else:
            new, old = STATUS_RANK[status], STATUS_RANK.get(sub.status, -1)
            final = STATUS_RANK["APPROVED"]
            if new > old or (new == old == final and observed_at > sub.status_at):
                sub.status, sub.status_at = status, observed_at
                outcome = "applied"
            else:
                outcome = "stale"
        if prolific_pid and not sub.prolific_pid:
            sub.prolific_pid = prolific_pid
        sub.started_at = sub.started_at or started_at
        sub.completed_at = sub.completed_at or completed_at
        if study_code and not sub.study_code:
            sub.study_code = study_code[:40]
        if sub.participant_id is None:
            sub.participant = _find_participant(
                prolific_study.study, submission_id=submission_id, prolific_pid=sub.prolific_pid
            )
        sub.full_clean(validate_unique=False)
        sub.save()
        ended = selectors.FREEING_STATUSES.get(sub.status)
        if (
            ended is not None
            and outcome in ("created", "applied")
            and sub.participant_id is not None
            and not selectors.other_live_submission_exists(sub)
        ):
            participant_prolific_status_set(
                participant_id=sub.participant_id, status=ended, now=observed_at
            )
    return sub, outcome


def unknown_statuses_record(
    *, prolific_study_id: int, statuses: list[str], seen_at: datetime, source: str
) -> None:
    """Remember submission statuses that this platform does not know, and log them by name.

    ``statuses`` are the names as received (shown with :func:`~.statuses.status_display_name`);
    they are stored in ``ProlificStudy.unknown_statuses`` as ``{name: ISO time last seen}``
    (at most 20 names) for the review page, and logged at WARNING with ``source`` (``sync`` or
    ``webhook``) and the study's slug. No participant or submission id is logged.
    """
    names = sorted({status_display_name(s) or "(empty)" for s in statuses})
    if not names:
        return
    with transaction.atomic():
        ps = ProlificStudy.objects.select_for_update().select_related("study").get(pk=prolific_study_id)
        seen = dict(ps.unknown_statuses or {})
        for name in names:
            seen[name] = seen_at.isoformat()
        # Keep the most recently seen names only, so a misbehaving sender cannot grow the row.
        ps.unknown_statuses = dict(sorted(seen.items(), key=lambda kv: kv[1], reverse=True)[:20])
        ps.save(update_fields=["unknown_statuses", "updated_at"])
    logger.warning(
        "Prolific %s for study %s: unknown submission status(es) %s left unchanged.",
        source,
        ps.study.slug,
        ", ".join(repr(n) for n in names),
    )


@dataclass
class SyncReport:
    """What one sync did: submissions ``fetched`` from Prolific, rows ``created``, statuses
    ``changed``, ``stale`` ones ignored, ``ignored`` submissions with a transient or unknown
    status (e.g. ``PROCESSING``), ``unknown`` the unknown statuses among those (``{name: n}``),
    participants ``freed`` (returned, timed out, rejected), submissions ``unmatched`` (nobody
    arrived here with them)."""

    fetched: int = 0
    created: int = 0
    changed: int = 0
    stale: int = 0
    ignored: int = 0
    freed: int = 0
    unmatched: int = 0
    unknown: dict[str, int] = field(default_factory=dict)


def submissions_sync(
    *, prolific_study_id: int, client: ProlificClient | None = None, now: datetime | None = None
) -> SyncReport:
    """Pull every submission of the study from Prolific and apply its status.

    Idempotent: a rerun changes nothing new. Raises :class:`NotLinked` without a Prolific id,
    :class:`~.client.ProlificError` if Prolific cannot be read (nothing is changed then).
    """
    ps = ProlificStudy.objects.select_related("study").get(pk=prolific_study_id)
    if not ps.prolific_id:
        raise NotLinked("Create the study on Prolific (or link it) first.")
    with _api(client) as api:
        records = api.study_submissions(ps.prolific_id)
    now = now or timezone.now()
    report = SyncReport(fetched=len(records))
    ended_before = set(
        Participant.objects.filter(study=ps.study, status__in=selectors.FREEING_STATUSES.values())
        .values_list("pk", flat=True)
    )
    for record in records:
        status = status_normalize(record.status)
        if status not in STATUS_RANK:
            report.ignored += 1
            if status not in TRANSIENT_STATUSES:
                name = status_display_name(record.status) or "(empty)"
                report.unknown[name] = report.unknown.get(name, 0) + 1
            continue
        sub, outcome = submission_status_apply(
            prolific_study=ps,
            submission_id=record.id[:64],
            prolific_pid=record.participant_id[:64],
            status=status,
            observed_at=now,
            started_at=_dt(record.started_at),
            completed_at=_dt(record.completed_at),
            study_code=record.study_code,
        )
        report.created += outcome == "created"
        report.changed += outcome == "applied"
        report.stale += outcome == "stale"
        report.unmatched += sub.participant_id is None
    ended_after = set(
        Participant.objects.filter(study=ps.study, status__in=selectors.FREEING_STATUSES.values())
        .values_list("pk", flat=True)
    )
    report.freed = len(ended_after - ended_before)
    ProlificStudy.objects.filter(pk=ps.pk).update(last_synced_at=now)
    if report.unknown:
        unknown_statuses_record(
            prolific_study_id=ps.pk, statuses=list(report.unknown), seen_at=now, source="sync"
        )
    return report


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
    (:func:`~.webhooks.strip_unstorable`): PostgreSQL's ``jsonb`` and ``text`` cannot store
    them, and removing them on every database keeps SQLite and PostgreSQL alike.

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


def _event_prolific_study(resource_id: str) -> ProlificStudy | None:
    """The linked study of a submission id: from its mirror row, else from the participant who
    arrived with it as SESSION_ID."""
    sub = Submission.objects.select_related("prolific_study").filter(submission_id=resource_id).first()
    if sub is not None:
        return sub.prolific_study
    participant = Participant.objects.filter(prolific_session_id=resource_id).first()
    if participant is None:
        return None
    return ProlificStudy.objects.filter(study_id=participant.study_id).first()


def _apply_event(event: WebhookEvent, payload: dict[str, Any]) -> str:
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
    sub = Submission.objects.select_related("prolific_study").filter(submission_id=event.resource_id).first()
    if sub is not None:
        ps = sub.prolific_study
    else:
        participant = Participant.objects.filter(prolific_session_id=event.resource_id).first()
        if participant is None or (pid and participant.prolific_pid != pid):
            return "unmatched"
        ps = ProlificStudy.objects.filter(study_id=participant.study_id).first()
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


def submission_entry_verify(*, participant_id: int, client: ProlificClient | None = None) -> bool | None:
    """Check with Prolific that a participant's SESSION_ID is a submission of their PID and study.

    ``GET /submissions/{SESSION_ID}/`` must report the same participant and ``STUDY_ID`` (and,
    when the study is linked, its Prolific id). A submission that is still ``RESERVED`` or
    ``ACTIVE`` is normal in the first moments and passes. Returns ``True`` (matches),
    ``False`` (does not match: the entry was not made through Prolific) or ``None`` (Prolific
    does not know the submission yet; try again later). The result is stored on the
    submission's mirror row.
    """
    p = Participant.objects.select_related("study").get(pk=participant_id)
    ps = ProlificStudy.objects.filter(study=p.study).first()
    try:
        with _api(client) as api:
            record = api.submission_get(p.prolific_session_id)
    except ProlificAPIError as exc:
        if exc.status_code == 404:
            return None
        raise
    expected_study = {p.prolific_study_id} | ({ps.prolific_id} if ps and ps.prolific_id else set())
    ok = record.participant_id == p.prolific_pid and (
        record.study_id in expected_study if record.study_id else True
    )
    status = status_normalize(record.status)
    if ps is not None and status in STATUS_RANK and record.id == p.prolific_session_id:
        sub, _ = submission_status_apply(
            prolific_study=ps,
            submission_id=record.id,
            prolific_pid=record.participant_id,
            status=status,
            observed_at=timezone.now(),
        )
        Submission.objects.filter(pk=sub.pk).update(entry_verified=ok)
    return ok


# --- review ------------------------------------------------------------------------------


@dataclass
class ReviewReport:
    """What a review action did: ``selected`` submissions, ``done`` (approved, returned or
    rejected), ``api_calls`` made, ``action``, ``dry_run``, and ``errors`` (messages)."""

    action: str
    selected: int = 0
    done: int = 0
    api_calls: int = 0
    dry_run: bool = False
    errors: list[str] = field(default_factory=list)


def _linked(prolific_study_id: int) -> ProlificStudy:
    ps = ProlificStudy.objects.select_related("study").get(pk=prolific_study_id)
    if not ps.prolific_id:
        raise NotLinked("Create the study on Prolific (or link it) first.")
    return ps


def submissions_approve_completed(
    *, prolific_study_id: int, dry_run: bool = False, client: ProlificClient | None = None
) -> ReviewReport:
    """Approve in bulk the submissions of participants who completed with the check passed.

    See :func:`selectors.approvable_submissions`. Sent in chunks of at most 1,000 ids
    (``POST /submissions/bulk-approve/``); each approved submission is marked reviewed (the
    next sync or webhook records ``APPROVED``). With ``dry_run`` nothing is sent.
    """
    ps = _linked(prolific_study_id)
    ids = list(selectors.approvable_submissions(ps).values_list("submission_id", flat=True))
    report = ReviewReport(action="approve", selected=len(ids), dry_run=dry_run)
    if dry_run or not ids:
        return report
    with _api(client) as api:
        report.api_calls = api.submissions_bulk_approve(ids)
    report.done = Submission.objects.filter(submission_id__in=ids, review_action="").update(
        review_action=Submission.ReviewAction.APPROVED, reviewed_at=timezone.now()
    )
    return report


def submissions_review_failed_checks(
    *, prolific_study_id: int, dry_run: bool = False, client: ProlificClient | None = None
) -> ReviewReport:
    """Act on submissions whose participant failed the instruction check.

    Following the study's ``failed_check_review``: ask each participant to return the
    submission (default, Prolific's policy for failed checks), reject it with the stored
    category and message (validated before anything is sent), or leave it for manual review.
    Each submission is marked as soon as its request succeeded; on an error the remaining ones
    are left and the error is reported.
    """
    ps = _linked(prolific_study_id)
    subs = list(selectors.failed_check_submissions(ps))
    mode = ps.failed_check_review
    report = ReviewReport(action=mode, selected=len(subs), dry_run=dry_run)
    if mode == ProlificStudy.FailedCheckReview.MANUAL or dry_run or not subs:
        return report
    if mode == ProlificStudy.FailedCheckReview.REJECT:
        validate_rejection(rejection_category=ps.rejection_category, message=ps.rejection_message)
    with _api(client) as api:
        for sub in subs:
            try:
                if mode == ProlificStudy.FailedCheckReview.REJECT:
                    api.submission_reject(
                        sub.submission_id,
                        rejection_category=ps.rejection_category,
                        message=ps.rejection_message,
                    )
                    action = Submission.ReviewAction.REJECTED
                else:
                    api.submission_request_return(sub.submission_id, reasons=[RETURN_REASON])
                    action = Submission.ReviewAction.RETURN_REQUESTED
            except ProlificError as exc:
                report.errors.append(f"{sub.submission_id}: {exc}")
                break
            report.api_calls += 1
            report.done += Submission.objects.filter(pk=sub.pk, review_action="").update(
                review_action=action, reviewed_at=timezone.now()
            )
    return report


# --- bonuses -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BonusItem:
    """One bonus: ``recipient`` (submission id, else PID) as sent to Prolific, ``participant``
    (pseudonym, for display) and ``amount_minor`` (minor units)."""

    recipient: str
    participant: str
    amount_minor: int


def _amount_minor(text: str) -> int:
    """``"4.25"`` -> 425. Raises ``ValueError`` with a message for the researcher."""
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        raise ValueError(f"{text!r} is not an amount (write major units, e.g. 1.50).") from None
    if not value.is_finite() or value <= 0:
        raise ValueError("The amount must be positive.")
    if value != value.quantize(Decimal("0.01")):
        raise ValueError("The amount has more than two decimals.")
    minor = int(value * 100)
    cap = settings.PROLIFIC_BONUS_MAX_MINOR_UNITS
    if minor > cap:
        raise ValueError(
            f"{value} is above the per-participant limit of {Decimal(cap) / 100:.2f} "
            "(PROLIFIC_BONUS_MAX_MINOR_UNITS); amounts are in major units."
        )
    return minor


def bonus_items_parse(*, prolific_study: ProlificStudy, text: str) -> list[BonusItem]:
    """Read a bonus CSV: ``id,amount`` per line, amounts in major units (``1.50``).

    ``id`` is a participant pseudonym from the export (``p_...``), a Prolific participant ID or
    a submission id of this study. An optional header line is skipped. Every line is checked
    first.

    Raises
    ------
    BonusCSVError
        Listing every bad line (unknown participant, bad or too large amount, a participant
        twice, no lines).
    """
    study = prolific_study.study
    by_pseudonym = selectors.participant_by_pseudonym(study=study)
    subs = {s.submission_id: s for s in Submission.objects.filter(prolific_study=prolific_study)}
    subs_by_pid: dict[str, Submission] = {}
    for s in subs.values():
        if s.status in selectors.LIVE_STATUSES or s.prolific_pid not in subs_by_pid:
            subs_by_pid[s.prolific_pid] = s
    participants = {p.prolific_pid: p for p in by_pseudonym.values()}
    errors: list[tuple[int, str]] = []
    items: list[BonusItem] = []
    seen: set[str] = set()
    rows = list(csv.reader(io.StringIO(text.strip())))
    for n, row in enumerate(rows, start=1):
        cells = [c.strip() for c in row]
        if not any(cells):
            continue
        if n == 1 and len(cells) >= 2 and cells[1].lower() in ("amount", "bonus"):
            continue
        if len(cells) != 2:
            errors.append((n, "expected two columns: id,amount"))
            continue
        ident, amount_text = cells
        pid = None
        if PSEUDONYM_RE.match(ident):
            p = by_pseudonym.get(ident)
            pid = p.prolific_pid if p else None
        elif PROLIFIC_ID_RE.match(ident):
            if ident in subs:
                pid = subs[ident].prolific_pid
            elif ident in participants:
                pid = ident
        if pid is None:
            errors.append((n, f"{ident!r} is not a participant of this study"))
            continue
        try:
            minor = _amount_minor(amount_text)
        except ValueError as exc:
            errors.append((n, str(exc)))
            continue
        if pid in seen:
            errors.append((n, "this participant already has a bonus in the file"))
            continue
        seen.add(pid)
        sub = subs_by_pid.get(pid)
        items.append(
            BonusItem(
                recipient=sub.submission_id if sub else pid,
                participant=participant_pseudonym(study=study, prolific_pid=pid),
                amount_minor=minor,
            )
        )
    if not items and not errors:
        errors.append((1, "no bonuses in the file"))
    if errors:
        raise BonusCSVError(errors)
    return items


def bonus_payment_draft(*, prolific_study_id: int, csv_text: str, created_by=None) -> BonusPayment:
    """The dry run: check a bonus CSV and store it as a draft with its total. Nothing is sent.

    Raises :class:`BonusCSVError` (nothing stored) and :class:`NotLinked`.
    """
    ps = _linked(prolific_study_id)
    items = bonus_items_parse(prolific_study=ps, text=csv_text)
    payment = BonusPayment(
        prolific_study=ps,
        items=[
            {"recipient": i.recipient, "participant": i.participant, "amount_minor": i.amount_minor}
            for i in items
        ],
        csv_bonuses="\n".join(f"{i.recipient},{Decimal(i.amount_minor) / 100:.2f}" for i in items),
        total_minor_units=sum(i.amount_minor for i in items),
        created_by=created_by,
    )
    with transaction.atomic():
        payment.full_clean()
        payment.save()
    return payment


def bonus_payment_pay(*, bonus_payment_id: int, client: ProlificClient | None = None) -> BonusPayment:
    """Set up a drafted bonus payment on Prolific and pay it, exactly once.

    1. Set-up (``POST /submissions/bonus-payments/``), if not done yet; nothing is paid.
    2. ``pay_sent_at`` is committed.
    3. The pay request (``POST /bulk-bonus-payments/{id}/pay/``) is sent once, never retried.

    Must not be called inside an open transaction (step 2 has to be committed before step 3).

    Raises
    ------
    BonusAlreadySent
        If the pay request of this payment was already sent (whatever its outcome).
    BonusPayFailed
        If the pay request failed; the payment is marked ``pay_failed`` and must be checked on
        Prolific by hand. It is never sent again.
    ProlificError
        If set-up failed (nothing was paid; paying again is safe).
    """
    with _api(client) as api:
        with transaction.atomic():
            payment = BonusPayment.objects.select_for_update().select_related("prolific_study").get(
                pk=bonus_payment_id
            )
            if payment.pay_sent_at is not None:
                raise BonusAlreadySent(
                    f"Bonus payment {payment.pk} was already sent to Prolific "
                    f"({payment.get_status_display().lower()}); it is never sent twice."
                )
            prolific_id = payment.prolific_study.prolific_id
            if not prolific_id:
                raise NotLinked("Create the study on Prolific (or link it) first.")
        if payment.status == BonusPayment.Status.DRAFT:
            setup = api.bonus_setup(prolific_id, payment.csv_bonuses)
            with transaction.atomic():
                BonusPayment.objects.filter(pk=payment.pk, pay_sent_at__isnull=True).update(
                    status=BonusPayment.Status.SET_UP,
                    bulk_id=setup.id,
                    setup_response={k: str(v) for k, v in setup.raw.items()},
                    updated_at=timezone.now(),
                )
        with transaction.atomic():
            payment = BonusPayment.objects.select_for_update().get(pk=bonus_payment_id)
            if payment.pay_sent_at is not None or payment.status != BonusPayment.Status.SET_UP:
                raise BonusAlreadySent(f"Bonus payment {payment.pk} was already sent to Prolific.")
            payment.pay_sent_at = timezone.now()
            payment.status = BonusPayment.Status.PAY_SENT
            payment.save(update_fields=["pay_sent_at", "status", "updated_at"])
        try:
            api.bonus_pay(payment.bulk_id)
        except ProlificError as exc:
            BonusPayment.objects.filter(pk=payment.pk).update(
                status=BonusPayment.Status.PAY_FAILED, error=str(exc)[:2000], updated_at=timezone.now()
            )
            raise BonusPayFailed(
                f"The pay request for bonus payment {payment.pk} failed ({exc}). It may or may not "
                "have been paid: check the study's bonuses on Prolific. It will not be sent again."
            ) from None
        BonusPayment.objects.filter(pk=payment.pk).update(
            status=BonusPayment.Status.PAID, paid_at=timezone.now(), updated_at=timezone.now()
        )
        payment.refresh_from_db()
        return payment
