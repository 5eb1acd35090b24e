"""Survey items with types in the analysis (analysis/survey_measures.py): each type's test equals
scipy's on the same answers, answers that do not fit their item are refused naming the line, and
an export without typed items is analysed exactly as before."""
from __future__ import annotations

import csv
import json
import random

import numpy as np
import pytest
from scipy import stats

from analysis import AnalysisInputError, compute_results, load_export
from analysis.stats.means import paired_t, welch_t
from analysis.survey_measures import SURVEY_TESTS, item_words, load_survey_items

SEED = 3404
ITEMS = {
    "format": "spotlight-survey-items/1",
    "likert_scale": ["Stimme gar nicht zu", "Stimme nicht zu", "Teils", "Stimme zu", "Stimme voll zu"],
    "frequency_scale": ["Nie", "Selten", "Manchmal", "Oft", "Täglich"],
    "items": [
        {"key": "leicht", "text": "Es war leicht.", "where": "condition", "type": "scale"},
        {"key": "sicher", "text": "Wie sicher?", "where": "condition", "type": "likert",
         "labels": ["gar nicht", "kaum", "etwas", "ziemlich", "sehr", "völlig", "absolut"]},
        {"key": "weg", "text": "Vorgehen?", "where": "condition", "type": "choice",
         "options": ["Gelesen", "Gesucht", "Geraten"]},
        {"key": "hilfe", "text": "Was half?", "where": "condition", "type": "multi_choice",
         "options": ["Überschrift", "Wörter"]},
        {"key": "min", "text": "Minuten?", "where": "condition", "type": "number", "min": 0, "max": 60,
         "test": "welch_t"},
        {"key": "notiz", "text": "Notiz", "where": "condition", "type": "text"},
        {"key": "beruf", "text": "Beruf?", "where": "background", "type": "choice",
         "options": ["Forschung", "Anderes"]},
    ],
}


def _export(tmp_path, n: int = 30, seed: int = SEED, items=ITEMS, bad: dict | None = None):
    """An export directory of n participants who each saw both conditions (seeded answers)."""
    print(f"seed {seed}")
    rng = random.Random(seed)
    responses, survey = [], []
    for i in range(n):
        p = f"p{i:03d}"
        # Counterbalanced: half see setting a with the pattern, half setting b.
        pairs = (("a", "pattern"), ("b", "no_pattern")) if i % 2 else (("a", "no_pattern"), ("b", "pattern"))
        for setting, condition in pairs:
            responses.append({"participant": p, "setting": setting, "condition": condition, "position": 1,
                              "identified": int(rng.random() < 0.5), "other_difference": 0, "no_difference": 0,
                              "time_on_task_ms": 1000, "excluded": 0, "exclusion_reason": ""})
            up = condition == "pattern"
            survey += [
                {"participant": p, "condition": condition, "item": "leicht", "response": rng.randint(1, 5)},
                {"participant": p, "condition": condition, "item": "sicher", "response": min(7, rng.randint(1, 6) + up)},
                {"participant": p, "condition": condition, "item": "weg",
                 "response": rng.choice(["Gelesen", "Gesucht"] if up else ["Gesucht", "Geraten", "Geraten"])},
                {"participant": p, "condition": condition, "item": "hilfe",
                 "response": ";".join(o for o in ("Überschrift", "Wörter") if rng.random() < (0.7 if up else 0.4))},
                {"participant": p, "condition": condition, "item": "min", "response": round(rng.uniform(5, 40 + 10 * up), 1)},
                {"participant": p, "condition": condition, "item": "notiz", "response": "ok" if rng.random() < 0.5 else ""},
            ]
        survey.append({"participant": p, "condition": "background", "item": "beruf",
                       "response": rng.choice(["Forschung", "Anderes"])})
    if bad:
        survey[0].update(bad)
    for name, rows in (("responses", responses), ("survey", survey)):
        with (tmp_path / f"{name}.csv").open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    if items is not None:
        (tmp_path / "survey_items.json").write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return survey


def _values(survey, item, condition, cast=str):
    rows = sorted((r for r in survey if r["item"] == item and r["condition"] == condition),
                  key=lambda r: r["participant"])
    return [cast(r["response"]) for r in rows]


def test_t_tests_equal_scipy():
    """Welch's and the paired t-test: the same p as scipy's own calls (the nominal rule's tests
    are in test_nominal.py)."""
    x, y = [12.0, 15.5, 9.0, 20.0, 14.0], [8.0, 9.5, 11.0, 7.0, 10.0]
    assert welch_t(x, y, alternative="two-sided").p_val == pytest.approx(
        stats.ttest_ind(x, y, equal_var=False).pvalue, abs=1e-15)
    assert paired_t(x, y, alternative="greater").p_val == pytest.approx(
        stats.ttest_rel(x, y, alternative="greater").pvalue, abs=1e-15)


def test_each_typed_item_is_tested_as_scipy_tests_it(tmp_path):
    """Likert: Mann-Whitney U and Wilcoxon; choice and each multi_choice option: chi-square or
    Fisher by the rule; number: Welch's and the paired t-test; text and background: not tested."""
    survey = _export(tmp_path)
    results = compute_results(load_export(tmp_path))
    between, paired = results["survey_items"], results["survey_items_paired"]
    sicher_p, sicher_np = _values(survey, "sicher", "pattern", int), _values(survey, "sicher", "no_pattern", int)
    assert between["sicher"]["p"] == pytest.approx(
        stats.mannwhitneyu(sicher_p, sicher_np, alternative="two-sided").pvalue, abs=1e-15)
    assert paired["sicher"]["p"] == pytest.approx(
        stats.wilcoxon(sicher_p, sicher_np, alternative="two-sided").pvalue, abs=1e-15)
    weg = [[_values(survey, "weg", c).count(o) for o in ("Gelesen", "Gesucht", "Geraten")]
           for c in ("pattern", "no_pattern")]
    expected = stats.contingency.expected_freq(weg)
    assert between["weg"]["method"] == ("chi_square" if expected.min() >= 5 else "fisher_exact")
    if expected.min() >= 5:
        ref_p = stats.chi2_contingency(weg, correction=False).pvalue
    else:  # scipy's Monte Carlo Fisher test of a 2x3 table, with the analysis's seed
        ref_p = stats.fisher_exact(weg, method=stats.MonteCarloMethod(
            n_resamples=100_000, rng=np.random.default_rng(20261206))).pvalue
    assert between["weg"]["p"] == pytest.approx(ref_p, abs=1e-15)
    for option in ("Überschrift", "Wörter"):
        table = [[sum(option in v.split(";") for v in _values(survey, "hilfe", c)),
                  sum(option not in v.split(";") for v in _values(survey, "hilfe", c))]
                 for c in ("pattern", "no_pattern")]
        expected = stats.contingency.expected_freq(table)
        ref = (stats.chi2_contingency(table, correction=False) if expected.min() >= 5
               else stats.fisher_exact(table))
        assert between[f"hilfe:{option}"]["p"] == pytest.approx(ref.pvalue, abs=1e-15)
    minutes = [_values(survey, "min", c, float) for c in ("pattern", "no_pattern")]
    assert between["min"]["p"] == pytest.approx(stats.ttest_ind(*minutes, equal_var=False).pvalue, abs=1e-15)
    assert paired["min"]["p"] == pytest.approx(stats.ttest_rel(*minutes).pvalue, abs=1e-15)
    assert "notiz" not in between and "beruf" not in between
    assert results["survey_items_summary"]["beruf"]["by_condition"]["background"]["n"] == 30
    ps = [between[k]["p"] for k in between]
    holm = __import__("statsmodels.stats.multitest", fromlist=["x"]).multipletests(ps, method="holm")[1]
    assert [between[k]["p_holm"] for k in between] == pytest.approx(list(holm), abs=1e-15)
    # The 5-point item stays in today's sections.
    assert "leicht" in results["likert"] and "leicht" not in between


def test_without_survey_items_json_the_results_are_as_before(tmp_path):
    """An export without survey_items.json and without typed rows gives no typed sections."""
    survey = _export(tmp_path, items=None)
    keep = [r for r in survey if r["item"] == "leicht"]
    with (tmp_path / "survey.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(keep[0]))
        writer.writeheader()
        writer.writerows(keep)
    results = compute_results(load_export(tmp_path))
    assert not any(k.startswith("survey_items") for k in results)
    assert load_survey_items(tmp_path) is None and item_words(None)["items"] == {}


@pytest.mark.parametrize(("bad", "words"), [
    ({"item": "sicher", "response": 8}, "from 1 to 7"),
    ({"item": "weg", "response": "Geschätzt"}, "not one of the options"),
    ({"item": "min", "response": 61}, "from 0 to 60"),
    ({"item": "hilfe", "response": "Überschrift;Länge"}, "not one of the options"),
])
def test_an_answer_that_does_not_fit_its_item_is_refused(tmp_path, bad, words):
    """A point, option or number outside its item is refused, naming the line and the item."""
    _export(tmp_path, bad=bad)
    with pytest.raises(AnalysisInputError, match=words) as caught:
        compute_results(load_export(tmp_path))
    assert "line 2" in str(caught.value) and bad["item"] in str(caught.value)


def test_every_type_has_a_test_and_a_source():
    """The one table names each type's level, its tests and their source."""
    assert set(SURVEY_TESTS) == {"scale", "likert", "choice", "multi_choice", "number", "text"}
    assert all(entry["source"] and entry["level"] for entry in SURVEY_TESTS.values())


def test_reference_items_keep_their_numbers_and_get_their_own_words(tmp_path):
    """Items without a type: results.json is byte for byte the same with and without
    survey_items.json, and the report names each item by its own text and scale words."""
    from analysis import run_analysis

    texts = {"leicht": "Es war leicht, so sagt es die Studie."}
    scale_only = {**ITEMS, "items": [dict(ITEMS["items"][0], text=texts["leicht"])]}
    plain, worded = tmp_path / "plain", tmp_path / "worded"
    for d in (plain, worded):
        d.mkdir()
        survey = _export(d, items=None)
    keep = [r for r in survey if r["item"] == "leicht"]
    for d in (plain, worded):
        with (d / "survey.csv").open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(keep[0]))
            writer.writeheader()
            writer.writerows(keep)
    (worded / "survey_items.json").write_text(json.dumps(scale_only, ensure_ascii=False), encoding="utf-8")
    run_analysis(plain, tmp_path / "out_plain")
    run_analysis(worded, tmp_path / "out_worded")
    assert (tmp_path / "out_plain" / "results.json").read_bytes() == (tmp_path / "out_worded" / "results.json").read_bytes()
    report = (tmp_path / "out_worded" / "report.md").read_text(encoding="utf-8")
    assert texts["leicht"] in report and "Stimme gar nicht zu" in report
    assert "Easy to solve the task" not in (tmp_path / "out_plain" / "report.md").read_text(encoding="utf-8")
