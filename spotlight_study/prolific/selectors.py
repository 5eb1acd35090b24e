"""Reads of the Prolific app: the study payload, submission lists and review summaries.

Participants appear only as their export pseudonym (``p_`` + 16 hex digits); no page or API
response built from these reads shows a raw Prolific ID.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils.dateparse import parse_datetime

from spotlight_study.participation import flags as quality_flags
from spotlight_study.participation.models import Participant
from spotlight_study.participation.review_evidence import ParticipantEvidence, participants_review_evidence
from spotlight_study.compiled_sql import SENTINEL_INT, PreparedQuery
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.studies.models import Study

from .payloads import DEMOGRAPHIC_FIELDS, CompletionCode, StudyDraft
from .models import BonusPayment, Demographics, ProlificStudy, ReviewDecision, Submission
from .statuses import STATUS_RANK

# Prolific statuses that free a participant's place in their cell, and the participant's status
# they give. A screened-out participant leaves as one who returned (their submission row keeps
# SCREENED OUT): either way Prolific does not count the place, so it is freed at once.
FREEING_STATUSES = {
    "RETURNED": Participant.Status.RETURNED,
    "TIMED-OUT": Participant.Status.TIMED_OUT,
    "REJECTED": Participant.Status.REJECTED,
    "SCREENED OUT": Participant.Status.RETURNED,
}
# A submission still running or accepted: another submission of the same PID must not end them.
LIVE_STATUSES = ("RESERVED", "ACTIVE", "AWAITING REVIEW", "APPROVED")


def prolific_study_for(study: Study) -> ProlificStudy | None:
    """The study's Prolific link, or ``None``."""
    return ProlificStudy.objects.filter(study=study).first()


def linked_prolific_study_ids(study: Study) -> list[str]:
    """The Prolific study id the study is linked to, as a list (empty when not linked).

    Registered with ``participation.arrival`` so that arrivals must carry it as ``STUDY_ID``.
    """
    return [i for (i,) in _LINKED_IDS.fetch(study_id=study.pk) if i]


# Asked at every arrival: compiled once per process (spotlight_study.compiled_sql).
_LINKED_IDS = PreparedQuery(
    lambda study_id: ProlificStudy.objects.filter(study_id=study_id).values_list("prolific_id"),
    study_id=SENTINEL_INT,
)


def external_study_url(*, study: Study, base_url: str) -> str:
    """The study URL Prolific sends participants to, with its three placeholders.

    ``base_url`` is this server's public origin, e.g. ``https://study.example.org``.
    """
    entry = reverse("participation:entry", kwargs={"slug": study.slug})
    return (
        f"{base_url.rstrip('/')}{entry}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        f"&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"
    )


def completion_codes(prolific_study: ProlificStudy) -> tuple[CompletionCode, ...]:
    """The study's three completion codes with their Prolific actions.

    - completed: ``MANUALLY_REVIEW`` (default) or ``AUTOMATICALLY_APPROVE``;
    - failed instruction check (``FAILED_ATTENTION_CHECK``): ``REQUEST_RETURN`` when review asks
      for returns, otherwise ``MANUALLY_REVIEW`` (a rejection is the researcher's decision); when
      the study screens out (:attr:`~.models.ProlificStudy.screens_out`), the same code is
      Prolific's ``FIXED_SCREENOUT`` type with ``FIXED_SCREEN_OUT_PAYMENT``;
    - no consent: ``REQUEST_RETURN``.

    With a participant group, the completed and failed-check codes also add the participant to
    it (``ADD_TO_PARTICIPANT_GROUP``), so that the group's blocklist filter keeps anyone who saw
    the task out of later studies.
    """
    study = prolific_study.study
    group = prolific_study.participant_group_id
    add = ({"action": "ADD_TO_PARTICIPANT_GROUP", "participant_group": group},) if group else ()
    failed = (
        "REQUEST_RETURN"
        if prolific_study.failed_check_review == ProlificStudy.FailedCheckReview.REQUEST_RETURN
        else "MANUALLY_REVIEW"
    )
    return (
        CompletionCode(
            code=study.completion_code,
            code_type="COMPLETED",
            actions=({"action": prolific_study.completed_action},) + add,
        ),
        CompletionCode(
            code=study.failed_check_code,
            code_type="FIXED_SCREENOUT",
            actions=({"action": "FIXED_SCREEN_OUT_PAYMENT"},) + add,
        )
        if prolific_study.screens_out
        else CompletionCode(
            code=study.failed_check_code,
            code_type="FAILED_ATTENTION_CHECK",
            actions=({"action": failed},) + add,
        ),
        CompletionCode(
            code=study.no_consent_code,
            code_type="NO_CONSENT",
            actions=({"action": "REQUEST_RETURN"},),
        ),
    )


def study_filters(prolific_study: ProlificStudy) -> tuple[dict[str, Any], ...]:
    """The researcher's filters plus ``participant_group_blocklist`` for the group, if any."""
    filters = [dict(f) for f in prolific_study.filters or [] if isinstance(f, dict)]
    group = prolific_study.participant_group_id
    if group and not any(f.get("filter_id") == "participant_group_blocklist" for f in filters):
        filters.append({"filter_id": "participant_group_blocklist", "selected_values": [group]})
    return tuple(filters)


def study_draft(prolific_study: ProlificStudy, *, base_url: str) -> StudyDraft:
    """What ``POST /studies/`` would send for this study (reward in minor units, times in minutes).

    Places default to the study's ``target_sample_size`` when ``total_available_places`` is 0.
    """
    study = prolific_study.study
    return StudyDraft(
        name=study.title,
        internal_name=study.slug,
        description=prolific_study.description,
        external_study_url=external_study_url(study=study, base_url=base_url),
        estimated_completion_time=study.estimated_minutes,
        maximum_allowed_time=study.maximum_minutes,
        reward=prolific_study.reward_minor_units,
        total_available_places=prolific_study.total_available_places or study.target_sample_size,
        completion_codes=completion_codes(prolific_study),
        device_compatibility=tuple(prolific_study.device_compatibility or ("desktop",)),
        filters=study_filters(prolific_study),
    )


def submissions_of(prolific_study: ProlificStudy) -> QuerySet[Submission]:
    """The study's submissions with their participants, oldest first."""
    return Submission.objects.filter(prolific_study=prolific_study).select_related("participant")


def approvable_submissions(prolific_study: ProlificStudy) -> QuerySet[Submission]:
    """Submissions to approve: awaiting review, participant completed, instruction check not failed,
    not reviewed yet."""
    return submissions_of(prolific_study).filter(
        status="AWAITING REVIEW",
        review_action="",
        participant__status=Participant.Status.COMPLETED,
    ).exclude(participant__instruction_check_passed=False)


@dataclass(frozen=True)
class HeldSubmission:
    """A submission that bulk approval holds back for a researcher's look, with its evidence.

    ``submission`` (its ``participant`` loaded), ``pseudonym``, ``reasons`` (sentences for
    people, e.g. ``"flag: pasted"``, ``"final label of angler: ai_generated"``), the study's
    ``holding_flags`` the participant has, the final-label ``exclusions`` (``[(setting key,
    exclusion)]``), the full ``evidence`` (every flag and answer) and ``decision``: the active
    :class:`~.models.ReviewDecision` (sent, or with no known outcome), if any.
    """

    submission: Submission
    pseudonym: str
    reasons: tuple[str, ...]
    holding_flags: tuple[str, ...]
    exclusions: tuple[tuple[str, str], ...]
    evidence: ParticipantEvidence
    decision: ReviewDecision | None = None

    def evidence_record(self) -> dict[str, Any]:
        """The evidence as stored with a decision (JSON): pseudonym, flags, holding flags,
        exclusions, reasons and the answers (setting, position, text, flags)."""
        return {
            "pseudonym": self.pseudonym,
            "flags": list(self.evidence.flags),
            "holding_flags": list(self.holding_flags),
            "exclusions": [list(e) for e in self.exclusions],
            "reasons": list(self.reasons),
            "answers": [
                {"setting": a.setting, "position": a.position, "answer": a.answer, "flags": list(a.flags)}
                for a in self.evidence.answers
            ],
        }


@dataclass(frozen=True)
class ReviewQueue:
    """What review would do with the completed submissions awaiting review: ``to_approve``
    (submissions bulk approval sends) and ``held`` (:class:`HeldSubmission`, oldest first)."""

    to_approve: list[Submission]
    held: list[HeldSubmission]


def review_queue(prolific_study: ProlificStudy, *, submission_id: str | None = None) -> ReviewQueue:
    """Split :func:`approvable_submissions` into those to approve in bulk and those held.

    A submission is held when its participant has one of the study's ``holding_flags``
    (:mod:`spotlight_study.participation.flags`) on any answer, when a final label excludes one
    of their answers (any exclusion but ``none``: ``copy_pasted``, ``ai_generated``,
    ``duplicate``, ``failed_instruction_check``, ``other``), or when a decision on it is under
    way (sent, or with no known outcome). ``submission_id`` restricts it to that one submission.
    A few queries whatever the number of submissions.
    """
    study = prolific_study.study
    candidates = approvable_submissions(prolific_study)
    if submission_id is not None:
        candidates = candidates.filter(submission_id=submission_id)
    candidates = list(candidates)
    evidence = participants_review_evidence(
        study=study, participant_ids=[s.participant_id for s in candidates]
    )
    active = {
        d.submission_id: d
        for d in ReviewDecision.objects.filter(
            submission__in=[s.pk for s in candidates], outcome__in=ReviewDecision.ACTIVE_OUTCOMES
        )
    }
    holding = set(study.holding_flags or ())
    to_approve, held = [], []
    for sub in candidates:
        ev = evidence[sub.participant_id]
        flags = tuple(f for f in ev.flags if f in holding)
        decision = active.get(sub.pk)
        if not flags and not ev.exclusions and decision is None:
            to_approve.append(sub)
            continue
        reasons = [f"flag: {quality_flags.FLAG_LABELS.get(f, f)}" for f in flags]
        reasons += [f"final label of {setting}: {exclusion}" for setting, exclusion in ev.exclusions]
        if decision is not None:
            reasons.append(f"decision {decision.get_action_display().lower()}: {decision.get_outcome_display().lower()}")
        held.append(HeldSubmission(
            submission=sub,
            pseudonym=participant_pseudonym(study=study, prolific_pid=sub.participant.prolific_pid),
            reasons=tuple(reasons), holding_flags=flags, exclusions=ev.exclusions, evidence=ev,
            decision=decision,
        ))
    return ReviewQueue(to_approve=to_approve, held=held)


def review_decisions(prolific_study: ProlificStudy) -> list[ReviewDecision]:
    """Every decision recorded on the study's held submissions, latest first (the record)."""
    return list(
        ReviewDecision.objects.filter(submission__prolific_study=prolific_study)
        .select_related("submission", "decided_by")
        .order_by("-decided_at", "-pk")
    )


def failed_check_submissions(prolific_study: ProlificStudy) -> QuerySet[Submission]:
    """Submissions awaiting review whose participant failed the instruction check, not reviewed yet."""
    return submissions_of(prolific_study).filter(
        status="AWAITING REVIEW",
        review_action="",
        participant__instruction_check_passed=False,
    )


def other_live_submission_exists(submission: Submission) -> bool:
    """Whether the same PID has another running or approved submission in this study."""
    return (
        Submission.objects.filter(
            prolific_study_id=submission.prolific_study_id,
            prolific_pid=submission.prolific_pid,
            status__in=LIVE_STATUSES,
        )
        .exclude(pk=submission.pk)
        .exists()
    )


def submission_rows(prolific_study: ProlificStudy) -> list[dict[str, Any]]:
    """One row per submission for the review page and the API.

    Keys: ``submission`` (Prolific's submission id), ``participant`` (pseudonym or ``None``
    when no participant arrived with it), ``status`` (Prolific), ``participant_status`` (ours),
    ``cell``, ``instruction_check_passed``, ``review_action``, ``status_at``, ``entry_verified``.
    """
    study = prolific_study.study
    rows = []
    for s in submissions_of(prolific_study):
        p = s.participant
        rows.append(
            {
                "submission": s.submission_id,
                "participant": participant_pseudonym(study=study, prolific_pid=p.prolific_pid)
                if p
                else None,
                "status": s.status,
                "participant_status": p.status if p else None,
                "cell": p.cell_index if p else None,
                "instruction_check_passed": p.instruction_check_passed if p else None,
                "review_action": s.review_action,
                "status_at": s.status_at,
                "entry_verified": s.entry_verified,
            }
        )
    return rows


def review_summary(study: Study) -> dict[str, Any]:
    """Figures for the researcher page and the review page.

    Returns
    -------
    dict
        ``linked`` (bool), ``prolific`` (the :class:`ProlificStudy` or ``None``),
        ``status_counts`` (``{status: n}`` in life-cycle order), ``to_approve``, ``held``
        (:func:`review_queue`) and ``failed_checks`` (counts of submissions review would act
        on), ``bonus_payments``
        (the latest five), ``last_synced_at``, ``unknown_statuses`` (``[(status as received,
        last seen datetime)]``, latest first: statuses Prolific sent that were left unapplied),
        ``demographics_stored`` (participants with stored demographics) and
        ``demographics_fetched_at`` (when they were fetched, or ``None``).
    """
    ps = prolific_study_for(study)
    if ps is None:
        return {"linked": False, "prolific": None, "status_counts": {}, "to_approve": 0, "held": 0,
                "failed_checks": 0, "bonus_payments": [], "last_synced_at": None,
                "unknown_statuses": [], "demographics_stored": 0, "demographics_fetched_at": None}
    counts = Counter(Submission.objects.filter(prolific_study=ps).values_list("status", flat=True))
    ordered = dict(sorted(counts.items(), key=lambda kv: (STATUS_RANK.get(kv[0], 9), kv[0])))
    return {
        "linked": bool(ps.prolific_id),
        "prolific": ps,
        "status_counts": ordered,
        **_queue_counts(ps),
        "failed_checks": failed_check_submissions(ps).count(),
        "bonus_payments": list(BonusPayment.objects.filter(prolific_study=ps)[:5]),
        "last_synced_at": ps.last_synced_at,
        "unknown_statuses": unknown_statuses(ps),
        "demographics_stored": Demographics.objects.filter(prolific_study=ps).count(),
        "demographics_fetched_at": Demographics.objects.filter(prolific_study=ps)
        .order_by("-fetched_at").values_list("fetched_at", flat=True).first(),
    }


def _queue_counts(prolific_study: ProlificStudy) -> dict[str, int]:
    queue = review_queue(prolific_study)
    return {"to_approve": len(queue.to_approve), "held": len(queue.held)}


def unknown_statuses(prolific_study: ProlificStudy) -> list[tuple[str, datetime | None]]:
    """The unknown submission statuses recorded for the study, ``[(name, last seen)]``, latest
    first (see ``services.unknown_statuses_record``)."""
    rows = [(name, parse_datetime(str(seen))) for name, seen in (prolific_study.unknown_statuses or {}).items()]
    return sorted(rows, key=lambda r: r[1].timestamp() if r[1] else 0, reverse=True)


def syncable_prolific_studies() -> QuerySet[ProlificStudy]:
    """Linked Prolific studies (a Prolific id is known)."""
    return ProlificStudy.objects.exclude(prolific_id="").select_related("study")


def participant_by_pseudonym(*, study: Study) -> dict[str, Participant]:
    """``{pseudonym: participant}`` for the study (for bonus CSVs written from the export)."""
    return {
        participant_pseudonym(study=study, prolific_pid=p.prolific_pid): p
        for p in Participant.objects.filter(study=study).only("id", "prolific_pid", "prolific_session_id", "study_id")
    }


def participants_to_verify(prolific_study: ProlificStudy) -> QuerySet[Participant]:
    """Participants of the study whose entry has not been checked against Prolific yet."""
    checked = Submission.objects.filter(prolific_study=prolific_study, entry_verified__isnull=False)
    return Participant.objects.filter(study=prolific_study.study).exclude(
        Q(prolific_session_id__in=checked.values("submission_id"))
    )


def demographics_by_pseudonym(*, study: Study) -> dict[str, dict[str, Any]]:
    """``{pseudonym: {field: value}}`` of the study's stored demographics (see
    :class:`~.models.Demographics`): the fields of :data:`~.payloads.DEMOGRAPHIC_FIELDS` (``age``
    an int or ``None``, the others text, ``""`` when missing) and ``extra`` (a dict). A
    participant with several submissions gets the row fetched last. Empty when never fetched."""
    out: dict[str, dict[str, Any]] = {}
    for d in Demographics.objects.filter(prolific_study__study=study).order_by("pk"):
        out[d.pseudonym] = {**{name: getattr(d, name) for name in DEMOGRAPHIC_FIELDS}, "extra": d.extra}
    return out


def status_disagreements(*, prolific_study: ProlificStudy) -> list[dict[str, str]]:
    """Participants whose status here disagrees with their submission's on Prolific.

    The rule (docs/prolific.md): the submission holds Prolific's latest status by Prolific's own
    time, and a participant ended by Prolific has the status that submission gives
    (:data:`FREEING_STATUSES`). What can still disagree, and is listed here for the review page:
    a participant ended here (returned, timed out, rejected) whose submission Prolific later
    approved or reopened; or a submission that ended on Prolific while the participant kept their
    status because the same PID has another live submission. Each entry: ``pseudonym``,
    ``participant_status``, ``submission_status``. One query (and the salt's, once).
    """
    ended_here = set(FREEING_STATUSES.values())
    rows = (
        Submission.objects.filter(prolific_study=prolific_study, participant__isnull=False)
        .select_related("participant", "prolific_study__study")
        .order_by("participant_id")
    )
    found = []
    for sub in rows:
        p = sub.participant
        expected = FREEING_STATUSES.get(sub.status)
        if expected is not None:
            agrees = p.status == expected or p.status not in (
                Participant.Status.IN_PROGRESS, Participant.Status.COMPLETED, *ended_here
            )
        else:
            agrees = p.status not in ended_here
        if not agrees:
            found.append({
                "pseudonym": participant_pseudonym(study=prolific_study.study, prolific_pid=p.prolific_pid),
                "participant_status": p.status,
                "submission_status": sub.status,
            })
    return found
