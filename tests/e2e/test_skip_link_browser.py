"""The "Skip to content" link of the researcher and annotator pages in Chromium
(templates/_site_nav.html, docs/accessibility.md): out of sight until Tab reaches it first,
then shown; Enter moves the focus to ``<main>``, so the next Tab goes to the content and not
through the navigation; the page still passes axe-core with the navigation outside ``<main>``."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from playwright.sync_api import Page, expect

from ..conftest import Walker
from .a11y import AxeLedger
from .contexts import close_context
from .staff import log_in

pytestmark = pytest.mark.browser

PASSWORD = "skip-link-e2e-password"

_FOCUS_IN_MAIN = "() => document.querySelector('main').contains(document.activeElement)"
_FOCUS_IN_NAV = "() => !!document.activeElement.closest('.site-nav')"


def _assert_skip_link_works(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("load")
    skip = page.locator("a.skip-link")
    hidden = skip.bounding_box()
    assert hidden["width"] <= 1 and hidden["height"] <= 1, (url, hidden)

    page.keyboard.press("Tab")
    expect(skip).to_be_focused()
    expect(skip).to_have_text("Skip to content")
    shown = skip.bounding_box()
    assert shown["width"] > 20 and shown["height"] > 10 and shown["y"] >= 0, (url, shown)
    assert skip.evaluate("el => el.matches(':focus-visible')"), url

    page.keyboard.press("Enter")
    expect(page.locator("main#content")).to_be_focused()
    assert page.url.endswith("#content"), page.url
    page.keyboard.press("Tab")
    assert page.evaluate(_FOCUS_IN_MAIN) and not page.evaluate(_FOCUS_IN_NAV), url


def test_tab_reaches_the_skip_link_first_and_enter_moves_the_focus_to_the_content(
    browser, live_server, live_demo_study
):
    """On the researcher's study list and study page and on the annotator's home: the first
    Tab focuses the skip link, shown; Enter focuses ``<main>``; the next Tab lands in the content."""
    base = live_server.url
    Walker(Client(), live_demo_study.slug).complete(training="Group 2 fishes at night.")  # a queue link
    User.objects.create_user(username="skip-researcher", password=PASSWORD, is_staff=True)
    annotator = User.objects.create_user(username="skip-annotator", password=PASSWORD)
    annotator.groups.add(Group.objects.get_or_create(name="annotators")[0])

    researcher = log_in(browser, base, "skip-researcher", PASSWORD)
    _assert_skip_link_works(researcher, f"{base}/researcher/")
    _assert_skip_link_works(researcher, f"{base}/researcher/{live_demo_study.slug}/")
    axe = AxeLedger()
    researcher.goto(f"{base}/researcher/")
    axe.check_widths(researcher, "researcher: study list")
    close_context(researcher.context)

    page = log_in(browser, base, "skip-annotator", PASSWORD)
    _assert_skip_link_works(page, f"{base}/annotate/")
    axe.check_widths(page, "annotator: home, skip link followed")
    close_context(page.context)
    axe.assert_none_blocking()


@pytest.mark.parametrize("width", [390, 1280])
def test_the_navigation_lines_up_with_the_content(browser, live_server, live_demo_study, width):
    """The header before ``<main>`` keeps main's sides: on a phone (where main's padding is 1rem)
    the navigation started 8 px further in than the page's text, as the header's desktop padding
    came after the phone rule in study.css."""
    User.objects.create_user(username=f"align-{width}", password=PASSWORD, is_staff=True)
    page = log_in(browser, live_server.url, f"align-{width}", PASSWORD)
    page.set_viewport_size({"width": width, "height": 844})
    page.goto(f"{live_server.url}/researcher/")
    page.wait_for_load_state("load")
    nav_left = page.locator(".site-nav").bounding_box()["x"]
    content_left = page.locator("main h1").first.bounding_box()["x"]
    assert abs(nav_left - content_left) < 1, (width, nav_left, content_left)
    close_context(page.context)
