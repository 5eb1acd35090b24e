"""Rank tests for Likert items: Mann-Whitney U (between) and Wilcoxon signed-rank (paired).

Both call scipy; the direction is always *pattern* versus *no pattern*.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from ..errors import AnalysisInputError
from ._checks import RANK_ALTERNATIVES, as_sample, check_alternative

__all__ = ["MannWhitneyResult", "WilcoxonResult", "mann_whitney", "wilcoxon_paired"]


@dataclass(frozen=True)
class MannWhitneyResult:
    """Result of :func:`mann_whitney`.

    Attributes
    ----------
    u_val : float
        U statistic of the *pattern* sample (scipy's ``statistic``): the
        number of (pattern, no-pattern) pairs in which the pattern response
        is higher, ties counting one half.
    p_val : float
        p-value under ``alternative``.
    alternative : str
        ``"greater"``, ``"less"`` or ``"two-sided"``.
    rbc : float
        Rank-biserial correlation ``2 * u_val / (n_pattern * n_no_pattern) - 1``
        in [-1, 1]; positive when pattern responses tend to be higher.
    n_pattern, n_no_pattern : int
        Sample sizes.
    """

    u_val: float
    p_val: float
    alternative: str
    rbc: float
    n_pattern: int
    n_no_pattern: int


@dataclass(frozen=True)
class WilcoxonResult:
    """Result of :func:`wilcoxon_paired`.

    Attributes
    ----------
    w_val : float
        scipy's statistic: the sum of the ranks of positive differences
        (pattern minus no pattern) for one-sided alternatives, and the smaller
        of the positive and negative rank sums for ``"two-sided"``. NaN when
        every pair is tied.
    p_val : float
        p-value under ``alternative``; NaN when every pair is tied.
    alternative : str
        ``"greater"``, ``"less"`` or ``"two-sided"``.
    n_pairs : int
        Number of pairs given.
    n_nonzero : int
        Pairs with a non-zero difference, the ones the test uses.
    """

    w_val: float
    p_val: float
    alternative: str
    n_pairs: int
    n_nonzero: int


def mann_whitney(pattern, no_pattern, *, alternative: str) -> MannWhitneyResult:
    """Mann-Whitney U test of pattern versus no-pattern responses.

    Parameters
    ----------
    pattern : array_like of int, shape (n_pattern,)
        Likert responses (1-5) given for the setting with the pattern.
    no_pattern : array_like of int, shape (n_no_pattern,)
        Likert responses (1-5) given for the setting without it.
    alternative : {"greater", "less", "two-sided"}
        ``"greater"``: pattern responses tend to be higher.

    Returns
    -------
    MannWhitneyResult
        ``u_val``, ``p_val``, ``alternative``, ``rbc``, ``n_pattern``,
        ``n_no_pattern``.

    Raises
    ------
    AnalysisInputError
        If a sample is empty, not one-dimensional or has missing values, or
        ``alternative`` is unknown.

    Notes
    -----
    Calls ``scipy.stats.mannwhitneyu(x=pattern, y=no_pattern,
    alternative=alternative)`` with scipy's defaults (continuity correction;
    ``method="auto"``: exact for small samples without ties, otherwise the
    normal approximation with tie correction). Likert data nearly always has
    ties, so the p-value is usually asymptotic.

    The rank-biserial correlation is Kerby's simple difference formula,
    ``rbc = 2 * U / (n1 * n2) - 1``, where U is the statistic of ``pattern``:
    the share of favourable minus the share of unfavourable pairs. Positive
    values mean higher responses with the pattern.

    References
    ----------
    .. [1] Mann, H. B., & Whitney, D. R. (1947). On a test of whether one of
       two random variables is stochastically larger than the other. *Annals
       of Mathematical Statistics*, 18(1), 50-60.
    .. [2] Kerby, D. S. (2014). The simple difference formula: an approach to
       teaching nonparametric correlation. *Comprehensive Psychology*, 3,
       11.IT.3.1.

    Examples
    --------
    >>> r = mann_whitney([5, 4, 4, 3, 5], [2, 3, 3, 4, 1], alternative="greater")
    >>> r.u_val, r.rbc
    (22.0, 0.76)
    """
    x = as_sample(pattern, "pattern responses")
    y = as_sample(no_pattern, "no-pattern responses")
    check_alternative(alternative, RANK_ALTERNATIVES)
    res = sps.mannwhitneyu(x=x, y=y, alternative=alternative)
    u = float(res.statistic)
    return MannWhitneyResult(
        u_val=u,
        p_val=float(res.pvalue),
        alternative=alternative,
        rbc=2.0 * u / (x.size * y.size) - 1.0,
        n_pattern=int(x.size),
        n_no_pattern=int(y.size),
    )


def wilcoxon_paired(pattern, no_pattern, *, alternative: str) -> WilcoxonResult:
    """Wilcoxon signed-rank test on per-participant pairs.

    The within-subject alternative to :func:`mann_whitney`: each participant
    rated the same item once for the setting with the pattern and once for
    the setting without it.

    Parameters
    ----------
    pattern : array_like of int, shape (n_pairs,)
        Each participant's response for the pattern setting.
    no_pattern : array_like of int, shape (n_pairs,)
        The same participants' responses for the no-pattern setting, in the
        same order.
    alternative : {"greater", "less", "two-sided"}
        ``"greater"``: differences ``pattern - no_pattern`` tend to be
        positive.

    Returns
    -------
    WilcoxonResult
        ``w_val``, ``p_val``, ``alternative``, ``n_pairs``, ``n_nonzero``.
        ``w_val`` and ``p_val`` are NaN when every pair is tied.

    Raises
    ------
    AnalysisInputError
        If the arrays are empty, have missing values or differ in length, or
        ``alternative`` is unknown.

    Notes
    -----
    Calls ``scipy.stats.wilcoxon(pattern, no_pattern,
    alternative=alternative)`` with scipy's defaults: zero differences are
    dropped (``zero_method="wilcox"``), no continuity correction, exact
    p-values for small samples without ties, else the normal approximation.

    References
    ----------
    .. [1] Wilcoxon, F. (1945). Individual comparisons by ranking methods.
       *Biometrics Bulletin*, 1(6), 80-83.

    Examples
    --------
    >>> r = wilcoxon_paired([3, 4, 5, 5, 2], [1, 1, 1, 2, 1], alternative="greater")
    >>> r.w_val, r.p_val
    (15.0, 0.03125)
    """
    x = as_sample(pattern, "pattern responses")
    y = as_sample(no_pattern, "no-pattern responses")
    if x.size != y.size:
        raise AnalysisInputError(
            f"paired samples differ in length: {x.size} pattern vs {y.size} no-pattern responses"
        )
    check_alternative(alternative, RANK_ALTERNATIVES)
    n_nonzero = int(np.count_nonzero(x - y))
    if n_nonzero == 0:
        # scipy returns p = 1 here; with no informative pair the test is undefined.
        return WilcoxonResult(math.nan, math.nan, alternative, int(x.size), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (RuntimeWarning, UserWarning))
        res = sps.wilcoxon(x, y, alternative=alternative)
    return WilcoxonResult(
        w_val=float(res.statistic),
        p_val=float(res.pvalue),
        alternative=alternative,
        n_pairs=int(x.size),
        n_nonzero=n_nonzero,
    )
