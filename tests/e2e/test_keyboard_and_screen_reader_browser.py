"""What axe-core cannot judge on the participant pages, checked in Chromium (issue 25,
docs/accessibility.md): every control that Tab reaches shows a focus ring and has a name; the
answer box's counter is a polite live region and writes the limit as the limit line does; the
token pattern box and the two groups have headings in a sound order; the survey's error summary
links to the first unanswered question, on a desktop and on a phone.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .a11y import DESKTOP, PHONE
from .contexts import close_context
from .participant import enter, expect_task, submit, to_training

pytestmark = pytest.mark.browser

#: An accessible name in Playwright's ARIA snapshot of one element: ``- button "Continue"`` (YAML
#: quotes the line when the name has a colon).
NAMED = re.compile("^- '?[a-z]+ \"[^\"]*\\S[^\"]*\"")
#: Most Tab presses a page may need (the survey has 10 questions, a box and a button).
MAX_TABS = 40

_FOCUSED = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) { return null; }
    const style = getComputedStyle(el);
    return {
        id: el.id, tag: el.tagName.toLowerCase(), visible: el.matches(":focus-visible"),
        outline: style.outlineStyle, width: parseFloat(style.outlineWidth) || 0,
    };
}"""


def _tab_through(page: Page) -> list[dict]:
    """Press Tab from the top of the page until the focus leaves it; for every control reached,
    its id, tag, whether it matches ``:focus-visible``, its outline and its ARIA snapshot."""
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    reached = []
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        info = page.evaluate(_FOCUSED)
        if info is None:
            return reached
        info["snapshot"] = page.locator(":focus").aria_snapshot().splitlines()[0]
        if reached and info["snapshot"] == reached[0]["snapshot"] and info["id"] == reached[0]["id"]:
            return reached  # wrapped round
        reached.append(info)
    raise AssertionError(f"Tab never left the page after {MAX_TABS} presses: {reached}")


def _assert_focus_visible_and_named(page: Page, name: str, at_least: int) -> None:
    # After "load" only: before it the stylesheet may still be on its way, and the focus ring is
    # the browser's own (a 1 px "auto" outline), as Chromium 156.0.8078.114 showed.
    page.wait_for_load_state("load")
    reached = _tab_through(page)
    assert len(reached) >= at_least, (name, reached)
    for c in reached:
        assert c["visible"] and c["outline"] != "none" and c["width"] >= 2, (name, c)
        # A <summary> has no ARIA role in the snapshot; HTML names it by its text.
        summary_named = c["tag"] == "summary" and re.match(r"^- text: \S", c["snapshot"])
        assert NAMED.match(c["snapshot"]) or summary_named, (name, c)


def test_every_control_has_a_visible_focus_and_a_name(page, live_server, live_demo_study):
    """Tab through consent, instructions, the training task, a main task and the survey."""
    page.set_viewport_size(DESKTOP)
    enter(page, live_server.url, live_demo_study.slug)
    _assert_focus_visible_and_named(page, "consent", at_least=2)
    page.get_by_role("button", name="I agree and want to take part").click()
    expect(page.locator(".progress")).to_have_text("Instructions, step 1 of 2")
    _assert_focus_visible_and_named(page, "instructions", at_least=1)
    page.get_by_role("button", name="Continue").click()
    expect_task(page, "Instructions, step 2 of 2")
    _assert_focus_visible_and_named(page, "training", at_least=2)
    page.locator("textarea").fill("The people in group 2 go fishing at night.")
    submit(page)
    expect_task(page, "Task 1 of 2")
    _assert_focus_visible_and_named(page, "task 1", at_least=2)
    for n in (1, 2):
        expect_task(page, f"Task {n} of 2")
        page.locator("textarea").fill("Group 1 harvests maize, group 2 wheat.")
        submit(page)
    expect(page.get_by_role("heading", name="A few questions about the tasks")).to_be_visible()
    # One Tab stop per radio group (arrows move inside it), the comment box and the button.
    _assert_focus_visible_and_named(page, "survey", at_least=12)


def test_answer_counter_is_polite_and_writes_the_limit_as_the_limit_line(
    page, live_server, live_demo_study
):
    """The counter is ``aria-live="polite"``; typing updates it; both lines say "5,000"."""
    enter(page, live_server.url, live_demo_study.slug)
    to_training(page)
    counter = page.locator("#answer-counter")
    expect(counter).to_have_attribute("aria-live", "polite")
    expect(page.locator("#answer-limits")).to_have_text("Not empty, at most 5,000 characters.")
    page.locator("textarea").press_sequentially("Night")
    expect(counter).to_have_text("5 of at most 5,000 characters.")
    expect(page.locator("textarea")).to_have_attribute("aria-describedby", re.compile(r"\banswer-limits\b"))


_HEADINGS = """() => Array.from(document.querySelectorAll("h1, h2, h3, h4, h5, h6"))
    .map((h) => [Number(h.tagName[1]), h.textContent.trim().replace(/\\s+/g, " ")])"""


def _assert_heading_order(page: Page, name: str) -> list[list]:
    """The page's headings ``[[level, text], ...]``; fails when one skips a level going down."""
    headings = page.evaluate(_HEADINGS)
    assert headings and headings[0][0] == 1, (name, headings)
    for (before, _), (level, text) in zip(headings, headings[1:]):
        assert level <= before + 1, (name, headings)
    return headings


def test_pattern_box_and_groups_have_headings_in_order(page, live_server, live_demo_study):
    """The token pattern box (a complementary region) and each group (a region) are named by
    their own heading, on the
    instructions' example, the training task and both main tasks (with and without the box)."""
    enter(page, live_server.url, live_demo_study.slug)
    page.get_by_role("button", name="I agree and want to take part").click()
    expect(page.locator(".progress")).to_have_text("Instructions, step 1 of 2")
    seen_box = []
    for name in ("instructions", "training", "task 1", "task 2"):
        headings = _assert_heading_order(page, name)
        texts = [t for _, t in headings]
        assert "Group 1" in texts and "Group 2" in texts, (name, headings)
        for group in ("Group 1", "Group 2"):
            region = page.get_by_role("region", name=group, exact=True)
            expect(region.get_by_role("heading", name=group, exact=True)).to_be_visible()
        box = page.locator(".pattern-box")
        seen_box.append(box.count() > 0)
        if box.count():
            expect(
                page.get_by_role("complementary", name=re.compile("^Words that occur differently"))
                .get_by_role("heading", name=re.compile("^Words that occur differently"))
            ).to_be_visible()
        if name == "instructions":
            page.get_by_role("button", name="Continue").click()
            expect_task(page, "Instructions, step 2 of 2")
        else:
            page.locator("textarea").fill("Group 1 fishes by day, group 2 at night.")
            submit(page)
            if name != "task 2":
                expect_task(page, f"Task {1 if name == 'training' else 2} of 2")
    expect(page.get_by_role("heading", name="A few questions about the tasks")).to_be_visible()
    # The box is on the training task and on exactly one main task (the "pattern" condition).
    assert seen_box[1] and sum(seen_box[2:]) == 1, seen_box


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_survey_error_summary_links_to_the_first_missing_question(
    page, live_server, live_demo_study, viewport
):
    """Questions 4 and 8 left out: the summary takes the focus and its link moves the focus to
    question 4's first option, which is then on screen."""
    page.set_viewport_size(viewport)
    enter(page, live_server.url, live_demo_study.slug)
    to_training(page)
    page.locator("textarea").fill("The people in group 2 go fishing at night.")
    submit(page)
    for n in (1, 2):
        expect_task(page, f"Task {n} of 2")
        page.locator("textarea").fill("Group 1 harvests maize, group 2 wheat.")
        submit(page)
    items = page.locator(".survey .item")
    expect(items).to_have_count(10)
    for i in range(10):
        if i not in (3, 7):
            items.nth(i).locator("input[type=radio]").nth(i % 5).check()
    page.get_by_role("button", name="Finish and return to Prolific").click()

    summary = page.locator(".error-summary")
    expect(summary).to_be_focused()
    link = summary.get_by_role("link")
    expect(link).to_have_count(1)
    first_missing = page.locator(".survey .item").nth(3)
    first_radio = first_missing.locator("input[type=radio]").first
    expect(link).to_have_attribute("href", "#" + first_radio.get_attribute("id"))
    expect(first_missing.locator(".errorlist")).to_be_visible()
    page.evaluate("() => window.scrollTo(0, 0)")
    link.click()
    expect(first_radio).to_be_focused()
    expect(first_missing.locator("p").first).to_be_in_viewport()
    expect(first_radio).to_be_in_viewport()
    # The keyboard way too: from the summary, Tab reaches the link and Enter follows it.
    page.evaluate("() => window.scrollTo(0, 0)")
    summary.focus()
    page.keyboard.press("Tab")
    expect(link).to_be_focused()
    page.keyboard.press("Enter")
    expect(first_radio).to_be_focused()
    expect(first_radio).to_be_in_viewport()


def test_annotator_item_controls_have_a_visible_focus_and_a_name(
    browser, live_server, live_demo_study, settings
):
    """Tab through the annotator's item page: site navigation, label form and its buttons."""
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from ..conftest import Walker
    from .staff import log_in

    Walker(Client(), live_demo_study.slug).complete(training="Group 2 fishes at night.")
    user = User.objects.create_user(username="a11y-keys", password="a11y-keys-password")
    user.groups.add(Group.objects.get_or_create(name="annotators")[0])
    page = log_in(browser, live_server.url, "a11y-keys", "a11y-keys-password")
    page.set_viewport_size(DESKTOP)
    page.goto(f"{live_server.url}/annotate/{live_demo_study.slug}/")
    page.get_by_role("button", name="Next item").click()
    expect(page.get_by_role("heading", name="The answer")).to_be_visible()
    _assert_focus_visible_and_named(page, "annotation item", at_least=10)
    close_context(page.context)
