"""The study file's ``annotation.codebook``: field types, option matching, bad files, round trip."""
from __future__ import annotations

import copy
import unicodedata

import pytest
from django.core.management import call_command

from spotlight_study.studies import codebook as cb
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.models import Study
from spotlight_study.studies.schema import parse_study_file, validate_study_data
from spotlight_study.studies.services import study_import

from ..codebooks import GERMAN_CODEBOOK, german_data


def test_option_matching_ignores_case_and_unicode_form():
    """Capitals, a decomposed umlaut and ß in another case find the canonical option."""
    options = ["Erwähnt Geschlecht", "Länge", "Straße"]
    decomposed = unicodedata.normalize("NFD", "LÄNGE")
    assert decomposed != "LÄNGE"
    assert cb.option_match(options, decomposed) == "Länge"
    assert cb.option_match(options, "erwähnt   geschlecht") == "Erwähnt Geschlecht"
    assert cb.option_match(options, "STRASSE") == "Straße"
    assert cb.option_match(options, "Breite") is None


@pytest.mark.django_db
def test_german_codebook_imports_in_canonical_spelling(demo_data):
    """Options keep the file's spelling, NFC; defaults fill required and applies_to."""
    data = german_data(demo_data)
    data["annotation"]["codebook"]["fields"][1]["options"][1] = unicodedata.normalize("NFD", "Länge")
    study = study_import(data=data)
    stored = Study.objects.get(pk=study.pk).annotation_codebook
    assert stored["outcome"] == "erkannt"
    assert stored["fields"][1]["options"] == ["Erwähnt Geschlecht", "Länge", "Straße"]
    assert stored["fields"][0]["required"] is True and stored["fields"][0]["applies_to"] == "both"
    assert "options" not in stored["fields"][2]


@pytest.mark.django_db
def test_a_study_without_a_codebook_has_the_default_and_exports_none(demo_study):
    """The reference schema: no stored codebook, the default in force, none written back."""
    assert demo_study.annotation_codebook == {}
    assert cb.resolved(demo_study.annotation_codebook) is cb.DEFAULT_CODEBOOK
    assert [f["key"] for f in cb.compared_fields({})] == [
        "identified", "surface_difference", "no_difference", "tags",
    ]
    assert "codebook" not in study_file_data(demo_study)["annotation"]


@pytest.mark.django_db
def test_german_study_round_trips_through_export(demo_data, tmp_path):
    """export_study writes the codebook; importing that file gives the same codebook and file."""
    study_import(data=german_data(demo_data))
    first = tmp_path / "one.yaml"
    call_command("export_study", "kodierbuch-de", "--out", str(first))
    data = parse_study_file(first)
    assert data["annotation"]["codebook"]["fields"][0]["label"] == "Unterschied erkannt"
    call_command("import_study", str(first), "--as-slug", "kodierbuch-de-2")
    copy_study = Study.objects.get(slug="kodierbuch-de-2")
    assert copy_study.annotation_codebook == Study.objects.get(slug="kodierbuch-de").annotation_codebook
    assert study_file_data(copy_study) == {**data, "slug": "kodierbuch-de-2"}


def _bad(demo_data, change) -> dict:
    data = german_data(demo_data)
    change(data["annotation"]["codebook"])
    with pytest.raises(StudyFileError) as info:
        validate_study_data(data)
    return info.value.errors


def _set(path_value):
    def change(book):
        path, value = path_value
        target = book
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    return change


@pytest.mark.parametrize(
    "change, path, words",
    [
        (_set((["fields", 0, "type"], "scale")), "annotation.codebook.fields[0].type", "not a field type"),
        (lambda b: b["fields"].append(copy.deepcopy(b["fields"][0])), "annotation.codebook.fields", "Keys repeat: erkannt"),
        (_set((["fields", 0, "options"], [])), "annotation.codebook.fields[0].options", "needs options"),
        (_set((["outcome"], "gefunden")), "annotation.codebook.outcome", "names no field"),
        (lambda b: b.update(outcome="notiz", success={"x": "success"}), "annotation.codebook.success", "note"),
        (_set((["fields", 1, "options"], ["Länge", "LÄNGE"])), "annotation.codebook.fields[1].options", "repeat"),
        (_set((["success"], {"ja": "success"})), "annotation.codebook.success", "missing: nein, teilweise"),
        (lambda b: b["fields"].append({"key": "n", "label": "N", "type": "number", "min": 3, "max": 1}),
         "annotation.codebook.fields[3].max", "greater than min"),
    ],
    ids=["unknown type", "repeated key", "empty options", "outcome names no field",
         "success on a note", "options repeat by case", "success leaves options out", "min over max"],
)
def test_a_bad_codebook_is_refused_naming_the_path(demo_data, change, path, words):
    """Each bad codebook is refused, and the error names its path and says why."""
    errors = _bad(demo_data, change)
    assert path in errors, errors
    assert words in " ".join(errors[path])


def test_setting_tags_need_a_multi_choice_field(demo_data):
    """A setting's tags with a codebook that has no multi_choice field are refused, by path."""
    data = german_data(demo_data)
    data["annotation"]["codebook"]["fields"].pop(1)
    data["annotation"]["settings"]["doctor"]["tags"] = ["kindness"]
    with pytest.raises(StudyFileError) as info:
        validate_study_data(data)
    assert "doctor" in " ".join(info.value.errors["annotation.codebook.fields"])


def test_values_clean_checks_every_field():
    """A label's values are checked against the codebook and stored canonically."""
    clean = cb.values_clean(GERMAN_CODEBOOK_RESOLVED, {"erkannt": "TEILWEISE", "tags": ["länge"]})
    assert clean == {"erkannt": "teilweise", "tags": ["Länge"]}
    with pytest.raises(cb.LabelValueError) as info:
        cb.values_clean(GERMAN_CODEBOOK_RESOLVED, {"erkannt": "vielleicht", "farbe": 1})
    assert set(info.value.errors) == {"erkannt", "farbe"}
    with pytest.raises(cb.LabelValueError) as info:
        cb.values_clean(GERMAN_CODEBOOK_RESOLVED, {"tags": []})
    assert info.value.errors == {"erkannt": "This field is required."}


GERMAN_CODEBOOK_RESOLVED = {
    **GERMAN_CODEBOOK,
    "fields": [{"required": True, "applies_to": "both", **f} for f in GERMAN_CODEBOOK["fields"]],
}


def _pilot_labels(study, values) -> int:
    """Pilot participants and one annotator's labels of the pilot round; returns the count."""
    from spotlight_study.annotation.services.labels import LabelInput, label_save
    from spotlight_study.annotation.services.queue import assignment_next

    from ..annotation.conftest import make_user

    call_command("pilot", study.slug, "--participants", "2", "--seed", "7")
    call_command("pilot_annotation", study.slug, "--open")
    user = make_user("ann-pilot", "annotators")
    n = 0
    while (item := assignment_next(study=study, annotator=user, pilot=True)) is not None:
        label_save(study=study, annotator=user, public_id=item.public_id, label=LabelInput(
            identified=False, surface_difference=False, no_difference=False, values=values))
        n += 1
    return n


@pytest.mark.django_db
def test_replace_refuses_to_drop_an_option_or_field_that_labels_hold(demo_data):
    """Removing `teilweise` or the tags field names the labels' count; adding is allowed."""
    from spotlight_study.studies.errors import StudyImportError

    study = study_import(data=german_data(demo_data))
    n = _pilot_labels(study, {"erkannt": "teilweise", "tags": ["Länge"]})
    assert n > 0
    fewer = german_data(demo_data)
    fewer["annotation"]["codebook"]["fields"][0]["options"] = ["nein", "ja"]
    with pytest.raises(StudyImportError, match=f"option `teilweise` of `erkannt` is removed but {n} label"):
        study_import(data=fewer, replace=True)
    no_tags = german_data(demo_data)
    no_tags["annotation"]["codebook"]["fields"].pop(1)
    with pytest.raises(StudyImportError, match=f"field `tags` is removed but {n} label"):
        study_import(data=no_tags, replace=True)
    assert Study.objects.get(pk=study.pk).annotation_codebook["fields"][0]["options"] == [
        "nein", "teilweise", "ja"]
    more = german_data(demo_data)
    more["annotation"]["codebook"]["fields"][0]["options"].append("eindeutig")
    more["annotation"]["codebook"]["fields"][1]["options"][1] = "LÄNGE"
    study_import(data=more, replace=True)
    assert "eindeutig" in Study.objects.get(pk=study.pk).annotation_codebook["fields"][0]["options"]
