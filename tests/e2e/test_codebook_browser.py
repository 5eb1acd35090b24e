"""The annotator page of a study with its own codebook, in Chromium: the German fields, one hotkey
per option (tick boxes toggle), a save, and a refused value that keeps the page's choices."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from playwright.sync_api import expect

from spotlight_study.annotation.models import Annotation
from spotlight_study.studies.schema import parse_study_file
from spotlight_study.studies.services import study_import

from ..codebooks import german_data
from ..conftest import DEMO_FILE, Walker
from .keyboard import focus_nothing

pytestmark = pytest.mark.browser

PASSWORD = "annotator-e2e-password"


def test_german_codebook_is_labelled_with_hotkeys(page, live_server):
    """Keys 1-3 choose erkannt, 4-6 toggle the tags; Ctrl+Enter saves the canonical values."""
    study = study_import(data=german_data(parse_study_file(DEMO_FILE)))
    Walker(Client(), study.slug).complete()
    user = User.objects.create_user(username="e2e-kodierer", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="annotators")[0])
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("e2e-kodierer")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/annotate/{study.slug}/")
    page.get_by_role("button", name="Next item").click()

    erkannt = page.locator("#field-erkannt")
    expect(erkannt.locator("legend")).to_have_text("Unterschied erkannt")
    expect(erkannt).to_contain_text("Hat die Antwort den Zielunterschied benannt?")
    expect(page.locator("#field-tags legend")).to_have_text("Weitere Unterschiede")
    expect(page.locator("#field-tags")).to_contain_text("Erwähnt Geschlecht")
    expect(page.locator("kbd", has_text="6")).to_have_count(1)
    first = page.locator("#item-id").inner_text()

    focus_nothing(page)
    for key in ("2", "3", "4", "5", "4"):  # teilweise, then ja; tag 1 on and off; tag 2 on
        page.keyboard.press(key)
    expect(erkannt.get_by_label("ja", exact=True)).to_be_checked()
    expect(page.locator("#field-tags").get_by_label("Länge")).to_be_checked()
    expect(page.locator("#field-tags").get_by_label("Erwähnt Geschlecht")).not_to_be_checked()
    page.locator("#field-notiz textarea").click()
    page.keyboard.type("6 Punkte")  # typed, not a hotkey
    expect(page.locator("#field-tags").get_by_label("Straße")).not_to_be_checked()
    page.keyboard.press("Control+Enter")
    expect(page.locator(".messages")).to_contain_text("Saved.")

    saved = Annotation.objects.get(annotator=user, item__public_id=first)
    assert saved.values == {"erkannt": "ja", "tags": ["Länge"]}
    assert saved.notes == {"notiz": "6 Punkte"}

    # The next item without a choice for erkannt: refused, and the ticked tag is kept.
    expect(page.locator("#item-id")).not_to_have_text(first)
    focus_nothing(page)
    page.keyboard.press("6")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#field-erkannt")).to_contain_text("required")
    expect(page.locator("#field-tags").get_by_label("Straße")).to_be_checked()
    assert Annotation.objects.filter(annotator=user).count() == 1
    # At a phone's width (390 px) the fields fit without scrolling sideways.
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(page.url)  # a GET, not a resent POST
    expect(page.locator("#field-tags").get_by_label("Erwähnt Geschlecht")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
