"""``manage.py import_study FILE [--replace [--drop-missing]] [--as-slug NEW] [--dry-run]``: load
a study from a YAML or JSON file, printing its design warnings; with ``--dry-run``, list what the
import would change and change nothing."""
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.studies.errors import StudyFileError, StudyImportError
from spotlight_study.studies.services import study_import_outcome


class Command(BaseCommand):
    help = (
        "Validate a study file (YAML or JSON) and load it. Bad fields are named; design "
        "warnings are printed."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Replace the definition of the study with the same slug (refused once a real "
            "participant has consented; pilot data is deleted with the old definition).",
        )
        parser.add_argument(
            "--drop-missing",
            action="store_true",
            help="With --replace: delete the study's settings that the file does not have (for "
            "example settings built on the Stimuli pages). Without it such a replace is refused; "
            "run export_study first to get a file with every setting.",
        )
        parser.add_argument(
            "--as-slug",
            metavar="NEW_SLUG",
            help="Import under this slug instead of the file's, e.g. to copy a frozen study as a "
            "new version.",
        )
        parser.add_argument(
            "--if-missing",
            action="store_true",
            help="Do nothing if a study with this slug already exists.",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Validate the file and list what the import would change (study fields, and "
            "settings added, removed or changed, by key); change nothing.",
        )

    def handle(self, *args, **options):
        from spotlight_study.studies.models import Study
        from spotlight_study.studies.schema import parse_study_file
        from spotlight_study.studies.selectors import study_design_warnings, study_get_with_settings

        if options["drop_missing"] and not options["replace"]:
            raise CommandError("--drop-missing only applies with --replace.")
        try:
            data = parse_study_file(options["file"])
            if options["dry_run"]:
                self._dry_run(data, options)
                return
            if options["if_missing"]:
                slug = options["as_slug"] or data.get("slug")
                if Study.objects.filter(slug=slug).exists():
                    self.stdout.write(f"Study '{slug}' already exists; left as it is.")
                    return
            outcome = study_import_outcome(
                data=data,
                replace=options["replace"],
                as_slug=options["as_slug"],
                drop_missing=options["drop_missing"],
            )
        except (StudyFileError, StudyImportError) as exc:
            raise CommandError(str(exc)) from None
        study = outcome.study
        if options["replace"]:
            # Said even when nothing went: a researcher replacing a piloted study expects to see
            # what happened to the pilot.
            self.stdout.write(
                f"Removed with the old definition: {outcome.pilot_participants_removed} pilot "
                f"participant(s) and {outcome.unconsented_arrivals_removed} arrival(s) who never "
                "consented."
            )
        n_main = study.settings.filter(kind="main").count()
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported study '{study.slug}' ({study.get_status_display()}): "
                f"1 training setting, {n_main} main settings, conditions {study.conditions}."
            )
        )
        for warning in study_design_warnings(study_get_with_settings(slug=study.slug)):
            self.stdout.write(self.style.WARNING(f"Design warning: {warning}"))

    def _dry_run(self, data: dict, options: dict) -> None:
        """Print what the import would do; raise ``CommandError`` if it would be refused."""
        from spotlight_study.studies.changes import study_import_preview
        from spotlight_study.studies.schema import validate_study_data

        if options["as_slug"] is not None:
            data = {**data, "slug": options["as_slug"]}
        preview = study_import_preview(
            clean=validate_study_data(data),
            replace=options["replace"],
            drop_missing=options["drop_missing"],
        )
        for line in preview.lines():
            self.stdout.write(line)
        if preview.refusal:
            raise CommandError(f"The import would be refused: {preview.refusal}")
