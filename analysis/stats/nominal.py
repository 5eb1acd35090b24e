"""Tests of a nominal outcome between conditions: chi-square, or Fisher's exact test when counts
are small, on a contingency table of conditions x categories.

Both come from scipy (``scipy.stats.chi2_contingency``, ``scipy.stats.fisher_exact``, which takes
r x c tables since scipy 1.15).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.stats as sps

from ..errors import AnalysisInputError

#: Cochran's rule: the chi-square approximation wants every expected count at least this.
MIN_EXPECTED = 5
#: Fisher's test of a table larger than 2 x 2 is a permutation test (scipy): it enumerates every
#: table with the observed margins when there are at most this many, else draws this many.
FISHER_RESAMPLES = 100_000
#: The seed of those draws, so that a report gives the same p-value each run.
FISHER_SEED = 20261206


@dataclass(frozen=True)
class NominalTestResult:
    """Result of :func:`nominal_test`.

    Attributes
    ----------
    test : str
        ``"chi_square"`` or ``"fisher_exact"``.
    statistic : float
        The chi-square statistic, or for Fisher's test scipy's statistic (the odds ratio of a
        2 x 2 table; for a larger one the probability of the observed table).
    p_val : float
        Two-sided p-value.
    dof : int or None
        Degrees of freedom of the chi-square test (``None`` for Fisher's).
    min_expected : float
        The smallest expected count under independence, which chose the test.
    table : list of list of int
        The table tested, conditions x categories (empty categories dropped).
    """

    test: str
    statistic: float
    p_val: float
    dof: int | None
    min_expected: float
    table: list[list[int]]


def nominal_test(table) -> NominalTestResult:
    """Chi-square test of independence, or Fisher's exact test when an expected count is small.

    Parameters
    ----------
    table : array_like of int, shape (n_conditions, n_categories)
        Counts; categories no one chose are dropped first.

    Returns
    -------
    NominalTestResult

    Raises
    ------
    AnalysisInputError
        If the table is not two-dimensional, has a negative count, or has fewer than two
        conditions or two used categories left (nothing to compare).

    Notes
    -----
    ``scipy.stats.chi2_contingency(table, correction=False)`` when every expected count is at
    least :data:`MIN_EXPECTED` (Cochran's rule), else ``scipy.stats.fisher_exact(table)``
    (two-sided; a table larger than 2 x 2 through scipy's permutation method, exact when the
    tables with the observed margins number at most :data:`FISHER_RESAMPLES`, else that many
    draws seeded with :data:`FISHER_SEED`). Without Yates' correction, so that the 2 x 2 case equals the two-sided
    two-proportion z-test (z squared is chi-square).

    References
    ----------
    .. [1] Cochran, W. G. (1954). Some methods for strengthening the common chi-square tests.
       *Biometrics*, 10(4), 417-451.
    .. [2] Agresti, A. (2013). *Categorical Data Analysis* (3rd ed.), sections 3.2 and 3.5.
       Wiley.

    Examples
    --------
    >>> r = nominal_test([[30, 10, 10], [10, 20, 20]])
    >>> r.test, round(r.statistic, 3)
    ('chi_square', 16.667)
    """
    counts = np.asarray(table)
    if counts.ndim != 2:
        raise AnalysisInputError("the table must be conditions x categories")
    if (counts < 0).any():
        raise AnalysisInputError("a count is negative")
    counts = counts[:, counts.sum(axis=0) > 0].astype(int)
    counts = counts[counts.sum(axis=1) > 0]
    if counts.shape[0] < 2 or counts.shape[1] < 2:
        raise AnalysisInputError("needs two conditions and two categories with answers")
    expected = sps.contingency.expected_freq(counts)
    smallest = float(expected.min())
    if smallest >= MIN_EXPECTED:
        res = sps.chi2_contingency(counts, correction=False)
        return NominalTestResult("chi_square", float(res.statistic), float(res.pvalue),
                                 int(res.dof), smallest, counts.tolist())
    if counts.shape == (2, 2):
        res = sps.fisher_exact(counts)
    else:
        method = sps.PermutationMethod(
            n_resamples=FISHER_RESAMPLES, rng=np.random.default_rng(FISHER_SEED)
        )
        res = sps.fisher_exact(counts, method=method)
    return NominalTestResult("fisher_exact", float(res.statistic), float(res.pvalue), None,
                             smallest, counts.tolist())
