"""An annotator whose cookies are gone keeps the unsaved choice: the refused form (CSRF failure)
comes back filled in with a fresh token and a message saying it was not saved
(spotlight_study/annotation/kept_choice.py)."""
from __future__ import annotations

import re

from django.conf import settings
from django.test import Client

from spotlight_study.annotation.models import Annotation
from spotlight_study.annotation.services.queue import assignment_next

ORIGIN = "http://testserver"
#: A choice that differs from the form's defaults in every field a person sets.
CHOICE = {
    "identified": "1",
    "surface_difference": "1",
    "no_difference": "0",
    "exclusion": "duplicate",
    "exclusion_note": "same words as another answer",
    "new_tags": "",
    "base_revision": "0",
    "save": "1",
}
NOT_SAVED = "Your label was not saved"


def _logged_in(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _token(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


def _checked(html: str, name: str) -> str | None:
    """The value of the checked radio button ``name`` (or the selected option) in the page."""
    for tag in re.findall(r"<input[^>]*>", html):
        if f'name="{name}"' in tag and "checked" in tag:
            return re.search(r'value="([^"]*)"', tag).group(1)
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    if select:
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', select.group(1))
        return chosen.group(1) if chosen else None
    return None


def _assert_kept(html: str) -> None:
    assert NOT_SAVED in html, html[:3000]
    assert _checked(html, "identified") == "1" and _checked(html, "surface_difference") == "1"
    assert _checked(html, "exclusion") == "duplicate"
    assert "same words as another answer" in html


def test_a_form_refused_for_its_lost_csrf_cookie_comes_back_filled_in(demo_study, answered, annotators):
    """CSRF cookie gone, still logged in: the post is refused and saves nothing, the item page
    comes back with the choice filled in, a message, and a fresh token that saves it."""
    a = annotators[0]
    client = _logged_in(a)
    item = assignment_next(study=demo_study, annotator=a)
    url = f"/annotate/{demo_study.slug}/items/{item.public_id}/"
    stale_token = _token(client.get(url).content.decode())
    del client.cookies[settings.CSRF_COOKIE_NAME]  # the cookies were cleared (or expired)

    refused = client.post(url, {**CHOICE, "csrfmiddlewaretoken": stale_token}, HTTP_ORIGIN=ORIGIN)
    assert refused.status_code == 303 and refused["Location"] == url
    assert not Annotation.objects.exists()
    page = client.get(url)
    html = page.content.decode()
    assert page.status_code == 200
    _assert_kept(html)
    assert "reload" not in html.lower()
    saved = client.post(url, {**CHOICE, "csrfmiddlewaretoken": _token(html)}, HTTP_ORIGIN=ORIGIN)
    assert saved.status_code == 302
    label = Annotation.objects.get(item=item, annotator=a)
    assert (label.identified, label.surface_difference, label.exclusion) == (True, True, "duplicate")
    # Kept once: the next visit shows the saved label, without the message.
    assert NOT_SAVED not in client.get(url).content.decode()


def test_with_every_cookie_gone_the_choice_survives_the_login(demo_study, answered, annotators):
    """Session and CSRF cookies gone (logged out): the post saves nothing and leads through the
    login page back to the item, filled in with the choice and the message."""
    a = annotators[0]
    client = _logged_in(a)
    item = assignment_next(study=demo_study, annotator=a)
    url = f"/annotate/{demo_study.slug}/items/{item.public_id}/"
    stale_token = _token(client.get(url).content.decode())
    client.cookies.clear()

    refused = client.post(url, {**CHOICE, "csrfmiddlewaretoken": stale_token}, HTTP_ORIGIN=ORIGIN)
    assert refused.status_code == 303 and refused["Location"] == url
    assert not Annotation.objects.exists()
    to_login = client.get(url)
    assert to_login.status_code == 302 and "/accounts/login/" in to_login["Location"]
    client.force_login(a)  # the login keeps the session's data (Django cycles its key)
    _assert_kept(client.get(url).content.decode())
    assert not Annotation.objects.exists()


def test_a_cross_site_post_is_not_kept(demo_study, answered, annotators):
    """A refused post from another site (its Origin) is not kept: the plain out-of-date page,
    and the item page shows no choice of the other site's."""
    a = annotators[0]
    client = _logged_in(a)
    item = assignment_next(study=demo_study, annotator=a)
    url = f"/annotate/{demo_study.slug}/items/{item.public_id}/"
    client.get(url)
    refused = client.post(url, CHOICE, HTTP_ORIGIN="https://attacker.example")
    assert refused.status_code == 403
    html = client.get(url).content.decode()
    assert NOT_SAVED not in html and _checked(html, "exclusion") != "duplicate"
