"""The survey's typed items in Chromium (issue 34): a German participant answers a 7-point item,
a choice, checkboxes, a number and a text with the keyboard; a refused page keeps the answers;
a reload keeps the typed draft; axe-core finds no serious violation at 1280 and 390 px."""
from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from spotlight_study.participation.models import Participant, SurveyAnswer

from .a11y import AxeLedger
from .participant import hex24

pytestmark = pytest.mark.browser

GERMAN_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "umfrage-de.yaml"


@pytest.fixture
def live_german_study(live_server):
    """The German study of the survey tests, imported for the live server."""
    from spotlight_study.studies.services import study_import_file

    return study_import_file(path=GERMAN_FILE)


def _to_survey(page, base: str, slug: str) -> None:
    page.goto(f"{base}/s/{slug}/?PROLIFIC_PID={hex24()}&STUDY_ID={hex24()}&SESSION_ID={hex24()}")
    page.locator("button[name=decision][value=agree]").click()
    page.locator(".progress").wait_for()
    page.locator("form button[type=submit]").click()
    for answer in ("In der Nacht wird geangelt.", "Gruppe 2 beschreibt Ärztinnen.", "Mais und Bohnen."):
        page.locator("textarea").wait_for()
        page.locator("textarea").fill(answer)
        page.locator("form button[type=submit]").click()
    expect(page.locator("form.survey")).to_be_visible()


def test_typed_survey_items_in_the_browser(page, live_server, live_german_study):
    """Render, refuse, keep on reload, accept: and no serious axe violation on the way."""
    axe = AxeLedger()
    _to_survey(page, live_server.url, live_german_study.slug)
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.get_by_role("radiogroup", name="Wie sicher sind Sie, dass Ihre Antwort stimmt?")).to_have_count(2)
    expect(page.get_by_role("group", name="Was hat Ihnen geholfen?")).to_have_count(2)
    axe.check_widths(page, "survey with typed items")
    page.locator("form.survey button[type=submit]").click()
    expect(page.locator(".error-summary")).to_be_visible()
    axe.check_widths(page, "survey with typed items: refused")

    # Keyboard: the first radio of a group takes focus, arrow keys choose within it.
    conditions = [t["condition"] for t in Participant.objects.get().cell_plan]
    for c in conditions:
        page.locator(f"#id_c__{c}__leicht_0").focus()
        page.keyboard.press("ArrowRight")
        page.locator(f"#id_c__{c}__sicherheit_6").check()
        page.locator(f"#id_c__{c}__strategie_1").check()
        page.locator(f"#id_c__{c}__hilfen_1").focus()
        page.keyboard.press("Space")
        page.locator(f"#id_c__{c}__minuten").fill("12.5")
    page.locator("#id_b__ki_nutzung_2").check()
    page.locator("#id_b__beruf_0").check()
    page.locator("#id_b__anmerkung").fill("Die Texte waren kurz.")
    expect(page.locator("form[data-draft-state=saved]")).to_have_count(1)
    page.reload()
    expect(page.locator(f"#id_c__{conditions[0]}__hilfen_1")).to_be_checked()
    expect(page.locator(f"#id_c__{conditions[0]}__minuten")).to_have_value("12.5")
    expect(page.locator("#id_b__anmerkung")).to_have_value("Die Texte waren kurz.")
    page.locator("form.survey button[type=submit]").click()
    page.wait_for_url("https://app.prolific.com/**")
    answers = {(a.condition, a.item): a for a in SurveyAnswer.objects.all()}
    assert answers[(conditions[0], "hilfen")].value == ["Die hervorgehobenen Wörter"]
    assert answers[(conditions[0], "minuten")].value == 12.5
    assert answers[(conditions[0], "sicherheit")].response == 7
    assert answers[("background", "anmerkung")].value == "Die Texte waren kurz."
    axe.assert_none_blocking()
