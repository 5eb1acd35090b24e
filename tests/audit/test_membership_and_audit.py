"""Study membership (issue 40, section 1) and the audit trail (section 3): the services, the
commands, the migration from the global groups, the owners' pages and the CSV export."""
from __future__ import annotations

import copy
import csv
import importlib
import io
from io import StringIO

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.test import Client

from spotlight_study.accounts.roles import LAB_ADMINS, RUNNING, is_staff_user
from spotlight_study.audit.models import AuditEntry
from spotlight_study.audit.selectors import audit_csv
from spotlight_study.audit.services import audit_record
from spotlight_study.studies.access import studies_visible_to
from spotlight_study.studies.errors import StudyMemberError
from spotlight_study.studies.members import member_add, member_remove, member_rows
from spotlight_study.studies.models import Study, StudyMember
from spotlight_study.studies.services import study_import

pytestmark = [pytest.mark.own_membership, pytest.mark.django_db]


@pytest.fixture
def two_studies(demo_data):
    """The demo study and a copy under another slug."""
    study_import(data=demo_data)
    other = copy.deepcopy(demo_data)
    other["slug"] = "second-study"
    study_import(data=other)
    return Study.objects.get(slug=demo_data["slug"]), Study.objects.get(slug="second-study")


def _user(name, **fields):
    return User.objects.create_user(name, password="pw-for-tests-only", **fields)


def test_members_see_only_their_studies_and_staff_see_all(two_studies):
    a, b = two_studies
    ann = _user("ann")
    member_add(study=a, username="ann", role="researcher")
    assert list(studies_visible_to(ann)) == [a]
    assert list(studies_visible_to(ann, ["annotator"])) == []
    boss = _user("boss", is_staff=True)
    assert not is_staff_user(boss) and list(studies_visible_to(boss)) == []  # is_staff alone: nothing
    boss.groups.add(Group.objects.get_or_create(name=LAB_ADMINS)[0])
    boss = User.objects.get(pk=boss.pk)
    assert set(studies_visible_to(boss, RUNNING)) == {a, b}
    assert list(studies_visible_to(boss, ["annotator"])) == []  # staff never annotate
    with pytest.raises(ValueError, match="Unknown study roles"):
        studies_visible_to(ann, ["janitor"])


def test_annotation_stays_blind_and_bad_changes_change_nothing(two_studies):
    a, _ = two_studies
    _user("rita")
    _user("staffer", is_superuser=True, is_staff=True)
    member_add(study=a, username="rita", role="researcher")
    before = StudyMember.objects.count()
    for username, role, message in [
        ("rita", "annotator", "cannot annotate it blind"),
        ("staffer", "annotator", "cannot annotate it blind"),
        ("rita", "researcher", "already researcher"),
        ("nobody", "viewer", "There is no user"),
        ("rita", "janitor", "Unknown role"),
    ]:
        with pytest.raises(StudyMemberError, match=message):
            member_add(study=a, username=username, role=role)
    _user("blind")
    member_add(study=a, username="blind", role="annotator")
    with pytest.raises(StudyMemberError, match="annotates .* blind"):
        member_add(study=a, username="blind", role="viewer")
    assert StudyMember.objects.count() == before + 1
    with pytest.raises(StudyMemberError, match="is not viewer"):
        member_remove(study=a, username="blind", role="viewer")


def test_every_membership_change_is_in_the_audit_trail(two_studies):
    a, b = two_studies
    owner = _user("olga")
    _user("amir")
    member_add(study=a, username="amir", role="annotator", actor=owner)
    member_add(study=a, username="amir", role="adjudicator", actor=owner)
    assert member_rows(study=a) == [
        {"username": "amir", "roles": ["adjudicator", "annotator"], "added_at": member_rows(study=a)[0]["added_at"]}
    ]
    assert member_remove(study=a, username="amir", actor=owner) == ["adjudicator", "annotator"]
    trail = list(AuditEntry.objects.filter(study_id=a.pk).order_by("id"))
    assert [(e.action, e.actor_username, e.detail.get("role") or e.detail.get("roles")) for e in trail] == [
        ("membership.add", "olga", "annotator"),
        ("membership.add", "olga", "adjudicator"),
        ("membership.remove", "olga", ["adjudicator", "annotator"]),
    ]
    assert not AuditEntry.objects.filter(study_id=b.pk).exists()


def test_study_members_command(two_studies):
    a, _ = two_studies
    _user("vic")
    out = StringIO()
    call_command("study_members", a.slug, "add", "vic", "--role", "viewer", stdout=out)
    call_command("study_members", a.slug, "list", stdout=out)
    assert "vic\tviewer" in out.getvalue()
    with pytest.raises(CommandError, match="already viewer"):
        call_command("study_members", a.slug, "add", "vic", "--role", "viewer")
    with pytest.raises(CommandError, match="No study with slug"):
        call_command("study_members", "no-such", "list")
    call_command("study_members", a.slug, "remove", "vic", stdout=out)
    assert not StudyMember.objects.filter(user__username="vic").exists()
    assert AuditEntry.objects.filter(study_id=a.pk, action="membership.remove", actor_username="").exists()


def test_add_annotator_with_study_makes_a_member_of_that_study_only(two_studies):
    a, b = two_studies
    out = StringIO()
    call_command("add_annotator", "nina", "--study", a.slug, "--password-generate", stdout=out)
    nina = User.objects.get(username="nina")
    assert list(studies_visible_to(nina, ["annotator"])) == [a]
    assert f"Annotator of: {a.slug}" in out.getvalue()
    with pytest.raises(CommandError, match="No study with slug"):
        call_command("add_annotator", "nobody-new", "--study", "no-such")
    assert not User.objects.filter(username="nobody-new").exists()
    call_command("add_annotator", "otto", "--adjudicator", "--study", b.slug, stdout=out)
    assert StudyMember.objects.filter(user__username="otto", study=b, role="adjudicator").exists()


def test_the_migration_makes_the_global_roles_members_of_every_study(two_studies):
    """studies/migrations/0014: the groups' users become members of every existing study and
    is_staff users lab admins, so a running instance behaves as before."""
    a, b = two_studies
    for name, group in [("g-res", "researchers"), ("g-ann", "annotators"), ("g-adj", "adjudicators")]:
        _user(name).groups.add(Group.objects.get_or_create(name=group)[0])
    _user("g-staff", is_staff=True)
    migration = importlib.import_module("spotlight_study.studies.migrations.0014_members_from_global_roles")
    migration.forwards(django_apps, None)
    got = set(StudyMember.objects.values_list("user__username", "study__slug", "role"))
    assert got == {
        (user, s.slug, role) for s in (a, b)
        for user, role in [("g-res", "researcher"), ("g-ann", "annotator"), ("g-adj", "adjudicator")]
    }
    assert is_staff_user(User.objects.get(username="g-staff"))
    migration.forwards(django_apps, None)  # again: nothing doubled
    assert StudyMember.objects.count() == 6


def test_owners_see_the_trail_on_the_study_page_and_export_it_safely(two_studies):
    a, _ = two_studies
    owner, researcher = _user("=owner"), _user("rex")
    StudyMember.objects.create(study=a, user=owner, role="owner")
    StudyMember.objects.create(study=a, user=researcher, role="researcher")
    audit_record(action="export.download", actor=researcher, study=a, summary="=HYPERLINK(\"http://x\")")
    client = Client()
    client.force_login(owner)
    page = client.get(f"/researcher/{a.slug}/")
    assert page.status_code == 200 and b'id="audit-trail"' in page.content
    assert b"export.download" in page.content
    response = client.get(f"/researcher/{a.slug}/audit.csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert rows[-1]["summary"] == "'=HYPERLINK(\"http://x\")" and rows[-1]["actor"] == "rex"
    assert response.content.decode() == audit_csv(study_id=a.pk)
    # A researcher sees the study page without the owners' part, and is refused the trail.
    client.force_login(researcher)
    assert b'id="audit-trail"' not in client.get(f"/researcher/{a.slug}/").content
    assert client.get(f"/researcher/{a.slug}/audit/").status_code == 403


def test_the_team_page_adds_and_removes_members_with_the_author_recorded(two_studies):
    a, _ = two_studies
    owner = _user("olive")
    StudyMember.objects.create(study=a, user=owner, role="owner")
    _user("new-viewer")
    client = Client()
    client.force_login(owner)
    assert client.post(f"/researcher/{a.slug}/team/", {"username": "new-viewer", "role": "viewer"}).status_code == 302
    refused = client.post(f"/researcher/{a.slug}/team/", {"username": "ghost", "role": "viewer"})
    assert refused.status_code == 400 and refused.content.count(b"There is no user") == 1  # once, by its form
    assert b"new-viewer" in client.get(f"/researcher/{a.slug}/team/").content
    client.post(f"/researcher/{a.slug}/team/remove/", {"username": "new-viewer", "role": "viewer"})
    assert not StudyMember.objects.filter(user__username="new-viewer").exists()
    assert list(AuditEntry.objects.filter(study_id=a.pk).values_list("action", "actor_username").order_by("id")) == [
        ("membership.add", "olive"), ("membership.remove", "olive"),
    ]


def test_downloads_and_endings_are_audited(two_studies, client):
    from tests.conftest import Walker

    from spotlight_study.participation.ending import participants_end
    from spotlight_study.participation.selectors import participant_pseudonym

    a, _ = two_studies
    rex = _user("rex2")
    StudyMember.objects.create(study=a, user=rex, role="researcher")
    client.force_login(rex)
    assert client.get(f"/researcher/{a.slug}/export.zip").status_code == 200
    assert client.get(f"/annotate/{a.slug}/export/annotations.csv").status_code == 200
    walker = Walker(Client(), a.slug)
    walker.enter()
    participants_end(study=a, pseudonyms=[participant_pseudonym(study=a, prolific_pid=walker.pid)],
                     reason="Idle for an hour.", ended_by=rex)
    actions = list(AuditEntry.objects.filter(study_id=a.pk).values_list("action", "actor_username").order_by("id"))
    assert actions == [("export.download", "rex2"), ("export.download", "rex2"), ("participants.end", "rex2")]


def test_an_unknown_audit_action_is_refused():
    with pytest.raises(ValueError, match="Unknown audit action"):
        audit_record(action="membership.ad")


def test_credential_changes_are_recorded_without_values(two_studies):
    """The function section 2 calls: names the fields, never a value."""
    from spotlight_study.audit.services import credentials_change_record

    a, _ = two_studies
    owner = _user("cred-owner")
    entry = credentials_change_record(study=a, actor=owner, fields=["webhook_secret", "token"])
    assert (entry.action, entry.actor_username, entry.detail) == (
        "credentials.set", "cred-owner", {"fields": ["token", "webhook_secret"]}
    )
    assert credentials_change_record(study=a, cleared=True).action == "credentials.clear"


def test_the_instance_team_page_gives_a_new_annotator_chosen_studies(two_studies):
    a, b = two_studies
    staff = _user("lab-boss", is_superuser=True, is_staff=True)
    client = Client()
    client.force_login(staff)
    response = client.post("/researcher/team/", {
        "username": "new-ann", "role": "annotators", "password": "generate", "studies": [b.slug],
    })
    assert response.status_code == 200
    new = User.objects.get(username="new-ann")
    assert list(studies_visible_to(new, ["annotator"])) == [b]
    entry = AuditEntry.objects.get(study_id=b.pk)
    assert (entry.action, entry.actor_username) == ("membership.add", "lab-boss")
