"""``manage.py analyze SLUG --out DIR``: run the study statistics on the study's current data."""
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.researcher.services import analysis_run
from spotlight_study.studies.models import Study


class Command(BaseCommand):
    help = (
        "Export the study's current data and run the analysis (results.json, tables, figures, "
        "report). The researcher page links to the latest report."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", required=True, help="Directory to write into.")

    def handle(self, *args, slug, out, **options):
        from analysis import AnalysisInputError

        try:
            study = Study.objects.get(slug=slug)
        except Study.DoesNotExist:
            raise CommandError(f"No study with slug '{slug}'.") from None
        try:
            results = analysis_run(study=study, out_dir=out)
        except AnalysisInputError as exc:
            raise CommandError(f"The data cannot be analysed yet: {exc}") from None
        except OSError as exc:
            raise CommandError(f"Cannot write to {out}: {exc.strerror or exc}") from None
        self.stdout.write(f"Report: {out}/report.html (input SHA-256 {results['input_sha256']})")
        for setting, r in results["identification"].items():
            self.stdout.write(
                f"  {setting}: identified {r['k_no_pattern']}/{r['n_no_pattern']} without vs "
                f"{r['k_pattern']}/{r['n_pattern']} with pattern, z={r['z']}, p={r['p']}"
            )
