"""manage.py analyze under a declared codebook: a German study with an ordinal outcome gets
Mann-Whitney U, agreement per field and its tags per condition, in the researcher's words."""
from __future__ import annotations

import csv
import io
import json

import pytest
import scipy.stats as sps
from django.core.management import call_command
from django.test import Client

from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.models import TaskResponse
from spotlight_study.studies.services import study_import

from ..annotation.conftest import make_user
from ..codebooks import german_data
from ..conftest import Walker

RANK = {"nein": 0, "teilweise": 1, "ja": 2}


def _erkannt(response) -> str:
    """The agreed value: pattern answers higher, varied by the answer's pk."""
    if response.condition == "pattern":
        return ["teilweise", "ja", "ja"][response.pk % 3]
    return ["nein", "teilweise", "nein"][response.pk % 3]


def test_german_study_is_analysed_by_its_codebook(db, demo_data, tmp_path, capsys):
    """Eight participants, two annotators (disagreeing on the tags of every fourth answer): the report tests erkannt
    with Mann-Whitney U as scipy does, and names the German fields."""
    study = study_import(data=german_data(demo_data))
    call_command("preregister", study.slug, "--planned-n", "8", "--out", str(tmp_path / "plan"))
    planned = json.loads((tmp_path / "plan" / "plan.json").read_text(encoding="utf-8"))["codebook"]
    assert planned["outcome_test"] == "mann_whitney" and planned["outcome"] == "erkannt"
    # Changed after the plan, before anyone consented: allowed, and a deviation in the report.
    changed = german_data(demo_data)
    changed["annotation"]["codebook"]["fields"][1]["options"].append("Ton")
    study = study_import(data=changed, replace=True)
    for _ in range(8):
        Walker(Client(), study.slug).complete()
    # Every fourth answer of each setting, in the order the second annotator gets them; not by
    # primary key, which depends on what ran before in the database (with pk % 4 a setting could
    # lose every agreed answer: seen failing in a CI run).
    seen: dict[int, int] = {}
    for n, user in enumerate(make_user(f"a{i}", "annotators") for i in range(2)):
        while (item := assignment_next(study=study, annotator=user)) is not None:
            r = item.response
            seen[r.setting_id] = seen.get(r.setting_id, 0) + (n == 1)
            disagree = n == 1 and seen[r.setting_id] % 4 == 0
            tags = ["Länge"] if disagree else ["Erwähnt Geschlecht", "Länge"]
            label_save(study=study, annotator=user, public_id=item.public_id, label=LabelInput(
                identified=False, surface_difference=False, no_difference=False,
                values={"erkannt": _erkannt(r), "tags": tags}))
    call_command("analyze", study.slug, "--out", str(tmp_path))
    printed = capsys.readouterr().out
    assert "Unterschied erkannt (ordinal): mann_whitney" in printed
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["codebook"]
    outcome = results["outcome"]
    assert outcome["test"] == "mann_whitney" and outcome["label"] == "Unterschied erkannt"
    # Only the items whose tags agree have a final label.
    with open(tmp_path / "data" / "responses.csv", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["erkannt"]]
    assert rows, "some answers have a final label"
    assert all(r["excluded"] == "0" for r in rows), "a labelled training answer excludes nobody"
    assert {c["setting"] for c in outcome["comparisons"]} == {"doctor", "farming"}
    for c in outcome["comparisons"]:
        x = [RANK[r["erkannt"]] for r in rows if r["setting"] == c["setting"] and r["condition"] == "pattern"]
        y = [RANK[r["erkannt"]] for r in rows if r["setting"] == c["setting"] and r["condition"] == "no_pattern"]
        ref = sps.mannwhitneyu(x, y, alternative="greater")
        assert abs(c["p"] - ref.pvalue) < 1e-12 and c["u"] == ref.statistic
    fields = {a["key"]: a for a in results["agreement"]}
    assert fields["erkannt"]["statistics"]["quadratic_kappa"]["value"] == 1.0
    assert "Länge" in fields["tags"]["options"]
    assert [m["label"] for m in results["multi_choice"]] == ["Weitere Unterschiede"]
    assert results["deviations"] == ["Field `tags` changed after the plan."]
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Deviations from the preregistered codebook" in report
    for words in ("Unterschied erkannt", "Weitere Unterschiede", "Mann-Whitney U", "Erwähnt Geschlecht"):
        assert words in report


def test_a_proportion_outcome_is_tested_by_the_z_test_in_the_codebook_report(db, demo_data, tmp_path):
    """With a success mapping the outcome is a proportion: analyze gives the reference study's
    one-tailed z-test on it (statsmodels), in the codebook report, which is the study's
    report.html and results.json, with agreement per field, the tags per condition and the
    survey. (The reference pipeline needs the default codebook's three yes/no columns, which
    a declared codebook does not fill: it refused these data before.)"""
    from statsmodels.stats.proportion import proportions_ztest

    data = german_data(demo_data)
    data["annotation"]["codebook"]["success"] = {"ja": "success", "teilweise": "failure", "nein": "failure"}
    study = study_import(data=data)
    for _ in range(8):
        Walker(Client(), study.slug).complete()
    for user in (make_user(f"b{i}", "annotators") for i in range(2)):
        while (item := assignment_next(study=study, annotator=user)) is not None:
            r = item.response
            erkannt = "ja" if r.position == 0 else _erkannt(r)
            tags = ["Länge"] if r.pk % 2 else ["Erwähnt Geschlecht", "Länge"]  # both agree
            label_save(study=study, annotator=user, public_id=item.public_id, label=LabelInput(
                identified=False, surface_difference=False, no_difference=False,
                values={"erkannt": erkannt, "tags": tags}))
    call_command("analyze", study.slug, "--out", str(tmp_path), stdout=io.StringIO())
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["codebook"]
    outcome = results["outcome"]
    assert outcome["test"] == "two_proportion_ztest" and outcome["comparisons"]
    with open(tmp_path / "data" / "responses.csv", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["excluded"] == "0"]
    for c in outcome["comparisons"]:
        k, n = zip(*((sum(r["erkannt"] == "ja" for r in cell), len(cell)) for cell in (
            [r for r in rows if r["setting"] == c["setting"] and r["condition"] == cond]
            for cond in ("pattern", "no_pattern"))))
        z, p = proportions_ztest(list(k), list(n), alternative="larger")
        assert (c["k_treatment"], c["k_baseline"]) == k and c["p"] == pytest.approx(p)
    assert all(r["identified"] == str(int(r["erkannt"] == "ja")) for r in rows)
    fields = {a["key"]: a for a in results["agreement"]}
    kappa = fields["erkannt"]["statistics"]["quadratic_kappa"]["value"]
    assert kappa == 1.0 and "survey" in results and results["survey"]["likert"]
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    for words in ("one-tailed two-proportion z-test", "Agreement per field", "Unterschied erkannt",
                  "Weitere Unterschiede", "Erwähnt Geschlecht", "Post-task survey"):
        assert words in report, words
