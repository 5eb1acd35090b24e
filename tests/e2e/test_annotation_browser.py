"""End-to-end test of blind annotation in a real browser (headless Debian Chromium).

An annotator logs in, opens their queue and labels two answers through the pages. Database setup
comes before, and the checks after, the browser work.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from playwright.sync_api import Page, expect

from spotlight_study.annotation.models import Annotation, AnnotationRevision

from ..conftest import Walker

pytestmark = pytest.mark.browser

PASSWORD = "annotator-e2e-password"


def _answer_question(page: Page, legend: str, choice: str) -> None:
    page.locator("fieldset", has=page.locator("legend", has_text=legend)).get_by_label(
        choice, exact=True
    ).check()


def test_annotator_logs_in_and_labels_two_items(page, live_server, live_demo_study):
    """An annotator logs in, lands on annotation, and labels two items with 'Save and next item'."""
    study = live_demo_study
    for training in ("Group 2 fishes at night.", "Group 1 fishes by day."):
        Walker(Client(), study.slug).complete(training=training)
    user = User.objects.create_user(username="e2e-annotator", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="annotators")[0])

    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("e2e-annotator")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Annotation")).to_be_visible()
    page.get_by_role("link", name="My queue").click()
    expect(page.locator("#labeled-count")).to_have_text("0")
    page.get_by_role("button", name="Next item").click()

    labeled = []
    for identified in ("Yes", "No"):
        expect(page.get_by_role("heading", name="The answer")).to_be_visible()
        item_id = page.locator("#item-id").inner_text()
        assert item_id not in labeled
        labeled.append(item_id)
        assert "/items/" in page.url and item_id in page.url
        expect(page.locator("#answer-text")).not_to_be_empty()
        _answer_question(page, "identify the target difference", identified)
        _answer_question(page, "surface difference", "No")
        _answer_question(page, "no difference", "No")
        page.get_by_role("button", name="Save and next item").click()
        expect(page.locator(".messages")).to_contain_text("Saved.")

    page.get_by_role("link", name="My queue").click()
    expect(page.locator("#labeled-count")).to_have_text("2")

    annotations = {
        a.item.public_id: a
        for a in Annotation.objects.filter(annotator=user).select_related("item")
    }
    assert sorted(annotations) == sorted(labeled)
    assert (
        annotations[labeled[0]].identified is True and annotations[labeled[1]].identified is False
    )
    assert AnnotationRevision.objects.filter(annotation__annotator=user).count() == 2
