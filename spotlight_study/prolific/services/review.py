"""Writes of the review on Prolific: approve completed submissions, act on failed checks.

Both actions take the same arguments and return a :class:`ReviewReport`, so a caller (the review
page, the API's review view, ``manage.py prolific_review``) can take either as a parameter.
Approving is idempotent on Prolific; asking for a return sends the participant a message, so
each submission is marked as soon as its request succeeded and is never asked twice.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.utils import timezone

from .. import selectors
from ..client import ProlificClient
from ..errors import ProlificError
from ..models import ProlificStudy, Submission
from ..payloads import validate_rejection
from .study import linked_prolific_study, client_or_default

RETURN_REASON = (
    "You did not pass the instruction check of this study, so we cannot use your answers. "
    "Please return your submission."
)


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


def submissions_approve_completed(
    *, prolific_study_id: int, dry_run: bool = False, client: ProlificClient | None = None
) -> ReviewReport:
    """Approve in bulk the submissions of participants who completed with the check passed.

    See :func:`~spotlight_study.prolific.selectors.approvable_submissions`. Sent in chunks of at
    most 1,000 ids (``POST /submissions/bulk-approve/``); each approved submission is marked
    reviewed (the next sync or webhook records ``APPROVED``). With ``dry_run`` nothing is sent.
    Raises :class:`~spotlight_study.prolific.errors.NotLinked` and the client's errors.
    """
    ps = linked_prolific_study(prolific_study_id)
    ids = list(selectors.approvable_submissions(ps).values_list("submission_id", flat=True))
    report = ReviewReport(action="approve", selected=len(ids), dry_run=dry_run)
    if dry_run or not ids:
        return report
    with client_or_default(client) as api:
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
    ps = linked_prolific_study(prolific_study_id)
    subs = list(selectors.failed_check_submissions(ps))
    mode = ps.failed_check_review
    report = ReviewReport(action=mode, selected=len(subs), dry_run=dry_run)
    if mode == ProlificStudy.FailedCheckReview.MANUAL or dry_run or not subs:
        return report
    if mode == ProlificStudy.FailedCheckReview.REJECT:
        validate_rejection(rejection_category=ps.rejection_category, message=ps.rejection_message)
    with client_or_default(client) as api:
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

