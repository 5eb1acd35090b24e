"""Writes of the review on Prolific: approve completed submissions, act on failed checks, and
decide on the submissions that bulk approval holds back.

The two bulk actions take the same arguments and return a :class:`ReviewReport`, so a caller
(the review page, the API's review view, ``manage.py prolific_review``) can take either as a
parameter. Approving is idempotent on Prolific; asking for a return sends the participant a
message, so each submission is marked as soon as its request succeeded and is never asked twice.

Bulk approval leaves out the held submissions (:func:`~..selectors.review_queue`: a holding
flag, a final-label exclusion); a researcher decides on each of them with
:func:`held_submission_decide`, which records the decision before it is sent (see
:class:`~..models.ReviewDecision`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from spotlight_study.audit.services import audit_record

from .. import selectors
from ..client import ProlificClient
from ..errors import (
    AlreadyDecided,
    ConfirmationRequired,
    NotAwaitingReview,
    ProlificAPIError,
    ProlificError,
    ProlificValidationError,
    ReviewSendFailed,
    SubmissionNotFound,
)
from ..models import ProlificStudy, ReviewDecision, Submission
from ..payloads import validate_rejection
from .study import linked_prolific_study, client_or_default

RETURN_REASON = (
    "You did not pass the instruction check of this study, so we cannot use your answers. "
    "Please return your submission."
)
#: The reason sent with a return asked for from the held-submission review, unless the
#: researcher writes one: neutral, since a flag is evidence and not a verdict.
HELD_RETURN_REASON = (
    "We cannot accept this submission as it stands, after reviewing the answers against the "
    "study's instructions. Please return your submission on Prolific."
)


@dataclass
class ReviewReport:
    """What a review action did: ``selected`` submissions, ``done`` (approved, returned or
    rejected), ``api_calls`` made, ``action``, ``dry_run``, ``errors`` (messages) and, for bulk
    approval, ``held``: the submissions held back for a manual look, each
    ``{"submission", "participant" (pseudonym), "reasons": [...]}``."""

    action: str
    selected: int = 0
    done: int = 0
    api_calls: int = 0
    dry_run: bool = False
    errors: list[str] = field(default_factory=list)
    held: list[dict] = field(default_factory=list)


def submissions_approve_completed(
    *, prolific_study_id: int, dry_run: bool = False, client: ProlificClient | None = None,
    actor=None,
) -> ReviewReport:
    """Approve in bulk the submissions of participants who completed with the check passed,
    except the held ones (listed in the report's ``held``, with why).

    See :func:`~spotlight_study.prolific.selectors.review_queue`. Sent in chunks of at
    most 1,000 ids (``POST /submissions/bulk-approve/``); each approved submission is marked
    reviewed (the next sync or webhook records ``APPROVED``). With ``dry_run`` nothing is sent.
    What was sent is recorded in the audit trail (``review.decide``, author ``actor``).
    Raises :class:`~spotlight_study.prolific.errors.NotLinked` and the client's errors.
    """
    ps = linked_prolific_study(prolific_study_id)
    queue = selectors.review_queue(ps)
    ids = [s.submission_id for s in queue.to_approve]
    held = [
        {"submission": h.submission.submission_id, "participant": h.pseudonym, "reasons": list(h.reasons)}
        for h in queue.held
    ]
    report = ReviewReport(action="approve", selected=len(ids), dry_run=dry_run, held=held)
    if dry_run or not ids:
        return report
    with client_or_default(client, study_id=ps.study_id) as api:
        report.api_calls = api.submissions_bulk_approve(ids)
    report.done = Submission.objects.filter(submission_id__in=ids, review_action="").update(
        review_action=Submission.ReviewAction.APPROVED, reviewed_at=timezone.now()
    )
    _review_audit(ps, report, actor)
    return report


def _review_audit(ps: ProlificStudy, report: ReviewReport, actor) -> None:
    """One audit entry for a bulk review action that sent something."""
    if report.api_calls or report.done:
        audit_record(
            action="review.decide", actor=actor, study=ps.study,
            summary=f"Bulk {report.action}: {report.done} of {report.selected} submission(s) marked.",
            detail={"action": report.action, "selected": report.selected, "done": report.done,
                    "errors": len(report.errors)},
        )


def submissions_review_failed_checks(
    *, prolific_study_id: int, dry_run: bool = False, client: ProlificClient | None = None,
    actor=None,
) -> ReviewReport:
    """Act on submissions whose participant failed the instruction check.

    Following the study's ``failed_check_review``: ask each participant to return the
    submission (default, Prolific's policy for failed checks), reject it with the stored
    category and message (validated before anything is sent), or leave it for manual review.
    Each submission is marked as soon as its request succeeded; on an error the remaining ones
    are left and the error is reported. What was sent is recorded in the audit trail
    (``review.decide``, author ``actor``).
    """
    ps = linked_prolific_study(prolific_study_id)
    subs = list(selectors.failed_check_submissions(ps))
    mode = ps.failed_check_review
    report = ReviewReport(action=mode, selected=len(subs), dry_run=dry_run)
    if mode == ProlificStudy.FailedCheckReview.MANUAL or dry_run or not subs:
        return report
    if mode == ProlificStudy.FailedCheckReview.REJECT:
        validate_rejection(rejection_category=ps.rejection_category, message=ps.rejection_message)
    with client_or_default(client, study_id=ps.study_id) as api:
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
    _review_audit(ps, report, actor)
    return report



@dataclass(frozen=True)
class DecisionResult:
    """A decision on a held submission: the recorded ``decision`` and whether this call made it
    (``created``; ``False``: the same decision existed, nothing was sent again)."""

    decision: ReviewDecision
    created: bool


def held_submission_decide(
    *,
    prolific_study_id: int,
    submission_id: str,
    action: str,
    confirmed: bool,
    rejection_category: str = "",
    message: str = "",
    note: str = "",
    decided_by=None,
    decided_via: str = "page",
    client: ProlificClient | None = None,
) -> DecisionResult:
    """Approve, ask for a return of, or reject one submission awaiting review, exactly once.

    Parameters
    ----------
    prolific_study_id : int
    submission_id : str
        Prolific's submission id.
    action : str
        ``approve``, ``request_return`` or ``reject`` (:class:`~..models.ReviewDecision.Action`).
    confirmed : bool
        The researcher confirmed the decision after seeing the evidence; nothing happens without.
    rejection_category, message : str
        For ``reject``: one of Prolific's categories and a message to the participant of at
        least 100 characters (checked before anything is recorded or sent). For
        ``request_return`` the message is the reason given (default :data:`HELD_RETURN_REASON`).
    note : str
        Why, for the record.
    decided_by : User or None
        The researcher (``None`` from the command line); ``decided_via`` ``page``, ``api`` or
        ``command``.

    Notes
    -----
    The decision is committed (``sent``) under a lock of the submission row before the request
    goes out; a database constraint allows one such decision per submission. The same decision
    asked for again (a double click, a second tab, a retry) returns the recorded one and sends
    nothing; another decision is refused. When Prolific answers with an error the decision is
    ``failed`` and a new one may be made. A transport error on asking for a return (not
    idempotent: the participant would get a second message) leaves it ``unknown`` and it is
    never sent again; on approve or reject (idempotent transitions on Prolific) it is ``failed``.

    Raises
    ------
    ConfirmationRequired, ProlificValidationError
        Nothing confirmed, an unknown action, a bad rejection (nothing is recorded).
    SubmissionNotFound, NotAwaitingReview, AlreadyDecided
        No such submission, not awaiting review, another decision on it.
    ReviewSendFailed
        Recorded, but Prolific refused or did not answer (``exc.decision``).
    """
    if action not in ReviewDecision.Action.values:
        raise ProlificValidationError(
            f"The action must be one of {', '.join(ReviewDecision.Action.values)}."
        )
    message = (message or "").strip()
    if action == ReviewDecision.Action.REJECT:
        validate_rejection(rejection_category=rejection_category, message=message)
    else:
        rejection_category = ""
        if action == ReviewDecision.Action.REQUEST_RETURN:
            message = message or HELD_RETURN_REASON
        else:
            message = ""
    if not confirmed:
        raise ConfirmationRequired(
            "Confirm the decision after looking at the evidence; nothing was sent."
        )
    ps = linked_prolific_study(prolific_study_id)
    try:
        decision, created = _decision_record(
            ps, submission_id=submission_id, action=action, rejection_category=rejection_category,
            message=message, note=note, decided_by=decided_by, decided_via=decided_via,
        )
    except IntegrityError:
        # Another request recorded a decision between our check and insert (no row lock on
        # SQLite's reads): answer as if it had been first.
        decision, created = _decision_record(
            ps, submission_id=submission_id, action=action, rejection_category=rejection_category,
            message=message, note=note, decided_by=decided_by, decided_via=decided_via,
        )
    if not created:
        return DecisionResult(decision=decision, created=False)
    _decision_send(decision, client=client)
    return DecisionResult(decision=decision, created=True)


def _decision_record(
    ps: ProlificStudy, *, submission_id: str, action: str, rejection_category: str, message: str,
    note: str, decided_by, decided_via: str,
) -> tuple[ReviewDecision, bool]:
    """Lock the submission, check it may be decided and commit the decision as ``sent``; or
    return the same decision already recorded (``created`` ``False``)."""
    with transaction.atomic():
        sub = (
            Submission.objects.select_for_update()
            .filter(prolific_study=ps, submission_id=submission_id)
            .first()
        )
        if sub is None:
            raise SubmissionNotFound(f"No submission {submission_id} in this study.")
        active = sub.decisions.filter(outcome__in=ReviewDecision.ACTIVE_OUTCOMES).first()
        if active is not None:
            if active.action == action:
                return active, False
            raise AlreadyDecided(
                f"This submission was decided already ({active.get_action_display().lower()}, "
                f"{active.get_outcome_display().lower()}); a submission is decided once."
            )
        if sub.status != "AWAITING REVIEW" or sub.review_action:
            raise NotAwaitingReview(
                f"This submission is not awaiting review (Prolific: {sub.status.lower()}"
                + (f", {sub.get_review_action_display().lower()} here" if sub.review_action else "")
                + "); nothing was sent."
            )
        queue = selectors.review_queue(ps, submission_id=submission_id)
        held = next((h for h in queue.held), None)
        evidence = held.evidence_record() if held is not None else {"reasons": [], "held": False}
        decision = ReviewDecision.objects.create(
            submission=sub, action=action, rejection_category=rejection_category, message=message,
            note=(note or "").strip(), evidence=evidence, decided_by=decided_by,
            decided_via=decided_via, decided_at=timezone.now(),
        )
        audit_record(
            action="review.decide", actor=decided_by, study=ps.study,
            summary=f"Held submission decided: {decision.get_action_display().lower()} ({decided_via}).",
            detail={"decision_id": decision.pk, "action": action, "via": decided_via,
                    "rejection_category": rejection_category},
        )
    return decision, True


_REVIEW_ACTIONS = {
    ReviewDecision.Action.APPROVE: Submission.ReviewAction.APPROVED,
    ReviewDecision.Action.REQUEST_RETURN: Submission.ReviewAction.RETURN_REQUESTED,
    ReviewDecision.Action.REJECT: Submission.ReviewAction.REJECTED,
}


def _decision_send(decision: ReviewDecision, *, client: ProlificClient | None) -> None:
    """Send a committed decision once and record Prolific's answer (module docstring)."""
    sub = decision.submission
    study_id = ProlificStudy.objects.filter(pk=sub.prolific_study_id).values_list("study_id", flat=True).first()
    try:
        with client_or_default(client, study_id=study_id) as api:
            if decision.action == ReviewDecision.Action.APPROVE:
                api.submission_approve(sub.submission_id)
            elif decision.action == ReviewDecision.Action.REJECT:
                api.submission_reject(
                    sub.submission_id, rejection_category=decision.rejection_category,
                    message=decision.message,
                )
            else:
                api.submission_request_return(sub.submission_id, reasons=[decision.message])
    except ProlificError as exc:
        refused = isinstance(exc, ProlificAPIError) and exc.status_code < 500
        idempotent = decision.action != ReviewDecision.Action.REQUEST_RETURN
        decision.outcome = (
            ReviewDecision.Outcome.FAILED if refused or idempotent else ReviewDecision.Outcome.UNKNOWN
        )
        decision.error = str(exc)[:2000]
        decision.answered_at = timezone.now()
        decision.save(update_fields=["outcome", "error", "answered_at"])
        hint = (
            "Nothing was done on Prolific; you may decide again."
            if decision.outcome == ReviewDecision.Outcome.FAILED
            else "It may have reached Prolific: check the submission there. It will not be sent again."
        )
        raise ReviewSendFailed(f"Prolific did not take the decision: {exc} {hint}", decision=decision) from None
    now = timezone.now()
    decision.outcome = ReviewDecision.Outcome.DONE
    decision.answered_at = now
    decision.save(update_fields=["outcome", "answered_at"])
    Submission.objects.filter(pk=sub.pk, review_action="").update(
        review_action=_REVIEW_ACTIONS[decision.action], reviewed_at=now
    )
