"""compute_results on a simulated export, checked against independent counts from the raw CSV."""

from __future__ import annotations

import csv
import json
import math
import statistics
from statistics import NormalDist

import pytest

from analysis import AnalysisInputError, compute_results, load_export, to_json
from analysis.inputs import prepare_data

from .conftest import simulate_export

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
