"""``manage.py add_annotator``: a non-staff user in the right group with a one-time password link."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from spotlight_study.accounts.roles import ADJUDICATORS, ANNOTATORS


def is_annotator(user) -> bool:
    """On the annotation team as an annotator (the team page's group; which studies they annotate
    is their study membership, issue 40)."""
    return user.groups.filter(name=ANNOTATORS).exists()


def is_adjudicator(user) -> bool:
    """On the annotation team as an adjudicator (see :func:`is_annotator`)."""
    return user.groups.filter(name=ADJUDICATORS).exists()

LINK = re.compile(r"Set-password link \(works once\): (\S+)")


def run(*args: str) -> str:
    out = StringIO()
    call_command("add_annotator", *args, stdout=out)
    return out.getvalue()


def logs_in(username: str, password: str) -> bool:
    """Whether the site's login page accepts ``username`` and ``password``."""
    response = Client().post("/accounts/login/", {"username": username, "password": password})
    return response.status_code == 302


def set_password_through(link: str, password: str) -> Client:
    """Follow ``link`` like the new member would and set ``password``; returns their client."""
    client = Client()
    path = link.split("://", 1)[1].split("/", 1)[1]
    first = client.get("/" + path)
    assert first.status_code == 302, "a valid token redirects to the set-password form"
    form_url = first["Location"]
    page = client.get(form_url)
    assert page.status_code == 200 and b"Set your password" in page.content
    done = client.post(form_url, {"new_password1": password, "new_password2": password})
    assert done.status_code == 302 and done["Location"].endswith("/accounts/reset/done/")
    return client


@pytest.mark.django_db
def test_creates_non_staff_annotator_with_working_one_time_link():
    """The printed link lets the annotator set a password once and log in; it is dead afterwards."""
    out = run("newann", "--email", "ann@example.org", "--base-url", "https://study.example.org/")
    user = User.objects.get(username="newann")
    assert not user.is_staff and not user.is_superuser
    assert user.email == "ann@example.org"
    assert is_annotator(user) and not is_adjudicator(user)
    assert not user.has_usable_password()
    link = LINK.search(out).group(1)
    assert link.startswith("https://study.example.org/accounts/reset/")
    set_password_through(link, "a-long-Passphrase-42")
    assert logs_in("newann", "a-long-Passphrase-42")
    again = Client().get("/" + link.split("://", 1)[1].split("/", 1)[1], follow=True)
    assert b"This link no longer works" in again.content


@pytest.mark.django_db
def test_adjudicator_flag_puts_user_in_adjudicators():
    """``--adjudicator`` creates a member of ``adjudicators`` who is not an annotator."""
    run("newadj", "--adjudicator", "--base-url", "http://127.0.0.1:8000")
    user = User.objects.get(username="newadj")
    assert is_adjudicator(user) and not is_annotator(user) and not user.is_staff


@pytest.mark.django_db
def test_password_generate_prints_a_password_that_logs_in():
    """``--password-generate`` prints a password that works, and no link."""
    out = run("genann", "--password-generate")
    password = re.search(r"Password: (\S+)", out).group(1)
    assert "Set-password link" not in out
    assert logs_in("genann", password)


@pytest.mark.django_db
def test_existing_username_is_refused_and_changes_nothing():
    """An existing username (any case) gives a clear error; the user, password and groups stay."""
    user = User.objects.create_user(username="taken", password="old-password-123", is_staff=True)
    with pytest.raises(CommandError, match="already exists; nothing was changed"):
        run("TAKEN")
    user.refresh_from_db()
    assert user.check_password("old-password-123")
    assert user.is_staff and not user.groups.exclude(name="lab admins").exists()
    assert User.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "args, fragment",
    [
        (["bad name!"], "is not valid"),
        (["okname", "--email", "not-an-email"], "E-mail 'not-an-email' is not valid"),
        (["okname", "--base-url", "study.example.org"], "--base-url must start with http:// or https://"),
    ],
)
def test_invalid_username_email_or_base_url_is_refused(args, fragment):
    """An invalid username, e-mail or base URL gives a clear error and creates nobody."""
    with pytest.raises(CommandError, match=re.escape(fragment)):
        run(*args)
    assert not User.objects.exists()
