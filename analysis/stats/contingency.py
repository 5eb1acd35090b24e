"""Tests of nominal answers between conditions: chi-square, or Fisher's exact test for small counts.

Both call scipy. The rule that picks one (Cochran's) is :data:`SMALL_EXPECTED_COUNT`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from ..errors import AnalysisInputError

__all__ = ["FISHER_RESAMPLES", "FISHER_SEED", "NominalResult", "SMALL_EXPECTED_COUNT", "compare_nominal"]

#: Fisher's exact test replaces chi-square when any expected count is below this (Cochran, 1954).
SMALL_EXPECTED_COUNT = 5.0
#: scipy computes Fisher's test of a table larger than 2x2 by Monte Carlo (random tables with
#: the observed margins); a fixed seed and this many tables make its p-value repeatable
#: (standard error at most 0.0016).
FISHER_RESAMPLES = 100_000
FISHER_SEED = 34


@dataclass(frozen=True)
class NominalResult:
    """Result of :func:`compare_nominal`.

    Attributes
    ----------
    test : str
        ``"chi-square"`` or ``"Fisher's exact"``.
    statistic : float
        Pearson's chi-square (with Yates' continuity correction on a 2x2 table, scipy's
        default), or Fisher's statistic (the odds ratio on a 2x2 table, else the probability of
        the observed table); NaN when the table has fewer than two non-empty rows or columns.
    dof : int
        Degrees of freedom of the chi-square test ((rows - 1) x (columns - 1)); 0 for Fisher.
    p_val : float
        Two-sided p-value; NaN when the test is undefined.
    min_expected : float
        Smallest expected count under independence (NaN when undefined).
    n : int
        Answers in the table.
    """

    test: str
    statistic: float
    dof: int
    p_val: float
    min_expected: float
    n: int


def compare_nominal(table) -> NominalResult:
    """Chi-square test of independence of a conditions x categories table, or Fisher's exact
    test when any expected count is below :data:`SMALL_EXPECTED_COUNT`.

    Parameters
    ----------
    table : array_like of int, shape (n_conditions, n_categories)
        Counts: one row per condition, one column per option (or chosen / not chosen). Rows and
        columns without any count are dropped before testing.

    Returns
    -------
    NominalResult

    Raises
    ------
    AnalysisInputError
        If ``table`` is not two-dimensional or holds a negative or non-whole count.

    Notes
    -----
    ``scipy.stats.chi2_contingency(table)`` (Yates' correction for one degree of freedom) when
    every expected count is at least 5, otherwise ``scipy.stats.fisher_exact(table)``: the
    classic conditional test on a 2x2 table, and on a larger table the test of independence
    with fixed margins, whose p-value scipy (1.15 and later) estimates from
    :data:`FISHER_RESAMPLES` random tables drawn with seed :data:`FISHER_SEED`
    (``scipy.stats.MonteCarloMethod``), so that the same table always gives the same p. Both
    are two-sided. With fewer than
    two non-empty rows or columns nothing can differ: the result is NaN.

    References
    ----------
    .. [1] Pearson, K. (1900). On the criterion that a given system of deviations ...
       *Philosophical Magazine*, 50, 157-175.
    .. [2] Fisher, R. A. (1922). On the interpretation of chi-square from contingency tables.
       *Journal of the Royal Statistical Society*, 85(1), 87-94.
    .. [3] Cochran, W. G. (1954). Some methods for strengthening the common chi-square tests.
       *Biometrics*, 10(4), 417-451 (expected counts of at least 5).

    Examples
    --------
    >>> compare_nominal([[8, 2], [3, 7]]).test
    "Fisher's exact"
    """
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2:
        raise AnalysisInputError(f"a contingency table must be two-dimensional, got shape {counts.shape}")
    if (counts < 0).any() or not np.all(np.isfinite(counts)) or (counts % 1 != 0).any():
        raise AnalysisInputError("a contingency table holds non-negative whole counts")
    counts = counts[counts.sum(axis=1) > 0][:, counts.sum(axis=0) > 0].astype(int)
    n = int(counts.sum())
    if counts.shape[0] < 2 or counts.shape[1] < 2:
        return NominalResult("chi-square", math.nan, 0, math.nan, math.nan, n)
    expected = sps.contingency.expected_freq(counts)
    min_expected = float(expected.min())
    if min_expected < SMALL_EXPECTED_COUNT:
        if counts.shape == (2, 2):
            res = sps.fisher_exact(counts)
        else:
            res = sps.fisher_exact(counts, method=sps.MonteCarloMethod(
                n_resamples=FISHER_RESAMPLES, rng=np.random.default_rng(FISHER_SEED)))
        return NominalResult("Fisher's exact", float(res.statistic), 0, float(res.pvalue), min_expected, n)
    res = sps.chi2_contingency(counts)
    return NominalResult("chi-square", float(res.statistic), int(res.dof), float(res.pvalue), min_expected, n)
