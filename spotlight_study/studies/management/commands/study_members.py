"""``manage.py study_members SLUG (list | add USERNAME --role ROLE | remove USERNAME [--role ROLE])``.

Scripts a study's team (issue 40). Each change is recorded in the audit trail with no author
(a command line has no logged-in user; ``--as USERNAME`` names one).
"""
from __future__ import annotations

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.accounts.roles import STUDY_ROLES
from spotlight_study.studies.errors import StudyMemberError
from spotlight_study.studies.members import member_add, member_remove, member_rows
from spotlight_study.studies.selectors import study_get


class Command(BaseCommand):
    help = "List, add or remove a study's members and their roles (owner, researcher, annotator, adjudicator, viewer)."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study's slug")
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="the members, one line each: username and roles")
        add = sub.add_parser("add", help="give an existing user a role on the study")
        add.add_argument("username")
        add.add_argument("--role", required=True, choices=STUDY_ROLES)
        remove = sub.add_parser("remove", help="take a user's role (or every role) on the study away")
        remove.add_argument("username")
        remove.add_argument("--role", choices=STUDY_ROLES, help="only this role (default: every role)")
        for p in (add, remove):
            p.add_argument("--as", dest="actor", default="", help="username recorded as the author in the audit trail")

    def handle(self, *args, **options):
        """Run the action; ``CommandError`` (exit status 1, nothing changed) on an unknown study,
        user or role, or a change the rules refuse."""
        slug = options["slug"]
        study = study_get(slug=slug, with_settings=False)
        if study is None:
            raise CommandError(f"No study with slug '{slug}'.")
        if options["action"] == "list":
            rows = member_rows(study=study)
            for row in rows:
                self.stdout.write(f"{row['username']}\t{','.join(row['roles'])}")
            if not rows:
                self.stdout.write(f"{slug} has no members (instance staff see it all the same).")
            return
        actor = None
        if options.get("actor"):
            actor = User.objects.filter(username=options["actor"]).first()
            if actor is None:
                raise CommandError(f"There is no user named {options['actor']!r} (--as).")
        try:
            if options["action"] == "add":
                member_add(study=study, username=options["username"], role=options["role"], actor=actor)
                self.stdout.write(f"{options['username']} is now {options['role']} of {slug}.")
            else:
                removed = member_remove(study=study, username=options["username"], role=options["role"], actor=actor)
                self.stdout.write(f"{options['username']} is no longer {', '.join(removed)} of {slug}.")
        except StudyMemberError as exc:
            raise CommandError(str(exc)) from None
