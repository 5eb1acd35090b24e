"""``manage.py erase_participant SLUG --pid PID``: erase one participant's data on request."""
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.privacy.errors import PrivacyError
from spotlight_study.privacy.services import participant_erase


class Command(BaseCommand):
    help = (
        "Erase every row of a study that holds or derives from one participant (answers, survey "
        "answers, telemetry, annotations of their answers, Prolific submission rows, stored "
        "webhook payloads) and write an audit entry without the Prolific ID."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--pid", required=True, help="The participant's Prolific ID.")
        parser.add_argument("--by", default="", help="Who asked for it or runs it (for the audit).")
        parser.add_argument(
            "--note", default="", help="Free text for the audit, e.g. a ticket number (no PID)."
        )

    def handle(self, *args, slug, pid, by, note, **options):
        study = study_for_command(slug)
        try:
            result = participant_erase(study=study, prolific_pid=pid, performed_by=by, note=note)
        except PrivacyError as exc:
            raise CommandError(str(exc)) from None
        action = result.action
        removed = ", ".join(f"{k}={v}" for k, v in sorted(action.rows.items()) if v)
        self.stdout.write(f"Erased. Audit reference: {action.reference}")
        self.stdout.write(f"Rows removed or redacted: {removed or 'none'}")
        self.stdout.write(
            f"Exports written before now may still hold pseudonym {result.pseudonym}: delete its "
            "rows there (this pseudonym is not stored anywhere any more)."
        )
        if result.other_studies:
            self.stdout.write(
                f"This Prolific ID also took part in {result.other_studies} other study(ies); "
                "erasure is per study: run the command for each of them if the request covers them."
            )
