"""``manage.py export_results SLUG --out DIR``: write the study's tidy CSV files."""
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.results.exports import results_export, results_export_jsonl


class Command(BaseCommand):
    help = "Export responses.csv, survey.csv and participants.csv (pseudonymized) for a study."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", required=True, help="Directory to write into.")
        parser.add_argument(
            "--jsonl",
            action="store_true",
            help="Also write *.jsonl copies with the raw text (the CSV cells that begin with "
            "= + - @ tab, CR or ' get a ' in front against spreadsheet formulas).",
        )
        parser.add_argument(
            "--include-pilot",
            action="store_true",
            help="Also export the pilot participants (manage.py pilot); participants.csv marks "
            "them with pilot=1.",
        )

    def handle(self, *args, slug, out, jsonl=False, include_pilot=False, **options):
        study = study_for_command(slug)
        try:
            paths = results_export(study=study, out_dir=out, include_pilot=include_pilot)
            if jsonl:
                jsonl_paths = results_export_jsonl(
                    study=study, out_dir=out, include_pilot=include_pilot
                )
                paths.update({f"{k}_jsonl": v for k, v in jsonl_paths.items()})
        except OSError as exc:
            raise CommandError(f"Cannot write to {out}: {exc.strerror or exc}") from None
        for name, path in paths.items():
            self.stdout.write(f"{name}: {path}")
