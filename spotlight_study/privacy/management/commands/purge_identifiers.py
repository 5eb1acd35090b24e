"""``manage.py purge_identifiers SLUG``: replace raw Prolific IDs by pseudonyms, keeping the data."""
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.privacy.errors import PrivacyError
from spotlight_study.privacy.services import identifiers_purge


class Command(BaseCommand):
    help = (
        "After a study has closed: replace every raw Prolific ID of the study (participants, "
        "submission rows, webhook payloads, bonus payments) by its export pseudonym. "
        "The data are kept and the exports do not change."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument(
            "--even-if-open",
            action="store_true",
            help="Purge although the study is not closed (returning participants are then not "
            "recognized).",
        )
        parser.add_argument("--by", default="", help="Who runs it (for the audit).")
        parser.add_argument("--note", default="", help="Free text for the audit (no PID).")

    def handle(self, *args, slug, even_if_open, by, note, **options):
        study = study_for_command(slug)
        try:
            action = identifiers_purge(
                study=study, performed_by=by, note=note, even_if_open=even_if_open
            )
        except PrivacyError as exc:
            raise CommandError(str(exc)) from None
        changed = ", ".join(f"{k}={v}" for k, v in sorted(action.rows.items()))
        self.stdout.write(f"Identifiers purged. Audit reference: {action.reference}")
        self.stdout.write(f"Rows changed: {changed}")
