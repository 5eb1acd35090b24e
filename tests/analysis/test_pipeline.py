"""compute_results on a simulated export, checked against independent counts from the raw CSV."""

from __future__ import annotations

import csv
import json
import math
import statistics
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from analysis import AnalysisInputError, compute_results, load_export, run_analysis, to_json
from analysis.inputs import prepare_data
from analysis.tables import build_tables

from .conftest import RESPONSE_HEADER, SURVEY_HEADER, simulate_export, write_csv

REQUIRED_IDENTIFICATION_KEYS = {
    "n_no_pattern", "n_pattern", "k_no_pattern", "k_pattern", "rate_no_pattern", "rate_pattern", "z", "p",
    "alternative", "ci_no_pattern", "ci_pattern", "cohens_h", "fisher_p",
}


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """The simulated export, its validated data and the default results, computed once per module."""
    export = simulate_export(tmp_path_factory.mktemp("pipeline") / "export")
    data = load_export(export)
    return export, data, compute_results(data)


def raw_included_rows(directory):
    """Rows of responses.csv whose participant has no excluded=1 row, read with the csv module."""
    with (directory / "responses.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    excluded = {r["participant"] for r in rows if r["excluded"] == "1"}
    return [r for r in rows if r["participant"] not in excluded]


def test_identification_counts_and_z_match_raw_csv(sim):
    """k and n per setting x condition come from included rows only; z equals the hand pooled formula."""
    export_dir, _, results = sim
    rows = raw_included_rows(export_dir)
    for setting in ("doctor", "farming"):
        counts = {}
        for cond in ("pattern", "no_pattern"):
            group = [r for r in rows if r["setting"] == setting and r["condition"] == cond]
            counts[cond] = (sum(r["identified"] == "1" for r in group), len(group))
        r = results["identification"][setting]
        assert (r["k_pattern"], r["n_pattern"]) == counts["pattern"]
        assert (r["k_no_pattern"], r["n_no_pattern"]) == counts["no_pattern"]
        (k1, n1), (k2, n2) = counts["pattern"], counts["no_pattern"]
        pooled = (k1 + k2) / (n1 + n2)
        z = (k1 / n1 - k2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
        assert r["z"] == pytest.approx(z)
        assert r["p"] == pytest.approx(1 - NormalDist().cdf(z))
        assert r["alternative"] == "larger"
        assert set(r) == REQUIRED_IDENTIFICATION_KEYS
    assert sum(v["n_pattern"] + v["n_no_pattern"] for v in results["identification"].values()) == 72


def test_exclusions_remove_participants_everywhere(sim):
    """The 4 simulated exclusions (one flagged on a single row) are counted by reason and analysed nowhere."""
    results = sim[2]
    assert results["exclusions"] == {
        "answer pasted from an AI tool": 1, "copy-pasted answers": 1, "failed instruction check": 2,
    }
    assert results["participants"] == {"total": 40, "included": 36, "excluded": 4}
    assert all(v["n_pattern"] == v["n_no_pattern"] == 36 for v in results["likert"].values())
    assert all(v["n"] == 36 for v in results["background"].values())


def test_time_on_task_and_other_differences_match_raw_csv(sim):
    """Time (s) and other-difference shares per setting x condition equal a stdlib computation on the CSV."""
    export_dir, _, results = sim
    rows = raw_included_rows(export_dir)
    for setting in ("doctor", "farming"):
        for cond in ("pattern", "no_pattern"):
            group = [r for r in rows if r["setting"] == setting and r["condition"] == cond]
            seconds = [int(r["time_on_task_ms"]) / 1000 for r in group]
            t = results["time_on_task"][setting][cond]
            assert t["n"] == len(seconds)
            assert t["mean_s"] == pytest.approx(statistics.mean(seconds))
            assert t["median_s"] == pytest.approx(statistics.median(seconds))
            assert t["sd_s"] == pytest.approx(statistics.stdev(seconds))
            share = sum(r["other_difference"] == "1" for r in group) / len(group)
            assert results["other_differences"][setting][cond] == pytest.approx(share)


def test_likert_default_and_configured_alternatives(sim):
    """Defaults are ease greater, effort less, confidence greater; a configured item flips its test."""
    _, data, default = sim
    assert {k: v["alternative"] for k, v in default["likert"].items()} == {
        "ease": "greater", "effort": "less", "confidence": "greater"}
    assert default["likert"]["ease"]["rbc"] > 0 > default["likert"]["effort"]["rbc"]
    flipped = compute_results(data, likert_alternatives={"ease": "less", "unused_item": "greater"})
    assert flipped["likert"]["ease"]["alternative"] == "less"
    assert flipped["likert"]["ease"]["U"] == default["likert"]["ease"]["U"]
    assert default["likert"]["ease"]["p"] < 0.01
    assert flipped["likert"]["ease"]["p"] > 0.99
    assert flipped["likert_paired"]["ease"]["alternative"] == "less"
    with pytest.raises(AnalysisInputError, match="Likert alternative for item 'ease' must be one of"):
        compute_results(data, likert_alternatives={"ease": "larger"})


def test_two_sided_identification_doubles_p(sim):
    """alternative='two-sided' reports twice the one-sided p (z > 0 here)."""
    _, data, default = sim
    one = default["identification"]["doctor"]
    two = compute_results(data, alternative="two-sided")["identification"]["doctor"]
    assert two["alternative"] == "two-sided"
    assert two["p"] == pytest.approx(2 * one["p"])
    assert two["z"] == pytest.approx(one["z"])


def test_holm_family_matches_hand_step_down(sim):
    """Holm over the two settings: smaller p doubled, larger p max(that, itself)."""
    results = sim[2]
    p = {s: v["p"] for s, v in results["identification"].items()}
    lo, hi = sorted(p, key=p.get)
    holm = results["holm"]["identification"]
    assert holm[lo]["p_holm"] == pytest.approx(min(1, 2 * p[lo]))
    assert holm[hi]["p_holm"] == pytest.approx(max(min(1, 2 * p[lo]), p[hi]))


def test_distractor_condition_reported_separately(tmp_path):
    """pattern_with_distractors gets its own comparison with no_pattern; the required shape is unchanged."""
    data = load_export(simulate_export(tmp_path / "d", distractors=True))
    results = compute_results(data)
    assert set(results["identification"]["doctor"]) == REQUIRED_IDENTIFICATION_KEYS
    extra = results["identification_with_distractors"]["doctor"]
    responses = data.responses
    group = responses[(responses["setting"] == "doctor") & (responses["condition"] == "pattern_with_distractors")]
    assert extra["n_pattern_with_distractors"] == len(group) > 0
    assert extra["k_pattern_with_distractors"] == int(group["identified"].sum())
    assert extra["n_no_pattern"] == results["identification"]["doctor"]["n_no_pattern"]
    assert "pattern_with_distractors" in results["time_on_task"]["doctor"]


def test_undefined_statistics_become_json_null():
    """A z-test with all outcomes 1 and an SD from one participant are null in JSON, never NaN."""
    responses = [
        {"participant": p, "setting": "doctor", "condition": c, "position": 1, "identified": 1,
         "other_difference": 0, "no_difference": 0, "time_on_task_ms": 1000, "excluded": 0, "exclusion_reason": ""}
        for p, c in (("A", "pattern"), ("B", "no_pattern"), ("C", "no_pattern"))
    ]
    import pandas as pd

    data = prepare_data(pd.DataFrame(responses), pd.DataFrame(columns=["participant", "condition", "item", "response"]))
    text = to_json(compute_results(data))
    assert "NaN" not in text and "Infinity" not in text
    parsed = json.loads(text)
    assert parsed["identification"]["doctor"]["z"] is None
    assert parsed["identification"]["doctor"]["p"] is None
    assert parsed["time_on_task"]["doctor"]["pattern"]["sd_s"] is None
    assert parsed["likert"] == {} and parsed["background"] == {}
    assert parsed["input_sha256"] is None  # built from DataFrames, not files


def _three_setting_frames(conditions=("pattern", "no_pattern"), n_participants=24, seed=11):
    """Responses and survey of ``n_participants`` in 3 settings, conditions rotated over the settings.

    With two conditions a participant sees one of them in two settings, as the platform's cells
    do; the survey asks once per condition seen.
    """
    rng = np.random.default_rng(seed)
    rate = {"pattern": 0.75, "pattern_with_distractors": 0.5, "no_pattern": 0.3}
    responses, survey = [], []
    for i in range(n_participants):
        seen = set()
        for j, setting in enumerate(("alpha", "beta", "gamma")):
            condition = conditions[(i + j) % len(conditions)]
            seen.add(condition)
            responses.append({"participant": f"P{i}", "setting": setting, "condition": condition,
                              "position": j + 1, "identified": int(rng.random() < rate[condition]),
                              "other_difference": 0, "no_difference": 0,
                              "time_on_task_ms": int(rng.integers(20_000, 200_000)),
                              "excluded": 0, "exclusion_reason": ""})
        for condition in sorted(seen):
            survey.append({"participant": f"P{i}", "condition": condition, "item": "ease",
                           "response": int(rng.integers(1, 6))})
    return pd.DataFrame(responses), pd.DataFrame(survey)


def test_three_settings_with_two_conditions_match_statsmodels():
    """Three settings (one condition shown twice per participant) give one z-test per setting and Holm over 3."""
    responses, survey = _three_setting_frames()
    results = compute_results(prepare_data(responses, survey))
    assert list(results["identification"]) == ["alpha", "beta", "gamma"]
    p_values = []
    for setting, r in results["identification"].items():
        rows = responses[responses["setting"] == setting]
        k = [int(rows.loc[rows["condition"] == c, "identified"].sum()) for c in ("pattern", "no_pattern")]
        n = [int((rows["condition"] == c).sum()) for c in ("pattern", "no_pattern")]
        z, p = proportions_ztest(k, n, alternative="larger")
        assert (r["k_pattern"], r["n_pattern"], r["k_no_pattern"], r["n_no_pattern"]) == (k[0], n[0], k[1], n[1])
        assert r["z"] == pytest.approx(z) and r["p"] == pytest.approx(p)
        p_values.append(p)
    for setting, adjusted in zip(results["identification"], multipletests(p_values, method="holm")[1]):
        assert results["holm"]["identification"][setting]["p_holm"] == pytest.approx(adjusted)
    assert results["identification_with_distractors"] == {} and results["likert_with_distractors"] == {}
    ease = results["likert"]["ease"]
    answers = {c: survey.loc[survey["condition"] == c, "response"].tolist() for c in ("pattern", "no_pattern")}
    mw = mannwhitneyu(answers["pattern"], answers["no_pattern"], alternative="greater")
    assert ease["U"] == pytest.approx(mw.statistic) and ease["p"] == pytest.approx(mw.pvalue)


def test_holm_family_spans_both_pattern_conditions(tmp_path):
    """With distractors, Holm corrects across every setting x pattern condition test, not per condition."""
    results = compute_results(load_export(simulate_export(tmp_path / "d", distractors=True)))
    keys = [(section, setting) for section in ("identification", "identification_with_distractors")
            for setting in results[section]]
    assert len(keys) == 4
    adjusted = multipletests([results[s][k]["p"] for s, k in keys], method="holm")[1]
    for (section, setting), p_holm in zip(keys, adjusted):
        assert results["holm"][section][setting]["p_holm"] == pytest.approx(p_holm)
    items = [(section, item) for section in ("likert", "likert_with_distractors") for item in results[section]]
    assert len(items) == 6
    adjusted = multipletests([results[s][i]["p"] for s, i in items], method="holm")[1]
    for (section, item), p_holm in zip(items, adjusted):
        assert results["holm"][section][item]["p_holm"] == pytest.approx(p_holm)


@pytest.mark.parametrize("conditions", [("pattern",), ("pattern", "pattern_with_distractors")],
                         ids=["one condition", "no no_pattern group"])
def test_design_without_a_comparison_reports_rates_only(tmp_path, conditions):
    """A design with nothing to compare against no_pattern runs: no tests, rates and a note in the report."""
    responses, survey = _three_setting_frames(conditions, n_participants=6)
    results = compute_results(prepare_data(responses, survey))
    assert results["identification"] == {} and results["likert"] == {} and results["design"]["compared"] == []
    rates = build_tables(results, prepare_data(responses, survey))["identification_rates"]
    assert len(rates) == 3 * len(conditions)
    export = tmp_path / "export"
    export.mkdir()
    write_csv(export / "responses.csv", RESPONSE_HEADER, responses.to_dict("records"))
    write_csv(export / "survey.csv", SURVEY_HEADER, survey.to_dict("records"))
    run_analysis(export, tmp_path / "out")
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "No test: the data need a condition without a pattern" in report
    assert "No test: the survey needs answers about a task without a pattern" in report
