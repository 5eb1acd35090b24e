"""A study in German, Spanish or French runs end to end in Chromium with no English platform
text on its pages; an Arabic study lays out right to left (docs/languages.md).

"English platform text" is every phrase of the platform's messages (the ``msgid`` of the
catalogs, cut at placeholders and tags, three words or more), looked for in what the page shows
and what its scripts write (the character counter, the Back/Forward note), after the study's own
texts (kept as the researcher wrote them, here in English) are set aside.
"""
from __future__ import annotations

import re

import polib
import pytest
from playwright.sync_api import Page, expect

from spotlight_study.participation.models import Participant
from spotlight_study.studies.services import study_import

from ..conftest import REPO
from .participant import PROLIFIC_COMPLETE, hex24

pytestmark = pytest.mark.browser

#: Prolific's own button and menu names, quoted in English in every translation.
PROLIFIC_NAMES = ("Open study in a new window", "Return submission")

#: The text nodes and text attributes of the page, trimmed (scripts and styles left out).
PAGE_TEXTS = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const tag = n.parentElement ? n.parentElement.tagName : "";
    if (tag === "SCRIPT" || tag === "STYLE") continue;
    const t = n.textContent.replace(/\\s+/g, " ").trim();
    if (t) out.push(t);
  }
  for (const el of document.querySelectorAll("[aria-label], [title], [placeholder], [alt]")) {
    for (const a of ["aria-label", "title", "placeholder", "alt"]) {
      if (el.getAttribute(a)) out.push(el.getAttribute(a).replace(/\\s+/g, " ").trim());
    }
  }
  out.push(document.title);
  return out;
}"""


def _english_phrases() -> list[str]:
    """Phrases of three or more words from the platform's English messages."""
    po = polib.pofile(str(REPO / "locale" / "de" / "LC_MESSAGES" / "django.po"))
    phrases = set()
    for entry in po:
        for text in filter(None, [entry.msgid, entry.msgid_plural]):
            for part in re.split(r"%\(\w+\)s|\{\w+\}|<[^>]+>|\"[^\"]*\"", text):
                part = " ".join(part.split()).strip(" .,:;()")
                if len(part.split()) >= 3:
                    phrases.add(part)
    return sorted(phrases)


ENGLISH = _english_phrases()


def _study_texts(data) -> set[str]:
    out: set[str] = set()
    if isinstance(data, dict):
        for value in data.values():
            out |= _study_texts(value)
    elif isinstance(data, list):
        for value in data:
            out |= _study_texts(value)
    elif isinstance(data, str):
        for part in [data, *re.split(r"\n", data)]:
            part = " ".join(part.split())
            out |= {part, part.lstrip("-* ")}
    return out


class Checker:
    """Collects, page by page, the English platform phrases a study's pages show."""

    def __init__(self, page: Page, own: set[str], code: str):
        self.page, self.own, self.code = page, own, code
        self.found: dict[str, list[str]] = {}
        self.pages = 0

    def check(self, name: str) -> None:
        """Check the page now shown: its language, and no English platform phrase."""
        expect(self.page.locator("html")).to_have_attribute("lang", self.code)
        texts = [t for t in self.page.evaluate(PAGE_TEXTS) if t not in self.own]
        shown = "\n".join(texts)
        for name_ in PROLIFIC_NAMES:
            shown = shown.replace(name_, "")
        hits = [phrase for phrase in ENGLISH if phrase in shown]
        if hits:
            self.found[name] = hits
        self.pages += 1


def _placed(page: Page) -> None:
    """Wait until flow.js has noted this page's place in its history entry, as it does on load.

    A click before that (a test clicks within milliseconds of the load; a person does not)
    leaves the entry without a place, and Back to it then shows no note."""
    page.wait_for_function("() => history.state && history.state.spotlightPlace")


@pytest.fixture
def study_in(live_server, demo_data):
    """A function importing the demo study in a language, for the live server. The study file
    gives no ``task_prompt``, so the platform's own prompt (translated) is used."""

    def make(code: str):
        data = {**demo_data, "slug": f"demo-{code}", "language": code}
        data.pop("task_prompt")
        return study_import(data=data), data

    return make


@pytest.mark.parametrize("code", ["de", "es", "fr"])
def test_a_study_runs_end_to_end_with_no_english_platform_text(code, page, live_server, study_in):
    """Consent, Back/Forward note, instructions, the example task with a refused empty answer,
    both tasks with the typed counter, a refused survey, the survey and the done page: each in
    the study's language, ending on Prolific with the completion code."""
    study, data = study_in(code)
    checker = Checker(page, _study_texts(data), code)
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={hex24()}&STUDY_ID={hex24()}&SESSION_ID={hex24()}")
    expect(page.locator("#consent-form")).to_be_visible()
    checker.check("consent")
    page.locator("#consent-form button[value=decline]").click()
    expect(page.locator("#confirm-decline-form")).to_be_visible()
    checker.check("confirm decline")
    page.locator(".confirm-decline a.button").click()
    _placed(page)
    page.locator("#consent-form button[value=agree]").click()
    expect(page.locator("#instructions-form")).to_be_visible()
    checker.check("instructions")
    page.go_back()
    expect(page.locator("#place-note p")).to_have_count(1)
    checker.check("instructions after Back")

    page.locator("#instructions-form button[type=submit]").click()
    expect(page.locator(".pattern-box")).to_be_visible()
    checker.check("training")
    page.locator(".answer-form button[type=submit]").click()
    expect(page.locator(".errorlist")).to_be_visible()
    checker.check("training refused")
    page.locator("textarea[data-answer]").fill("The people in group 2 go fishing at night.")
    page.locator(".answer-form button[type=submit]").click()
    for k in (1, 2):
        expect(page.locator(".answer-form")).to_have_id(f"answer-form-{k}")
        page.locator("textarea[data-answer]").fill("Ein Unterschied." * 2)
        expect(page.locator("#answer-counter")).not_to_have_text("")
        checker.check(f"task {k}")
        page.locator(".answer-form button[type=submit]").click()

    expect(page.locator("#survey-form")).to_be_visible()
    checker.check("survey")
    page.locator("#survey-form button[type=submit]").click()
    expect(page.locator(".error-summary")).to_be_visible()
    checker.check("survey refused")
    items = page.locator(".survey .item")
    for i in range(items.count()):
        items.nth(i).locator("input[type=radio]").nth(i % 5).check()
    page.locator("#survey-form button[type=submit]").click()
    page.wait_for_url(f"{PROLIFIC_COMPLETE}?cc={study.completion_code}")
    assert checker.pages == 10
    assert checker.found == {}
    assert Participant.objects.get(study=study).status == Participant.Status.COMPLETED


@pytest.mark.parametrize("code", ["de", "es", "fr"])
def test_the_counter_and_the_note_are_written_in_the_study_language(code, page, live_server, study_in):
    """flow.js writes the counter and the Back note in the study's words (both from the page's
    data attributes), and its numbers as the server writes the limit line's."""
    study, _ = study_in(code)
    expected = {
        "de": ("von höchstens", "Ihre Einwilligung ist gespeichert; dies ist die Seite mit der Anleitung."),
        "es": ("de un máximo de", "Su consentimiento está guardado; esta es la página de instrucciones."),
        "fr": ("caractères au plus", "Votre consentement est enregistré\u00a0; ceci est la page des instructions."),
    }[code]
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={hex24()}&STUDY_ID={hex24()}&SESSION_ID={hex24()}")
    _placed(page)
    page.locator("#consent-form button[value=agree]").click()
    expect(page.locator("#instructions-form")).to_be_visible()
    page.go_back()
    expect(page.locator("#place-note")).to_have_text(expected[1])
    page.locator("#instructions-form button[type=submit]").click()
    page.locator("textarea[data-answer]").fill("twelve chars")
    expect(page.locator("#answer-counter")).to_contain_text(expected[0])
    expect(page.locator("#answer-counter")).to_contain_text("12 ")


@pytest.mark.parametrize("code", ["en", "de", "es", "fr", "ar"])
def test_the_counter_writes_numbers_as_the_limit_line_does(code, page, live_server, study_in):
    """The counter's numbers are grouped exactly as the server grouped the limit line's 5,000 in
    the study's language (Django's formats and the browser's Intl data differ for es and ar)."""
    study, _ = study_in(code)
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={hex24()}&STUDY_ID={hex24()}&SESSION_ID={hex24()}")
    page.locator("#consent-form button[value=agree]").click()
    page.locator("#instructions-form button[type=submit]").click()
    page.locator("textarea[data-answer]").fill("x" * 1234)
    five = re.search(r"5(\D?)000", page.locator("#answer-limits").inner_text())
    assert five, page.locator("#answer-limits").inner_text()
    expect(page.locator("#answer-counter")).to_contain_text(f"1{five.group(1)}234")
    expect(page.locator("#answer-counter")).to_contain_text(five.group(0))


def test_an_arabic_study_lays_out_right_to_left_with_group_1_on_the_right(page, live_server, study_in):
    """``language: ar``: lang="ar" dir="rtl"; on a wide screen Group 1 stands right of Group 2."""
    study, _ = study_in("ar")
    page.set_viewport_size({"width": 1200, "height": 900})
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={hex24()}&STUDY_ID={hex24()}&SESSION_ID={hex24()}")
    expect(page.locator("html")).to_have_attribute("dir", "rtl")
    expect(page.locator("html")).to_have_attribute("lang", "ar")
    page.locator("#consent-form button[value=agree]").click()
    groups = page.locator(".groups .group")
    expect(groups).to_have_count(2)
    # Measured after "load": before it the stylesheet may still be on its way, and the groups
    # are laid out without it (stacked, full width).
    page.wait_for_load_state("load")
    first, second = groups.nth(0).bounding_box(), groups.nth(1).bounding_box()
    assert first["x"] > second["x"] + second["width"] - 1
    assert page.evaluate("getComputedStyle(document.querySelector('main')).direction") == "rtl"
