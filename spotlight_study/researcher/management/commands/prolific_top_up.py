"""``manage.py prolific_top_up <slug> [--dry-run]``: add the places the cells still need."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.researcher.top_up import top_up


class Command(BaseCommand):
    """Raise the Prolific study's places by what the cells need after returns and exclusions."""

    help = (
        "Per cell, count the places still needed to reach target_sample_size balanced (after "
        "returns, time-outs, rejections and exclusions) and raise the Prolific study's places by "
        "that number, minus the places still open. Never over-recruits; a second run adds nothing."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--dry-run", action="store_true", help="Print the numbers; change nothing on Prolific.")

    def handle(self, *args, slug: str, dry_run: bool, **options) -> None:
        study = study_for_command(slug)
        try:
            result = top_up(study=study, dry_run=dry_run)
        except (ProlificServiceError, ProlificError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write("\n".join(result.lines()))
