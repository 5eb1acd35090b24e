"""``manage.py prolific_demographics <slug>``: fetch the study's demographic export from Prolific."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.prolific import selectors
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.prolific.services.demographics import demographics_fetch


class Command(BaseCommand):
    """Store the participants' age, sex, country, first language etc. for the export and report."""

    help = (
        "Fetch Prolific's demographic export of the linked study; stored by submission and "
        "pseudonym (never the Prolific ID), it fills the demographic columns of participants.csv."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")

    def handle(self, *args, slug: str, **options) -> None:
        study = study_for_command(slug)
        ps = selectors.prolific_study_for(study)
        if ps is None:
            raise CommandError(f"Study '{slug}' is not linked to Prolific (see prolific_study).")
        try:
            report = demographics_fetch(prolific_study_id=ps.pk)
        except (ProlificServiceError, ProlificError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(report.message())
