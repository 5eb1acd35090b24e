"""The preregistered plan records the survey items with types and each one's test; the analysis
lists a changed test as a deviation (issue 34, section 4)."""
from __future__ import annotations

import copy
import io
import json

import pytest
from django.core.management import call_command

from analysis.deviations import compare_to_plan
from analysis.pipeline import HOLM_FAMILIES
from analysis.survey_measures import TYPED_FAMILIES
from spotlight_study.prereg.plan import SampleSizeInput, plan_build
from spotlight_study.studies.schema import parse_study_file
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import

from ..annotation.conftest import make_user
from ..researcher.test_analyze import _annotate_all
from ..studies.test_survey_items import GERMAN_FILE


@pytest.fixture
def german_study(db):
    """The German study with typed survey items, imported."""
    study_import(data=parse_study_file(GERMAN_FILE))
    return study_get_with_settings(slug="umfrage-de")


def test_plan_records_each_typed_item_and_its_test(german_study):
    """The plan names every typed item's type and plans its test by type; the 5-point item keeps
    the Mann-Whitney and Wilcoxon tests of today's plan."""
    plan = plan_build(study=german_study, sample_size=SampleSizeInput(planned_n=8))
    typed = {t["key"]: t for t in plan["design"]["survey_items_typed"]}
    assert typed["strategie"]["type"] == "choice" and typed["minuten"]["test"] == "welch_t"
    assert plan["design"]["survey_items"] == ["leicht"]
    tests = {t["id"]: t["test"] for t in plan["tests"]}
    assert tests["likert/leicht"] == "Mann-Whitney U test"
    assert tests["survey_items/sicherheit"] == "Mann-Whitney U test"
    assert tests["survey_items_paired/sicherheit"] == "Wilcoxon signed-rank test"
    assert tests["survey_items/strategie"].startswith("chi-square test, or Fisher's exact")
    assert tests["survey_items/minuten"] == "Welch's t-test"
    assert "survey_items/hilfen:Die Überschrift" in tests
    assert not any("anmerkung" in t for t in tests)
    assert set(TYPED_FAMILIES) <= set(plan["correction"]["families"])


def test_demo_plan_is_unchanged_by_the_typed_items(demo_study):
    """A study without typed items gets exactly today's plan keys and families."""
    plan = plan_build(study=demo_study, sample_size=SampleSizeInput(planned_n=8))
    assert "survey_items_typed" not in plan["design"]
    assert set(plan["correction"]["families"]) == set(HOLM_FAMILIES)
    assert "survey_items_summary" not in plan["descriptive"]


def test_analysis_follows_the_plan_and_lists_a_changed_test(german_study, tmp_path):
    """Preregister, pilot, annotate, analyze: no typed test deviates; a plan that named another
    test for an item lists that item's test as a deviation."""
    seed = 3403
    print(f"pilot seed {seed}")
    call_command("preregister", german_study.slug, "--out", str(tmp_path / "plan"), "--planned-n", "12",
                 stdout=io.StringIO())
    call_command("pilot", german_study.slug, "--participants", "12", "--seed", str(seed), stdout=io.StringIO())
    call_command("pilot_annotation", german_study.slug, "--open", stdout=io.StringIO())
    _annotate_all(german_study, [make_user(f"a{i}", "annotators") for i in range(2)],
                  lambda r: True if r.position == 0 else r.condition == "pattern")
    out = tmp_path / "out"
    call_command("analyze", german_study.slug, "--out", str(out), "--include-pilot", stdout=io.StringIO())
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    deviations = results["preregistration"]["deviations"]
    assert [d for d in deviations["tests_differ"] if d["id"] and d["id"].startswith("survey_items")] == []
    assert not [t for t in deviations["exploratory"] if t.startswith("survey_items")]
    plan = json.loads((tmp_path / "plan" / "plan.json").read_text(encoding="utf-8"))
    changed = copy.deepcopy(plan)
    for test in changed["tests"]:
        if test["id"] == "survey_items/minuten":
            test["test"] = "Mann-Whitney U test"
    families = {**HOLM_FAMILIES, **TYPED_FAMILIES}
    again = compare_to_plan(changed, results, correction={"method": "holm", "families": families})
    assert {"id": "survey_items/minuten", "what": "test", "planned": "Mann-Whitney U test",
            "used": "Welch's t-test"} in again["tests_differ"]
