"""``manage.py export_results SLUG --out DIR``: write the study's tidy CSV files."""
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.participation.exports import results_export
from spotlight_study.studies.models import Study


class Command(BaseCommand):
    help = "Export responses.csv, survey.csv and participants.csv (pseudonymized) for a study."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", required=True, help="Directory to write into.")

    def handle(self, *args, slug, out, **options):
        try:
            study = Study.objects.get(slug=slug)
        except Study.DoesNotExist:
            raise CommandError(f"No study with slug '{slug}'.") from None
        try:
            paths = results_export(study=study, out_dir=out)
        except OSError as exc:
            raise CommandError(f"Cannot write to {out}: {exc.strerror or exc}") from None
        for name, path in paths.items():
            self.stdout.write(f"{name}: {path}")
