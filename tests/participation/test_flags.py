"""Quality flags: one definition (participation/flags.py) shared by the export, the researcher page
and the annotator's evidence."""
import csv
import re
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from spotlight_study.annotation.selectors import blind_item, item_queryset
from spotlight_study.annotation.services.queue import items_sync
from spotlight_study.participation import flags
from spotlight_study.participation.flags import AnswerEvidence
from spotlight_study.participation.models import TaskResponse
from spotlight_study.participation.selectors import study_dashboard

from ..conftest import Walker


def test_very_short_time_is_strictly_under_the_study_threshold():
    """An answer is very short below short_time_flag_seconds, not at it, and never when unknown."""
    assert flags.is_very_short_time(19_999, 20)
    assert not flags.is_very_short_time(20_000, 20)
    assert not flags.is_very_short_time(None, 20)


def test_pasted_counts_paste_events_or_characters():
    """A reported paste event or pasted characters flag the answer; zeros do not."""
    assert flags.is_pasted(1, 0) and flags.is_pasted(0, 12)
    assert not flags.is_pasted(0, 0)


@pytest.mark.parametrize(
    "hidden_ms, time_ms, expected",
    [
        (29_999, 40_000, False),  # under 30 s
        (30_000, 60_000, True),  # 30 s and half of the time
        (40_000, 100_000, False),  # 40 s but under half
        (60_000, 100_000, True),
        (45_000, None, True),  # time unknown: the 30 s bound alone
    ],
)
def test_long_time_hidden_needs_30_seconds_and_half_of_the_time(hidden_ms, time_ms, expected):
    """Hidden for at least 30 s and at least half of the time on task is a long time hidden."""
    assert flags.is_long_time_hidden(hidden_ms, time_ms) is expected


def test_identical_answer_ignores_case_and_spacing_and_counts_own_answers():
    """Texts equal up to case and whitespace are identical, whoever wrote them."""
    answers = ["Group 2 says her.", "group 2   says HER.", "Something else."]
    assert flags.repeated_answers(answers) == {"group 2 says her."}
    per_answer = flags.flags_of_answers(
        [AnswerEvidence(answer=a, time_on_task_ms=60_000) for a in answers], short_time_flag_seconds=20
    )
    assert per_answer == [["identical_answer"], ["identical_answer"], []]


def test_flags_come_in_one_order_and_the_check_can_be_left_out():
    """All ten flags in FLAG_KEYS order; the annotator's evidence leaves out the check."""
    evidence = AnswerEvidence(
        answer="x" * 40, time_on_task_ms=1_000, paste_count=1, hidden_ms=60_000,
        instruction_check_passed=False, typed_chars=40, typing_ms=100, dropped_chars=20,
        shown_overlap_permille=900, near_duplicate_score=95, away_before_paste_ms=10_000,
    )
    assert flags.answer_flags(evidence, short_time_flag_seconds=20, identical=True) == list(flags.FLAG_KEYS)
    assert "failed_instruction_check" not in flags.answer_flags(
        evidence, short_time_flag_seconds=20, identical=True, include_instruction_check=False
    )
    assert flags.answer_flags(
        AnswerEvidence(answer="x", time_on_task_ms=60_000, instruction_check_passed=True),
        short_time_flag_seconds=20, identical=False,
    ) == []


def test_flag_counts_count_answers_and_participants_and_checks_without_answers():
    """Counts per flag: answers, distinct participants, and failed checks without answers yet."""
    counts = flags.flag_counts(
        {"a": Counter(pasted=2, identical_answer=1), "b": Counter(identical_answer=1)},
        failed_check=["c"],
    )
    by_flag = {c["flag"]: (c["answers"], c["participants"]) for c in counts}
    assert [c["flag"] for c in counts] == list(flags.FLAG_KEYS)
    assert by_flag == {
        "very_short_time": (0, 0),
        "pasted": (2, 1),
        "long_time_hidden": (0, 0),
        "identical_answer": (2, 2),
        **{key: (0, 0) for key in flags.WRITING_FLAG_KEYS if key != "pasted"},
        "failed_instruction_check": (0, 1),
    }


def test_participant_flag_counts_count_flagged_answers_per_participant_only():
    """Per participant, the number of answers with each flag; unflagged participants are left out."""
    ok = dict(time_on_task_ms=60_000)
    counts = flags.participant_flag_counts(
        [
            ("a", AnswerEvidence(answer="Same text.", paste_count=1, **ok)),
            ("a", AnswerEvidence(answer="Other.", paste_chars=5, **ok)),
            ("b", AnswerEvidence(answer="same   TEXT.", **ok)),
            ("c", AnswerEvidence(answer="Unique.", **ok)),
        ],
        short_time_flag_seconds=20,
    )
    assert counts == {
        "a": Counter(pasted=2, identical_answer=1),
        "b": Counter(identical_answer=1),
    }


def _export_flag_counts(tmp_path) -> Counter:
    with open(tmp_path / "responses.csv", newline="", encoding="utf-8") as fh:
        return Counter(f for row in csv.DictReader(fh) for f in row["flags"].split(";") if f)


def _page_flag_counts(html: str) -> dict[str, int]:
    table = re.search(r'<table id="flag-counts">(.*?)</table>', html, re.S).group(1)
    return {
        label: int(answers)
        for label, answers in re.findall(r"<tr><td>([^<]+)</td><td>(\d+)</td><td>\d+</td></tr>", table)
    }


def test_page_shows_the_flags_the_export_has_while_data_come_in(demo_study, staff_client, tmp_path):
    """A run whose answers all take under a second: the page counts the export's flags, in progress too."""
    for _ in range(2):
        Walker(Client(), demo_study.slug).complete()
    partial = Walker(Client(), demo_study.slug)
    partial.enter()
    partial.consent()
    partial.instructions()
    partial.answer("It is about fishing.")  # fails the check
    partial.answer("Pasted text", events='{"paste_count": 1, "paste_chars": 11, "hidden_ms": 45000}')

    html = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    call_command("export_results", demo_study.slug, "--out", str(tmp_path))
    exported = _export_flag_counts(tmp_path)
    page = _page_flag_counts(html)
    assert exported["very_short_time"] == 5  # every main answer came within the test client's ms
    assert {key: page[flags.FLAG_LABELS[key]] for key in flags.FLAG_KEYS} == {
        key: exported[key] for key in flags.FLAG_KEYS
    }
    assert page["long time hidden"] == 1 and page["identical answer"] == 4
    assert "No participant is flagged." not in html
    # The in-progress participant is listed with their flags.
    assert html.count("In progress</td>") == 1


def test_annotator_evidence_agrees_with_the_export(demo_study, tmp_path):
    """For every main answer, the annotator's flags equal the export's (without the check)."""
    for _ in range(2):
        Walker(Client(), demo_study.slug).complete()
    odd = Walker(Client(), demo_study.slug)
    odd.enter()
    odd.consent()
    odd.instructions()
    odd.answer("The first group fishes by day, the second at night.")
    odd.answer("A text nobody else wrote.", events='{"hidden_ms": 40000}')
    items_sync(study=demo_study)
    call_command("export_results", demo_study.slug, "--out", str(tmp_path))
    with open(tmp_path / "responses.csv", newline="", encoding="utf-8") as fh:
        exported = {row["answer"]: set(row["flags"].split(";")) - {""} for row in csv.DictReader(fh)}
    seen = 0
    for item in item_queryset().filter(response__position__gt=0):
        blind = blind_item(item)
        shown = {
            key for key in ("very_short_time", "long_time_hidden", "identical_answer") if getattr(blind, key)
        } | set(blind.writing_flags)
        assert shown == exported[blind.answer] - {"failed_instruction_check"} - (
            {"pasted"} - set(blind.writing_flags)
        )
        assert ("pasted" in exported[blind.answer]) == (blind.paste_chars > 0)
        seen += 1
    assert seen == 5
    assert exported["A text nobody else wrote."] == {"very_short_time", "long_time_hidden"}


def test_dashboard_queries_do_not_grow_with_participants(demo_study):
    """The researcher page's figures take the same number of queries for 1 and 4 participants."""
    Walker(Client(), demo_study.slug).complete()
    with CaptureQueriesContext(connection) as one:
        study_dashboard(study=demo_study)
    for _ in range(3):
        Walker(Client(), demo_study.slug).complete()
    with CaptureQueriesContext(connection) as four:
        dash = study_dashboard(study=demo_study)
    assert TaskResponse.objects.count() == 12
    assert len(four.captured_queries) == len(one.captured_queries) <= 3
    assert dash["totals"]["completed"] == 4


def test_pilot_answers_never_make_a_real_answer_identical(demo_study, tmp_path):
    """A real answer equal to a pilot's is not flagged identical: each population is compared apart."""
    from spotlight_study.participation.pilot import pilot_run

    pilot_run(study=demo_study, participants=3, seed=9)
    pilot_text = TaskResponse.objects.filter(participant__is_pilot=True, position=1).first().answer
    real = Walker(Client(), demo_study.slug)
    real.enter()
    real.consent()
    real.instructions()
    real.answer("The first group fishes by day, the second at night.")
    real.answer(pilot_text.upper())
    items_sync(study=demo_study)
    item = item_queryset().get(response__participant__is_pilot=False, response__position=1)
    assert not blind_item(item).identical_answer
    call_command("export_results", demo_study.slug, "--out", str(tmp_path))
    assert "identical_answer" not in _export_flag_counts(tmp_path)
    assert study_dashboard(study=demo_study)["flag_counts"][3] == {
        "flag": "identical_answer", "label": "identical answer", "answers": 0, "participants": 0,
    }
