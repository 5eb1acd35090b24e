"""``manage.py prolific_review <slug>``: approve, handle failed checks, pay bonuses.

    prolific_review SLUG --approve [--dry-run]        approve completed submissions in bulk
    prolific_review SLUG --failed-checks [--dry-run]  ask to return (or reject, per the study)
    prolific_review SLUG --bonuses FILE               dry run: check the CSV, show the total
    prolific_review SLUG --bonuses FILE --pay         set up and pay, once
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.prolific import selectors
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.prolific.services.bonuses import bonus_payment_draft, bonus_payment_pay
from spotlight_study.prolific.services.review import (
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
        parser.add_argument("--bonuses", metavar="FILE", help="CSV of id,amount (major units).")
        parser.add_argument("--pay", action="store_true", help="With --bonuses: pay (otherwise a dry run).")
        parser.add_argument("--dry-run", action="store_true", help="Show what would be done; send nothing.")

    def handle(self, *args, slug: str, **o) -> None:
        if not (o["approve"] or o["failed_checks"] or o["bonuses"]):
            raise CommandError("Give --approve, --failed-checks or --bonuses FILE.")
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
