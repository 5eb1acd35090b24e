"""``manage.py launch_check <slug or FILE> [--base-url URL]``: the go/no-go list before launch."""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.researcher.launch import GO, NO_GO, UNCHECKED, file_check, launch_check
from spotlight_study.studies.selectors import study_get

MARKS = {GO: "[go]     ", "warning": "[warning]", NO_GO: "[no-go]  ", UNCHECKED: "[unchecked]"}


class Command(BaseCommand):
    help = (
        "Print the launch check of a study (by slug) or of a study file not imported yet, and "
        "exit with status 1 on a no-go."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="A study slug, or the path of a YAML/JSON study file.")
        parser.add_argument(
            "--base-url",
            help="Public origin of this server for the URL check (default PROLIFIC_STUDY_BASE_URL).",
        )
        parser.add_argument(
            "--timeout", type=float, default=5.0, help="Seconds to wait for the study URL (default 5)."
        )

    def handle(self, *args, study, base_url, timeout, **options):
        if Path(study).is_file():
            report = file_check(study)
        else:
            the_study = study_get(slug=study)
            if the_study is None:
                raise CommandError(f"No study '{study}' and no such file.")
            report = launch_check(study=the_study, base_url=base_url, timeout_s=timeout)
        self.stdout.write(f"Launch check of {report.subject}:")
        for item in report.items:
            self.stdout.write(f"  {MARKS.get(item.status, item.status)} {item.check}: {item.detail}")
        blocking = sum(1 for item in report.items if item.status == NO_GO)
        if report.go:
            self.stdout.write(self.style.SUCCESS("go"))
            return
        self.stdout.write(self.style.ERROR(f"no-go ({blocking} blocking item(s))"))
        raise CommandError(f"no-go: {blocking} blocking item(s) above.", returncode=1)
