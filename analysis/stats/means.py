"""Tests of numbers between conditions by their means: Welch's t-test and the paired t-test.

Both call scipy; the direction is always *pattern* versus *no pattern*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats as sps

from ..errors import AnalysisInputError
from ._checks import RANK_ALTERNATIVES, as_sample, check_alternative

__all__ = ["TTestResult", "paired_t", "welch_t"]


@dataclass(frozen=True)
class TTestResult:
    """Result of :func:`welch_t` and :func:`paired_t`.

    Attributes
    ----------
    t_val : float
        t statistic of pattern minus no pattern (NaN when undefined: no variance).
    df : float
        Degrees of freedom (Welch-Satterthwaite for :func:`welch_t`, n - 1 for :func:`paired_t`).
    p_val : float
        p-value under ``alternative``.
    alternative : str
        ``"greater"``, ``"less"`` or ``"two-sided"``.
    mean_diff : float
        Mean of pattern minus mean of no pattern (paired: mean of the differences).
    n_pattern, n_no_pattern : int
        Sample sizes (both the number of pairs for :func:`paired_t`).
    """

    t_val: float
    df: float
    p_val: float
    alternative: str
    mean_diff: float
    n_pattern: int
    n_no_pattern: int


def welch_t(pattern, no_pattern, *, alternative: str) -> TTestResult:
    """Welch's t-test (unequal variances) of pattern versus no-pattern numbers.

    Parameters
    ----------
    pattern, no_pattern : array_like of float, shapes (n_pattern,), (n_no_pattern,)
    alternative : {"greater", "less", "two-sided"}
        ``"greater"``: numbers tend to be higher with the pattern.

    Returns
    -------
    TTestResult

    Raises
    ------
    AnalysisInputError
        If a sample is empty, not one-dimensional or has missing values, or ``alternative``
        is unknown.

    Notes
    -----
    ``scipy.stats.ttest_ind(pattern, no_pattern, equal_var=False, alternative=alternative)``.

    References
    ----------
    .. [1] Welch, B. L. (1947). The generalization of "Student's" problem when several
       different population variances are involved. *Biometrika*, 34(1-2), 28-35.

    Examples
    --------
    >>> round(welch_t([5, 6, 7], [1, 2, 3], alternative="greater").t_val, 3)
    4.899
    """
    x = as_sample(pattern, "pattern numbers")
    y = as_sample(no_pattern, "no-pattern numbers")
    check_alternative(alternative, RANK_ALTERNATIVES)
    res = sps.ttest_ind(x, y, equal_var=False, alternative=alternative)
    return TTestResult(float(res.statistic), float(res.df), float(res.pvalue), alternative,
                       float(x.mean() - y.mean()), int(x.size), int(y.size))


def paired_t(pattern, no_pattern, *, alternative: str) -> TTestResult:
    """Paired t-test of the same participants' numbers with and without the pattern.

    Parameters
    ----------
    pattern, no_pattern : array_like of float, shape (n_pairs,)
        Aligned: element i of both is one participant.
    alternative : {"greater", "less", "two-sided"}

    Returns
    -------
    TTestResult
        ``n_pattern`` and ``n_no_pattern`` are both the number of pairs; NaN statistics with
        fewer than two pairs.

    Raises
    ------
    AnalysisInputError
        As :func:`welch_t`, or if the samples differ in length.

    Notes
    -----
    ``scipy.stats.ttest_rel(pattern, no_pattern, alternative=alternative)``.

    References
    ----------
    .. [1] Student (1908). The probable error of a mean. *Biometrika*, 6(1), 1-25.

    Examples
    --------
    >>> round(paired_t([5, 6, 8], [4, 4, 5], alternative="two-sided").t_val, 3)
    3.464
    """
    x = as_sample(pattern, "pattern numbers")
    y = as_sample(no_pattern, "no-pattern numbers")
    check_alternative(alternative, RANK_ALTERNATIVES)
    if x.size != y.size:
        raise AnalysisInputError(f"paired samples differ in length: {x.size} and {y.size}")
    if x.size < 2:
        return TTestResult(math.nan, math.nan, math.nan, alternative, float((x - y).mean()), 1, 1)
    res = sps.ttest_rel(x, y, alternative=alternative)
    return TTestResult(float(res.statistic), float(res.df), float(res.pvalue), alternative,
                       float((x - y).mean()), int(x.size), int(y.size))
