"""Writes of paid screen-outs: participants who failed the screener are screened out on Prolific.

The screener is the instruction check, when the study ends the session on a failed check (the
``end`` policy) and sets a screen-out reward (``ProlificStudy.screen_out_reward_minor_units``):
the failed-check completion code is then Prolific's ``FIXED_SCREENOUT`` type
(:func:`~..selectors.completion_codes`), so a participant who enters it is screened out and paid
at once. Those who fail and leave without entering it keep an ``ACTIVE`` submission;
:func:`submissions_screen_out_failed_checks` screens them out through Prolific's endpoint.

A screen-out pays, so it is sent at most once: its :class:`~..models.ScreenOut` row is written
and committed before the request, and a row that exists is never sent again.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from ..client import ProlificClient
from ..errors import ProlificError, ProlificServiceError
from ..models import ScreenOut, Submission
from .study import client_or_default, linked_prolific_study


@dataclass(frozen=True)
class ScreenOutReport:
    """What a run did: ``selected`` submissions, ``sent`` in one request (0 on a dry run),
    ``amount_minor_units`` per participant, and ``error`` if the request failed."""

    selected: int
    sent: int
    amount_minor_units: int
    dry_run: bool
    error: str = ""

    def message(self) -> str:
        """One sentence for the page and the command."""
        amount = f"{Decimal(self.amount_minor_units) / 100:.2f}"
        if self.dry_run:
            return f"Dry run: {self.selected} submission(s) would be screened out, {amount} each."
        if self.error:
            return (f"Screen-out of {self.selected} submission(s) failed: {self.error} "
                    "They will not be sent again; check the study on Prolific.")
        return f"Screened out {self.sent} submission(s), {amount} each."


def screen_out_candidates(prolific_study_id: int) -> list[Submission]:
    """ACTIVE submissions of participants who failed the instruction check and were not screened
    out yet, oldest first."""
    done = ScreenOut.objects.filter(prolific_study_id=prolific_study_id).values("submission_id")
    return list(
        Submission.objects.filter(
            prolific_study_id=prolific_study_id, status="ACTIVE",
            participant__instruction_check_passed=False,
        )
        .exclude(submission_id__in=done)
        .order_by("pk")
    )


def submissions_screen_out_failed_checks(
    *, prolific_study_id: int, dry_run: bool = False, client: ProlificClient | None = None
) -> ScreenOutReport:
    """Screen out, paid, the study's failed checks whose submission is still ACTIVE.

    Raises :class:`~..errors.ProlificServiceError` if the study does not screen out (no reward,
    or not the ``end`` policy) and :class:`~..errors.NotLinked` if it is not on Prolific. An API
    error of the request itself is reported in the result and the rows stay ``failed``.
    """
    ps = linked_prolific_study(prolific_study_id)
    if not ps.screens_out:
        raise ProlificServiceError(
            "This study does not screen out: set a screen-out reward and the 'end' policy for "
            "failed instruction checks first."
        )
    candidates = screen_out_candidates(ps.pk)
    amount = ps.screen_out_reward_minor_units
    if dry_run or not candidates:
        return ScreenOutReport(len(candidates), 0, amount, dry_run)
    now = timezone.now()
    with transaction.atomic():
        rows = ScreenOut.objects.bulk_create(
            ScreenOut(prolific_study=ps, submission_id=s.submission_id, participant_id=s.participant_id,
                      amount_minor_units=amount, sent_at=now)
            for s in candidates
        )
    try:
        with client_or_default(client, study_id=ps.study_id) as c:
            c.study_screen_out(
                ps.prolific_id, [s.submission_id for s in candidates],
                bonus_per_submission=Decimal(amount) / 100,
            )
    except ProlificError as exc:
        ScreenOut.objects.filter(pk__in=[r.pk for r in rows]).update(
            outcome=ScreenOut.Outcome.FAILED, error=str(exc)[:1000]
        )
        return ScreenOutReport(len(candidates), 0, amount, False, error=str(exc))
    # The submissions' new status (SCREENED OUT) comes from the next sync or webhook, the one
    # path that writes Prolific statuses here.
    ScreenOut.objects.filter(pk__in=[r.pk for r in rows]).update(outcome=ScreenOut.Outcome.DONE)
    return ScreenOutReport(len(candidates), len(candidates), amount, False)
