"""Declared measures and their statistics: the one table from a codebook field's type to its
agreement statistics and its test between conditions, with the source of each method.

A study's codebook (``annotation.codebook`` in the study file, docs/study-file.md) names each
field's type; this table decides what the platform computes for it. The overview page, the
exports and ``manage.py analyze`` all read it here, so a type's statistics are changed in one
place.

=============  ===========  ================================================  ==============================
type           scale        agreement between annotators                      test of the outcome
=============  ===========  ================================================  ==============================
yes_no         nominal      Cohen's kappa (2 annotators), alpha nominal       one-tailed two-proportion z-test
choice         nominal      Cohen's kappa (2 annotators), alpha nominal       chi-square, Fisher if small [*]
ordinal        ordinal      quadratic-weighted kappa, alpha ordinal           Mann-Whitney U
number         interval     alpha interval                                    Mann-Whitney U
multi_choice   per option   Cohen's kappa per option (present/absent)         counts and shares per condition
note           (free text)  not compared                                      not tested
=============  ===========  ================================================  ==============================

[*] A choice outcome with a ``success`` mapping, or only two options, is a proportion: the
z-test. Percent agreement is reported for every compared field.
"""
from __future__ import annotations

from dataclasses import dataclass

#: Where each method comes from (library call and reference), cited by the docs and the report.
SOURCES = {
    "cohen_kappa": "sklearn.metrics.cohen_kappa_score; Cohen (1960), Educ. Psychol. Meas. 20(1)",
    "quadratic_kappa": "sklearn.metrics.cohen_kappa_score(weights='quadratic'); Cohen (1968), "
    "Psychol. Bull. 70(4)",
    "krippendorff_alpha": "nltk.metrics.agreement.AnnotationTask.alpha (via analysis/stats/agreement.py); Krippendorff "
    "(2011), Computing Krippendorff's Alpha-Reliability",
    "two_proportion_ztest": "statsmodels.stats.proportion.proportions_ztest; Agresti (2013), "
    "Categorical Data Analysis, 3.1",
    "chi_square": "scipy.stats.chi2_contingency; Agresti (2013), 3.2; Cochran (1954), "
    "Biometrics 10(4) for the expected-count rule",
    "fisher_exact": "scipy.stats.fisher_exact; Agresti (2013), 3.5",
    "mann_whitney": "scipy.stats.mannwhitneyu; Mann & Whitney (1947), Ann. Math. Stat. 18(1)",
}


@dataclass(frozen=True)
class Measure:
    """What a codebook field type is measured on and which statistics fit it.

    ``scale``: ``nominal``, ``ordinal``, ``interval``, ``per_option`` or ``none``;
    ``agreement``: the agreement statistics, by name (keys of :data:`SOURCES` plus the level of
    alpha, e.g. ``krippendorff_alpha:ordinal``); ``outcome_test``: the test when the field is the
    outcome (``None``: it cannot be one); ``summary``: what the report gives per condition.
    """

    scale: str
    agreement: tuple[str, ...]
    outcome_test: str | None
    summary: str


#: The table: codebook field type -> :class:`Measure`.
MEASURES: dict[str, Measure] = {
    "yes_no": Measure("nominal", ("cohen_kappa", "krippendorff_alpha:nominal"),
                      "two_proportion_ztest", "share yes"),
    "choice": Measure("nominal", ("cohen_kappa", "krippendorff_alpha:nominal"),
                      "chi_square_or_fisher", "counts and shares"),
    "ordinal": Measure("ordinal", ("quadratic_kappa", "krippendorff_alpha:ordinal"),
                       "mann_whitney", "counts and shares"),
    "number": Measure("interval", ("krippendorff_alpha:interval",), "mann_whitney", "median"),
    "multi_choice": Measure("per_option", ("cohen_kappa",), None, "counts and shares"),
    "note": Measure("none", (), None, "not summarised"),
}


def measure_of(field_type: str) -> Measure:
    """The :class:`Measure` of a codebook field type; raises ``KeyError`` for an unknown one."""
    return MEASURES[field_type]


def outcome_test_of(field: dict, success: dict | None = None) -> str:
    """The test of ``field`` as the outcome: ``two_proportion_ztest`` for yes/no, a mapped
    outcome (``success``) or a choice with two options; else the table's test for its type.

    Raises ``ValueError`` for a type that cannot be the outcome (multi_choice, note).
    """
    test = MEASURES[field["type"]].outcome_test
    if test is None:
        raise ValueError(f"a {field['type']} field cannot be the outcome")
    if success or (field["type"] == "choice" and len(field.get("options", [])) == 2):
        return "two_proportion_ztest"
    return test
