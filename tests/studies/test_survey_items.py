"""Survey items with types in the study file (issue 34, section 3): accepted, stored and exported
as written; a bad item is refused naming its path."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.models import Study
from spotlight_study.studies.schema import parse_study_file, validate_study_data
from spotlight_study.studies.schema_survey import option_canonical, typed_items
from spotlight_study.studies.services import study_import

GERMAN_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "umfrage-de.yaml"


@pytest.fixture
def german_data() -> dict:
    """The German study file of the survey tests, parsed."""
    return parse_study_file(GERMAN_FILE)


def test_german_file_keeps_the_researchers_words(german_data):
    """Every typed item validates and keeps its labels and options word for word, in order."""
    survey = validate_study_data(german_data)["survey"]
    items = {i["key"]: i for i in typed_items(survey)}
    assert sorted(items) == ["anmerkung", "beruf", "hilfen", "minuten", "sicherheit", "strategie"]
    assert items["sicherheit"]["labels"][0] == "Überhaupt nicht sicher"
    assert len(items["sicherheit"]["labels"]) == 7
    assert items["strategie"]["options"] == ["Alle Texte gelesen", "Nach Stichwörtern gesucht", "Geraten"]
    assert (items["minuten"]["min"], items["minuten"]["max"], items["minuten"]["test"]) == (0, 60, "welch_t")
    assert items["beruf"]["where"] == "background"


def test_items_without_a_type_are_stored_as_before(demo_data):
    """The reference file's items clean to exactly {key, text}: nothing is added to them."""
    survey = validate_study_data(demo_data)["survey"]
    assert all(set(i) == {"key", "text"} for i in survey["condition_items"] + survey["background_items"])
    assert typed_items(survey) == []


@pytest.mark.parametrize(
    ("where", "change", "path", "words"),
    [
        ("condition_items", {"type": "slider"}, "type", "not a survey item type"),
        ("condition_items", {"type": "likert", "labels": ["nur eins"]}, "labels", "2 to 11"),
        ("condition_items", {"type": "likert", "labels": [str(i) for i in range(12)]}, "labels", "has 12"),
        ("condition_items", {"type": "likert"}, "labels", "needs `labels`"),
        ("condition_items", {"type": "choice", "options": []}, "options", "at least 2"),
        ("background_items", {"type": "multi_choice", "options": []}, "options", "at least 1"),
        ("condition_items", {"type": "choice", "options": ["Ja", "ja"]}, "options", "repeat"),
        ("condition_items", {"type": "multi_choice", "options": ["a;b", "c"]}, "options", "cannot contain"),
        ("condition_items", {"type": "number", "min": 5, "max": 1}, "min", "greater than"),
        ("condition_items", {"type": "number", "min": 1}, "max", "needs `max`"),
        ("condition_items", {"options": ["a", "b"]}, "options", "Only choice and multi_choice"),
        ("background_items", {"type": "text", "min": 1}, "min", "Only number"),
    ],
)
def test_a_bad_item_is_refused_naming_its_path(demo_data, where, change, path, words):
    """An unknown type, a bad label count, empty or repeated options, min > max or a key of
    another type is refused with the item's path and a message saying what is wrong."""
    demo_data["survey"][where][0].update(change)
    with pytest.raises(StudyFileError) as caught:
        validate_study_data(demo_data)
    full = f"survey.{where}[0].{path}"
    assert full in caught.value.errors, caught.value.errors
    assert words in " ".join(caught.value.errors[full])


def test_option_matching_ignores_case_and_unicode_form():
    """Options compare in NFC and case-folded: a decomposed "Länge" equals "länge"."""
    assert option_canonical("La\u0308nge") == option_canonical("länge")
    assert option_canonical("  Erwähnt   Geschlecht ") == "erwähnt geschlecht"


@pytest.mark.django_db
def test_typed_items_round_trip_through_export(german_data):
    """Import then export_study: the survey comes back with every type and key as written."""
    study_import(data=copy.deepcopy(german_data))
    exported = study_file_data(Study.objects.get(slug="umfrage-de"))
    assert exported["survey"] == validate_study_data(german_data)["survey"]
    again = copy.deepcopy(exported)
    again["slug"] = "umfrage-de-2"
    assert validate_study_data(again)["survey"] == exported["survey"]
