"""axe-core on every participant page, at a desktop width and at 390 px, and on the annotator's
item page and the adjudication page (issue 25; docs/accessibility.md).

Each test walks the real pages of the live server in Chromium, runs axe-core (:mod:`.a11y`) on
each page it reaches at both widths (``AxeLedger.check_widths``: one walk, two checks a page),
and fails at its end if any page has a violation of impact serious or
critical, or a minor or moderate one not accepted in docs/accessibility.md (``a11y.ACCEPTED``),
with the table of all pages checked (``pytest -rP`` prints it for a passing test too).
"""
from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.test import Client
from django_ratelimit import core as ratelimit_core
from playwright.sync_api import expect

from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.models import Participant
from spotlight_study.studies.models import Study

from ..conftest import Walker
from .a11y import AxeLedger
from .contexts import close_context
from .participant import EMPTY_ANSWER_ERROR, enter, expect_task, fill_survey, hex24, submit
from .staff import log_in

pytestmark = pytest.mark.browser

PASSWORD = "a11y-e2e-password"


def _step_url(base: str, slug: str) -> str:
    return f"{base}/s/{slug}/step/"


def test_participant_flow_pages_have_no_serious_violations(page, live_server, live_demo_study):
    """Consent, the decline confirmation, instructions, training (also refused), both main tasks,
    the survey (also refused) and the completed done page."""
    study = live_demo_study
    axe = AxeLedger()
    enter(page, live_server.url, study.slug)
    axe.check_widths(page, "consent")
    page.get_by_role("button", name="I do not agree").click()
    expect(page.get_by_role("heading", name="Not taking part?")).to_be_visible()
    axe.check_widths(page, "consent: confirm decline")
    page.get_by_role("link", name="Back to the consent form").click()
    page.get_by_role("button", name="I agree and want to take part").click()
    expect(page.locator(".progress")).to_have_text("Instructions, step 1 of 2")
    axe.check_widths(page, "instructions")
    page.get_by_role("button", name="Continue").click()
    expect_task(page, "Instructions, step 2 of 2")
    axe.check_widths(page, "training")
    submit(page)
    expect(page.get_by_text(EMPTY_ANSWER_ERROR)).to_be_visible()
    axe.check_widths(page, "training: empty answer refused")
    page.locator("textarea").fill("The people in group 2 go fishing at night.")
    submit(page)
    for n in (1, 2):
        expect_task(page, f"Task {n} of 2")
        axe.check_widths(page, f"task {n}")
        page.locator("textarea").fill("Group 1 harvests maize, group 2 wheat.")
        submit(page)
    expect(page.get_by_role("heading", name="A few questions about the tasks")).to_be_visible()
    axe.check_widths(page, "survey")
    page.get_by_role("button", name="Finish and return to Prolific").click()
    expect(page.locator(".error-summary")).to_be_visible()
    axe.check_widths(page, "survey: incomplete refused")
    fill_survey(page)
    page.get_by_role("button", name="Finish and return to Prolific").click()
    page.wait_for_url("https://app.prolific.com/**")
    page.goto(_step_url(live_server.url, study.slug))
    expect(page.get_by_role("heading", name="Thank you")).to_be_visible()
    axe.check_widths(page, "done: completed")
    axe.assert_none_blocking()


def test_end_pages_have_no_serious_violations(page, live_server, live_demo_study):
    """The done page after declining and after a failed instruction check, and the ended page
    (Prolific returned the submission)."""
    study = live_demo_study
    axe = AxeLedger()
    step = _step_url(live_server.url, study.slug)
    enter(page, live_server.url, study.slug)
    page.get_by_role("button", name="I do not agree").click()
    page.get_by_role("button", name="Yes, I do not agree: end the study").click()
    page.wait_for_url("https://app.prolific.com/**")
    page.goto(step)
    expect(page.get_by_text("You chose not to take part.")).to_be_visible()
    axe.check_widths(page, "done: no consent")

    # The demo study continues after a failed check (continue_and_flag): put a participant in
    # the state that a study with failed_check_policy "end" leaves.
    page.context.clear_cookies()
    pid = enter(page, live_server.url, study.slug)
    Participant.objects.filter(prolific_pid=pid).update(
        status=Participant.Status.FAILED_CHECK, step="done"
    )
    page.goto(step)
    expect(page.get_by_role("heading", name="The study ends here")).to_be_visible()
    axe.check_widths(page, "done: failed instruction check")

    page.context.clear_cookies()
    pid = enter(page, live_server.url, study.slug)
    Participant.objects.filter(prolific_pid=pid).update(status=Participant.Status.RETURNED)
    page.goto(step)
    expect(page.get_by_role("heading", name="This session has ended")).to_be_visible()
    axe.check_widths(page, "ended: returned on Prolific")
    axe.assert_none_blocking()


def test_refusal_and_error_pages_have_no_serious_violations(
    page, live_server, live_demo_study, settings, monkeypatch
):
    """The pages a participant may meet instead of a step: an incomplete link, an unknown study,
    no session, a study not open, a refused arrival, too many arrivals, an out-of-date form and
    the site's 404 page."""
    study = live_demo_study
    base = live_server.url
    axe = AxeLedger()

    page.goto(f"{base}/s/{study.slug}/?PROLIFIC_PID=not-an-id")
    expect(page.get_by_role("heading", name="This study link is incomplete")).to_be_visible()
    axe.check_widths(page, "entry error (incomplete link)")
    page.goto(f"{base}/s/no-such-study/")
    expect(page.get_by_role("heading", name="Study not found")).to_be_visible()
    axe.check_widths(page, "unknown study")
    page.goto(_step_url(base, study.slug))
    expect(page.get_by_role("heading", name="We could not find your session")).to_be_visible()
    axe.check_widths(page, "no session")
    page.goto(f"{base}/no-such-page/")
    axe.check_widths(page, "404 page")

    # A SESSION_ID already used by another participant is refused.
    session_id = hex24()
    Walker(Client(), study.slug).enter(SESSION_ID=session_id)
    page.goto(
        f"{base}/s/{study.slug}/?PROLIFIC_PID={hex24()}&STUDY_ID={hex24()}&SESSION_ID={session_id}"
    )
    expect(page.locator("h1")).to_have_text("This Prolific session was already used")
    axe.check_widths(page, "arrival refused")

    # A form posted from a page whose CSRF token no longer matches.
    enter(page, base, study.slug)
    page.locator("input[name=csrfmiddlewaretoken]").evaluate("(el) => { el.value = 'x'.repeat(64); }")
    page.get_by_role("button", name="I agree and want to take part").click()
    expect(page.get_by_role("heading", name="This page was out of date")).to_be_visible()
    axe.check_widths(page, "out-of-date form (CSRF)")

    # Too many new arrivals from one address: the window's end is pinned as in
    # tests/participation/test_arrival.py, so the count cannot restart mid-test.
    window_end = int(time.time()) + 30
    monkeypatch.setattr(ratelimit_core, "_get_window", lambda value, period: window_end)
    cache.clear()
    settings.ENTRY_RATE_LIMIT = "1/m"
    page.context.clear_cookies()
    enter(page, base, study.slug)
    page.context.clear_cookies()
    page.goto(f"{base}/s/{study.slug}/?PROLIFIC_PID={hex24()}&STUDY_ID={hex24()}&SESSION_ID={hex24()}")
    expect(page.get_by_role("heading", name="Please wait a moment")).to_be_visible()
    axe.check_widths(page, "too many arrivals")
    settings.ENTRY_RATE_LIMIT = "off"
    cache.clear()

    Study.objects.filter(pk=study.pk).update(status=Study.Status.PAUSED)
    page.context.clear_cookies()
    page.goto(f"{base}/s/{study.slug}/?PROLIFIC_PID={hex24()}&STUDY_ID={hex24()}&SESSION_ID={hex24()}")
    expect(page.get_by_role("heading", name="This study is not open at the moment")).to_be_visible()
    axe.check_widths(page, "study not open")
    axe.assert_none_blocking()


def _label(identified: bool) -> LabelInput:
    return LabelInput(identified=identified, surface_difference=False, no_difference=False)


def test_annotator_item_and_adjudication_pages_have_no_serious_violations(
    browser, live_server, live_demo_study
):
    """The annotator's queue and item page, and the adjudicator's list and adjudication page of an
    item two annotators disagreed on."""
    study = live_demo_study
    Walker(Client(), study.slug).complete(training="Group 2 fishes at night.")
    users = {}
    for name, group in (("a11y-ann1", "annotators"), ("a11y-ann2", "annotators"),
                        ("a11y-adj", "adjudicators")):
        users[name] = User.objects.create_user(username=name, password=PASSWORD)
        users[name].groups.add(Group.objects.get_or_create(name=group)[0])
    # ann2 labels one item "not identified", ann1 labels every item "identified": one dispute.
    disputed = assignment_next(study=study, annotator=users["a11y-ann2"]).public_id
    label_save(study=study, annotator=users["a11y-ann2"], public_id=disputed, label=_label(False))
    while (item := assignment_next(study=study, annotator=users["a11y-ann1"])) is not None:
        label_save(study=study, annotator=users["a11y-ann1"], public_id=item.public_id,
                   label=_label(True))
    axe = AxeLedger()
    base = live_server.url

    annotator = log_in(browser, base, "a11y-ann2", PASSWORD)
    annotator.goto(f"{base}/annotate/")
    axe.check_widths(annotator, "annotation home")
    annotator.goto(f"{base}/annotate/{study.slug}/")
    axe.check_widths(annotator, "annotation queue")
    annotator.get_by_role("button", name="Next item").click()
    expect(annotator.get_by_role("heading", name="The answer")).to_be_visible()
    axe.check_widths(annotator, "annotation item")
    annotator.get_by_role("button", name="Save", exact=True).click()
    expect(annotator.locator(".errorlist, .error-summary").first).to_be_visible()
    axe.check_widths(annotator, "annotation item: incomplete refused")
    close_context(annotator.context)

    adjudicator = log_in(browser, base, "a11y-adj", PASSWORD)
    adjudicator.goto(f"{base}/annotate/{study.slug}/adjudicate/")
    expect(adjudicator.locator("#pending-count")).to_have_text("1")
    axe.check_widths(adjudicator, "adjudication list")
    adjudicator.get_by_role("link", name=disputed).click()
    expect(adjudicator.get_by_role("button", name="Save the final label")).to_be_visible()
    axe.check_widths(adjudicator, "adjudication item")
    close_context(adjudicator.context)
    axe.assert_none_blocking()


def test_the_reread_page_has_no_serious_violations(page, live_server):
    """The "please read the instructions again" page of a study with two instruction-check
    attempts, reached by failing the first one."""
    from spotlight_study.studies.schema import parse_study_file
    from spotlight_study.studies.services import study_import

    from .conftest import DEMO_STUDY_FILE
    from .participant import to_training

    data = parse_study_file(DEMO_STUDY_FILE)
    data["instruction_check_attempts"] = 2
    study = study_import(data=data)
    axe = AxeLedger()
    enter(page, live_server.url, study.slug)
    to_training(page)
    page.locator("textarea").fill("I clicked through without reading what this is about.")
    submit(page)
    expect(page.get_by_role("heading", name="Please read the instructions again")).to_be_visible()
    axe.check_widths(page, "re-read the instructions")
    axe.assert_none_blocking()


def test_researcher_pages_fit_a_phone_and_have_no_serious_violations(browser, live_server, live_demo_study):
    """The study list, the study dashboard, the live monitor and the annotation overview, with
    a completed participant and a flagged answer: axe-core at 1280 and 390 px, and at 390 px no
    page scrolls sideways. Wide tables scroll inside their own focusable box instead
    (``.table-scroll``: before, the dashboard was 661 px and the overview 714 px wide at 390 px,
    found by a try-out)."""
    study = live_demo_study
    for _ in range(2):  # the same answer twice: both participants flagged "identical answer"
        Walker(Client(), study.slug).complete(training="Group 2 fishes at night.")
    user = User.objects.create_user(username="a11y-researcher", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    axe = AxeLedger()
    base = live_server.url
    researcher = log_in(browser, base, "a11y-researcher", PASSWORD)
    pages = {
        "study list": "/researcher/",
        "study dashboard": f"/researcher/{study.slug}/",
        "live monitor": f"/researcher/{study.slug}/monitor/",
        "annotation overview": f"/annotate/{study.slug}/overview/",
    }
    too_wide = {}
    for name, path in pages.items():
        researcher.goto(base + path)
        axe.check_widths(researcher, name)
        researcher.set_viewport_size({"width": 390, "height": 844})
        width = researcher.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            too_wide[name] = width
        researcher.set_viewport_size({"width": 1280, "height": 800})
    close_context(researcher.context)
    assert too_wide == {}, f"pages wider than a 390 px phone: {too_wide}"
    axe.assert_none_blocking()
