"""``manage.py end_participants SLUG (--participant PSEUDONYM | --idle-minutes N) --reason TEXT
[--dry-run]``: end stalled participants, as the monitor's "End" does."""
from django.utils.translation import ngettext
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.participation.ending import participants_end, participants_in_progress
from spotlight_study.participation.errors import EndingRefused


class Command(BaseCommand):
    help = (
        "End one participant in progress (by export pseudonym) or every real participant in "
        "progress idle for more than N minutes, with a reason kept with the decision. Their "
        "status becomes ended_by_researcher and their place in the cell is freed at once; a "
        "participant who comes back is asked to return the submission on Prolific. "
        "--dry-run lists who would be ended and changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--participant", metavar="PSEUDONYM", help="The export pseudonym (p_...).")
        who.add_argument(
            "--idle-minutes", type=int, metavar="N",
            help="Every real participant in progress idle for more than N minutes.",
        )
        parser.add_argument("--reason", required=True, help="Why: kept with the decision.")
        parser.add_argument("--dry-run", action="store_true", help="List who would be ended; change nothing.")

    def handle(self, *args, slug, participant=None, idle_minutes=None, reason, dry_run=False, **options):
        study = study_for_command(slug)
        if idle_minutes is not None:
            if idle_minutes < 0:
                raise CommandError("--idle-minutes must be a whole number from 0. Nothing was changed.")
            pseudonyms = [s.pseudonym for s in participants_in_progress(study=study, idle_minutes=idle_minutes)]
            if not pseudonyms:
                minutes = ngettext("%(n)d minute", "%(n)d minutes", idle_minutes) % {"n": idle_minutes}
                self.stdout.write(f"No real participant of {slug} in progress is idle for more than "
                                  f"{minutes}: nothing to end.")
                return
        else:
            pseudonyms = [participant]
        try:
            report = participants_end(
                study=study, pseudonyms=pseudonyms, reason=reason, via="command", dry_run=dry_run,
            )
        except EndingRefused as exc:
            raise CommandError(str(exc)) from None
        verb = "Would end" if dry_run else "Ended"
        self.stdout.write(f"{verb} {len(report.ended)} participant(s) of {slug}"
                          f"{': ' + ', '.join(report.ended) if report.ended else ''}.")
        for pseudonym, why in report.skipped:
            self.stdout.write(f"Not ended: {pseudonym}, {why}.")
        if dry_run:
            self.stdout.write("Dry run: nothing was changed.")
