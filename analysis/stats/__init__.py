"""Statistical tests, effect sizes, agreement and descriptive summaries of the study analysis.

One module per family of methods, as in pingouin and statsmodels:

- :mod:`~analysis.stats.proportion`: two-proportion z-test, Wilson interval, Cohen's h,
  Fisher's exact test, and their combination for one pattern-versus-no-pattern pair;
- :mod:`~analysis.stats.rank`: Mann-Whitney U and Wilcoxon signed-rank tests for Likert items;
- :mod:`~analysis.stats.nominal`: chi-square or Fisher's exact test of nominal answers
  between conditions (Cochran's rule), for codebook outcomes and survey items alike;
- :mod:`~analysis.stats.means`: Welch's and the paired t-test of numbers;
- :mod:`~analysis.stats.multicomp`: Holm's correction within one family;
- :mod:`~analysis.stats.power`: the closed-form sample size of the planned z-test;
- :mod:`~analysis.stats.descriptive`: time on task and shares per setting x condition;
- :mod:`~analysis.stats.agreement`: inter-annotator agreement (percent agreement, Cohen's
  kappa, Krippendorff's alpha), pairwise and against a reference, per tag;
- :mod:`~analysis.stats.agreement_ci`: Cohen's kappa with a paired bootstrap CI, and the
  machine coder's non-inferiority rule.

Every test delegates to scipy, statsmodels, scikit-learn or NLTK (Krippendorff's alpha,
:mod:`~analysis.stats.alpha`); these modules check
the inputs and return plain dataclasses or tidy DataFrames with snake_case fields. The names
below are the tests of the study analysis; the agreement modules are imported by name
(``from analysis.stats import agreement``), as the annotation app does.

The names below are imported on first use (``from analysis.stats import cohens_h`` works as
usual), so importing one submodule does not load the others.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_SOURCES = {
    "FisherResult": ".proportion",
    "HolmResult": ".multicomp",
    "MannWhitneyResult": ".rank",
    "PROPORTION_ALTERNATIVES": "._checks",
    "ProportionComparison": ".proportion",
    "RANK_ALTERNATIVES": "._checks",
    "WilcoxonResult": ".rank",
    "ZTestResult": ".proportion",
    "cohens_h": ".proportion",
    "compare_proportions": ".proportion",
    "fisher_exact_test": ".proportion",
    "holm_correction": ".multicomp",
    "mann_whitney": ".rank",
    "nominal_test": ".nominal",
    "other_differences": ".descriptive",
    "paired_t": ".means",
    "sample_size_per_condition": ".power",
    "time_on_task": ".descriptive",
    "two_proportion_ztest": ".proportion",
    "welch_t": ".means",
    "wilcoxon_paired": ".rank",
    "wilson_ci": ".proportion",
}

__all__ = list(_SOURCES)
__getattr__, __dir__ = lazy_exports(__name__, _SOURCES)
