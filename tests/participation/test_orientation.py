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
