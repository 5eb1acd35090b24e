"""Statistical tests and descriptive summaries used by the study analysis.

Every test delegates to scipy or statsmodels; this module only checks the
inputs, fixes the direction of each comparison (always *pattern* versus
*no pattern*) and returns plain dataclasses or tidy DataFrames with
snake_case fields.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import (
    proportion_confint,
    proportion_effectsize,
    proportions_ztest,
)

from .errors import AnalysisInputError

__all__ = [
    "FisherResult",
    "HolmResult",
    "MannWhitneyResult",
    "ProportionComparison",
    "WilcoxonResult",
    "ZTestResult",
    "cohens_h",
    "compare_proportions",
    "fisher_exact_test",
    "holm_correction",
    "mann_whitney",
    "other_differences",
    "sample_size_per_condition",
    "time_on_task",
    "two_proportion_ztest",
    "wilcoxon_paired",
    "wilson_ci",
]

#: Alternatives for proportion tests, in statsmodels' spelling.
PROPORTION_ALTERNATIVES = ("larger", "smaller", "two-sided")
#: Alternatives for rank tests, in scipy's spelling.
RANK_ALTERNATIVES = ("greater", "less", "two-sided")

# scipy.stats.fisher_exact spells the one-sided alternatives differently.
_FISHER_ALTERNATIVE = {"larger": "greater", "smaller": "less", "two-sided": "two-sided"}


# --------------------------------------------------------------------------
# result types
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class ZTestResult:
    """Result of :func:`two_proportion_ztest`.

    Attributes
    ----------
    z_val : float
        Test statistic; positive when the pattern rate is higher. NaN when
        undefined (both groups all 0 or all 1, so the pooled SD is zero).
    p_val : float
        p-value under ``alternative``; NaN when ``z_val`` is NaN.
    alternative : str
        ``"larger"``, ``"smaller"`` or ``"two-sided"``.
    """

    z_val: float
    p_val: float
    alternative: str


@dataclass(frozen=True)
class FisherResult:
    """Result of :func:`fisher_exact_test`.

    Attributes
    ----------
    odds_ratio : float
        Sample odds ratio ``(k_p * (n_np - k_np)) / ((n_p - k_p) * k_np)``;
        may be ``inf`` or NaN when a cell is zero.
    p_val : float
        Exact (hypergeometric) p-value under ``alternative``.
    alternative : str
        ``"larger"``, ``"smaller"`` or ``"two-sided"`` (statsmodels spelling;
        mapped to scipy's ``"greater"``/``"less"``).
    """

    odds_ratio: float
    p_val: float
    alternative: str


@dataclass(frozen=True)
class ProportionComparison:
    """Everything reported for one pattern-versus-no-pattern proportion pair.

    Attributes
    ----------
    k_pattern, n_pattern : int
        Successes and participants in the pattern group.
    k_no_pattern, n_no_pattern : int
        Successes and participants in the no-pattern group.
    rate_pattern, rate_no_pattern : float
        ``k / n`` for each group, in [0, 1].
    ci_pattern, ci_no_pattern : tuple of float
        Wilson confidence interval ``(lo, hi)`` for each rate, in [0, 1].
    z_val, p_val : float
        Pooled two-proportion z-test (see :func:`two_proportion_ztest`).
    alternative : str
        Alternative of both the z-test and Fisher's test.
    cohens_h : float
        Cohen's h of ``rate_pattern`` versus ``rate_no_pattern``.
    fisher_p : float
        p-value of Fisher's exact test under the same alternative.
    fisher_odds_ratio : float
        Sample odds ratio from Fisher's test.
    """

    k_pattern: int
    n_pattern: int
    k_no_pattern: int
    n_no_pattern: int
    rate_pattern: float
    rate_no_pattern: float
    ci_pattern: tuple[float, float]
    ci_no_pattern: tuple[float, float]
    z_val: float
    p_val: float
    alternative: str
    cohens_h: float
    fisher_p: float
    fisher_odds_ratio: float


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


@dataclass(frozen=True)
class HolmResult:
    """Result of :func:`holm_correction`.

    Attributes
    ----------
    p_adjusted : numpy.ndarray of float, shape (m,)
        Holm-adjusted p-values in input order; NaN where the input was
        missing.
    reject : numpy.ndarray of bool, shape (m,)
        Whether each null hypothesis is rejected at ``alpha`` family-wise;
        False where the input was missing.
    alpha : float
        Family-wise error rate used.
    """

    p_adjusted: np.ndarray
    reject: np.ndarray
    alpha: float


# --------------------------------------------------------------------------
# argument checks
# --------------------------------------------------------------------------
def _check_count(k: int, n: int, label: str) -> tuple[int, int]:
    """Return ``(k, n)`` as ints after checking ``0 <= k <= n`` and ``n >= 1``."""
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, bool) or not float(value).is_integer():
            raise AnalysisInputError(f"{label}: {name} must be a whole number, got {value!r}")
    k, n = int(k), int(n)
    if n < 1:
        raise AnalysisInputError(f"{label}: n must be at least 1, got {n}")
    if not 0 <= k <= n:
        raise AnalysisInputError(f"{label}: k must be between 0 and n={n}, got {k}")
    return k, n


def _check_alternative(alternative: str, allowed: Sequence[str]) -> str:
    if alternative not in allowed:
        raise AnalysisInputError(
            f"alternative must be one of {', '.join(allowed)}; got {alternative!r}"
        )
    return alternative


def _check_alpha(alpha: float, name: str = "alpha") -> float:
    if not 0 < float(alpha) < 1:
        raise AnalysisInputError(f"{name} must be between 0 and 1 (exclusive), got {alpha!r}")
    return float(alpha)


def _as_sample(values, label: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise AnalysisInputError(f"{label} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise AnalysisInputError(f"{label} is empty; at least one response is needed")
    if np.isnan(arr).any():
        raise AnalysisInputError(f"{label} contains missing values")
    return arr


# --------------------------------------------------------------------------
# proportions
# --------------------------------------------------------------------------
def two_proportion_ztest(
    k_pattern: int,
    n_pattern: int,
    k_no_pattern: int,
    n_no_pattern: int,
    *,
    alternative: str = "larger",
) -> ZTestResult:
    """Two-proportion z-test (normal approximation, pooled variance).

    Parameters
    ----------
    k_pattern : int
        Participants who identified the target difference with the pattern.
    n_pattern : int
        Participants in the pattern condition, ``n_pattern >= 1``.
    k_no_pattern : int
        Participants who identified it without the pattern.
    n_no_pattern : int
        Participants in the no-pattern condition, ``n_no_pattern >= 1``.
    alternative : {"larger", "smaller", "two-sided"}, default "larger"
        ``"larger"`` tests H1: rate with pattern > rate without.

    Returns
    -------
    ZTestResult
        ``z_val``, ``p_val`` and ``alternative``. Both numbers are NaN when
        the pooled proportion is 0 or 1 (the standard error is zero).

    Raises
    ------
    AnalysisInputError
        If a count is not a whole number, ``n < 1``, ``k`` is outside
        ``[0, n]``, or ``alternative`` is unknown.

    Notes
    -----
    Calls ``statsmodels.stats.proportion.proportions_ztest(
    count=[k_pattern, k_no_pattern], nobs=[n_pattern, n_no_pattern],
    alternative=alternative, prop_var=False)``, i.e.

    .. math:: z = \\frac{\\hat p_1 - \\hat p_2}
              {\\sqrt{\\bar p (1 - \\bar p)(1/n_1 + 1/n_2)}},
              \\quad \\bar p = \\frac{k_1 + k_2}{n_1 + n_2}

    with :math:`p = 1 - \\Phi(z)` for ``"larger"``.

    References
    ----------
    .. [1] Agresti, A. (2013). *Categorical Data Analysis* (3rd ed.),
       section 3.1.3. Wiley.

    Examples
    --------
    >>> r = two_proportion_ztest(15, 20, 6, 20)
    >>> round(r.z_val, 3), round(r.p_val, 4)
    (2.85, 0.0022)
    """
    k_pattern, n_pattern = _check_count(k_pattern, n_pattern, "pattern group")
    k_no_pattern, n_no_pattern = _check_count(k_no_pattern, n_no_pattern, "no-pattern group")
    _check_alternative(alternative, PROPORTION_ALTERNATIVES)
    with warnings.catch_warnings():
        # 0/0 when the pooled rate is 0 or 1; reported as NaN, not a warning.
        warnings.simplefilter("ignore", RuntimeWarning)
        z, p = proportions_ztest(
            count=[k_pattern, k_no_pattern],
            nobs=[n_pattern, n_no_pattern],
            alternative=alternative,
            prop_var=False,
        )
    z, p = float(z), float(p)
    if not math.isfinite(z):
        z, p = math.nan, math.nan
    return ZTestResult(z_val=z, p_val=p, alternative=alternative)


def wilson_ci(k: int, n: int, *, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score confidence interval for a proportion.

    Parameters
    ----------
    k : int
        Successes, ``0 <= k <= n``.
    n : int
        Trials (participants), ``n >= 1``.
    alpha : float, default 0.05
        One minus the confidence level (0.05 gives a 95% interval).

    Returns
    -------
    tuple of float
        ``(lo, hi)``, both in [0, 1].

    Raises
    ------
    AnalysisInputError
        If the counts or ``alpha`` are out of range.

    Notes
    -----
    Calls ``statsmodels.stats.proportion.proportion_confint(k, n,
    alpha=alpha, method="wilson")``. Unlike the Wald interval it stays inside
    [0, 1] and keeps its coverage for small n and rates near 0 or 1.

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession,
       and statistical inference. *JASA*, 22(158), 209-212.

    Examples
    --------
    >>> lo, hi = wilson_ci(15, 20)
    >>> round(lo, 3), round(hi, 3)
    (0.531, 0.888)
    """
    k, n = _check_count(k, n, "wilson_ci")
    alpha = _check_alpha(alpha)
    lo, hi = proportion_confint(k, n, alpha=alpha, method="wilson")
    return float(lo), float(hi)


def cohens_h(rate_pattern: float, rate_no_pattern: float) -> float:
    """Cohen's h effect size between two proportions.

    Parameters
    ----------
    rate_pattern : float
        Proportion with the pattern, in [0, 1].
    rate_no_pattern : float
        Proportion without the pattern, in [0, 1].

    Returns
    -------
    float
        ``h`` in [-pi, pi]; positive when ``rate_pattern`` is larger. Cohen's
        rough guide: 0.2 small, 0.5 medium, 0.8 large.

    Raises
    ------
    AnalysisInputError
        If a rate is outside [0, 1].

    Notes
    -----
    Calls ``statsmodels.stats.proportion.proportion_effectsize(rate_pattern,
    rate_no_pattern)``, which computes
    :math:`h = 2\\arcsin\\sqrt{p_1} - 2\\arcsin\\sqrt{p_2}`.

    References
    ----------
    .. [1] Cohen, J. (1988). *Statistical Power Analysis for the Behavioral
       Sciences* (2nd ed.), chapter 6. Erlbaum.

    Examples
    --------
    >>> round(cohens_h(0.75, 0.30), 3)
    0.935
    """
    for name, value in (("rate_pattern", rate_pattern), ("rate_no_pattern", rate_no_pattern)):
        if not 0.0 <= float(value) <= 1.0:
            raise AnalysisInputError(f"{name} must be in [0, 1], got {value!r}")
    return float(proportion_effectsize(float(rate_pattern), float(rate_no_pattern)))


def fisher_exact_test(
    k_pattern: int,
    n_pattern: int,
    k_no_pattern: int,
    n_no_pattern: int,
    *,
    alternative: str = "larger",
) -> FisherResult:
    """Fisher's exact test on the 2x2 table condition x identified.

    Parameters
    ----------
    k_pattern, n_pattern : int
        Successes and participants with the pattern.
    k_no_pattern, n_no_pattern : int
        Successes and participants without the pattern.
    alternative : {"larger", "smaller", "two-sided"}, default "larger"
        ``"larger"``: the odds of success are higher with the pattern.

    Returns
    -------
    FisherResult
        ``odds_ratio``, ``p_val`` and ``alternative``.

    Raises
    ------
    AnalysisInputError
        If the counts are out of range or ``alternative`` is unknown.

    Notes
    -----
    Calls ``scipy.stats.fisher_exact([[k_p, n_p - k_p], [k_np, n_np - k_np]],
    alternative=...)`` with ``"larger"`` mapped to ``"greater"`` and
    ``"smaller"`` to ``"less"``. Reported as a small-sample check on the
    z-test, whose normal approximation is rough for small groups.

    References
    ----------
    .. [1] Fisher, R. A. (1935). The logic of inductive inference. *JRSS*,
       98(1), 39-82.

    Examples
    --------
    >>> round(fisher_exact_test(15, 20, 6, 20).p_val, 4)
    0.0052
    """
    k_pattern, n_pattern = _check_count(k_pattern, n_pattern, "pattern group")
    k_no_pattern, n_no_pattern = _check_count(k_no_pattern, n_no_pattern, "no-pattern group")
    _check_alternative(alternative, PROPORTION_ALTERNATIVES)
    table = [[k_pattern, n_pattern - k_pattern], [k_no_pattern, n_no_pattern - k_no_pattern]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = sps.fisher_exact(table, alternative=_FISHER_ALTERNATIVE[alternative])
    return FisherResult(
        odds_ratio=float(res.statistic), p_val=float(res.pvalue), alternative=alternative
    )


def compare_proportions(
    k_pattern: int,
    n_pattern: int,
    k_no_pattern: int,
    n_no_pattern: int,
    *,
    alternative: str = "larger",
    alpha: float = 0.05,
) -> ProportionComparison:
    """Rates, Wilson CIs, z-test, Cohen's h and Fisher's test for one pair.

    Parameters
    ----------
    k_pattern, n_pattern : int
        Successes and participants with the pattern.
    k_no_pattern, n_no_pattern : int
        Successes and participants without the pattern.
    alternative : {"larger", "smaller", "two-sided"}, default "larger"
        Alternative of the z-test and of Fisher's test.
    alpha : float, default 0.05
        One minus the confidence level of the Wilson intervals.

    Returns
    -------
    ProportionComparison
        All fields documented on :class:`ProportionComparison`.

    Raises
    ------
    AnalysisInputError
        If the counts, ``alternative`` or ``alpha`` are out of range.

    Notes
    -----
    Combines :func:`two_proportion_ztest`, :func:`wilson_ci`,
    :func:`cohens_h` and :func:`fisher_exact_test`.

    References
    ----------
    .. [1] Agresti, A. (2013). *Categorical Data Analysis* (3rd ed.). Wiley.

    Examples
    --------
    >>> c = compare_proportions(15, 20, 6, 20)
    >>> c.rate_pattern, c.rate_no_pattern, round(c.cohens_h, 2)
    (0.75, 0.3, 0.94)
    """
    z = two_proportion_ztest(k_pattern, n_pattern, k_no_pattern, n_no_pattern, alternative=alternative)
    fisher = fisher_exact_test(
        k_pattern, n_pattern, k_no_pattern, n_no_pattern, alternative=alternative
    )
    rate_p, rate_np = k_pattern / n_pattern, k_no_pattern / n_no_pattern
    return ProportionComparison(
        k_pattern=int(k_pattern),
        n_pattern=int(n_pattern),
        k_no_pattern=int(k_no_pattern),
        n_no_pattern=int(n_no_pattern),
        rate_pattern=rate_p,
        rate_no_pattern=rate_np,
        ci_pattern=wilson_ci(k_pattern, n_pattern, alpha=alpha),
        ci_no_pattern=wilson_ci(k_no_pattern, n_no_pattern, alpha=alpha),
        z_val=z.z_val,
        p_val=z.p_val,
        alternative=alternative,
        cohens_h=cohens_h(rate_p, rate_np),
        fisher_p=fisher.p_val,
        fisher_odds_ratio=fisher.odds_ratio,
    )


# --------------------------------------------------------------------------
# rank tests for Likert items
# --------------------------------------------------------------------------
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
    x = _as_sample(pattern, "pattern responses")
    y = _as_sample(no_pattern, "no-pattern responses")
    _check_alternative(alternative, RANK_ALTERNATIVES)
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
    x = _as_sample(pattern, "pattern responses")
    y = _as_sample(no_pattern, "no-pattern responses")
    if x.size != y.size:
        raise AnalysisInputError(
            f"paired samples differ in length: {x.size} pattern vs {y.size} no-pattern responses"
        )
    _check_alternative(alternative, RANK_ALTERNATIVES)
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


# --------------------------------------------------------------------------
# multiple testing and planning
# --------------------------------------------------------------------------
def holm_correction(p_values, *, alpha: float = 0.05) -> HolmResult:
    """Holm step-down correction across one family of tests.

    Parameters
    ----------
    p_values : array_like of float, shape (m,)
        Unadjusted p-values. ``None`` or NaN entries (undefined tests) are
        left out of the family and come back as NaN / not rejected.
    alpha : float, default 0.05
        Family-wise error rate.

    Returns
    -------
    HolmResult
        ``p_adjusted`` and ``reject`` (both shape (m,), input order) and
        ``alpha``.

    Raises
    ------
    AnalysisInputError
        If a p-value is outside [0, 1] or ``alpha`` is out of range.

    Notes
    -----
    Calls ``statsmodels.stats.multitest.multipletests(p, alpha=alpha,
    method="holm")`` on the defined p-values. With sorted
    :math:`p_{(1)} \\le \\dots \\le p_{(m)}`, the adjusted values are
    :math:`\\max_{j \\le i} \\min(1, (m - j + 1) p_{(j)})`.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. *Scandinavian Journal of Statistics*, 6(2), 65-70.

    Examples
    --------
    >>> holm_correction([0.01, 0.04, 0.03]).p_adjusted.round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    alpha = _check_alpha(alpha)
    p = np.array([math.nan if v is None else float(v) for v in p_values], dtype=float)
    defined = ~np.isnan(p)
    if ((p[defined] < 0) | (p[defined] > 1)).any():
        raise AnalysisInputError(f"p-values must be in [0, 1], got {p[defined].tolist()}")
    p_adjusted = np.full(p.shape, math.nan)
    reject = np.zeros(p.shape, dtype=bool)
    if defined.any():
        rej, p_adj, _, _ = multipletests(p[defined], alpha=alpha, method="holm")
        p_adjusted[defined] = p_adj
        reject[defined] = rej
    return HolmResult(p_adjusted=p_adjusted, reject=reject, alpha=alpha)


def sample_size_per_condition(
    rate_pattern: float,
    rate_no_pattern: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "larger",
) -> int:
    """Participants per condition needed to detect a difference in rates.

    Parameters
    ----------
    rate_pattern : float
        Expected identification rate with the pattern, in [0, 1].
    rate_no_pattern : float
        Expected rate without it, in [0, 1].
    alpha : float, default 0.05
        Significance level.
    power : float, default 0.8
        Desired power, in (0, 1).
    alternative : {"larger", "smaller", "two-sided"}, default "larger"
        Alternative of the planned z-test.

    Returns
    -------
    int
        Participants needed in *each* condition (equal groups), rounded up.

    Raises
    ------
    AnalysisInputError
        If a rate is outside [0, 1], the rates are equal, the expected
        difference points against a one-sided ``alternative``, or ``alpha`` /
        ``power`` is out of range.

    Notes
    -----
    Uses ``statsmodels.stats.power.NormalIndPower().solve_power(
    effect_size=h, alpha=alpha, power=power, ratio=1.0,
    alternative=alternative)`` with Cohen's h from :func:`cohens_h`. For a
    one-sided test this is :math:`n = 2((z_{1-\\alpha} + z_{power}) / h)^2`.
    In the reference design every participant contributes one observation
    to each condition (one per setting), so this is also the number of
    participants per setting in each condition.

    References
    ----------
    .. [1] Cohen, J. (1988). *Statistical Power Analysis for the Behavioral
       Sciences* (2nd ed.), chapter 6. Erlbaum.

    Examples
    --------
    >>> sample_size_per_condition(0.6, 0.3)
    33
    """
    _check_alternative(alternative, PROPORTION_ALTERNATIVES)
    alpha = _check_alpha(alpha)
    power = _check_alpha(power, "power")
    h = cohens_h(rate_pattern, rate_no_pattern)
    if h == 0:
        raise AnalysisInputError("the two rates are equal; no sample size can detect a zero difference")
    if (alternative == "larger" and h < 0) or (alternative == "smaller" and h > 0):
        raise AnalysisInputError(
            f"alternative {alternative!r} contradicts the expected rates "
            f"({rate_pattern} with pattern, {rate_no_pattern} without)"
        )
    n = NormalIndPower().solve_power(
        effect_size=h, alpha=alpha, power=power, ratio=1.0, alternative=alternative
    )
    # Guard against float noise just above a whole number (e.g. 33.0000000001 -> 34).
    return math.ceil(float(np.squeeze(n)) - 1e-9)


# --------------------------------------------------------------------------
# descriptive summaries on long-format responses
# --------------------------------------------------------------------------
def _check_columns(df: pd.DataFrame, columns: Sequence[str], label: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise AnalysisInputError(f"{label} is missing column(s): {', '.join(missing)}")


def time_on_task(
    responses: pd.DataFrame,
    *,
    setting_col: str = "setting",
    condition_col: str = "condition",
    time_col: str = "time_on_task_ms",
) -> pd.DataFrame:
    """Time on task per setting x condition, in seconds.

    Parameters
    ----------
    responses : pandas.DataFrame, shape (n_rows, >=3)
        Long format, one row per participant x setting, included participants
        only. ``time_col`` holds numbers in milliseconds.
    setting_col, condition_col, time_col : str
        Column names.

    Returns
    -------
    pandas.DataFrame
        One row per (setting, condition), sorted, with columns ``setting``,
        ``condition``, ``n`` (int), ``mean_s``, ``median_s`` and ``sd_s``
        (float seconds; ``sd_s`` is NaN when ``n == 1``).

    Raises
    ------
    AnalysisInputError
        If a column is missing or a time is missing, not numeric or negative.

    Notes
    -----
    pandas ``groupby(...).agg(mean, median, std)`` on ``time_ms / 1000``.
    ``sd_s`` is the sample standard deviation (``ddof=1``).

    References
    ----------
    .. [1] Hedderich et al. (2025). What's the Difference? Supporting Users
       in Identifying the Effects of Prompt and Model Changes Through Token
       Patterns. ACL 2025 (reports the same three statistics).

    Examples
    --------
    >>> df = pd.DataFrame({"setting": ["doctor"] * 3, "condition": ["pattern"] * 3,
    ...                    "time_on_task_ms": [60000, 90000, 120000]})
    >>> time_on_task(df)[["n", "mean_s", "median_s", "sd_s"]].iloc[0].tolist()
    [3.0, 90.0, 90.0, 30.0]
    """
    _check_columns(responses, [setting_col, condition_col, time_col], "responses")
    seconds = pd.to_numeric(responses[time_col], errors="coerce") / 1000.0
    if seconds.isna().any() or (seconds < 0).any():
        raise AnalysisInputError(f"{time_col} must hold non-negative numbers of milliseconds")
    frame = pd.DataFrame(
        {"setting": responses[setting_col].astype(str), "condition": responses[condition_col].astype(str), "s": seconds}
    )
    out = (
        frame.groupby(["setting", "condition"], sort=True)["s"]
        .agg(n="count", mean_s="mean", median_s="median", sd_s="std")
        .reset_index()
    )
    out["n"] = out["n"].astype(int)
    return out


def other_differences(
    responses: pd.DataFrame,
    *,
    setting_col: str = "setting",
    condition_col: str = "condition",
    outcome_col: str = "other_difference",
) -> pd.DataFrame:
    """Share of participants reporting other differences, per setting x condition.

    Parameters
    ----------
    responses : pandas.DataFrame, shape (n_rows, >=3)
        Long format, one row per participant x setting, included participants
        only. ``outcome_col`` holds 0/1.
    setting_col, condition_col, outcome_col : str
        Column names. Pass ``outcome_col="no_difference"`` or
        ``"identified"`` for the other annotated outcomes.

    Returns
    -------
    pandas.DataFrame
        One row per (setting, condition), sorted, with columns ``setting``,
        ``condition``, ``n`` (int), ``k`` (int, participants with outcome 1)
        and ``share`` (float in [0, 1]).

    Raises
    ------
    AnalysisInputError
        If a column is missing or an outcome is not 0/1.

    Notes
    -----
    ``share = k / n`` via pandas ``groupby(...).agg(count, sum)``.

    References
    ----------
    .. [1] Hedderich et al. (2025), ACL 2025, section on non-systematic
       differences.

    Examples
    --------
    >>> df = pd.DataFrame({"setting": ["farming"] * 4, "condition": ["no_pattern"] * 4,
    ...                    "other_difference": [1, 0, 1, 1]})
    >>> other_differences(df)[["n", "k", "share"]].iloc[0].tolist()
    [4.0, 3.0, 0.75]
    """
    _check_columns(responses, [setting_col, condition_col, outcome_col], "responses")
    values = pd.to_numeric(responses[outcome_col], errors="coerce")
    if not values.isin([0, 1]).all():
        raise AnalysisInputError(f"{outcome_col} must be 0 or 1 in every row")
    frame = pd.DataFrame(
        {"setting": responses[setting_col].astype(str), "condition": responses[condition_col].astype(str), "v": values.astype(int)}
    )
    out = (
        frame.groupby(["setting", "condition"], sort=True)["v"]
        .agg(n="count", k="sum")
        .reset_index()
    )
    out["n"] = out["n"].astype(int)
    out["k"] = out["k"].astype(int)
    out["share"] = out["k"] / out["n"]
    return out
