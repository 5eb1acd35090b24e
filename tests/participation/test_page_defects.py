"""Small page defects of issue 9: the preview's last page, list rendering in study texts, error
pages worded for the URL's area, and a false preview banner on the stimulus set page."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from spotlight_study.participation.templatetags.study_text import study_text

from ..conftest import make_staff


def test_preview_last_page_has_no_link_to_none(staff_client, demo_study):
    """The preview's done page shows the code and a way back, never a link to href="None"."""
    url = reverse("researcher:preview_page", args=[demo_study.slug, 0, "done"])
    html = staff_client.get(url).content.decode()
    assert 'href="None"' not in html
    assert demo_study.completion_code in html
    assert f'href="{reverse("researcher:preview", args=[demo_study.slug])}"' in html


def test_instructions_show_list_items_as_a_list(walker, demo_study):
    """The demo instructions' "- " lines are shown as <ul> items, not as literal dashes."""
    walker.enter()
    walker.consent()
    html = walker.page().content.decode()
    assert "<p>Please keep in mind:</p>\n<ul><li>Only differences between the two groups count." in html
    assert "- Only differences" not in html


def test_study_text_escapes_and_recognizes_only_simple_lists():
    """Paragraphs, line breaks, bullet and numbered lists; every character of the text escaped."""
    text = (
        "First line\nsecond line\n\nSteps:\n1. read\n2) write <b>this</b>\n   and more\n\n"
        "* star & co\n- dash\n\n<script>alert(1)</script>"
    )
    assert study_text(text) == (
        "<p>First line<br>second line</p>\n<p>Steps:</p>\n"
        "<ol><li>read</li><li>write &lt;b&gt;this&lt;/b&gt; and more</li></ol>\n"
        "<ul><li>star &amp; co</li><li>dash</li></ul>\n"
        "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"
    )
    assert study_text("") == "" and study_text(None) == ""
    assert study_text("-not a list\n2024 was a year") == "<p>-not a list<br>2024 was a year</p>"


STAFF_WORDS = "Back to the list of studies"
ANNOTATOR_WORDS = "Back to your annotation home"
PARTICIPANT_WORDS = "open it again from Prolific"


@pytest.mark.parametrize(
    "path,expected",
    [
        ("/researcher/a/b/c/d/", STAFF_WORDS),
        ("/stimuli/a/b/c/d/", STAFF_WORDS),
        ("/accounts/a/b/c/d/", STAFF_WORDS),
        ("/annotate/a/b/c/d/", ANNOTATOR_WORDS),
        ("/s/a/b/c/d/", PARTICIPANT_WORDS),
    ],
)
def test_404_page_is_worded_for_the_url_area(client, db, path, expected):
    """A 404 on a researcher or annotator URL does not address a Prolific participant."""
    response = client.get(path)
    assert response.status_code == 404
    html = response.content.decode()
    assert expected in html
    if expected != PARTICIPANT_WORDS:
        assert "Prolific" not in html


def test_403_page_is_worded_for_researcher_and_annotator_urls(client, db):
    """A logged-in user without the role gets a 403 that names the role, not Prolific."""
    client.force_login(User.objects.create_user(username="no-role", password="pw-no-role-123"))
    # The team page is instance staff's; a study's page would answer 404 to a non-member (no
    # existence oracle, docs/security.md), so it cannot show the 403 wording.
    researcher = client.get(reverse("researcher:team"))
    annotator = client.get(reverse("annotation:home"))
    for response, words in ((researcher, STAFF_WORDS), (annotator, ANNOTATOR_WORDS)):
        assert response.status_code == 403
        html = response.content.decode()
        assert words in html and "Prolific" not in html


def test_400_page_is_worded_for_the_url_area(client, db):
    """A refused request (bad Host header) on a researcher URL gets researcher wording."""
    staff = client.get("/researcher/", HTTP_HOST="not-allowed.example")
    participant = client.get("/s/demo/step/", HTTP_HOST="not-allowed.example")
    assert staff.status_code == participant.status_code == 400
    assert STAFF_WORDS in staff.content.decode() and "Prolific" not in staff.content.decode()
    assert "study link from Prolific" in participant.content.decode()


def test_500_page_is_worded_for_researchers_and_has_no_details(staff_client, monkeypatch):
    """An unexpected error on a researcher page shows researcher wording and no traceback."""
    from spotlight_study.researcher import views

    def boom():
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(views, "study_home_rows", boom)
    staff_client.raise_request_exception = False
    response = staff_client.get(reverse("researcher:study_list"))
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong on our side" in html and STAFF_WORDS in html
    assert "Prolific" not in html and "secret internal detail" not in html


def test_csrf_failure_on_the_login_page_is_not_worded_for_participants(db):
    """An out-of-date login form gets a page about reloading, not about Prolific."""
    strict = Client(enforce_csrf_checks=True)
    response = strict.post(reverse("login"), {"username": "x", "password": "y"})
    assert response.status_code == 403
    html = response.content.decode()
    assert "This page was out of date" in html and "reload the page" in html
    assert "Prolific" not in html


def test_stimulus_set_page_shows_no_preview_banner(client, db):
    """The stimulus set page shows its first outputs without a false "Preview of cell" banner."""
    from spotlight_study.stimuli.importers import ImportedGroups
    from spotlight_study.stimuli.services import stimulus_set_import

    stimulus_set = stimulus_set_import(
        title="pronouns", groups=ImportedGroups(["He smiles."] * 3, ["She smiles."] * 3)
    )
    client.force_login(make_staff())
    html = client.get(reverse("stimuli:set_detail", args=[stimulus_set.pk])).content.decode()
    assert "He smiles." in html
    assert "Preview of cell" not in html and "preview-banner" not in html
