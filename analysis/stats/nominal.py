"""The one test of nominal answers between conditions: chi-square, or Fisher's exact test when an
expected count is small, on a contingency table of conditions x categories.

Both the codebook's nominal outcome (:mod:`analysis.codebook_analysis`) and the survey's
``choice`` and ``multi_choice`` items (:mod:`analysis.survey_measures`) call
:func:`nominal_test`, so the rule, the names of the tests, Yates' correction and the seed of
Fisher's resampling are decided here and nowhere else.

Both tests come from scipy (``scipy.stats.chi2_contingency``, ``scipy.stats.fisher_exact``, which
takes r x c tables since scipy 1.15).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.stats as sps

from ..errors import AnalysisInputError

__all__ = ["FISHER_RESAMPLES", "FISHER_SEED", "MIN_EXPECTED", "NOMINAL_RULE", "NominalTestResult",
           "TEST_WORDS", "YATES_CORRECTION", "nominal_test"]

#: Cochran's rule: the chi-square approximation wants every expected count at least this;
#: below it Fisher's exact test is used instead (Cochran, 1954).
MIN_EXPECTED = 5
#: No Yates' continuity correction on a 2 x 2 table. The correction makes the chi-square test
#: conservative (D'Agostino, Chase & Belanger, 1988); the counts where it was meant to help are
#: the small ones, and those get Fisher's exact test here by Cochran's rule. Without it, a 2 x 2
#: chi-square equals the square of the two-sided two-proportion z-test (statsmodels
#: ``proportions_ztest``) that the reference study's outcome uses.
YATES_CORRECTION = False
#: Fisher's test of a table larger than 2 x 2 is scipy's Monte Carlo method (random tables with
#: the observed margins, ``scipy.stats.random_table``); this many tables give a p-value with a
#: standard error of at most 0.0016.
FISHER_RESAMPLES = 100_000
#: The seed of those draws (the project's seed), so that a table always gives the same p.
FISHER_SEED = 20261206
#: The tests' names in words, for reports (results keep the snake_case names).
TEST_WORDS = {"chi_square": "chi-square test", "fisher_exact": "Fisher's exact test"}
#: The rule in words, for the report, the plan and the docs.
NOMINAL_RULE = (f"chi-square test of independence (scipy.stats.chi2_contingency, no Yates' "
                f"correction), or Fisher's exact test (scipy.stats.fisher_exact) when any expected "
                f"count is below {MIN_EXPECTED} (Cochran, 1954); two-sided")


@dataclass(frozen=True)
class NominalTestResult:
    """Result of :func:`nominal_test`.

    Attributes
    ----------
    test : str or None
        ``"chi_square"`` or ``"fisher_exact"``; ``None`` when the table leaves nothing to
        compare (fewer than two non-empty rows or columns).
    statistic : float
        Pearson's chi-square, or for Fisher's test scipy's statistic (the odds ratio of a 2 x 2
        table; for a larger one the probability of the observed table); NaN when undefined.
    p_val : float
        Two-sided p-value; NaN when undefined.
    dof : int or None
        Degrees of freedom of the chi-square test ((rows - 1) x (columns - 1)); ``None`` for
        Fisher's test and when undefined.
    min_expected : float
        The smallest expected count under independence, which chose the test (NaN when
        undefined).
    n : int
        Answers in the table.
    table : list of list of int
        The table tested, conditions x categories (empty rows and columns dropped).
    reason : str
        Why the test is undefined (``""`` when it is defined).
    """

    test: str | None
    statistic: float
    p_val: float
    dof: int | None
    min_expected: float
    n: int
    table: list[list[int]]
    reason: str = ""


def nominal_test(table) -> NominalTestResult:
    """Chi-square test of independence, or Fisher's exact test when an expected count is small.

    Parameters
    ----------
    table : array_like of int, shape (n_conditions, n_categories)
        Counts: one row per condition, one column per option (or chosen / not chosen). Rows and
        columns without any count are dropped first.

    Returns
    -------
    NominalTestResult
        With ``test=None`` and NaN statistic and p when fewer than two conditions or two
        categories have answers (nothing can differ).

    Raises
    ------
    AnalysisInputError
        If the table is not two-dimensional or holds a negative, non-finite or non-whole count.

    Notes
    -----
    ``scipy.stats.chi2_contingency(table, correction=False)`` (:data:`YATES_CORRECTION`) when
    every expected count is at least :data:`MIN_EXPECTED` (Cochran's rule), else
    ``scipy.stats.fisher_exact(table)``: the classic conditional test on a 2 x 2 table, and on a
    larger one the test with fixed margins whose p-value scipy estimates from
    :data:`FISHER_RESAMPLES` random tables (``scipy.stats.MonteCarloMethod``, seed
    :data:`FISHER_SEED`). Both are two-sided.

    References
    ----------
    .. [1] Pearson, K. (1900). On the criterion that a given system of deviations ...
       *Philosophical Magazine*, 50, 157-175.
    .. [2] Fisher, R. A. (1922). On the interpretation of chi-square from contingency tables.
       *Journal of the Royal Statistical Society*, 85(1), 87-94.
    .. [3] Cochran, W. G. (1954). Some methods for strengthening the common chi-square tests.
       *Biometrics*, 10(4), 417-451.
    .. [4] D'Agostino, R. B., Chase, W., & Belanger, A. (1988). The appropriateness of some
       common procedures for testing the equality of two independent binomial populations.
       *The American Statistician*, 42(3), 198-202.
    .. [5] Agresti, A. (2013). *Categorical Data Analysis* (3rd ed.), sections 3.2 and 3.5.
       Wiley.

    Examples
    --------
    >>> r = nominal_test([[30, 10, 10], [10, 20, 20]])
    >>> r.test, round(r.statistic, 3)
    ('chi_square', 16.667)
    >>> nominal_test([[8, 2], [3, 7]]).test
    'fisher_exact'
    """
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2:
        raise AnalysisInputError(f"the table must be conditions x categories, got shape {counts.shape}")
    if (counts < 0).any() or not np.all(np.isfinite(counts)) or (counts % 1 != 0).any():
        raise AnalysisInputError("a contingency table holds non-negative whole counts")
    counts = counts[counts.sum(axis=1) > 0][:, counts.sum(axis=0) > 0].astype(int)
    n = int(counts.sum())
    if counts.shape[0] < 2 or counts.shape[1] < 2:
        return NominalTestResult(None, math.nan, math.nan, None, math.nan, n, counts.tolist(),
                                 "needs two conditions and two categories with answers")
    smallest = float(sps.contingency.expected_freq(counts).min())
    if smallest >= MIN_EXPECTED:
        res = sps.chi2_contingency(counts, correction=YATES_CORRECTION)
        return NominalTestResult("chi_square", float(res.statistic), float(res.pvalue),
                                 int(res.dof), smallest, n, counts.tolist())
    if counts.shape == (2, 2):
        res = sps.fisher_exact(counts)
    else:
        res = sps.fisher_exact(counts, method=sps.MonteCarloMethod(
            n_resamples=FISHER_RESAMPLES, rng=np.random.default_rng(FISHER_SEED)))
    return NominalTestResult("fisher_exact", float(res.statistic), float(res.pvalue), None,
                             smallest, n, counts.tolist())
