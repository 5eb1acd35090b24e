"""Writes of submission statuses: apply one status, pull them all (sync), verify an entry.

Statuses observed on Prolific never move a submission backwards
(:data:`~spotlight_study.prolific.statuses.STATUS_RANK`), and a returned, timed-out or rejected
submission frees its participant's place in the cell through
:func:`spotlight_study.participation.services.participant_prolific_status_set`. The webhook
(:mod:`.webhook`) applies its events through :func:`submission_status_apply` too.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone as dt_timezone

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from spotlight_study.participation.models import Participant
from spotlight_study.participation.services import participant_prolific_status_set
from spotlight_study.studies.models import Study

from .. import selectors
from ..client import ProlificClient
from ..errors import ProlificAPIError
from ..models import ProlificStudy, Submission
from ..statuses import STATUS_RANK, TRANSIENT_STATUSES, status_display_name, status_normalize
from .study import linked_prolific_study, client_or_default

logger = logging.getLogger(__name__)

# How many unknown status names a study remembers (the most recently seen ones).
UNKNOWN_STATUSES_KEPT = 20


def _dt(value: str | None) -> datetime | None:
    """An ISO 8601 time from Prolific as an aware datetime (UTC if it has no offset), or ``None``."""
    if not value:
        return None
    parsed = parse_datetime(str(value))
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, dt_timezone.utc)
    return parsed


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


def _ranked_outcome(*, current: str, current_at: datetime, new: str, observed_at: datetime) -> str:
    """Whether status ``new``, seen at ``observed_at``, replaces ``current`` (seen at ``current_at``).

    Returns ``unchanged`` (the same status), ``applied`` (a higher rank, or both final and
    ``new`` seen later) or ``stale`` (lower, or final and older). ``new`` must be in
    :data:`~spotlight_study.prolific.statuses.STATUS_RANK`; an unknown ``current`` ranks lowest.
    """
    if new == current:
        return "unchanged"
    new_rank, old_rank = STATUS_RANK[new], STATUS_RANK.get(current, -1)
    final = STATUS_RANK["APPROVED"]
    if new_rank > old_rank or (new_rank == old_rank == final and observed_at > current_at):
        return "applied"
    return "stale"


def _fill_missing(
    sub: Submission,
    *,
    study: Study,
    prolific_pid: str,
    started_at: datetime | None,
    completed_at: datetime | None,
    study_code: str | None,
) -> None:
    """Fill the fields of ``sub`` that are still empty, and match it to its participant in ``study``."""
    if prolific_pid and not sub.prolific_pid:
        sub.prolific_pid = prolific_pid
    sub.started_at = sub.started_at or started_at
    sub.completed_at = sub.completed_at or completed_at
    if study_code and not sub.study_code:
        sub.study_code = study_code[:40]
    if sub.participant_id is None:
        sub.participant = _find_participant(
            study, submission_id=sub.submission_id, prolific_pid=sub.prolific_pid
        )


def _free_place_if_ended(sub: Submission, *, outcome: str, observed_at: datetime) -> None:
    """End the participant of a submission that just became returned, timed out or rejected.

    Not when the same PID has another running or approved submission of the study (then the
    participant still holds the place).
    """
    ended = selectors.FREEING_STATUSES.get(sub.status)
    if (
        ended is not None
        and outcome in ("created", "applied")
        and sub.participant_id is not None
        and not selectors.other_live_submission_exists(sub)
    ):
        # replace_ended: a participant already ended by an older Prolific status follows the
        # newer one, so participant and submission never disagree (one truth).
        participant_prolific_status_set(
            participant_id=sub.participant_id, status=ended, now=observed_at, replace_ended=True
        )


def _locked_row_with_status(
    prolific_study: ProlificStudy, submission_id: str, *, prolific_pid: str, status: str, observed_at: datetime
) -> tuple[Submission, str]:
    """The submission's row, locked (or a new, unsaved one), with ``status`` applied if it wins.

    Returns the row and the outcome (``created`` or one of :func:`_ranked_outcome`'s). Must run
    inside a transaction; the caller saves the row.
    """
    sub = Submission.objects.select_for_update().filter(submission_id=submission_id).first()
    if sub is None:
        sub = Submission(
            prolific_study=prolific_study,
            submission_id=submission_id,
            prolific_pid=prolific_pid,
            status=status,
            status_at=observed_at,
        )
        return sub, "created"
    outcome = _ranked_outcome(current=sub.status, current_at=sub.status_at, new=status, observed_at=observed_at)
    if outcome == "applied":
        sub.status, sub.status_at = status, observed_at
    return sub, outcome


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

    A status replaces the stored one if its rank
    (:data:`~spotlight_study.prolific.statuses.STATUS_RANK`) is higher, or if both are final and
    it was observed later. A returned, timed-out or rejected submission ends its participant
    (freeing the place in the cell) unless the same PID has another running or approved
    submission.

    Returns
    -------
    (Submission, str)
        The row and the outcome: ``created``, ``applied``, ``unchanged`` or ``stale`` (an older or
        lower status, ignored).

    ``status`` may be spelled in any case, with spaces, hyphens or underscores
    (:func:`~spotlight_study.prolific.statuses.status_normalize`); the canonical spelling is
    stored.

    Raises
    ------
    ValueError
        For a status that is not in ``STATUS_RANK`` (callers skip those, e.g. Prolific's
        transient ``PROCESSING``, and record unknown ones with :func:`unknown_statuses_record`).
    """
    canonical = status_normalize(status)
    if canonical not in STATUS_RANK:
        raise ValueError(f"Unknown submission status {status_display_name(status)!r}.")
    with transaction.atomic():
        sub, outcome = _locked_row_with_status(
            prolific_study, submission_id, prolific_pid=prolific_pid, status=canonical, observed_at=observed_at
        )
        _fill_missing(
            sub,
            study=prolific_study.study,
            prolific_pid=prolific_pid,
            started_at=started_at,
            completed_at=completed_at,
            study_code=study_code,
        )
        sub.full_clean(validate_unique=False)
        sub.save()
        _free_place_if_ended(sub, outcome=outcome, observed_at=observed_at)
    return sub, outcome


def unknown_statuses_record(
    *, prolific_study_id: int, statuses: list[str], seen_at: datetime, source: str
) -> None:
    """Remember submission statuses that this platform does not know, and log them by name.

    ``statuses`` are the names as received (shown with
    :func:`~spotlight_study.prolific.statuses.status_display_name`); they are stored in
    ``ProlificStudy.unknown_statuses`` as ``{name: ISO time last seen}`` (at most
    :data:`UNKNOWN_STATUSES_KEPT` names) for the review page, and logged at WARNING with
    ``source`` (``sync`` or ``webhook``) and the study's slug. No participant or submission id
    is logged.
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
        ps.unknown_statuses = dict(
            sorted(seen.items(), key=lambda kv: kv[1], reverse=True)[:UNKNOWN_STATUSES_KEPT]
        )
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


def _ended_participant_ids(study: Study) -> set[int]:
    """Ids of the study's participants whose Prolific submission ended (returned, timed out, ...)."""
    return set(
        Participant.objects.filter(study=study, status__in=selectors.FREEING_STATUSES.values())
        .values_list("pk", flat=True)
    )


def submissions_sync(
    *, prolific_study_id: int, client: ProlificClient | None = None, now: datetime | None = None
) -> SyncReport:
    """Pull every submission of the study from Prolific and apply its status.

    Idempotent: a rerun changes nothing new. Raises :class:`~spotlight_study.prolific.errors.NotLinked`
    without a Prolific id, :class:`~spotlight_study.prolific.errors.ProlificError` if Prolific
    cannot be read (nothing is changed then).
    """
    ps = linked_prolific_study(prolific_study_id)
    # Prolific's statuses as of the moment we ask: a webhook event Prolific sent after it is
    # newer by Prolific's own time and must win, even if the sync is applied after the event.
    now = now or timezone.now()
    with client_or_default(client, study_id=ps.study_id) as api:
        records = api.study_submissions(ps.prolific_id)
    report = SyncReport(fetched=len(records))
    ended_before = _ended_participant_ids(ps.study)
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
    report.freed = len(_ended_participant_ids(ps.study) - ended_before)
    ProlificStudy.objects.filter(pk=ps.pk).update(last_synced_at=now)
    if report.unknown:
        unknown_statuses_record(
            prolific_study_id=ps.pk, statuses=list(report.unknown), seen_at=now, source="sync"
        )
    return report


def submission_entry_verify(*, participant_id: int, client: ProlificClient | None = None) -> bool | None:
    """Check with Prolific that a participant's SESSION_ID is a submission of their PID and study.

    ``GET /submissions/{SESSION_ID}/`` must report the same participant and ``STUDY_ID`` (and,
    when the study is linked, its Prolific id). A submission that is still ``RESERVED`` or
    ``ACTIVE`` is normal in the first moments and passes. Returns ``True`` (matches),
    ``False`` (does not match: the entry was not made through Prolific) or ``None`` (Prolific
    does not know the submission yet; try again later). The result is stored on the
    submission's mirror row. Other errors of Prolific are raised
    (:class:`~spotlight_study.prolific.errors.ProlificError`).
    """
    p = Participant.objects.select_related("study").get(pk=participant_id)
    ps = ProlificStudy.objects.filter(study=p.study).first()
    try:
        with client_or_default(client, study_id=p.study_id) as api:
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
