"""``manage.py prolific_webhooks <slug> list|create|delete [--new-secret]``: the webhook subscriptions."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.prolific import selectors
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.prolific.services.hooks import hooks_manage


class Command(BaseCommand):
    """List, create (submission and study status changes) or delete the subscriptions to this server."""

    help = "Manage the Prolific workspace's webhook subscriptions that point at this server's webhook URL."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("action", choices=["list", "create", "delete"])
        parser.add_argument(
            "--new-secret", action="store_true",
            help="With create: make a new signing secret on Prolific (replaces the workspace's); saved with "
            "the study if it has its own token, else printed once for PROLIFIC_WEBHOOK_SECRET.",
        )

    def handle(self, *args, slug: str, action: str, new_secret: bool, **options) -> None:
        ps = selectors.prolific_study_for(study_for_command(slug))
        if ps is None:
            raise CommandError(f"Study '{slug}' is not linked to Prolific (see prolific_study).")
        try:
            r = hooks_manage(prolific_study_id=ps.pk, action=action, new_secret=new_secret)
        except (ProlificServiceError, ProlificError) as exc:
            raise CommandError(str(exc)) from None
        if r.secret_saved:
            self.stdout.write("New signing secret saved, encrypted, as the study's own webhook secret.")
        if r.new_secret:
            self.stdout.write(
                "New signing secret (shown once): set PROLIFIC_WEBHOOK_SECRET to\n" + r.new_secret
            )
        if r.created:
            self.stdout.write(f"Created and confirmed {len(r.created)} subscription(s).")
        if r.deleted:
            self.stdout.write(f"Deleted {len(r.deleted)} subscription(s).")
        self.stdout.write(f"Subscriptions of workspace {r.workspace} to {r.target_url}: {len(r.subscriptions)}")
        for s in r.subscriptions:
            state = "enabled" if s.get("is_enabled") else "not enabled"
            self.stdout.write(f"  {s.get('id')}  {s.get('event_type')}  {state}")
