"""``manage.py add_annotator USERNAME [--adjudicator] [--study SLUG ...] [--email E] [--password-generate]``."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.accounts.roles import ADJUDICATORS, ANNOTATORS
from spotlight_study.annotation.errors import TeamError
from spotlight_study.commands import study_for_command
from spotlight_study.annotation.team import password_set_link, team_member_create

DEFAULT_BASE_URL = "http://127.0.0.1:8000"


class Command(BaseCommand):
    help = (
        "Create a non-staff annotator (group 'annotators'), or with --adjudicator an adjudicator "
        "(group 'adjudicators'), and print a one-time link to set the password, or with "
        "--password-generate a generated password. An existing username is refused; nothing "
        "is changed then. With --study SLUG (repeatable) the user becomes a member of that study "
        "with the role; without it, of no study yet (manage.py study_members SLUG add USERNAME "
        "--role annotator gives them one)."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--adjudicator", action="store_true", help="Create an adjudicator instead of an annotator."
        )
        parser.add_argument(
            "--study", action="append", default=[], metavar="SLUG",
            help="Make the new user a member of this study with the role (repeatable).",
        )
        parser.add_argument("--email", default="", help="E-mail address of the new user (optional).")
        parser.add_argument(
            "--password-generate",
            action="store_true",
            help="Set and print a random password instead of printing a link to set one.",
        )
        parser.add_argument(
            "--base-url",
            default=None,
            help="Scheme and host of the site for the link (default: PROLIFIC_STUDY_BASE_URL, "
            f"else {DEFAULT_BASE_URL}).",
        )

    def handle(self, *args, username, adjudicator, study, email, password_generate, base_url, **options):
        """Create the user (and their study memberships); ``CommandError``, nothing created, on
        a taken or invalid username, an invalid e-mail or base URL, or an unknown study."""
        role = ADJUDICATORS if adjudicator else ANNOTATORS
        if base_url is not None and not base_url.startswith(("http://", "https://")):
            raise CommandError(f"--base-url must start with http:// or https://, got {base_url!r}.")
        studies = [study_for_command(slug) for slug in dict.fromkeys(study)]
        try:
            member = team_member_create(
                username=username, role=role, email=email, generate_password=password_generate,
                studies=studies,
            )
        except TeamError as exc:
            raise CommandError(str(exc)) from None
        kind = "adjudicator" if adjudicator else "annotator"
        self.stdout.write(f"Created {kind} '{member.user.username}' (group '{role}', not staff).")
        if studies:
            self.stdout.write(f"  {kind.capitalize()} of: {', '.join(s.slug for s in studies)}")
        else:
            self.stdout.write(
                f"  Member of no study yet: manage.py study_members SLUG add {member.user.username} --role {kind}"
            )
        if member.password:
            self.stdout.write(f"  Password: {member.password}  (shown once; not stored in clear)")
            return
        base = base_url or settings.PROLIFIC_STUDY_BASE_URL or DEFAULT_BASE_URL
        link = password_set_link(user=member.user, base_url=base)
        self.stdout.write(f"  Set-password link (works once): {link}")
