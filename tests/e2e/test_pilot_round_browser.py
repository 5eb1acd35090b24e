"""End-to-end test of the pilot annotation round in Chromium: the researcher opens it with the
overview's button, and an annotator sees every pilot item marked "pilot" in a queue of its own,
apart from the real queue."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from playwright.sync_api import Page, expect

from spotlight_study.annotation.models import Annotation
from spotlight_study.annotation.pilot_round import pilot_round_is_open
from spotlight_study.participation.pilot import pilot_run

from ..conftest import Walker
from .contexts import close_context
from .staff import log_in

pytestmark = pytest.mark.browser

PASSWORD = "pilot-round-e2e-password"
PILOT_SEED = 8


def _label(page: Page) -> None:
    for field in ("identified", "surface_difference", "no_difference"):
        page.locator(f"#id_{field}_1").check()


def test_annotator_sees_the_pilot_mark_in_the_pilot_round(browser, live_server, live_demo_study):
    """After the researcher's button opens the round, pilot items are served under "Pilot round"
    and marked pilot on the queue and item pages; the real queue's items are not."""
    study = live_demo_study
    print(f"pilot seed {PILOT_SEED}")
    Walker(Client(), study.slug).complete(training="Group 2 fishes at night.")
    pilot_run(study=study, participants=2, seed=PILOT_SEED)
    User.objects.create_user(username="pilot-researcher", password=PASSWORD, is_staff=True)
    annotator = User.objects.create_user(username="pilot-annotator", password=PASSWORD)
    annotator.groups.add(Group.objects.get_or_create(name="annotators")[0])
    base = live_server.url

    researcher = log_in(browser, base, "pilot-researcher", PASSWORD)
    researcher.goto(f"{base}/annotate/{study.slug}/overview/")
    expect(researcher.locator("#pilot-round-state")).to_contain_text("closed")
    researcher.get_by_role("button", name="Open the pilot round").click()
    expect(researcher.locator(".messages")).to_contain_text("Pilot annotation round opened")
    expect(researcher.locator("#pilot-round-state")).to_contain_text("open")
    assert pilot_round_is_open(study)

    page = log_in(browser, base, "pilot-annotator", PASSWORD)
    page.goto(f"{base}/annotate/")
    page.get_by_role("link", name="Pilot round").click()
    expect(page.locator("#pilot-mark")).to_contain_text("Pilot")
    page.get_by_role("button", name="Next item").click()
    pilot_ids = []
    for _ in range(2):
        expect(page.locator("#pilot-mark")).to_be_visible()
        expect(page.locator("#pilot-mark")).to_contain_text("pilot answer")
        pilot_ids.append(page.locator("#item-id").inner_text())
        _label(page)
        page.get_by_role("button", name="Save and next item").click()
        expect(page.locator(".messages")).to_contain_text("Saved.")
    # "Save and next item" stays in the pilot round.
    expect(page.locator("#pilot-mark")).to_be_visible()

    page.goto(f"{base}/annotate/")
    page.get_by_role("link", name="My queue").click()
    page.get_by_role("button", name="Next item").click()
    expect(page.get_by_role("heading", name="The answer")).to_be_visible()
    expect(page.locator("#pilot-mark")).to_have_count(0)
    real_id = page.locator("#item-id").inner_text()

    saved = Annotation.objects.filter(annotator=annotator).select_related("item")
    assert {a.item.public_id: a.item.is_pilot for a in saved} == dict.fromkeys(pilot_ids, True)
    assert real_id not in pilot_ids
    for p in (researcher, page):
        close_context(p.context)
