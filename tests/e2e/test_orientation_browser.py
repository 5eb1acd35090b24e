"""Where am I? In Chromium: Back to a submitted step names the saved step and the current one,
and the survey's 5-point scales fit a 390 px phone."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from spotlight_study.participation.models import Participant, TaskResponse

from .participant import enter, expect_task, submit, to_training

pytestmark = pytest.mark.browser

NOTE = "#place-note"


def test_back_after_task_1_says_it_is_saved_and_which_task_this_is(page, live_server, live_demo_study):
    """Submit task 1, press Back: task 2 is shown with "Your answer to task 1 is saved; this is
    task 2."; reload and Forward show no note; the URL and the saved answer are unchanged."""
    study = live_demo_study
    enter(page, live_server.url, study.slug)
    expect(page.locator("main")).to_have_attribute("data-place-order", "0")
    to_training(page)
    expect(page.locator("#answer-limits")).to_have_text("Not empty, at most 5,000 characters.")
    page.locator("textarea").fill("The people in group 2 go fishing at night.")
    submit(page)
    expect_task(page, "Task 1 of 2")
    expect(page.locator(NOTE)).to_be_empty()
    page.locator("textarea").fill("First answer to task 1.")
    submit(page)
    expect_task(page, "Task 2 of 2")
    step_url = page.url

    page.go_back()
    expect_task(page, "Task 2 of 2")
    expect(page.locator(NOTE)).to_have_text("Your answer to task 1 is saved; this is task 2.")
    expect(page.get_by_role("status").filter(has_text="task 1 is saved")).to_be_visible()
    # Chromium would restore the old entry's scroll position (at its submit button): the note
    # must be where the participant looks, not above the fold.
    page.wait_for_load_state("load")
    # The page turned the browser's scroll restoration off on its first visit; a restored scroll
    # would be applied at load, so two frames drawn after load show where the page ends up.
    assert page.evaluate("history.scrollRestoration") == "manual"
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    expect(page.locator(NOTE)).to_be_in_viewport()
    assert page.url == step_url  # no marker in the address: the place stays in history.state
    page.reload()
    expect_task(page, "Task 2 of 2")
    expect(page.locator(NOTE)).to_be_empty()

    page.go_back()  # the example task's entry
    expect_task(page, "Task 2 of 2")
    expect(page.locator(NOTE)).to_have_text("Your answer to the example task is saved; this is task 2.")
    page.go_forward()
    expect_task(page, "Task 2 of 2")
    expect(page.locator(NOTE)).to_be_empty()

    participant = Participant.objects.get(study=study)
    assert participant.step == "task" and participant.task_index == 1
    assert TaskResponse.objects.get(participant=participant, position=1).answer == "First answer to task 1."


def test_back_from_the_instructions_says_consent_is_saved(page, live_server, live_demo_study):
    """Agree, then Back: the instructions page says the consent is saved; nothing is re-asked."""
    enter(page, live_server.url, live_demo_study.slug)
    page.get_by_role("button", name="I agree and want to take part").click()
    expect(page.locator(".progress")).to_have_text("Instructions, step 1 of 2")
    expect(page.get_by_text("cannot be changed afterwards")).to_be_visible()
    page.go_back()
    expect(page.locator(".progress")).to_have_text("Instructions, step 1 of 2")
    expect(page.locator(NOTE)).to_have_text("Your consent is saved; this is the instructions page.")


def _walk_to_survey(page, base_url: str, slug: str) -> None:
    enter(page, base_url, slug)
    to_training(page)
    page.locator("textarea").fill("The people in group 2 go fishing at night.")
    submit(page)
    for k in (1, 2):
        expect_task(page, f"Task {k} of 2")
        page.locator("textarea").fill(f"An answer to task {k} that describes a difference.")
        submit(page)
    expect(page.locator(".progress")).to_have_text("Last step")


def test_survey_scales_fit_one_line_on_a_390px_phone(page, live_server, live_demo_study, tmp_path):
    """At 390x844 each scale's options share one row inside the page, and every fieldset's
    legend lies inside its fieldset's border, not on it (screenshot saved for a look)."""
    page.set_viewport_size({"width": 390, "height": 844})
    _walk_to_survey(page, live_server.url, live_demo_study.slug)
    # Measured after "load": before it, the stylesheet may still be on its way, and the page is
    # laid out without it.
    page.wait_for_load_state("load")
    assert page.evaluate("getComputedStyle(document.querySelector('main')).maxWidth") == "1100px"
    layout = page.evaluate(
        """() => {
          const box = (el) => { const r = el.getBoundingClientRect();
            return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
          return {
            width: document.documentElement.clientWidth,
            scrollWidth: document.documentElement.scrollWidth,
            scales: [...document.querySelectorAll('.survey [role=radiogroup]')].map((g) => ({
              id: g.id, group: box(g),
              options: [...g.children].map(box),
            })),
            fieldsets: [...document.querySelectorAll('.survey fieldset')].map((f) => {
              const css = getComputedStyle(f), fs = box(f);
              // The inside of the border: a legend drawn on the border starts above it.
              fs.top += parseFloat(css.borderTopWidth); fs.bottom -= parseFloat(css.borderBottomWidth);
              fs.left += parseFloat(css.borderLeftWidth); fs.right -= parseFloat(css.borderRightWidth);
              return {fieldset: fs, legend: box(f.querySelector('legend'))};
            }),
          };
        }"""
    )
    path = tmp_path / "survey-390.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    assert layout["scrollWidth"] <= layout["width"], "the page scrolls sideways"
    assert len(layout["scales"]) == 10 and len(layout["fieldsets"]) == 3
    for scale in layout["scales"]:
        options = scale["options"]
        assert len(options) == 5, scale["id"]
        # One row: every option overlaps every other vertically, left to right without overlap.
        assert max(o["top"] for o in options) < min(o["bottom"] for o in options), scale
        for left, right in zip(options, options[1:]):
            assert left["right"] <= right["left"] + 0.5, scale
        assert options[0]["left"] >= scale["group"]["left"] - 0.5, scale
        assert options[-1]["right"] <= scale["group"]["right"] + 0.5, scale
        assert scale["group"]["right"] <= layout["width"], scale
    for f in layout["fieldsets"]:
        fs, legend = f["fieldset"], f["legend"]
        assert fs["left"] <= legend["left"] and legend["right"] <= fs["right"], f
        assert fs["top"] <= legend["top"] and legend["bottom"] <= fs["bottom"], f


#: German scale labels as a researcher would write them; "überhaupt" was split mid-word at 390 px.
GERMAN_SURVEY = {
    "likert_scale": ["Stimme überhaupt nicht zu", "Stimme nicht zu", "Weder noch", "Stimme zu",
                     "Stimme voll und ganz zu"],
    "frequency_scale": ["Nie", "Ein paar Mal", "Ein- bis zweimal im Monat", "Ein- bis zweimal pro Woche",
                        "Täglich"],
}

#: Every word of the survey that the browser laid out on more than one line (split inside the
#: word), with the CSS that decides it. A word is a run of letters between spaces in a text node.
SPLIT_WORDS = """() => {
  const split = [];
  const walker = document.createTreeWalker(document.querySelector('.survey'), NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    for (const m of n.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      if (tops.size > 1) split.push(m[0]);
    }
  }
  const label = document.querySelector('.survey [role=radiogroup] label');
  const css = getComputedStyle(label);
  return {split, lang: document.documentElement.lang, hyphens: css.hyphens,
          overflowWrap: css.overflowWrap, wordBreak: css.wordBreak};
}"""


def test_no_word_of_a_german_survey_is_split_on_a_390px_phone(page, live_server, demo_data):
    """A German study's survey at 390x844: ``<html lang="de">``, lines break between words only
    (no ``overflow-wrap: anywhere``), no word ("überhaupt") laid out across two lines, and every
    scale still on one row inside the page, no label's text overflowing its box."""
    from django.test import Client

    from spotlight_study.studies.services import study_import

    from ..conftest import Walker

    survey = {**demo_data["survey"], **GERMAN_SURVEY}
    study = study_import(data={**demo_data, "slug": "deutsch", "language": "de", "survey": survey})
    walker = Walker(Client(), study.slug)
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.answer("Die Menschen in Gruppe 2 angeln nachts.")
    for task in range(2):
        walker.answer(f"Eine Antwort auf Aufgabe {task + 1}, die einen Unterschied beschreibt.")
    page.context.add_cookies([{"name": c.key, "value": c.value, "url": live_server.url}
                              for c in walker.client.cookies.values()])
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}{walker.step_url}")
    expect(page.locator(".survey [role=radiogroup]").first).to_be_visible()
    page.wait_for_load_state("load")  # the stylesheet is applied
    found = page.evaluate(SPLIT_WORDS)
    print(found)
    assert found["lang"] == "de"
    assert (found["overflowWrap"], found["wordBreak"]) == ("normal", "normal"), found
    assert found["split"] == [], found
    scales = page.evaluate(
        """() => [...document.querySelectorAll('.survey [role=radiogroup]')].map((g) => {
          const r = g.getBoundingClientRect();
          return {right: r.right, options: [...g.children].map((o) => o.getBoundingClientRect().top),
                  overflowing: [...g.querySelectorAll('label')].filter((l) => l.scrollWidth > l.clientWidth + 0.5).length};
        })"""
    )
    width = page.evaluate("document.documentElement.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    for scale in scales:
        assert len(set(round(t) for t in scale["options"])) == 1, scale  # one row
        assert scale["right"] <= width and scale["overflowing"] == 0, scale
