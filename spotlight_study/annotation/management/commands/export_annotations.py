"""``manage.py export_annotations SLUG --out DIR``: annotations, final labels and agreement."""

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

    def handle(self, *args, slug, out, **options):
        study = study_for_command(slug)
        try:
            paths = annotations_export(study=study, out_dir=out)
        except OSError as exc:
            raise CommandError(f"Cannot write to {out}: {exc.strerror or exc}") from None
        for name, path in paths.items():
            self.stdout.write(f"{name}: {path}")
