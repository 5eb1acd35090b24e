"""``manage.py export_annotations SLUG --out DIR [--include-pilot]``: annotations, final labels
and agreement (the pilot annotation round's items only with ``--include-pilot``)."""

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.annotation.exports import annotations_export
from spotlight_study.commands import study_for_command


class Command(BaseCommand):
    help = (
        "Export annotations.csv, final_labels.csv and agreement.csv of a study (researchers only)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", required=True, help="Directory to write into.")
        parser.add_argument(
            "--include-pilot",
            action="store_true",
            help="Add the pilot annotation round's items to annotations.csv and final_labels.csv "
            "(marked is_pilot=1); agreement.csv always reports the pilot round apart.",
        )

    def handle(self, *args, slug, out, include_pilot=False, **options):
        study = study_for_command(slug)
        try:
            paths = annotations_export(study=study, out_dir=out, include_pilot=include_pilot)
        except OSError as exc:
            raise CommandError(f"Cannot write to {out}: {exc.strerror or exc}") from None
        for name, path in paths.items():
            self.stdout.write(f"{name}: {path}")
