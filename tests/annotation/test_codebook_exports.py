"""Exports under a declared codebook: one column per field, a multi_choice field's joined column
and one 0/1 column per option, in final_labels.csv, annotations.csv and responses.csv."""
from __future__ import annotations

import csv
import io

from spotlight_study.annotation.exports import export_csv_text
from spotlight_study.results.exports import RESPONSES_COLUMNS, results_export

from .conftest import make_user
from .test_codebook_labels import _label_all, german_study  # noqa: F401 (fixture)


def _csv(text: str) -> tuple[list[str], list[dict]]:
    reader = csv.DictReader(io.StringIO(text))
    return list(reader.fieldnames), list(reader)


def _two_annotators_agree(study) -> None:
    for name in ("a1", "a2"):
        _label_all(study, make_user(name, "annotators"),
                   lambda i: {"erkannt": ["nein", "teilweise", "ja"][i], "tags": ["Länge", "Straße"],
                              "notiz": f"von {name}"})


def test_final_labels_have_a_column_per_field_and_per_option(german_study):  # noqa: F811
    """final_labels.csv: erkannt, tags, tags:<option> 0/1, notiz; no default-codebook columns."""
    _two_annotators_agree(german_study)
    columns, rows = _csv(export_csv_text(study=german_study, name="final_labels"))
    assert columns[6:12] == [
        "erkannt", "tags", "tags:Erwähnt Geschlecht", "tags:Länge", "tags:Straße", "notiz",
    ]
    assert "identified" not in columns and "exclusion" in columns
    final = [r for r in rows if r["status"] == "final"]
    assert len(final) == 3
    assert sorted(r["erkannt"] for r in final) == ["ja", "nein", "teilweise"]
    assert all(r["tags"] == "Länge;Straße" and r["tags:Länge"] == "1"
               and r["tags:Erwähnt Geschlecht"] == "0" for r in final)
    assert final[0]["notiz"] == "von a1 | von a2"
    _, long_rows = _csv(export_csv_text(study=german_study, name="annotations"))
    assert {r["field"] for r in long_rows} == {"erkannt", "tags", "notiz", "exclusion", "exclusion_note"}


def test_responses_csv_carries_the_codebook_columns(german_study, tmp_path):  # noqa: F811
    """responses.csv: the default columns, then the codebook's, each name once (the codebook's
    tags field fills the tags column); identified is empty for an ordinal outcome without a
    success mapping."""
    _two_annotators_agree(german_study)
    results_export(study=german_study, out_dir=tmp_path)
    columns, rows = _csv((tmp_path / "responses.csv").read_text(encoding="utf-8"))
    assert columns[: len(RESPONSES_COLUMNS)] == RESPONSES_COLUMNS
    assert len(columns) == len(set(columns)), "a column name twice"
    assert columns[len(RESPONSES_COLUMNS):][:2] == ["erkannt", "tags:Erwähnt Geschlecht"]
    assert len(rows) == 2
    assert {r["erkannt"] for r in rows} <= {"ja", "teilweise"} and all(r["identified"] == "" for r in rows)
    assert all(r["tags:Straße"] == "1" and r["other_difference"] == "1" for r in rows)
    assert all("Straße" in r["tags"].split(";") for r in rows)
