"""The label form's sticky save bar never hides the field that has the keyboard focus (WCAG 2.2,
2.4.11 "Focus Not Obscured").

A try-out found "Other differences not in the codebook" under the bar "Save the final label" on
the adjudication page at 1280x900, what was typed into it out of sight, and "None: keep the
answer" under the bar of the labeling page; with a scroll padding the note was still under it
on some items (the page scrolled as far as it could, the panel not at all). Every adjudication
and labeling page of the run is walked with Tab through its label form at three desktop sizes
and a phone's; every focused field outside the bar must lie clear of it once the page has
settled (``static/js/annotation.js`` scrolls a field clear of the bar in the next frame).
"""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from spotlight_study.annotation.selectors import adjudication_queue
from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next

from ..conftest import Walker, make_staff
from .a11y import PHONE
from .contexts import close_context
from .staff import log_in

pytestmark = pytest.mark.browser

#: The focused element's box and the sticky bar's, when the focus is in the label form but not
#: in the bar; null otherwise.
FOCUS_AND_BAR = """() => {
  const el = document.activeElement;
  const form = el && el.closest('.label-form');
  const bar = form && form.querySelector('.actions');
  if (!form || !bar || bar.contains(el)) return null;
  const box = (el.type === 'checkbox' || el.type === 'radio') && el.labels.length ? el.labels[0] : el;
  const r = box.getBoundingClientRect(), b = bar.getBoundingClientRect();
  return {name: el.name + (el.value && el.type !== 'text' ? '=' + el.value : ''),
          top: r.top, bottom: r.bottom, barTop: b.top, barBottom: b.bottom};
}"""


def _hidden_fields(page, limit: int = 80) -> list[str]:
    """Tab through the page; the focused label-form fields that overlap the save bar."""
    hidden, seen = [], 0
    page.locator("body").focus()
    for _ in range(limit):
        page.keyboard.press("Tab")
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        state = page.evaluate(FOCUS_AND_BAR)
        if state is None:
            if seen and page.evaluate("() => !!document.activeElement.closest('.label-form .actions')"):
                break  # through the form, at its buttons
            continue
        seen += 1
        if state["bottom"] > state["barTop"] + 0.5 and state["top"] < state["barBottom"] - 0.5:
            hidden.append(f"{state['name']} ({state['top']:.0f}-{state['bottom']:.0f} px, "
                          f"bar {state['barTop']:.0f}-{state['barBottom']:.0f} px)")
    assert seen > 5, ("the walk never reached the label form's fields", page.url, page.evaluate(
        "() => [document.activeElement.tagName, document.activeElement.name, document.title]"))
    return hidden


def test_the_save_bar_never_hides_the_focused_field(browser, live_server, live_demo_study):
    study = live_demo_study
    for _ in range(2):
        Walker(Client(), study.slug).complete()
    annotators = Group.objects.get_or_create(name="annotators")[0]
    for n, identified in enumerate((True, False)):  # two labels that disagree on every answer
        annotator = User.objects.create_user(username=f"focus-annotator-{n}", password="pw-for-tests-only")
        annotator.groups.add(annotators)
        while (item := assignment_next(study=study, annotator=annotator)) is not None:
            label_save(study=study, annotator=annotator, public_id=item.public_id, label=LabelInput(
                identified=identified, surface_difference=False, no_difference=False))
    third = User.objects.create_user(username="focus-annotator-2", password="pw-for-tests-only")
    third.groups.add(annotators)
    Walker(Client(), study.slug).complete()  # answers no one has labeled yet: the third's items
    researcher = make_staff("focus-researcher", is_superuser=True)
    sizes = ({"width": 1280, "height": 900}, {"width": 1440, "height": 900},
             {"width": 1280, "height": 720}, PHONE)

    found = {}
    # Every item, since where the bar falls depends on the answer's and the texts' length (a
    # try-out found the note under the bar on one item that another item did not show).
    judge = log_in(browser, live_server.url, "focus-researcher", "pw-for-tests-only")
    for item_id in adjudication_queue(study=study, adjudicator=researcher):
        for viewport in sizes:
            judge.set_viewport_size(viewport)
            judge.goto(f"{live_server.url}/annotate/{study.slug}/adjudicate/{item_id}/")
            found[f"adjudication of {item_id} at {viewport['width']}x{viewport['height']}"] = _hidden_fields(judge)
    close_context(judge.context)
    annotator = log_in(browser, live_server.url, "focus-annotator-2", "pw-for-tests-only")
    while (item := assignment_next(study=study, annotator=third)) is not None:
        for viewport in sizes:
            annotator.set_viewport_size(viewport)
            annotator.goto(f"{live_server.url}/annotate/{study.slug}/items/{item.public_id}/")
            found[f"labeling of {item.public_id} at {viewport['width']}x{viewport['height']}"] = _hidden_fields(annotator)
        label_save(study=study, annotator=third, public_id=item.public_id, label=LabelInput(
            identified=True, surface_difference=False, no_difference=False))
    close_context(annotator.context)
    assert len(found) >= 20
    problems = {where: fields for where, fields in found.items() if fields}
    assert problems == {}, "\n".join(f"{where}: {'; '.join(fields)}" for where, fields in problems.items())
