"""``manage.py llm_accept SLUG --model M --label FIELD [--label ...] [--revoke] [--by USER]``.

Accepts the machine coder's labels of model ``M`` as final labels for the named label fields,
on every item of the study without a human final label (agreement or adjudication); items with
one are never touched. ``--revoke`` undoes an acceptance. Every run is logged (who, when, model,
field, items) and shown with ``--log``. See
:mod:`spotlight_study.annotation.services.machine_acceptance`.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.annotation.errors import MachineAcceptanceError
from spotlight_study.annotation.models import MachineAcceptance
from spotlight_study.annotation.services.machine_acceptance import (
    ACCEPTABLE_FIELDS,
    AcceptanceReport,
    machine_labels_accept,
    machine_labels_revoke,
)
from spotlight_study.commands import study_for_command


class Command(BaseCommand):
    """``llm_accept``: see the module docstring."""

    help = (
        "Use the machine coder's labels of one model as final labels for the named label "
        "fields, on items without a human final label (never overwriting one). Audited and "
        "reversible with --revoke."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--model", help="The model given to llm_annotate (llm:<model> works).")
        parser.add_argument(
            "--label", action="append", default=[], metavar="FIELD",
            help=f"A label field to accept (repeat for more): {', '.join(ACCEPTABLE_FIELDS)}.",
        )
        parser.add_argument(
            "--revoke", action="store_true",
            help="Undo the acceptance: remove these fields from the machine final labels.",
        )
        parser.add_argument(
            "--by", metavar="USERNAME", help="The researcher taking the decision (recorded)."
        )
        parser.add_argument("--log", action="store_true", help="Show the acceptance log only.")

    def handle(self, *args, slug, model, label, revoke, by, log, **options):
        study = study_for_command(slug)
        if log:
            self._log(study)
            return
        if not model:
            raise CommandError("--model is required (the model given to llm_annotate).")
        user = None
        if by:
            user = get_user_model().objects.filter(username=by).first()
            if user is None:
                raise CommandError(f"--by: there is no user named {by!r}.")
        service = machine_labels_revoke if revoke else machine_labels_accept
        try:
            report = service(study=study, model=model, fields=label, user=user)
        except MachineAcceptanceError as exc:
            raise CommandError(str(exc)) from None
        self._show(report)

    def _show(self, report: AcceptanceReport) -> None:
        verb = "Accepted" if report.action == MachineAcceptance.Action.ACCEPT else "Revoked"
        self.stdout.write(f"{verb} llm:{report.model} for {', '.join(report.fields)}:")
        for field in report.fields:
            line = f"  {field}: {report.items[field]} item(s) "
            line += "given the machine value" if verb == "Accepted" else "without it now"
            if report.no_value and report.no_value[field]:
                line += f"; {report.no_value[field]} without a machine value"
            self.stdout.write(line)
        if verb == "Accepted":
            self.stdout.write(
                f"  {report.human_final} item(s) with a human final label left unchanged."
            )

    def _log(self, study) -> None:
        entries = MachineAcceptance.objects.filter(study=study).order_by("at", "pk")
        if not entries:
            self.stdout.write("No machine labels were ever accepted in this study.")
        for e in entries:
            self.stdout.write(
                f"{e.at.isoformat()} {e.action} llm:{e.model} {e.field} by {e.actor}: "
                f"{e.items} item(s)"
            )
