"""``manage.py import_labels SLUG FILE [--annotator NAME] [--add-tags]``: labels from a CSV."""

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.annotation.errors import LabelImportError
from spotlight_study.annotation.label_import.importer import labels_import_file
from spotlight_study.commands import study_for_command


class Command(BaseCommand):
    help = (
        "Import labels made elsewhere (columns: item, identified, surface_difference, "
        "no_difference, exclusion, optional tags, exclusion_note, annotator). Every row is "
        "checked first; with any bad row nothing is changed and the bad rows are listed by line."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file")
        parser.add_argument("--annotator", help="Username for rows without an 'annotator' value.")
        parser.add_argument(
            "--add-tags", action="store_true", help="Add unknown tags to the codebook."
        )

    def handle(self, *args, slug, file, annotator, add_tags, **options):
        study = study_for_command(slug)
        try:
            report = labels_import_file(
                study=study, path=file, annotator_name=annotator, add_tags=add_tags
            )
        except LabelImportError as exc:
            lines = [f"  line {n}: {m}" if n else f"  {m}" for n, m in exc.errors]
            raise CommandError(
                f"{file}: {len(exc.errors)} problem(s); nothing was imported.\n" + "\n".join(lines)
            ) from None
        self.stdout.write(
            f"Imported {report.created} new and {report.updated} changed label(s)"
            + (f"; new tags: {', '.join(report.tags_added)}" if report.tags_added else "")
            + "."
        )
