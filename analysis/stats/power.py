"""Sample size for the planned two-proportion z-test (closed form, statsmodels)."""

from __future__ import annotations

import math

import numpy as np
from statsmodels.stats.power import NormalIndPower

from ..errors import AnalysisInputError
from ._checks import PROPORTION_ALTERNATIVES, check_alpha, check_alternative
from .proportion import cohens_h

__all__ = ["sample_size_per_condition"]


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
       Sciences* (2nd ed.), chapter 6. Erlbaum. Table 6.4.1 gives n for one-tailed
       alpha = .05 (power .80: h = .2 -> 310, h = .5 -> 50).

    Examples
    --------
    >>> sample_size_per_condition(0.6, 0.3)
    33
    """
    check_alternative(alternative, PROPORTION_ALTERNATIVES)
    alpha = check_alpha(alpha)
    power = check_alpha(power, "power")
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
