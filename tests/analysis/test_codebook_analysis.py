"""The codebook analysis: each field type's agreement statistic and the outcome's test come from
the library the table in analysis/measures.py names, and agree with it called directly."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps
from sklearn.metrics import cohen_kappa_score

from analysis.codebook_analysis import (
    codebook_results,
    field_agreement,
    multi_choice_summary,
    outcome_tests,
    report_blocks,
)
from analysis.document import to_markdown
from analysis.measures import MEASURES, SOURCES, outcome_test_of
from analysis.stats.agreement import krippendorff_alpha

ERKANNT = {"key": "erkannt", "label": "Unterschied erkannt", "type": "ordinal",
           "options": ["nein", "teilweise", "ja"]}
TAGS = {"key": "tags", "label": "Weitere Unterschiede", "type": "multi_choice",
        "options": ["Erwähnt Geschlecht", "Länge"]}
CODEBOOK = {"fields": [ERKANNT, TAGS], "outcome": "erkannt"}
SEED = 20261206


def _responses(seed: int = SEED) -> pd.DataFrame:
    """Seeded responses: ordinal outcome higher with the pattern, tags per condition."""
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    rows = []
    for setting in ("doctor", "farming"):
        for condition, weights in (("no_pattern", [0.5, 0.3, 0.2]), ("pattern", [0.2, 0.3, 0.5])):
            for _ in range(30):
                value = rng.choice(ERKANNT["options"], p=weights)
                tags = [o for o in TAGS["options"] if rng.random() < 0.4]
                rows.append({"setting": setting, "condition": condition, "excluded": 0,
                             "label_source": "agreement", "erkannt": value, "tags": ";".join(tags),
                             **{f"tags:{o}": int(o in tags) for o in TAGS["options"]}})
    return pd.DataFrame(rows)


def test_every_field_type_has_a_measure_with_a_source():
    """The table covers every codebook type, and each named method has a source."""
    assert set(MEASURES) == {"yes_no", "choice", "multi_choice", "ordinal", "number", "note"}
    for measure in MEASURES.values():
        for name in measure.agreement:
            assert name.split(":")[0] in SOURCES
    assert outcome_test_of(ERKANNT) == "mann_whitney"
    assert outcome_test_of(ERKANNT, {"ja": "success", "teilweise": "failure", "nein": "failure"}) == "two_proportion_ztest"
    assert outcome_test_of({"type": "choice", "options": ["a", "b", "c"]}) == "chi_square_or_fisher"
    with pytest.raises(ValueError):
        outcome_test_of(TAGS)


def test_ordinal_outcome_is_mann_whitney_as_scipy_computes_it():
    """Per setting, U and p equal scipy.stats.mannwhitneyu on the ranks (one-tailed greater)."""
    data = _responses()
    result = outcome_tests(data, CODEBOOK)
    assert result["test"] == "mann_whitney" and result["label"] == "Unterschied erkannt"
    rank = {o: i for i, o in enumerate(ERKANNT["options"])}
    for c in result["comparisons"]:
        rows = data[data["setting"] == c["setting"]]
        x = rows[rows["condition"] == "pattern"]["erkannt"].map(rank)
        y = rows[rows["condition"] == "no_pattern"]["erkannt"].map(rank)
        ref = sps.mannwhitneyu(x, y, alternative="greater")
        assert c["u"] == pytest.approx(ref.statistic) and c["p"] == pytest.approx(ref.pvalue)
        assert c["p_holm"] >= c["p"]


def test_mapped_outcome_uses_the_z_test_of_the_reference_study():
    """With a success mapping, the counts of "ja" go to the one-tailed z-test (statsmodels)."""
    from statsmodels.stats.proportion import proportions_ztest

    data = _responses()
    book = {**CODEBOOK, "success": {"nein": "failure", "teilweise": "failure", "ja": "success"}}
    c = outcome_tests(data, book)["comparisons"][0]
    z, p = proportions_ztest([c["k_treatment"], c["k_baseline"]], [c["n_treatment"], c["n_baseline"]],
                             alternative="larger")
    assert c["z"] == pytest.approx(z) and c["p"] == pytest.approx(p)


def test_agreement_per_type_equals_the_libraries():
    """Ordinal: quadratic kappa (sklearn) and alpha ordinal; nominal choice: kappa and alpha
    nominal; number: alpha interval; multi_choice: kappa per option. The alpha values are the
    GPL ``krippendorff`` package's (0.9.0, computed once on these ratings and copied as numbers:
    the package is no longer installed, issue 39)."""
    a = ["nein", "ja", "teilweise", "ja", "nein", "teilweise"]
    b = ["nein", "teilweise", "teilweise", "ja", "teilweise", "ja"]
    result = field_agreement(ERKANNT, [a, b])["statistics"]
    rank = {o: i for i, o in enumerate(ERKANNT["options"])}
    ra, rb = [rank[v] for v in a], [rank[v] for v in b]
    assert result["quadratic_kappa"].value == pytest.approx(cohen_kappa_score(ra, rb, weights="quadratic"))
    assert result["krippendorff_alpha:ordinal"].value == pytest.approx(0.5889550264550264, abs=1e-12)
    numbers = [[1.0, 2.5, 3.0, None], [1.5, 2.5, 4.0, 2.0]]
    number = field_agreement({"key": "n", "label": "N", "type": "number"}, numbers)["statistics"]
    assert number["krippendorff_alpha:interval"].value == pytest.approx(0.8175182481751825, abs=1e-12)
    tags = field_agreement(TAGS, [[["Länge"], [], ["Länge", "Erwähnt Geschlecht"]],
                                  [["Länge"], ["Länge"], ["Erwähnt Geschlecht"]]])
    assert tags["options"]["Länge"]["cohen_kappa"].value == pytest.approx(
        cohen_kappa_score([1, 0, 1], [1, 1, 0]))
    assert krippendorff_alpha([[1, 2], [1, 2]], level="nominal").value == pytest.approx(1.0)


def test_multi_choice_summary_and_report_use_the_researchers_words():
    """Counts and shares per condition; the report names the German labels word for word."""
    data = _responses()
    summary = multi_choice_summary(data, TAGS)
    pattern = data[data["condition"] == "pattern"]
    assert summary["conditions"]["pattern"]["n"] == len(pattern)
    assert summary["conditions"]["pattern"]["options"]["Länge"]["count"] == int(pattern["tags:Länge"].sum())
    agreement = [field_agreement(ERKANNT, [["ja", "nein"], ["ja", "teilweise"]])]
    text = to_markdown(report_blocks(codebook_results(data, CODEBOOK, agreement)), {}, ".")
    assert "Unterschied erkannt" in text and "Weitere Unterschiede" in text
    assert "Mann-Whitney U" in text and "Länge" in text


def test_the_z_test_reports_each_rate_with_its_wilson_interval():
    """Each rate of a z-test comparison comes with statsmodels' Wilson score interval at the
    family's level, in results and in the report (before, the codebook report gave bare rates)."""
    from statsmodels.stats.proportion import proportion_confint

    data = _responses()
    book = {**CODEBOOK, "success": {"nein": "failure", "teilweise": "failure", "ja": "success"}}
    outcome = outcome_tests(data, book, alpha=0.1)
    assert outcome["ci_level"] == pytest.approx(0.9)
    for c in outcome["comparisons"]:
        for arm in ("treatment", "baseline"):
            expected = proportion_confint(c[f"k_{arm}"], c[f"n_{arm}"], alpha=0.1, method="wilson")
            assert c[f"ci_{arm}"] == pytest.approx(list(expected), abs=1e-12)
            assert c[f"ci_{arm}"][0] <= c[f"rate_{arm}"] <= c[f"ci_{arm}"][1]
    agreement = [field_agreement(ERKANNT, [["ja", "nein"], ["ja", "teilweise"]])]
    text = to_markdown(report_blocks(codebook_results(data, book, agreement, alpha=0.1)), {}, ".")
    assert "90% Wilson score interval" in text
    first = outcome["comparisons"][0]
    assert f"({100 * first['ci_treatment'][0]:.1f}% to {100 * first['ci_treatment'][1]:.1f}%)" in text


def test_the_wilson_interval_is_newcombes():
    """Newcombe (1998), Statistics in Medicine 17:857-872, Table I: 81 of 263 gives the Wilson
    score interval 0.2553 to 0.3662."""
    from analysis.stats.proportion import wilson_ci

    lo, hi = wilson_ci(81, 263)
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)
