"""The researcher team page: staff add and remove annotators and adjudicators."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from spotlight_study.accounts.roles import ADJUDICATORS, ANNOTATORS


def is_annotator(user) -> bool:
    """On the annotation team as an annotator (the team page's group; which studies they annotate
    is their study membership, issue 40)."""
    return user.groups.filter(name=ANNOTATORS).exists()


def is_adjudicator(user) -> bool:
    """On the annotation team as an adjudicator (see :func:`is_annotator`)."""
    return user.groups.filter(name=ADJUDICATORS).exists()
from spotlight_study.annotation.models import Assignment
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import assignment_next

from ..annotation.conftest import complete_participants, label, make_user
from ..conftest import make_staff

URL = "/researcher/team/"
REMOVE = "/researcher/team/remove/"


@pytest.fixture
def staff(db):
    """A client logged in as staff (CSRF checks on, as in the browser)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_staff())
    return client


def csrf_post(client: Client, url: str, data: dict):
    """POST ``data`` with the CSRF token of the team page, as its forms do."""
    page = client.get(URL)
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content).group(1).decode()
    return client.post(url, {**data, "csrfmiddlewaretoken": token})


def fresh(user: User) -> User:
    """The user re-read, so the role checks see the current groups."""
    return User.objects.get(pk=user.pk)


def test_page_is_staff_only(db, client):
    """Anonymous users go to the login page; annotators and researchers-group members get 403."""
    assert client.get(URL)["Location"].startswith("/accounts/login/")
    for user in (make_user("ann", ANNOTATORS), make_user("res", "researchers")):
        client.force_login(user)
        assert client.get(URL).status_code == 403
        assert client.post(REMOVE, {"user": user.pk, "role": ANNOTATORS}).status_code == 403


def test_post_without_csrf_token_is_refused(staff):
    """Adding without the CSRF token is refused (403) and creates nobody."""
    response = staff.post(URL, {"username": "x1", "role": ANNOTATORS, "password": "link"})
    assert response.status_code == 403
    assert not User.objects.filter(username="x1").exists()


def test_add_annotator_shows_one_time_link_that_works(staff):
    """Adding an annotator creates a non-staff member and shows a set-password link that works once."""
    response = csrf_post(staff, URL, {"username": "ann7", "role": ANNOTATORS, "email": "", "password": "link"})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    user = User.objects.get(username="ann7")
    assert is_annotator(user) and not user.is_staff
    assert b"Created the annotator ann7" in response.content
    link = re.search(rb'id="set-password-link">([^<]+)<', response.content).group(1).decode()
    path = "/" + link.split("://", 1)[1].split("/", 1)[1]
    member = Client()
    form_url = member.get(path)["Location"]
    done = member.post(form_url, {"new_password1": "Another-long-pass-9", "new_password2": "Another-long-pass-9"})
    assert done.status_code == 302
    assert fresh(user).check_password("Another-long-pass-9")


def test_add_adjudicator_with_generated_password(staff):
    """An adjudicator with a generated password: the password is shown once and is the user's."""
    response = csrf_post(staff, URL, {"username": "adj2", "role": ADJUDICATORS, "password": "generate"})
    password = re.search(rb"shown only now\): <code>([^<]+)</code>", response.content).group(1).decode()
    user = User.objects.get(username="adj2")
    assert is_adjudicator(user) and not is_annotator(user)
    assert user.check_password(password)


def test_existing_username_is_refused_with_message(staff):
    """A taken username gives the form back (400) with the reason; the user is unchanged."""
    user = make_user("taken")
    response = csrf_post(staff, URL, {"username": "taken", "role": ANNOTATORS, "password": "link"})
    assert response.status_code == 400
    assert b"already exists; nothing was changed" in response.content
    assert not fresh(user).groups.exists()


def test_bad_form_input_is_refused(staff):
    """An unknown role or a bad e-mail gives the form back with errors and creates nobody."""
    for data in ({"username": "u1", "role": "admins", "password": "link"},
                 {"username": "u1", "role": ANNOTATORS, "email": "nope", "password": "link"}):
        response = csrf_post(staff, URL, data)
        assert response.status_code == 400
    assert not User.objects.filter(username="u1").exists()


def test_existing_user_can_be_given_a_role_but_staff_cannot_annotate(staff):
    """'Existing user' adds a removed member back; staff are refused as annotators (not blind)."""
    former = make_user("former")
    response = csrf_post(staff, URL, {"username": "former", "role": ANNOTATORS, "password": "link", "existing": "on"})
    assert response.status_code == 302
    assert is_annotator(fresh(former))
    boss = make_staff(username="boss")
    response = csrf_post(staff, URL, {"username": "boss", "role": ANNOTATORS, "password": "link", "existing": "on"})
    assert response.status_code == 400 and b"cannot annotate blind" in response.content
    assert not boss.groups.exclude(name="lab admins").exists()


def test_remove_keeps_labels_and_releases_reservations(staff, demo_study):
    """Removing an annotator takes them out of the group, keeps their labels and frees their reserved items."""
    complete_participants(demo_study.slug, 1)
    ann = make_user("ann1", ANNOTATORS)
    item = assignment_next(study=demo_study, annotator=ann)
    label_save(study=demo_study, annotator=ann, public_id=item.public_id, label=label())
    held = assignment_next(study=demo_study, annotator=ann)
    assert Assignment.objects.get(item=held, annotator=ann).state == Assignment.State.RESERVED
    response = csrf_post(staff, REMOVE, {"user": ann.pk, "role": ANNOTATORS, "confirm": "yes"})
    assert response.status_code == 302
    page = staff.get(URL)
    assert "ann1 is no longer an annotator. Their saved labels are kept; 1 open reservation(s) released" in page.content.decode()
    assert not is_annotator(fresh(ann))
    assert ann.annotations.count() == 1
    assert Assignment.objects.get(item=held, annotator=ann).state == Assignment.State.RELEASED
    assert b"ann1" not in page.content.split(b'id="team"')[1].split(b"</table>")[0]


def test_remove_of_non_member_or_unknown_user_changes_nothing(staff):
    """Removing a role the user lacks, or an unknown user, gives a message and changes nothing."""
    adj = make_user("adj", ADJUDICATORS)
    csrf_post(staff, REMOVE, {"user": adj.pk, "role": ANNOTATORS, "confirm": "yes"})
    assert "adj is not an annotator; nothing was changed." in staff.get(URL).content.decode()
    csrf_post(staff, REMOVE, {"user": 99999, "role": ADJUDICATORS, "confirm": "yes"})
    csrf_post(staff, REMOVE, {"user": "abc", "role": ADJUDICATORS, "confirm": "yes"})
    assert staff.get(REMOVE, {"user": 99999, "role": ADJUDICATORS}).status_code == 302
    assert "does not exist (any more)" in staff.get(URL).content.decode()
    assert is_adjudicator(fresh(adj))


def _form(html: str, form_id: str | None = None, action: str = REMOVE) -> tuple[str, dict]:
    """The method and the hidden fields of the first form posting to ``action`` (or ``form_id``)."""
    pattern = rf'<form method="(get|post)" action="{action}"' + (rf' id="{form_id}"' if form_id else "")
    match = re.search(pattern + r"[^>]*>(.*?)</form>", html, re.S)
    assert match, html
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', match.group(2)))
    return match.group(1), fields


def test_remove_asks_for_confirmation_before_changing_anything(staff, demo_study):
    """The team page's "Remove" opens a confirmation page (GET, no JavaScript); only its button
    removes the role, and "Cancel" goes back with nothing changed."""
    ann = make_user("ann-confirm", ANNOTATORS, ADJUDICATORS)
    method, fields = _form(staff.get(URL).content.decode())
    assert method == "get" and fields == {"user": str(ann.pk), "role": ADJUDICATORS}
    confirm = staff.get(REMOVE, fields)
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "Remove ann-confirm as adjudicator?" in html
    assert f'href="{URL}"' in html and "Cancel" in html
    assert is_adjudicator(fresh(ann)) and is_annotator(fresh(ann))  # the GET changed nothing
    method, fields = _form(html, "team-remove-confirm")
    assert method == "post" and fields.pop("csrfmiddlewaretoken")
    assert fields == {"user": str(ann.pk), "role": ADJUDICATORS, "confirm": "yes"}
    done = csrf_post(staff, REMOVE, fields)
    assert done.status_code == 302 and done["Location"] == URL
    assert not is_adjudicator(fresh(ann)) and is_annotator(fresh(ann))


def test_a_post_without_confirm_only_shows_the_confirmation(staff):
    """A POST of the old one-click form (no ``confirm``) changes nothing: it shows the page."""
    ann = make_user("ann-noconfirm", ANNOTATORS)
    response = csrf_post(staff, REMOVE, {"user": ann.pk, "role": ANNOTATORS})
    assert response.status_code == 200 and b"Remove ann-noconfirm as annotator?" in response.content
    assert b"go back to other annotators" in response.content
    assert is_annotator(fresh(ann))
    refused = staff.post(REMOVE, {"user": ann.pk, "role": ANNOTATORS, "confirm": "yes"})
    assert refused.status_code == 403 and is_annotator(fresh(ann))  # no CSRF token: refused


def test_team_list_counts_labels_with_constant_queries(staff, demo_study, django_assert_max_num_queries):
    """The member list shows each member's roles and label count, in the same number of queries for 2 or 6."""
    complete_participants(demo_study.slug, 1)
    first = make_user("m0", ANNOTATORS, ADJUDICATORS)
    item = assignment_next(study=demo_study, annotator=first)
    label_save(study=demo_study, annotator=first, public_id=item.public_id, label=label())
    make_user("m1", ANNOTATORS)
    with CaptureQueriesContext(connection) as small:
        page = staff.get(URL)
    row = page.content.decode().split("<td>m0</td>")[1].split("</tr>")[0]
    assert "annotator" in row and "adjudicator" in row and "<td>1</td>" in row
    for i in range(2, 6):
        make_user(f"m{i}", ANNOTATORS)
    with django_assert_max_num_queries(len(small.captured_queries)):
        staff.get(URL)


def test_member_removed_from_every_role_is_told_so_after_login(client, db):
    """An account with no role left lands on a page saying it has no role, not a researcher refusal."""
    from django.contrib.auth.models import User

    User.objects.create_user(username="dave", password="dave-password-123")
    client.force_login(User.objects.get(username="dave"))
    response = client.get("/researcher/")
    html = response.content.decode()
    assert response.status_code == 403
    assert "has no role at the moment" in html and "researchers are staff accounts" not in html
