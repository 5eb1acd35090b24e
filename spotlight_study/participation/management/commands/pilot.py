"""``manage.py pilot SLUG --participants N`` / ``--delete``: run or remove a pilot of the study."""
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.participation.errors import PilotError
from spotlight_study.participation.pilot import PILOT_MAX_PARTICIPANTS, pilot_delete, pilot_run
from spotlight_study.participation.selectors import study_pilot_counts


class Command(BaseCommand):
    help = (
        "Send N simulated pilot participants through the study's real flow (in-process), or "
        "delete all pilot data with --delete. Pilots take no place in a cell, do not freeze the "
        "study and are left out of export_results and analyze unless --include-pilot."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument(
            "--participants", type=int, metavar="N",
            help=f"Number of simulated participants (1 to {PILOT_MAX_PARTICIPANTS}).",
        )
        action.add_argument(
            "--delete", action="store_true",
            help="Delete the study's pilot participants, their answers and their annotations.",
        )
        parser.add_argument("--seed", type=int, help="Seed of the simulated answers and times.")

    def handle(self, *args, slug, participants=None, delete=False, seed=None, **options):
        study = study_for_command(slug, with_settings=True)
        if delete:
            deleted = pilot_delete(study=study)
            if not deleted:
                self.stdout.write(f"No pilot data in {slug}.")
                return
            self.stdout.write(f"Deleted the pilot data of {slug}:")
            for name, n in sorted(deleted.items()):
                self.stdout.write(f"  {name}: {n}")
            return
        try:
            report = pilot_run(study=study, participants=participants, seed=seed)
        except PilotError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"Pilot of {slug}: {report.participants} simulated participant(s): {report.summary()} "
            f"(seed {report.seed}: --seed {report.seed} repeats these answers and times)."
        )
        everyone = study_pilot_counts(study=study)
        if everyone.participants != report.participants:
            # Earlier runs: the researcher page counts every pilot participant of the study.
            self.stdout.write(
                f"All pilots of {slug} (as on the researcher page): {everyone.participants} pilot "
                f"participant(s), {everyone.summary()}."
            )
        self.stdout.write(
            f"Export or analyse them with --include-pilot; annotate them in the pilot round "
            f"(manage.py pilot_annotation {slug} --open); remove them with "
            f"manage.py pilot {slug} --delete."
        )
