"""Tests and effect sizes for two proportions (pattern versus no pattern).

Every function delegates to statsmodels or scipy; this module checks the inputs, fixes the
direction of each comparison (always *pattern* versus *no pattern*) and returns plain
dataclasses with snake_case fields.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from scipy import stats as sps
from statsmodels.stats.proportion import (
    proportion_confint,
    proportion_effectsize,
    proportions_ztest,
)

from ..errors import AnalysisInputError
from ._checks import PROPORTION_ALTERNATIVES, check_alpha, check_alternative, check_count

__all__ = [
    "FisherResult",
    "ProportionComparison",
    "ZTestResult",
    "cohens_h",
    "compare_proportions",
    "fisher_exact_test",
    "two_proportion_ztest",
    "wilson_ci",
]

# scipy.stats.fisher_exact spells the one-sided alternatives differently.
_FISHER_ALTERNATIVE = {"larger": "greater", "smaller": "less", "two-sided": "two-sided"}

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


def _check_pair(
    k_pattern: int, n_pattern: int, k_no_pattern: int, n_no_pattern: int, alternative: str
) -> tuple[int, int, int, int]:
    """The two groups' counts as checked ints; AnalysisInputError on a bad count or alternative."""
    k_pattern, n_pattern = check_count(k_pattern, n_pattern, "pattern group")
    k_no_pattern, n_no_pattern = check_count(k_no_pattern, n_no_pattern, "no-pattern group")
    check_alternative(alternative, PROPORTION_ALTERNATIVES)
    return k_pattern, n_pattern, k_no_pattern, n_no_pattern


def two_proportion_ztest(
    k_pattern: int, n_pattern: int,
    k_no_pattern: int, n_no_pattern: int,
    *, alternative: str = "larger",
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
    k_pattern, n_pattern, k_no_pattern, n_no_pattern = _check_pair(
        k_pattern, n_pattern, k_no_pattern, n_no_pattern, alternative
    )
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
    k, n = check_count(k, n, "wilson_ci")
    alpha = check_alpha(alpha)
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
    k_pattern: int, n_pattern: int,
    k_no_pattern: int, n_no_pattern: int,
    *, alternative: str = "larger",
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
    k_pattern, n_pattern, k_no_pattern, n_no_pattern = _check_pair(
        k_pattern, n_pattern, k_no_pattern, n_no_pattern, alternative
    )
    table = [[k_pattern, n_pattern - k_pattern], [k_no_pattern, n_no_pattern - k_no_pattern]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = sps.fisher_exact(table, alternative=_FISHER_ALTERNATIVE[alternative])
    return FisherResult(
        odds_ratio=float(res.statistic), p_val=float(res.pvalue), alternative=alternative
    )


def compare_proportions(
    k_pattern: int, n_pattern: int,
    k_no_pattern: int, n_no_pattern: int,
    *, alternative: str = "larger", alpha: float = 0.05,
) -> ProportionComparison:
    """Rates, Wilson CIs, z-test, Cohen's h and Fisher's test for one pair.

    Parameters
    ----------
    k_pattern, n_pattern, k_no_pattern, n_no_pattern : int
        Successes and participants with and without the pattern, as in
        :func:`two_proportion_ztest`.
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
