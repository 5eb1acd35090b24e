"""``manage.py prolific_review <slug>``: approve, handle failed checks, pay bonuses.

    prolific_review SLUG --approve [--dry-run]        approve completed submissions in bulk,
                                                      except the held ones (listed, with why)
    prolific_review SLUG --held                       list the held submissions and their evidence
    prolific_review SLUG --decide SUBMISSION_OR_PSEUDONYM --action approve|request_return|reject
        [--category C --message TEXT] [--note WHY] [--yes]
                                                      decide on one held submission; without
                                                      --yes it shows what would be sent
    prolific_review SLUG --failed-checks [--dry-run]  ask to return (or reject, per the study)
    prolific_review SLUG --bonuses FILE               dry run: check the CSV, show the total
    prolific_review SLUG --bonuses FILE --pay         set up and pay, once
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.prolific import selectors
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.prolific.services.bonuses import bonus_payment_draft, bonus_payment_pay
from spotlight_study.prolific.models import ReviewDecision
from spotlight_study.prolific.services.review import (
    HELD_RETURN_REASON,
    held_submission_decide,
    submissions_approve_completed,
    submissions_review_failed_checks,
)


class Command(BaseCommand):
    """Review a study's Prolific submissions from the command line (as on the review page)."""

    help = "Approve completed submissions, handle failed instruction checks, and pay bonuses from a CSV."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--approve", action="store_true", help="Approve completed submissions in bulk.")
        parser.add_argument(
            "--failed-checks",
            action="store_true",
            help="Ask to return (default) or reject, per the study's setting, failed instruction checks.",
        )
        parser.add_argument("--held", action="store_true", help="List the held submissions with their evidence.")
        parser.add_argument("--decide", metavar="SUBMISSION", help="A held submission (its id or the pseudonym).")
        parser.add_argument("--action", choices=ReviewDecision.Action.values, help="With --decide.")
        parser.add_argument("--category", default="", help="With --action reject: Prolific's rejection category.")
        parser.add_argument("--message", default="", help="Rejection message (at least 100 characters) or return reason.")
        parser.add_argument("--note", default="", help="Why, for the record.")
        parser.add_argument("--yes", action="store_true", help="With --decide: confirm and send (once).")
        parser.add_argument("--bonuses", metavar="FILE", help="CSV of id,amount (major units).")
        parser.add_argument("--pay", action="store_true", help="With --bonuses: pay (otherwise a dry run).")
        parser.add_argument("--dry-run", action="store_true", help="Show what would be done; send nothing.")

    def handle(self, *args, slug: str, **o) -> None:
        if not (o["approve"] or o["failed_checks"] or o["bonuses"] or o["held"] or o["decide"]):
            raise CommandError("Give --approve, --failed-checks, --held, --decide or --bonuses FILE.")
        if bool(o["decide"]) != bool(o["action"]):
            raise CommandError("--decide SUBMISSION and --action go together.")
        if o["pay"] and not o["bonuses"]:
            raise CommandError("--pay goes with --bonuses FILE.")
        study = study_for_command(slug)
        ps = selectors.prolific_study_for(study)
        if ps is None:
            raise CommandError(f"Study '{slug}' is not linked to Prolific (see prolific_study).")
        try:
            if o["approve"]:
                r = submissions_approve_completed(prolific_study_id=ps.pk, dry_run=o["dry_run"])
                verb = "Would approve" if r.dry_run else "Approved"
                self.stdout.write(f"{verb} {r.done if not r.dry_run else r.selected} of {r.selected} submission(s) ({r.api_calls} request(s)).")
                self.stdout.write(f"Held for review: {len(r.held)} submission(s).")
                for h in r.held:
                    self.stdout.write(f"  {h['participant']}  {h['submission']}  {'; '.join(h['reasons'])}")
            if o["held"]:
                self._held(ps)
            if o["decide"]:
                self._decide(ps, o)
            if o["failed_checks"]:
                r = submissions_review_failed_checks(prolific_study_id=ps.pk, dry_run=o["dry_run"])
                self.stdout.write(
                    f"Failed instruction checks ({r.action}): {r.selected} selected, {r.done} done"
                    + (" (dry run)" if r.dry_run else "")
                    + "."
                )
                for error in r.errors:
                    self.stderr.write(error)
                if r.errors:
                    raise CommandError("Stopped at the first error; the rest were not sent.")
            if o["bonuses"]:
                self._bonuses(ps, Path(o["bonuses"]), pay=o["pay"] and not o["dry_run"])
        except (ProlificServiceError, ProlificError) as exc:
            raise CommandError(str(exc)) from None

    def _held(self, ps) -> None:
        queue = selectors.review_queue(ps)
        self.stdout.write(f"{len(queue.held)} submission(s) held; {len(queue.to_approve)} to approve in bulk.")
        self.stdout.write(
            "Prolific's rule: reject only with clear evidence; prefer a return for a failed check."
        )
        for h in queue.held:
            self.stdout.write(f"{h.pseudonym}  submission {h.submission.submission_id}")
            self.stdout.write(f"  why held: {'; '.join(h.reasons)}")
            self.stdout.write(f"  flags: {', '.join(h.evidence.flags) or 'none'}")
            exclusions = ", ".join(f"{s}: {e}" for s, e in h.exclusions) or "none"
            self.stdout.write(f"  annotators' exclusion: {exclusions}")
            for a in h.evidence.answers:
                self.stdout.write(f"  [{a.setting}] {a.answer}")

    def _decide(self, ps, o) -> None:
        wanted = o["decide"]
        queue = selectors.review_queue(ps)
        row = next((h for h in queue.held if wanted in (h.pseudonym, h.submission.submission_id)), None)
        submission_id = row.submission.submission_id if row else self._submission_of(ps, wanted)
        action = o["action"]
        if not o["yes"]:
            self.stdout.write(f"Would {action.replace('_', ' ')} submission {submission_id}"
                              + (f" ({row.pseudonym}; held because: {'; '.join(row.reasons)})" if row else "") + ".")
            if action == "reject":
                self.stdout.write(f"  category {o['category'] or '(none)'}; message: {o['message'] or '(none)'}")
            elif action == "request_return":
                self.stdout.write(f"  reason: {o['message'] or HELD_RETURN_REASON}")
            self.stdout.write("Nothing was sent. Add --yes to confirm and send (once).")
            return
        result = held_submission_decide(
            prolific_study_id=ps.pk, submission_id=submission_id, action=action, confirmed=True,
            rejection_category=o["category"], message=o["message"], note=o["note"],
            decided_by=None, decided_via="command",
        )
        d = result.decision
        if result.created:
            self.stdout.write(f"Done on Prolific: {d.get_action_display().lower()} of submission {submission_id}.")
        else:
            self.stdout.write(
                f"Already decided ({d.get_action_display().lower()}, {d.get_outcome_display().lower()}); nothing was sent again."
            )

    @staticmethod
    def _submission_of(ps, wanted: str) -> str:
        """The submission id of a pseudonym (its latest submission), or ``wanted`` as given."""
        found = wanted
        for sub in selectors.submissions_of(ps).exclude(participant=None):
            if participant_pseudonym(study=ps.study, prolific_pid=sub.participant.prolific_pid) == wanted:
                found = sub.submission_id
        return found

    def _bonuses(self, ps, path: Path, *, pay: bool) -> None:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"Cannot read {path}: {exc}") from None
        payment = bonus_payment_draft(prolific_study_id=ps.pk, csv_text=text)
        for item in payment.items:
            self.stdout.write(f"  {item['participant']}  {item['amount_minor'] / 100:.2f}")
        self.stdout.write(
            f"{len(payment.items)} bonus(es), total {payment.total_major} (major units) before "
            f"Prolific's fees. Bonus payment {payment.pk}."
        )
        if not pay:
            self.stdout.write("Dry run: nothing was sent. Add --pay to pay.")
            return
        payment = bonus_payment_pay(bonus_payment_id=payment.pk)
        self.stdout.write(f"Paid: bonus payment {payment.pk} (Prolific {payment.bulk_id}).")
