"""analysis.plan_hash and analysis.deviations: the plan's canonical hash, its check against the
recorded hash, and the comparison of a run with its plan."""
from __future__ import annotations

import hashlib
import json

import pytest

from analysis import AnalysisInputError, compute_results, load_export, run_analysis
from analysis.__main__ import main as analysis_main
from analysis.deviations import (
    DESCRIPTIVE_SECTIONS,
    PLAN_FORMAT,
    compare_to_plan,
    load_plan,
    planned_tests,
)
from analysis.errors import PlanIntegrityError
from analysis.plan_hash import canonical_json, plan_sha256, plan_verified
from analysis.pipeline import HOLM_FAMILIES, likert_alternatives_for

USED = {"method": "holm", "families": HOLM_FAMILIES}


def _plan(results: dict, *, planned_n=40, rules=("failed instruction check", "copy-pasted answers",
                                                  "answer pasted from an AI tool"), **changes) -> dict:
    """A plan for the design found in ``results``, with the analysis defaults, then ``changes``."""
    design = results["design"]
    items = list(results["likert"])
    plan = {
        "format": PLAN_FORMAT,
        "alpha": 0.05,
        "correction": {"method": "holm", "families": {k: list(v) for k, v in HOLM_FAMILIES.items()}},
        "tests": planned_tests(design["settings"], design["conditions"], items,
                               identification_alternative="larger",
                               likert_alternatives=likert_alternatives_for(items),
                               families=HOLM_FAMILIES),
        "descriptive": list(DESCRIPTIVE_SECTIONS),
        "exclusion_rules": [{"reason": r, "rule": "as exported"} for r in rules],
        "sample_size": {"planned_n": planned_n, "derivation": "given"},
    }
    plan.update(changes)
    return plan


@pytest.fixture
def results(export_dir):
    """results.json content of the simulated 40-participant export."""
    return json.loads(json.dumps(compute_results(load_export(export_dir)), allow_nan=True))


def test_canonical_json_ignores_key_order_and_whitespace():
    """Two plans differing only in key order have the same bytes and hash; a changed value does not."""
    a = {"b": [1, {"y": "é", "x": 0.05}], "a": None}
    b = json.loads(json.dumps({"a": None, "b": [1, {"x": 0.05, "y": "é"}]}, indent=4))
    assert canonical_json(a) == canonical_json(b) == '{"a":null,"b":[1,{"x":0.05,"y":"é"}]}'.encode()
    assert plan_sha256(a) == hashlib.sha256(canonical_json(a)).hexdigest()
    assert plan_sha256(a) != plan_sha256({**a, "a": 0})


def test_canonical_json_refuses_nan():
    """NaN is not JSON, so a plan holding it cannot be hashed."""
    with pytest.raises(ValueError):
        canonical_json({"alpha": float("nan")})


def test_a_run_that_follows_its_plan_has_only_the_sample_size_deviation(results):
    """Plan made from the analysis defaults: no test, correction or exploratory deviation; N differs."""
    dev = compare_to_plan(_plan(results, planned_n=76), results, correction=USED)
    included = results["participants"]["included"]
    assert dev["sample_size"] == {"analysed": included, "planned": 76, "difference": included - 76}
    assert dev["tests_differ"] == [] and dev["tests_not_run"] == [] and dev["exploratory"] == []
    assert dev["count"] == 1
    exact = compare_to_plan(_plan(results, planned_n=included), results, correction=USED)
    assert exact["count"] == 0


def test_each_planned_exclusion_rule_gets_its_count_and_unplanned_ones_are_flagged(results):
    """Every planned rule is listed with its count (0 if unused); reasons not in the plan are deviations."""
    plan = _plan(results, planned_n=results["participants"]["included"],
                 rules=("failed instruction check", "duplicate"))
    dev = compare_to_plan(plan, results, correction=USED, plan_hash="abc")
    by_reason = {e["reason"]: e for e in dev["exclusions"]}
    assert by_reason["failed instruction check"] == {
        "reason": "failed instruction check", "planned": True,
        "participants": results["exclusions"]["failed instruction check"]}
    assert by_reason["duplicate"]["participants"] == 0
    unplanned = [e["reason"] for e in dev["exclusions"] if not e["planned"]]
    assert sorted(unplanned) == sorted(set(results["exclusions"]) - {"failed instruction check"})
    assert dev["plan_sha256"] == "abc"
    assert dev["count"] == len(unplanned)


def test_a_different_alternative_alpha_or_correction_is_listed(export_dir):
    """Testing ease two-sided at alpha 0.1 against a plan saying greater at 0.05 lists both, with values."""
    res = json.loads(json.dumps(compute_results(load_export(export_dir), alpha=0.1,
                                                likert_alternatives={"ease": "two-sided"})))
    plan = _plan(res, planned_n=res["participants"]["included"])
    dev = compare_to_plan(plan, res, correction={"method": "bonferroni", "families": HOLM_FAMILIES})
    differ = {(d["id"], d["what"]): (d["planned"], d["used"]) for d in dev["tests_differ"]}
    assert differ == {
        (None, "alpha"): (0.05, 0.1),
        (None, "correction"): ("holm", "bonferroni"),
        ("likert/ease", "alternative"): ("greater", "two-sided"),
        ("likert_paired/ease", "alternative"): ("greater", "two-sided"),
    }


def test_tests_outside_the_plan_are_exploratory_and_missing_ones_not_run(results):
    """A result without a planned test is exploratory; a planned test without a result is 'not run'."""
    plan = _plan(results, planned_n=results["participants"]["included"])
    plan["tests"] = [t for t in plan["tests"] if t["id"] != "identification/farming"]
    plan["tests"].append({**plan["tests"][0], "id": "identification/angler", "name": "angler"})
    plan["descriptive"] = ["time_on_task"]
    dev = compare_to_plan(plan, results, correction=USED)
    assert dev["tests_not_run"] == ["identification/angler"]
    assert dev["exploratory"][0] == "identification/farming"
    assert set(dev["exploratory"][1:]) == {s for s in DESCRIPTIVE_SECTIONS if s != "time_on_task" and results[s]}
    assert dev["count"] == 1 + len(dev["exploratory"])


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid UTF-8 JSON"),
    ('{"format": "osf"}', "not a preregistered plan of format spotlight-prereg/1"),
    (json.dumps({"format": PLAN_FORMAT, "alpha": 0.05}), "lacks the key"),
    (json.dumps({"format": PLAN_FORMAT, "alpha": 0.05, "correction": {}, "tests": [1],
                 "exclusion_rules": [], "sample_size": {}}), "'tests' must be a list of objects"),
])
def test_load_plan_refuses_what_is_not_a_plan(tmp_path, content, message):
    """Broken or foreign plan files raise AnalysisInputError naming the problem."""
    path = tmp_path / "plan.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(AnalysisInputError, match=message):
        load_plan(path)


def test_cli_with_a_bad_plan_exits_2_and_writes_nothing(export_dir, tmp_path, capsys):
    """``python -m analysis DIR --plan missing.json``: one error line, status 2, no output directory."""
    code = analysis_main([str(export_dir), "--out", str(tmp_path / "out"), "--plan", str(tmp_path / "nope.json")])
    assert code == 2
    assert capsys.readouterr().err.startswith("error: cannot read the plan")
    assert not (tmp_path / "out").exists()


def test_cli_with_a_plan_cites_its_hash_and_lists_deviations(export_dir, tmp_path, results, capsys):
    """With --plan, results.json, report.md and report.html carry the hash and the deviation section."""
    plan = _plan(results, planned_n=76)
    (tmp_path / "plan.json").write_text(json.dumps(plan, indent=2), encoding="utf-8")
    sha = plan_sha256(plan)
    assert analysis_main([str(export_dir), "--out", str(tmp_path / "out"), "--plan", str(tmp_path / "plan.json")]) == 0
    assert f"Plan SHA-256 {sha}: 1 deviation(s)" in capsys.readouterr().out
    out = tmp_path / "out"
    saved = json.loads((out / "results.json").read_text())
    assert saved["preregistration"]["plan_sha256"] == sha
    assert hashlib.sha256((out / "plan.json").read_bytes()).hexdigest() == sha
    n = results["participants"]["included"]
    for name in ("report.md", "report.html"):
        text = (out / name).read_text()
        assert "Deviations from the preregistered plan" in text and sha in text
        assert f"N analysed {n} vs planned 76 ({76 - n} fewer than planned)." in text
        assert "Tests or alternatives that differ from the plan: None." in text
        assert "Analyses not in the plan (exploratory): None." in text


def test_without_a_plan_results_and_report_have_no_preregistration(export_dir, tmp_path):
    """A run without a plan keeps the earlier results.json shape and report."""
    results = run_analysis(export_dir, tmp_path)
    assert "preregistration" not in results
    assert "Deviations from the preregistered plan" not in (tmp_path / "report.md").read_text()
    assert not (tmp_path / "plan.json").exists()


def test_plan_verified_gives_back_the_stored_plan_when_its_hash_matches():
    """A stored canonical plan whose recorded SHA-256 is sha256sum of its bytes is returned."""
    plan = {"format": PLAN_FORMAT, "alpha": 0.05, "note": "Grüße"}
    text = canonical_json(plan).decode("utf-8")
    assert plan_verified(text, hashlib.sha256(text.encode()).hexdigest()) == plan


@pytest.mark.parametrize("tamper", [
    lambda t: t.replace('"alpha":0.05', '"alpha":0.1'),        # a changed value
    lambda t: json.dumps(json.loads(t), indent=2),           # same values, not canonical bytes
    lambda t: t[:-1],                                        # no longer JSON
])
def test_plan_verified_refuses_a_plan_changed_after_it_was_frozen(tamper):
    """An edited, re-indented or truncated stored plan is refused, naming both hashes."""
    plan = {"format": PLAN_FORMAT, "alpha": 0.05}
    text = canonical_json(plan).decode("utf-8")
    stored = plan_sha256(plan)
    with pytest.raises(PlanIntegrityError) as info:
        plan_verified(tamper(text), stored, source="plan v1 of demo")
    assert "plan v1 of demo" in str(info.value) and stored in str(info.value)
