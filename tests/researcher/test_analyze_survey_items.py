"""A German study with typed survey items runs import_study -> pilot -> two annotators ->
analyze (issue 34): the report uses the German words, the choice item is tested with chi-square
or Fisher, the 7-point item with Mann-Whitney U and the paired Wilcoxon test."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from spotlight_study.studies.selectors import study_get_with_settings

from ..annotation.conftest import make_user
from ..studies.test_survey_items import GERMAN_FILE
from .test_analyze import _annotate_all

SEED = 3402


@pytest.fixture
def analysed(db, tmp_path):
    """The German study imported, piloted with 12 participants (seed printed), annotated by two
    annotators, analysed with --include-pilot; returns (results, report.md text, out dir)."""
    print(f"pilot seed {SEED}")
    call_command("import_study", str(GERMAN_FILE), stdout=io.StringIO())
    study = study_get_with_settings(slug="umfrage-de")
    call_command("pilot", study.slug, "--participants", "12", "--seed", str(SEED), stdout=io.StringIO())
    call_command("pilot_annotation", study.slug, "--open", stdout=io.StringIO())
    annotators = [make_user(f"a{i}", "annotators") for i in range(2)]
    _annotate_all(study, annotators, lambda r: True if r.position == 0 else r.condition == "pattern")
    out = tmp_path / "out"
    call_command("analyze", study.slug, "--out", str(out), "--include-pilot", stdout=io.StringIO())
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return results, (out / "report.md").read_text(encoding="utf-8"), out


def test_report_uses_the_german_words_and_tests_each_type(analysed):
    """The report quotes the German item texts, labels and options; choice is tested with
    chi-square or Fisher, the likert item with Mann-Whitney U and Wilcoxon, the number item with
    Welch's t; the text item is not tested."""
    results, report, out = analysed
    assert results["survey_items"]["strategie"]["method"] in ("chi_square", "fisher_exact")
    assert results["survey_items"]["sicherheit"]["test"] == "Mann-Whitney U test"
    assert results["survey_items_paired"]["sicherheit"]["test"] == "Wilcoxon signed-rank test"
    assert results["survey_items"]["minuten"]["test"] == "Welch's t-test"
    assert "hilfen:Die Überschrift" in results["survey_items"]
    assert "anmerkung" not in results["survey_items"]
    for words in ("Wie sicher sind Sie, dass Ihre Antwort stimmt?", "Völlig sicher",
                  "Nach Stichwörtern gesucht", "Die Aufgabe in diesem Teil war leicht für mich.",
                  "Stimme gar nicht zu", "einen Chat-Assistenten wie ChatGPT benutzt?", "Täglich"):
        assert words in report, words
    assert "Easy to solve the task" not in report and "Strongly disagree" not in report
    assert (out / "data" / "survey_items.json").is_file()


def test_each_test_equals_scipy_on_the_exported_answers(analysed):
    """The p-values in results.json equal scipy's on the same answers read from survey.csv."""
    import csv

    import numpy as np
    from scipy import stats

    results, _report, out = analysed
    with (out / "data" / "survey.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    included = set()
    with (out / "data" / "responses.csv").open(encoding="utf-8") as fh:
        included = {r["participant"] for r in csv.DictReader(fh) if r["excluded"] == "0"}

    def answers(item, condition):
        return [r["response"] for r in rows
                if r["item"] == item and r["condition"] == condition and r["participant"] in included]

    likert = results["survey_items"]["sicherheit"]
    ref = stats.mannwhitneyu([int(v) for v in answers("sicherheit", "pattern")],
                             [int(v) for v in answers("sicherheit", "no_pattern")], alternative="two-sided")
    assert likert["p"] == pytest.approx(ref.pvalue, abs=1e-12)
    options = ["Alle Texte gelesen", "Nach Stichwörtern gesucht", "Geraten"]
    table = [[answers("strategie", c).count(o) for o in options] for c in ("pattern", "no_pattern")]
    table = [[row[j] for j in range(3) if table[0][j] + table[1][j]] for row in table]
    expected = stats.contingency.expected_freq(table)
    fisher = stats.MonteCarloMethod(n_resamples=100_000, rng=np.random.default_rng(20261206))
    ref_p = (stats.fisher_exact(table, method=fisher).pvalue if expected.min() < 5
             else stats.chi2_contingency(table, correction=False).pvalue)
    assert results["survey_items"]["strategie"]["p"] == pytest.approx(ref_p, abs=1e-12)
    welch = stats.ttest_ind([float(v) for v in answers("minuten", "pattern")],
                            [float(v) for v in answers("minuten", "no_pattern")], equal_var=False)
    assert results["survey_items"]["minuten"]["p"] == pytest.approx(welch.pvalue, abs=1e-12)
