"""What the step pages tell a participant about where they are: saved answers, limits, duration."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from spotlight_study.participation.models import Participant
from spotlight_study.participation.templatetags.study_text import states_duration
from spotlight_study.studies.services import study_import

from ..conftest import Walker

DURATION_LINE = re.compile(r'<p class="duration">This study takes about (\d+) minutes\.</p>')


def _place(html: str) -> tuple[int, str, str]:
    m = re.search(r'<main data-place-order="(\d+)" data-place-saved="([^"]*)" data-place-here="([^"]*)"[^>]*>', html)
    assert m, "the step page carries its place on <main>"
    return int(m.group(1)), m.group(2), m.group(3)


def test_instructions_say_a_submitted_answer_cannot_be_changed(walker):
    """The instructions page carries the platform's sentence that submitted answers are final."""
    walker.enter()
    walker.consent()
    page = walker.page().content.decode()
    assert "Each answer is saved when you submit it and cannot be changed afterwards" in page


def test_answer_box_shows_its_limits_before_the_first_submit(db, demo_data):
    """The task page states the study's minimum and maximum answer length, with thousands commas."""
    demo_data.update(min_answer_chars=20, max_answer_chars=4500)
    study = study_import(data=demo_data)
    walker = Walker(Client(), study.slug)
    walker.enter()
    walker.consent()
    walker.instructions()
    page = walker.page().content.decode()
    assert '<p class="counter" id="answer-limits">At least 20 and at most 4,500 characters.</p>' in page
    assert 'maxlength="4500"' in page


def test_answer_box_without_a_minimum_says_not_empty(walker, demo_study):
    """With the default minimum of 1 the limits line says the answer must not be empty."""
    assert demo_study.min_answer_chars == 1
    walker.enter()
    walker.consent()
    walker.instructions()
    page = walker.page().content.decode()
    assert f"Not empty, at most {demo_study.max_answer_chars:,} characters." in page


def test_each_step_page_names_its_place_and_never_its_condition(walker, demo_study):
    """Consent to survey carry a growing order and the task's number, never a setting or condition."""
    walker.enter()
    seen = [_place(walker.page().content.decode())]
    walker.consent()
    seen.append(_place(walker.page().content.decode()))
    walker.instructions()
    seen.append(_place(walker.page().content.decode()))
    walker.answer("The first group fishes by day, the second at night.")
    participant = Participant.objects.get(prolific_pid=walker.pid)
    for _ in participant.cell_plan:
        seen.append(_place(walker.page().content.decode()))
        walker.answer("Group 1 is about one thing, group 2 about another.")
    seen.append(_place(walker.page().content.decode()))
    orders = [order for order, _, _ in seen]
    assert orders == list(range(len(seen)))
    assert seen[3][1:] == ("Your answer to task 1 is saved", "this is task 1")
    assert seen[4][2] == "this is task 2"
    words = " ".join(f"{saved} {here}" for _, saved, here in seen).lower()
    for task in participant.cell_plan:
        assert task["condition"].replace("_", " ") not in words and task["condition"] not in words
        assert task["setting"] not in words
    assert "pattern" not in words


@pytest.mark.parametrize(
    "text, stated",
    [
        ("This takes about 12 to 15 minutes.", True),
        ("It takes 20 minutes.", True),
        ("About 10-15 min in all.", True),
        ("A 20-minute study.", True),
        ("It takes about half an hour.", True),
        ("Plan for one hour.", True),
        ("It takes 1.5 hours.", True),
        ("It is short.", False),
        ("It takes a few minutes.", False),
        ("Please take a minute to read this.", False),
        ("You may withdraw within 14 days; data are kept for 10 years.", False),
        ("In the last 12 months, how often ...", False),
        ("", False),
    ],
)
def test_duration_detection_is_conservative(text, stated):
    """Only a number right before minutes or hours counts as a stated duration."""
    assert states_duration(text) is stated


@pytest.mark.parametrize("states", [True, False], ids=["consent states a duration", "it does not"])
def test_consent_page_duration_line_only_when_the_text_has_none(db, demo_data, states):
    """The platform's "takes about N minutes" line is left out when the consent text gives one."""
    demo_data["estimated_minutes"] = 14
    text = demo_data["consent_text"]
    if not states:
        text = re.sub(r"This takes about [^.]*\.\s*", "", text)
    assert states_duration(text) is states
    demo_data["consent_text"] = text
    study = study_import(data=demo_data)
    walker = Walker(Client(), study.slug)
    walker.enter()
    page = walker.page().content.decode()
    lines = DURATION_LINE.findall(page)
    assert lines == ([] if states else ["14"])
    assert ("12 to 15 minutes" in page) is states


@pytest.mark.parametrize(
    "text, stated",
    [
        # German
        ("Die Teilnahme dauert etwa 15 Minuten.", True),
        ("Die Studie dauert 10–15 Min.", True),
        ("Sie dauert 10 bis 15 Minuten.", True),
        ("Eine 20-minütige Studie.", True),
        ("Sie dauert eine halbe Stunde.", True),
        ("Planen Sie eine Stunde ein.", True),
        ("Sie dauert 1,5 Stunden.", True),
        ("Sie dauert fünfzehn Minuten.", True),
        ("Es dauert nur wenige Minuten.", False),
        ("Sie können innerhalb von 14 Tagen widerrufen; Daten werden 10 Jahre aufbewahrt.", False),
        ("Bitte nehmen Sie sich eine Minute Zeit.", False),
        # Spanish
        ("El estudio dura unos 15 minutos.", True),
        ("Dura entre 10 y 15 min.", True),
        ("Dura de 10 a 15 minutos.", True),
        ("Dura media hora.", True),
        ("Dura una hora.", True),
        ("Dura quince minutos.", True),
        ("Dura unos pocos minutos.", False),
        ("En los últimos 12 meses, ¿con qué frecuencia ...?", False),
        # French
        ("L'étude dure environ 15 minutes.", True),
        ("Elle dure de 10 à 15 min.", True),
        ("Elle dure une demi-heure.", True),
        ("Comptez une heure.", True),
        ("Elle dure 1 heure 30.", True),
        ("Elle dure vingt minutes.", True),
        ("Quelques minutes suffisent.", False),
        ("Vous pouvez vous retirer sous 14 jours.", False),
    ],
)
def test_duration_detection_knows_every_shipped_language(text, stated):
    """A number right before minutes or hours counts in German, Spanish and French too
    ("15 Minuten", "media hora", "une demi-heure"); vague words still do not."""
    assert states_duration(text) is stated


@pytest.mark.parametrize(
    "code, consent, line",
    [
        ("de", "Die Teilnahme dauert etwa 15 Minuten. Ihre Daten bleiben anonym.", "Diese Studie dauert etwa"),
        ("es", "La participación dura unos 15 minutos. Sus datos son anónimos.", "Este estudio dura unos"),
        ("fr", "La participation dure environ 15 minutes. Vos données restent anonymes.", "Cette étude dure environ"),
    ],
)
def test_a_translated_consent_text_that_gives_the_duration_gets_no_second_line(db, demo_data, code, consent, line):
    """A German (Spanish, French) study whose consent text says "15 Minuten" shows no platform
    duration line besides it; without the figure the line is shown, in the study's language."""
    demo_data.update(language=code, estimated_minutes=15, consent_text=consent)
    study = study_import(data=demo_data)
    walker = Walker(Client(), study.slug)
    walker.enter()
    page = walker.page().content.decode()
    assert 'class="duration"' not in page and line not in page
    assert consent.split(".")[0] in page

    demo_data.update(slug=f"{demo_data['slug']}-vague", consent_text=consent.split(". ", 1)[1])
    vague = study_import(data=demo_data)
    walker = Walker(Client(), vague.slug)
    walker.enter()
    page = walker.page().content.decode()
    assert 'class="duration"' in page and line in page
