"""``manage.py prolific_study <slug> ACTION``: the study on Prolific.

    prolific_study SLUG configure --description TEXT --reward-minor-units N [options]
    prolific_study SLUG show                      the payload that create would send
    prolific_study SLUG create [--base-url URL]   create the draft on Prolific
    prolific_study SLUG link PROLIFIC_STUDY_ID    use a study made in Prolific's app
    prolific_study SLUG publish|pause|start|stop
"""
from __future__ import annotations

import json

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.prolific import selectors
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.prolific.payloads import REJECTION_CATEGORIES
from spotlight_study.prolific.services import study as study_services
from spotlight_study.prolific.models import ProlificStudy
from spotlight_study.studies.models import Study

TRANSITIONS = {"publish": "PUBLISH", "pause": "PAUSE", "start": "START", "stop": "STOP"}


class Command(BaseCommand):
    """Configure, create, link, publish, pause, start or stop a study on Prolific."""

    help = "Create and manage a study's counterpart on Prolific (see docs/prolific.md)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("action", choices=["configure", "show", "create", "link", *TRANSITIONS])
        parser.add_argument("prolific_id", nargs="?", help="For link: the Prolific study id.")
        parser.add_argument("--description", help="Shown to participants on Prolific.")
        parser.add_argument("--reward-minor-units", type=int, help="Reward per participant, in pence/cents.")
        parser.add_argument("--places", type=int, default=0, help="Places (default: target sample size).")
        parser.add_argument("--device", action="append", choices=["desktop", "tablet", "mobile"])
        parser.add_argument("--filters-json", help="A JSON file with a list of Prolific filters.")
        parser.add_argument("--participant-group", default="", help="Participant group id to fill and block.")
        parser.add_argument("--auto-approve", action="store_true", help="Completed code approves automatically.")
        parser.add_argument(
            "--failed-check-review",
            choices=[c.value for c in ProlificStudy.FailedCheckReview],
            default=ProlificStudy.FailedCheckReview.REQUEST_RETURN,
        )
        parser.add_argument("--rejection-category", default="", choices=["", *REJECTION_CATEGORIES])
        parser.add_argument("--rejection-message", default="", help="At least 100 characters.")
        parser.add_argument(
            "--screen-out-reward-minor-units", type=int, default=0,
            help="Paid screen-out of failed instruction checks under the 'end' policy (0: none).",
        )
        parser.add_argument("--base-url", help="Public origin of this server (default PROLIFIC_STUDY_BASE_URL).")

    def handle(self, *args, slug: str, action: str, **o) -> None:
        study = study_for_command(slug)
        try:
            self._handle(study, action, o)
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
        except (ProlificServiceError, ProlificError) as exc:
            raise CommandError(str(exc)) from None

    def _handle(self, study: Study, action: str, o: dict) -> None:
        if action == "configure":
            if not o["description"] or o["reward_minor_units"] is None:
                raise CommandError("configure needs --description and --reward-minor-units.")
            filters = []
            if o["filters_json"]:
                with open(o["filters_json"], encoding="utf-8") as fh:
                    filters = json.load(fh)
            ps = study_services.prolific_study_configure(
                study=study,
                description=o["description"],
                reward_minor_units=o["reward_minor_units"],
                total_available_places=o["places"],
                device_compatibility=o["device"] or ["desktop"],
                filters=filters,
                participant_group_id=o["participant_group"],
                completed_action=ProlificStudy.CompletedAction.AUTOMATICALLY_APPROVE
                if o["auto_approve"]
                else ProlificStudy.CompletedAction.MANUALLY_REVIEW,
                failed_check_review=o["failed_check_review"],
                rejection_category=o["rejection_category"],
                rejection_message=o["rejection_message"],
                screen_out_reward_minor_units=o["screen_out_reward_minor_units"],
            )
            self.stdout.write(f"Prolific settings saved for '{study.slug}'.")
            return
        if action == "link":
            if not o["prolific_id"]:
                raise CommandError("link needs the Prolific study id.")
            ps = study_services.prolific_study_link(study=study, prolific_id=o["prolific_id"])
            self.stdout.write(f"'{study.slug}' is linked to Prolific study {ps.prolific_id}.")
            return
        ps = selectors.prolific_study_for(study)
        if ps is None:
            raise CommandError(f"Run `prolific_study {study.slug} configure ...` first.")
        if action == "show":
            base = o["base_url"] or settings.PROLIFIC_STUDY_BASE_URL or "https://YOUR-HOST"
            self.stdout.write(json.dumps(selectors.study_draft(ps, base_url=base).as_payload(), indent=2))
            return
        if action == "create":
            ps = study_services.prolific_study_create(prolific_study_id=ps.pk, base_url=o["base_url"])
            self.stdout.write(f"Draft created on Prolific: {ps.prolific_id}. Publish it with `prolific_study {study.slug} publish`.")
            return
        ps = study_services.prolific_study_transition(prolific_study_id=ps.pk, action=TRANSITIONS[action])
        self.stdout.write(f"{TRANSITIONS[action]} sent; Prolific status: {ps.prolific_status or 'unknown'}.")
