"""``manage.py check_data [--json]``: rows per table, answers per participant, no orphans."""
import json

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.researcher.data_check import data_check


class Command(BaseCommand):
    help = (
        "Check the database (e.g. after scripts/restore.sh): rows per table, answers per "
        "participant, and no row pointing to a missing one. Exits with status 1 on a problem."
    )

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="Print the findings as JSON.")

    def handle(self, *args, json: bool = False, **options):
        result = data_check()
        if json:
            self.stdout.write(_dumps(result.as_dict()))
        else:
            self.stdout.write("Rows per table:")
            for table, n in sorted(result.table_rows.items()):
                self.stdout.write(f"  {table}: {n}")
            self.stdout.write(f"Participants: {result.participants}; saved answers: {result.answers}")
            self.stdout.write("Answers per participant (answers: participants):")
            for answers, n in sorted(result.answers_per_participant.items()):
                self.stdout.write(f"  {answers}: {n}")
            self.stdout.write(f"Orphaned rows: {sum(result.orphans.values())}")
        if result.problems:
            for problem in result.problems:
                self.stderr.write(f"problem: {problem}")
            raise CommandError(f"{len(result.problems)} problem(s) found.", returncode=1)
        if not json:
            self.stdout.write(self.style.SUCCESS("ok: no orphans, every completed participant has every answer"))


def _dumps(data: dict) -> str:
    return json.dumps(data, indent=2, sort_keys=True)
