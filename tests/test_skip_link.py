"""The "Skip to content" link of the pages with the site navigation (templates/_site_nav.html):
the first thing Tab reaches on the researcher, stimuli, Prolific and annotator pages, leading
to ``<main>``, which holds the page's content and not the navigation; participant pages and the
login page have neither the link nor the navigation."""
from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client

from .annotation.conftest import make_user
from .conftest import Walker

pytestmark = pytest.mark.django_db

#: Elements that Tab reaches without a tabindex of their own (as on these pages).
_FOCUSABLE = {"a", "button", "input", "select", "textarea", "summary"}


class _Outline(HTMLParser):
    """The first element Tab reaches in the body (its tag and attributes), the ``<main>``
    element's attributes, and whether the site navigation opens inside ``<main>``."""

    def __init__(self) -> None:
        super().__init__()
        self.first_focusable: tuple[str, dict] | None = None
        self.first_text: str | None = None
        self.main: dict | None = None
        self.in_main = False
        self.nav_in_main = False
        self._in_first = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "main":
            self.main, self.in_main = attrs, True
        if tag == "nav" and "site-nav" in (attrs.get("class") or "").split() and self.in_main:
            self.nav_in_main = True
        focusable = tag in _FOCUSABLE and (tag != "a" or "href" in attrs) and attrs.get("type") != "hidden"
        if self.first_focusable is None and focusable and attrs.get("tabindex") != "-1":
            self.first_focusable, self._in_first = (tag, attrs), True

    def handle_endtag(self, tag):
        if tag == "main":
            self.in_main = False
        if tag == "a":
            self._in_first = False

    def handle_data(self, data):
        if self._in_first:
            self.first_text = (self.first_text or "") + data


def _outline(response) -> _Outline:
    outline = _Outline()
    outline.feed(response.content.decode())
    return outline


def _assert_skip_link_first(response, url: str) -> None:
    assert response.status_code == 200, url
    outline = _outline(response)
    tag, attrs = outline.first_focusable
    assert (tag, attrs.get("class"), attrs.get("href")) == ("a", "skip-link", "#content"), url
    assert outline.first_text == "Skip to content", url
    # The target takes the focus, so the next Tab goes on from the content, not the navigation.
    assert outline.main == {"id": "content", "tabindex": "-1"}, url
    assert not outline.nav_in_main, url


def test_staff_pages_start_with_a_skip_link_to_main(staff_client, demo_study):
    """On the researcher, builder, stimuli, Prolific and annotation overview pages, the first
    focusable element is the skip link to ``<main id="content" tabindex="-1">``, and the site
    navigation is before ``<main>``, not in it."""
    slug = demo_study.slug
    for url in ("/researcher/", f"/researcher/{slug}/", "/researcher/new/", "/researcher/team/",
                "/stimuli/", f"/prolific/{slug}/", f"/annotate/{slug}/overview/"):
        _assert_skip_link_first(staff_client.get(url), url)


def test_annotator_pages_start_with_a_skip_link_to_main(client, demo_study):
    """An annotator's home and queue start with the skip link too."""
    client.force_login(make_user("ann", "annotators"))
    for url in ("/annotate/", f"/annotate/{demo_study.slug}/"):
        _assert_skip_link_first(client.get(url), url)


def test_participant_and_login_pages_have_no_skip_link(client, demo_study):
    """A participant's consent page, a participant error page and the login page keep their
    plain ``<main>`` and have no skip link (they have no navigation to skip)."""
    participant = Walker(Client(), demo_study.slug)
    participant.enter()
    pages = {
        "consent": participant.page(),
        "unknown study": Client().get("/s/no-such-study/"),
        "login": client.get("/accounts/login/"),
    }
    assert "unknown_study" in pages["unknown study"].templates[0].name
    for name, response in pages.items():
        html = response.content.decode()
        assert "skip-link" not in html and 'id="content"' not in html, name
    assert _outline(pages["login"]).main == {}
    assert _outline(pages["unknown study"]).main == {}
