"""End-to-end test of blind annotation in a real browser (headless Debian Chromium).

An annotator logs in, opens their queue and labels two answers through the pages; another labels
with the keyboard shortcuts, skips, and meets the two-tab conflict check. Database setup comes
before, and the checks after, the browser work.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from playwright.sync_api import Page, expect

from spotlight_study.annotation.models import Annotation, AnnotationRevision, Assignment
from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next

from ..conftest import Walker
from .contexts import close_context
from .keyboard import focus_nothing
from .staff import log_in

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


def _login(page: Page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Annotation")).to_be_visible()


def test_hotkeys_skip_and_two_tab_conflict(page, live_server, live_demo_study):
    """Digits, Ctrl+Enter and 's' label and skip; a save from a stale second tab is refused."""
    study = live_demo_study
    for training in ("Group 2 fishes at night.", "Group 1 fishes by day."):
        Walker(Client(), study.slug).complete(training=training)
    user = User.objects.create_user(username="e2e-hotkeys", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="annotators")[0])

    _login(page, live_server.url, "e2e-hotkeys")
    page.get_by_role("link", name="My queue").click()
    expect(page.locator(".queue-status")).to_contain_text("Still open to you: 6")
    page.get_by_role("button", name="Next item").click()
    expect(page.locator("#progress")).to_have_text("0 / 6")
    expect(page.locator(".hotkeys")).to_contain_text("Ctrl")
    expect(page.locator("details.texts")).not_to_have_attribute("open", "")
    first = page.locator("#item-id").inner_text()

    focus_nothing(page)
    for key in ("1", "4", "6"):
        page.keyboard.press(key)
    expect(page.locator("#id_identified_0")).to_be_checked()  # 1: identified yes
    expect(page.locator("#id_surface_difference_1")).to_be_checked()  # 4: surface no
    expect(page.locator("#id_no_difference_1")).to_be_checked()  # 6: no difference no
    page.locator("#id_exclusion_note").click()
    page.keyboard.type("2")  # typed into the note, not a hotkey
    expect(page.locator("#id_identified_0")).to_be_checked()
    page.keyboard.press("Control+Enter")
    expect(page.locator(".messages")).to_contain_text("Saved.")
    expect(page.locator("#progress")).to_have_text("1 / 6")
    second = page.locator("#item-id").inner_text()
    assert second != first

    focus_nothing(page)
    page.keyboard.press("s")
    expect(page.locator(".messages")).to_contain_text("Skipped.")
    third = page.locator("#item-id").inner_text()
    assert third not in (first, second)

    # Two tabs on the first item: tab A saves, then tab B (opened before) tries to.
    item_url = f"{live_server.url}/annotate/{study.slug}/items/{first}/"
    tab_b = page.context.new_page()
    tab_b.goto(item_url)
    page.goto(item_url)
    focus_nothing(page)
    page.keyboard.press("2")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("Saved.")

    tab_b.locator("body").click()
    tab_b.keyboard.press("3")
    tab_b.get_by_role("button", name="Save", exact=True).click()
    conflict = tab_b.locator("#conflict")
    expect(conflict).to_contain_text("Saved elsewhere meanwhile")
    expect(conflict.locator("tr.differs")).to_have_count(2)  # identified and surface difference
    expect(conflict.locator("tr.differs").first).to_contain_text("no")
    tab_b.get_by_role("button", name="Save", exact=True).click()
    expect(tab_b.locator(".messages")).to_contain_text("Saved.")

    stored = Annotation.objects.filter(annotator=user).select_related("item")
    assert [a.item.public_id for a in stored] == [first]  # the second was skipped
    label = stored[0]
    assert label.revision == 3  # hotkeys, tab A, then tab B's deliberate second save
    assert (label.identified, label.surface_difference, label.no_difference) == (True, True, False)
    assert label.exclusion_note == "2"
    history = list(
        AnnotationRevision.objects.filter(annotation=label).values_list(
            "identified", "surface_difference"
        )
    )
    assert history == [(True, False), (False, False), (True, True)]
    assert Assignment.objects.get(item__public_id=second, annotator=user).state == "skipped"


def test_back_after_another_tab_saved_shows_the_stored_label(page, live_server, live_demo_study):
    """Tab A saves Yes, tab B saves No, tab A goes Back: Chromium must not restore A's old Yes
    into the reloaded form, so Save there never silently overwrites B's No."""
    study = live_demo_study
    Walker(Client(), study.slug).complete(training="Group 2 fishes at night.")
    user = User.objects.create_user(username="e2e-back", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="annotators")[0])
    _login(page, live_server.url, "e2e-back")
    page.get_by_role("link", name="My queue").click()
    page.get_by_role("button", name="Next item").click()
    item_url = page.url
    _answer_question(page, "identify the target difference", "Yes")
    _answer_question(page, "surface difference", "No")
    _answer_question(page, "no difference", "No")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("Saved.")

    tab_b = page.context.new_page()
    tab_b.goto(item_url)
    _answer_question(tab_b, "identify the target difference", "No")
    tab_b.get_by_role("button", name="Save", exact=True).click()
    expect(tab_b.locator(".messages")).to_contain_text("Saved.")

    page.go_back()
    page.wait_for_load_state()
    identified_no = page.locator("fieldset", has=page.locator("legend", has_text="identify the target difference")).get_by_label("No", exact=True)
    expect(identified_no).to_be_checked()  # the stored label, not the restored old form
    page.get_by_role("button", name="Save", exact=True).click()
    label = Annotation.objects.get(annotator=user)
    assert label.identified is False


def test_a_choice_refused_for_lost_cookies_comes_back_filled_in(page, live_server, live_demo_study):
    """The annotator's cookies go while an item is open: Save brings the page back with the
    choice still checked and says it was not saved; Save again saves it. With every cookie
    gone, the login page comes first, then the same filled-in page."""
    from django.conf import settings

    study = live_demo_study
    Walker(Client(), study.slug).complete(training="Group 2 fishes at night.")
    user = User.objects.create_user(username="e2e-cookies", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="annotators")[0])

    def log_in() -> None:
        page.get_by_label("Username").fill("e2e-cookies")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()

    page.goto(f"{live_server.url}/accounts/login/")
    log_in()
    page.goto(f"{live_server.url}/annotate/{study.slug}/")
    page.get_by_role("button", name="Next item").click()
    expect(page.get_by_role("heading", name="The answer")).to_be_visible()
    item_url = page.url

    for lost in ([settings.CSRF_COOKIE_NAME], [settings.CSRF_COOKIE_NAME, settings.SESSION_COOKIE_NAME]):
        _answer_question(page, "identify the target difference", "Yes")
        _answer_question(page, "surface difference", "Yes")
        _answer_question(page, "no difference", "No")
        for name in lost:
            page.context.clear_cookies(name=name)
        page.get_by_role("button", name="Save", exact=True).click()
        if settings.SESSION_COOKIE_NAME in lost:
            expect(page.get_by_role("button", name="Log in")).to_be_visible()
            log_in()
        expect(page.locator(".messages")).to_contain_text("Your label was not saved")
        assert page.url == item_url
        surface = page.locator("fieldset", has=page.locator("legend", has_text="surface difference"))
        expect(surface.get_by_label("Yes", exact=True)).to_be_checked()
        assert not Annotation.objects.filter(annotator=user).exists()
        page.reload()  # a GET: nothing is sent again, and the kept choice was shown once
        expect(page.locator(".messages")).to_have_count(0)

    _answer_question(page, "identify the target difference", "Yes")
    _answer_question(page, "surface difference", "Yes")
    _answer_question(page, "no difference", "No")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("Saved.")
    label = Annotation.objects.get(annotator=user)
    assert (label.identified, label.surface_difference) == (True, True)


def test_back_to_the_overview_shows_the_figures_as_they_are_now(browser, live_server, live_demo_study):
    """The researcher leaves the annotation overview, an annotator saves a label and another
    participant answers, and the researcher presses Back: the overview shows the new figures.
    Before, the page had no Cache-Control and Chromium showed its stored copy without asking the
    server (found by a try-out); the study dashboard and the monitor are likewise never cached."""
    study = live_demo_study
    Walker(Client(), study.slug).complete(training="Group 2 fishes at night.")
    annotator = User.objects.create_user(username="e2e-back-annotator", password=PASSWORD)
    annotator.groups.add(Group.objects.get_or_create(name="annotators")[0])
    researcher_user = User.objects.create_user(username="e2e-back-researcher", password=PASSWORD)
    researcher_user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    base = live_server.url
    researcher = log_in(browser, base, "e2e-back-researcher", PASSWORD)
    researcher.goto(f"{base}/annotate/{study.slug}/overview/")
    expect(researcher.locator("#n-items")).to_have_text("3")
    researcher.get_by_role("link", name="Back to the study").click()
    expect(researcher.get_by_role("heading", level=1)).to_contain_text(study.title)

    item = assignment_next(study=study, annotator=annotator)
    label_save(study=study, annotator=annotator, public_id=item.public_id,
               label=LabelInput(identified=True, surface_difference=False, no_difference=False))
    Walker(Client(), study.slug).complete(training="Group 1 fishes by day.")

    researcher.go_back()
    expect(researcher.locator("#n-items")).to_have_text("6")
    labels = researcher.locator("tr", has=researcher.get_by_role("cell", name="e2e-back-annotator", exact=True))
    expect(labels.locator("td").nth(2)).to_have_text("1")
    for path in (f"/researcher/{study.slug}/", f"/researcher/{study.slug}/monitor/",
                 f"/annotate/{study.slug}/overview/"):
        response = researcher.request.get(base + path)
        assert "no-store" in response.headers.get("cache-control", ""), path
    close_context(researcher.context)
