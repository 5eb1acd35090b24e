"""``manage.py demo_setup``: demo logins and a participant link for the embedded demo server."""
import secrets

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from spotlight_study.studies.models import Study

ROLES = ("researchers", "annotators", "adjudicators")


class Command(BaseCommand):
    help = (
        "Create (or reset) the demo logins 'researcher' (staff), 'annotator' and 'adjudicator' "
        "with new random passwords, and print them with a participant link for the demo study. "
        "For local use only."
    )

    def add_arguments(self, parser):
        parser.add_argument("--slug", default="spotlight-replication")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    @transaction.atomic
    def handle(self, *args, slug, base_url, **options):
        if not Study.objects.filter(slug=slug).exists():
            raise CommandError(f"No study '{slug}': run import_study first.")
        groups = {name: Group.objects.get_or_create(name=name)[0] for name in ROLES}
        logins = {}
        for username, staff, group in (
            ("researcher", True, "researchers"),
            ("annotator", False, "annotators"),
            ("adjudicator", False, "adjudicators"),
        ):
            user, _ = User.objects.get_or_create(username=username)
            password = secrets.token_urlsafe(12)
            user.set_password(password)
            user.is_staff = staff
            user.is_superuser = staff
            user.save()
            user.groups.add(groups[group])
            logins[username] = password
        pid, study_id, session_id = (secrets.token_hex(12) for _ in range(3))
        base = base_url.rstrip("/")
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "Spotlight study server (demo)",
                    f"  Participant link:  {base}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={study_id}&SESSION_ID={session_id}",
                    "                     (each new 24-hex PROLIFIC_PID is a new participant)",
                    f"  Researcher login:  {base}/accounts/login/  user 'researcher'  password '{logins['researcher']}'",
                    f"  Researcher page:   {base}/researcher/{slug}/",
                    f"  Annotator login:   {base}/accounts/login/  user 'annotator'  password '{logins['annotator']}'",
                    f"  Adjudicator login: {base}/accounts/login/  user 'adjudicator'  password '{logins['adjudicator']}'",
                    f"  Annotation page:   {base}/annotate/  (researchers: {base}/annotate/{slug}/overview/)",
                    "  (passwords are new each time this command runs)",
                    "",
                ]
            )
        )
