"""``manage.py prolific_screen_out <slug> [--dry-run]``: paid screen-out of failed checks."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.prolific import selectors
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.prolific.services.screen_outs import submissions_screen_out_failed_checks


class Command(BaseCommand):
    """Screen out (paid) the failed instruction checks whose submission is still ACTIVE."""

    help = (
        "Screen out, with the study's screen-out payment, participants who failed the instruction "
        "check under the 'end' policy and did not enter the screen-out code. Each is sent once."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--dry-run", action="store_true", help="Show how many; send nothing.")

    def handle(self, *args, slug: str, dry_run: bool, **options) -> None:
        study = study_for_command(slug)
        ps = selectors.prolific_study_for(study)
        if ps is None:
            raise CommandError(f"Study '{slug}' is not linked to Prolific (see prolific_study).")
        try:
            report = submissions_screen_out_failed_checks(prolific_study_id=ps.pk, dry_run=dry_run)
        except (ProlificServiceError, ProlificError) as exc:
            raise CommandError(str(exc)) from None
        if report.error:
            raise CommandError(report.message())
        self.stdout.write(report.message())
