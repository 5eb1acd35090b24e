"""``manage.py analyze SLUG --out DIR``: run the study statistics on the study's current data.

Exit status 0 on success; 2, with a one-line message and no traceback, when the data cannot be
analysed yet (no answers, answers without final labels, a condition group still empty); 1 for
other errors (unknown study, output directory not writable).
"""
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
        parser.add_argument(
            "--include-pilot",
            action="store_true",
            help="Analyse the pilot participants (manage.py pilot) too; left out by default.",
        )

    def handle(self, *args, slug, out, include_pilot=False, **options):
        from analysis import AnalysisInputError

        try:
            study = Study.objects.get(slug=slug)
        except Study.DoesNotExist:
            raise CommandError(f"No study with slug '{slug}'.") from None
        try:
            results = analysis_run(study=study, out_dir=out, include_pilot=include_pilot)
        except AnalysisInputError as exc:
            # Status 2, like ``python -m analysis``: the input cannot be analysed (as opposed to 1,
            # the command itself failing).
            raise CommandError(f"The data cannot be analysed yet: {exc}", returncode=2) from None
        except OSError as exc:
            raise CommandError(f"Cannot write to {out}: {exc.strerror or exc}") from None
        self.stdout.write(f"Report: {out}/report.html (input SHA-256 {results['input_sha256']})")
        if include_pilot:
            self.stdout.write("  The data include the pilot participants.")
        for section, treatment, words in (
            ("identification", "pattern", "pattern"),
            ("identification_with_distractors", "pattern_with_distractors", "pattern + distractors"),
        ):
            for setting, r in results[section].items():
                self.stdout.write(
                    f"  {setting}: identified {r['k_no_pattern']}/{r['n_no_pattern']} without vs "
                    f"{r[f'k_{treatment}']}/{r[f'n_{treatment}']} with {words}, z={r['z']}, "
                    f"p={r['p']}, p (Holm)={results['holm'][section][setting]['p_holm']}"
                )
