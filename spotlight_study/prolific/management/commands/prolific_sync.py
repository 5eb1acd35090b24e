"""``manage.py prolific_sync <slug> [--verify]``: pull submission statuses from Prolific now."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.prolific import selectors
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.prolific.services.submissions import submission_entry_verify, submissions_sync


class Command(BaseCommand):
    """Sync one study's submissions (what the Celery beat task does every few minutes)."""

    help = "Pull a study's submission statuses from Prolific; returned, timed-out and rejected ones free their place."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument(
            "--verify",
            action="store_true",
            help="Also check each unchecked participant's SESSION_ID against Prolific.",
        )

    def handle(self, *args, slug: str, verify: bool, **options) -> None:
        study = study_for_command(slug)
        ps = selectors.prolific_study_for(study)
        if ps is None:
            raise CommandError(f"Study '{slug}' is not linked to Prolific (see prolific_study).")
        try:
            r = submissions_sync(prolific_study_id=ps.pk)
        except (ProlificServiceError, ProlificError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{r.fetched} submission(s) on Prolific: {r.created} new, {r.changed} changed, "
            f"{r.stale} out-of-date status(es) ignored, {r.ignored} transient or unknown "
            f"status(es) skipped, {r.freed} place(s) freed, {r.unmatched} without a participant here."
        )
        if r.unknown:
            names = ", ".join(f"{name!r} ({n})" for name, n in sorted(r.unknown.items()))
            self.stdout.write(f"Unknown statuses, left unchanged (shown on the review page): {names}.")
        if verify:
            results = {True: 0, False: 0, None: 0}
            for p in selectors.participants_to_verify(ps):
                try:
                    results[submission_entry_verify(participant_id=p.pk)] += 1
                except ProlificError as exc:
                    raise CommandError(str(exc)) from None
            self.stdout.write(
                f"Entries checked: {results[True]} match, {results[False]} do not match, "
                f"{results[None]} unknown to Prolific yet."
            )
