"""``manage.py import_study FILE [--replace]``: load a study from a YAML or JSON file."""
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.studies.schema import StudyFileError
from spotlight_study.studies.services import StudyImportError, study_import_file


class Command(BaseCommand):
    help = "Validate a study file (YAML or JSON) and load it. Bad fields are named."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Replace an existing study with the same slug (refused once it has participants).",
        )
        parser.add_argument(
            "--if-missing",
            action="store_true",
            help="Do nothing if a study with this slug already exists.",
        )

    def handle(self, *args, **options):
        from spotlight_study.studies.models import Study
        from spotlight_study.studies.schema import parse_study_file

        try:
            if options["if_missing"]:
                data = parse_study_file(options["file"])
                if Study.objects.filter(slug=data.get("slug")).exists():
                    self.stdout.write(f"Study '{data.get('slug')}' already exists; left as it is.")
                    return
            study = study_import_file(path=options["file"], replace=options["replace"])
        except (StudyFileError, StudyImportError) as exc:
            raise CommandError(str(exc)) from None
        n_main = study.settings.filter(kind="main").count()
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported study '{study.slug}' ({study.get_status_display()}): "
                f"1 training setting, {n_main} main settings, conditions {study.conditions}."
            )
        )
