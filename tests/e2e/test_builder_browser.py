"""The study builder in Chromium (issue 35 §4): the reference study built from scratch and
downloaded equal to fixtures/spotlight-replication.yaml but for the slug, at a 390 px phone
viewport, with axe-core on every builder page; keyboard only; unsaved input across a reload and
Back; two tabs editing one draft.
"""
from __future__ import annotations

import copy

import pytest
import yaml
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import Page, expect

from spotlight_study.studies.drafts import draft_start
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.models import Study, StudyDraft
from spotlight_study.studies.schema import parse_study_file
from spotlight_study.studies.services import study_import

from ..researcher.builder_input import builder_steps
from ..researcher.test_builder import _cleaned, _plain
from .a11y import DESKTOP, PHONE, AxeLedger
from .conftest import DEMO_STUDY_FILE

pytestmark = pytest.mark.browser

SLUG = "built-in-chromium"


def _log_in(page: Page, live_server, username: str = "e2e-builder") -> None:
    """Give the browser the session of a freshly logged-in staff user."""
    client = Client()
    client.force_login(User.objects.create_user(username=username, is_staff=True))
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])


def _fill(page: Page, values: dict, boxes: dict) -> None:
    """Type ``values`` into the fields of their names, tick ``boxes`` (multiple-choice fields:
    exactly the given values; ``None`` leaves the page's ticks)."""
    for name, value in values.items():
        if name.endswith(("TOTAL_FORMS", "INITIAL_FORMS")):
            continue
        field = page.locator(f'[name="{name}"]')
        if field.count() > 1:  # radio buttons
            page.locator(f'[name="{name}"][value="{value}"]').check()
        elif field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(str(value))
        else:
            field.fill(str(value))
    for name, ticked in boxes.items():
        if ticked is None:
            continue
        boxes_of = page.locator(f'input[name="{name}"]')
        for i in range(boxes_of.count()):
            box = boxes_of.nth(i)
            box.set_checked(ticked is True or (isinstance(ticked, list) and box.get_attribute("value") in ticked))


def _save(page: Page) -> None:
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("Saved (version")


def test_reference_study_built_from_scratch_on_a_phone(page, live_server):
    """At 390 px: a new study, every section typed in (the groups' texts pasted from the
    fixture), the live pattern count, the preview of a cell, "Download as file" equal to the
    fixture but for the slug, then Publish; axe-core finds no violation on any builder page."""
    demo = parse_study_file(DEMO_STUDY_FILE)
    axe = AxeLedger()
    page.set_viewport_size(PHONE)
    _log_in(page, live_server)
    page.goto(f"{live_server.url}/researcher/new/")
    axe.check_widths(page, "builder: new", (PHONE, DESKTOP))
    page.get_by_label("Slug").fill(SLUG)
    page.get_by_label("Title").fill(demo["title"])
    page.get_by_role("button", name="Start the draft").click()
    expect(page.get_by_role("heading", name=f"Builder: {demo['title']}")).to_be_visible()
    axe.check_widths(page, "builder: overview (new)", (PHONE, DESKTOP))
    page.goto(f"{live_server.url}/researcher/{SLUG}/edit/training/")
    expect(page.locator("#id_title").locator("xpath=..").locator(".errorlist")).to_contain_text("This field may not be blank.")
    axe.check_widths(page, "builder: training (errors)", (PHONE, DESKTOP))
    for section, values, boxes in builder_steps(demo):
        if section.startswith("setting-"):
            page.goto(f"{live_server.url}/researcher/{SLUG}/edit/")
            page.get_by_role("button", name="Add a main setting").click()
            expect(page.locator(".messages")).to_contain_text("Setting added.")
        else:
            page.goto(f"{live_server.url}/researcher/{SLUG}/edit/{section}/")
        _fill(page, values, boxes)
        if section == "setting-0":
            # The live check counts on the texts in the boxes, before any save.
            page.locator('[name="p-0-tokens"]').fill("her")
            expect(page.locator(".pattern-row").first.locator("output")).to_have_text(
                "occurs in 1 of 10 texts of group 1 / 6 of 10 texts of group 2")
        _save(page)
        axe.check_widths(page, f"builder: {section}", (PHONE, DESKTOP))
    page.goto(f"{live_server.url}/researcher/{SLUG}/edit/conditions/")
    expect(page.locator("#cells li")).to_have_count(4)
    page.goto(f"{live_server.url}/researcher/{SLUG}/edit/")
    expect(page.locator("#draft-state")).to_have_text("The draft is complete: it would import as it is.")
    axe.check_widths(page, "builder: overview (complete)", (PHONE, DESKTOP))

    page.get_by_role("link", name="Preview every page of every cell").click()
    page.get_by_role("link", name="Cell 3").click()
    expect(page.locator(".preview-banner")).to_contain_text("nothing is recorded")

    page.goto(f"{live_server.url}/researcher/{SLUG}/edit/")
    with page.expect_download() as info:
        page.get_by_role("link", name="Download as file").click()
    downloaded = yaml.safe_load(open(info.value.path(), encoding="utf-8"))
    assert downloaded["slug"] == SLUG
    assert _cleaned(downloaded) == _cleaned(demo)
    page.get_by_role("button", name="Publish").click()
    expect(page.locator(".messages")).to_contain_text(f"Published: study '{SLUG}'")
    axe.assert_none_blocking()
    published = study_file_data(Study.objects.get(slug=SLUG))
    reference = study_file_data(study_import(data=copy.deepcopy(demo)))
    assert {**_plain(published), "slug": None} == {**_plain(reference), "slug": None}
    assert _plain(published) == downloaded


def _focus(page: Page, selector: str, limit: int = 60) -> None:
    """Press Tab until the element ``selector`` has the focus."""
    for _ in range(limit):
        if page.evaluate("s => document.activeElement === document.querySelector(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def test_keyboard_only(page, live_server):
    """A draft started and a section saved with the keyboard alone (Tab, typing, Enter)."""
    _log_in(page, live_server, "e2e-builder-keys")
    page.goto(f"{live_server.url}/researcher/new/")
    _focus(page, "#id_slug")
    page.keyboard.type("typed-study")
    page.keyboard.press("Tab")
    page.keyboard.type("Typed with keys")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Builder: Typed with keys")).to_be_visible()
    _focus(page, 'a[href$="/edit/texts/"]')
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Title, language and texts")).to_be_visible()
    _focus(page, "#id_consent_text")
    page.keyboard.press("Control+a")  # the default consent text is replaced
    page.keyboard.type("You agree by continuing.")
    _focus(page, "form.builder-form button[type=submit]")
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("Saved (version 2)")
    assert StudyDraft.objects.get(slug="typed-study").data["consent_text"] == "You agree by continuing."


def test_unsaved_input_survives_reload_and_back(page, live_server):
    """Typed, not saved: a reload puts the input back (and says so); so does Back after leaving
    the page by a link; Save then keeps it."""
    draft_start(slug=SLUG, title="Reload and Back")
    _log_in(page, live_server, "e2e-builder-reload")
    page.set_viewport_size(DESKTOP)
    page.goto(f"{live_server.url}/researcher/{SLUG}/edit/texts/")
    page.locator("#id_consent_text").fill("Typed before the reload.")
    page.reload()
    expect(page.locator("#id_consent_text")).to_have_value("Typed before the reload.")
    expect(page.locator("#builder-restored")).to_be_visible()
    page.locator("#id_example_answer").fill("Typed before leaving.")
    page.get_by_role("link", name="Overview of the draft built-in-chromium").click()
    expect(page.get_by_role("heading", name="Builder: Reload and Back")).to_be_visible()
    page.go_back()
    expect(page.locator("#id_example_answer")).to_have_value("Typed before leaving.")
    expect(page.locator("#id_consent_text")).to_have_value("Typed before the reload.")
    assert StudyDraft.objects.get(slug=SLUG).version == 1  # nothing saved so far
    _save(page)
    data = StudyDraft.objects.get(slug=SLUG).data
    assert (data["consent_text"], data["example_answer"]) == ("Typed before the reload.", "Typed before leaving.")
    page.reload()
    expect(page.locator("#builder-restored")).to_be_hidden()


def test_two_tabs_second_save_is_refused(page, live_server):
    """Two tabs on one section: the first save wins; the second is refused with a message,
    keeps its input in the form and changes nothing."""
    draft_start(slug=SLUG, title="Two tabs")
    _log_in(page, live_server, "e2e-builder-tabs")
    url = f"{live_server.url}/researcher/{SLUG}/edit/texts/"
    page.goto(url)
    other = page.context.new_page()
    other.goto(url)
    page.locator("#id_title").fill("Saved in tab 1")
    _save(page)
    other.locator("#id_title").fill("Saved in tab 2")
    other.get_by_role("button", name="Save", exact=True).click()
    expect(other.locator("#builder-notice")).to_contain_text("saved elsewhere")
    expect(other.locator("#id_title")).to_have_value("Saved in tab 2")
    draft = StudyDraft.objects.get(slug=SLUG)
    assert (draft.data["title"], draft.version) == ("Saved in tab 1", 2)
