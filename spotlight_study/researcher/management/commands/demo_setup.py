"""``manage.py demo_setup``: demo logins and a participant link for the embedded demo server."""
import secrets

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from spotlight_study.studies.members import member_add
from spotlight_study.studies.models import Study, StudyMember

ROLES = ("researchers", "annotators", "adjudicators")


class Command(BaseCommand):
    help = (
        "Create (or reset) the demo logins 'researcher' (staff), one annotator per annotator the "
        "study needs per answer (k: 'annotator1', 'annotator2', ...) and 'adjudicator', with new "
        "random passwords, and print them with a participant link for the demo study. The "
        "annotators and the adjudicator become members of the study in their role ('researcher' "
        "is instance staff). For local use only."
    )

    def add_arguments(self, parser):
        parser.add_argument("--slug", default="spotlight-replication")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    @transaction.atomic
    def handle(self, *args, slug, base_url, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study '{slug}': run import_study first.")
        groups = {name: Group.objects.get_or_create(name=name)[0] for name in ROLES}
        # k annotators, so that every answer can get its k labels in the demo.
        annotators = [f"annotator{i}" for i in range(1, study.annotators_per_item + 1)]
        accounts = [("researcher", True, "researchers", None)]
        accounts += [(name, False, "annotators", StudyMember.Role.ANNOTATOR) for name in annotators]
        accounts += [("adjudicator", False, "adjudicators", StudyMember.Role.ADJUDICATOR)]
        logins = {}
        for username, staff, group, role in accounts:
            user, _ = User.objects.get_or_create(username=username)
            password = secrets.token_urlsafe(12)
            user.set_password(password)
            user.is_staff = staff
            user.is_superuser = staff
            user.is_active = True
            user.save()
            user.groups.add(groups[group])
            # Roles are per study (issue 40): the global group alone lets nobody annotate.
            if role is not None and not StudyMember.objects.filter(study=study, user=user, role=role).exists():
                member_add(study=study, username=username, role=role)
            logins[username] = password
        pid, study_id, session_id = (secrets.token_hex(12) for _ in range(3))
        base = base_url.rstrip("/")
        login = f"{base}/accounts/login/"
        lines = [
            "",
            "Spotlight study server (demo)",
            f"  Participant link:  {base}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={study_id}&SESSION_ID={session_id}",
            "                     (for another participant, change both PROLIFIC_PID and SESSION_ID to",
            "                     new 24-hex values: Prolific gives each participant their own session)",
            f"  Researcher login:  {login}  user 'researcher'  password '{logins['researcher']}'",
            f"  Researcher page:   {base}/researcher/{slug}/",
        ]
        for i, name in enumerate(annotators, start=1):
            label = f"Annotator {i} login:" if len(annotators) > 1 else "Annotator login:"
            lines.append(f"  {label:<19}{login}  user '{name}'  password '{logins[name]}'")
        lines += [
            f"  Adjudicator login: {login}  user 'adjudicator'  password '{logins['adjudicator']}'",
            f"  Annotation page:   {base}/annotate/  (researchers: {base}/annotate/{slug}/overview/)",
            f"  ({len(annotators)} annotators: each answer is labelled by k = "
            f"{study.annotators_per_item}; passwords are new each time this command runs)",
            "",
        ]
        self.stdout.write("\n".join(lines))
