"""Sample-size planning for a study: participants per condition, dropout and cells.

Builds on :func:`analysis.stats.sample_size_per_condition` (statsmodels'
``NormalIndPower`` with Cohen's h) and adds what a researcher needs to
book a study: the inflation for participants who drop out or are excluded,
and the total rounded up so that every counterbalancing cell gets the same
number of participants.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .errors import AnalysisInputError
from .stats import cohens_h, sample_size_per_condition

__all__ = ["SamplePlan", "plan_sample_size"]

# The study's confirmatory identification tests are one-sided (higher rate with the pattern).
PLAN_ALTERNATIVE = "larger"


@dataclass(frozen=True)
class SamplePlan:
    """The result of :func:`plan_sample_size`; every count is a number of participants.

    Attributes
    ----------
    p_control, p_treatment : float
        Expected identification rates without and with the pattern.
    alpha, power, dropout : float
        The inputs, as used.
    alternative : str
        Always ``"larger"`` (the study's one-sided alternative).
    cohens_h : float
        Effect size :math:`2\\arcsin\\sqrt{p_1} - 2\\arcsin\\sqrt{p_0}`.
    n_per_condition : int
        What ``NormalIndPower`` gives for ``cohens_h``, rounded up.
    n_per_condition_with_dropout : int
        ``ceil(n_per_condition / (1 - dropout))``.
    conditions, cells : int
        Conditions compared and counterbalancing cells of the study.
    n_total : int
        Participants to recruit: ``n_per_condition_with_dropout * conditions``
        rounded up to a multiple of ``cells``.
    n_per_cell : int
        ``n_total / cells``.
    """

    p_control: float
    p_treatment: float
    alpha: float
    power: float
    dropout: float
    alternative: str
    cohens_h: float
    n_per_condition: int
    n_per_condition_with_dropout: int
    conditions: int
    cells: int
    n_total: int
    n_per_cell: int

    def as_dict(self) -> dict:
        """The plan as a plain dict with the attribute names as keys (for JSON)."""
        return asdict(self)


def _check_rate(value: float, name: str) -> float:
    value = float(value)
    if not 0 < value < 1:
        raise AnalysisInputError(f"{name} must be a proportion strictly between 0 and 1, got {value:g}")
    return value


def _check_whole(value: int, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not float(value).is_integer() or int(value) < minimum:
        raise AnalysisInputError(f"{name} must be a whole number of at least {minimum}, got {value!r}")
    return int(value)


def plan_sample_size(
    p_control: float,
    p_treatment: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    dropout: float = 0.0,
    cells: int = 1,
    conditions: int = 2,
) -> SamplePlan:
    """Participants needed per condition and in total for the one-sided identification test.

    Parameters
    ----------
    p_control : float
        Expected identification rate without the pattern (``no_pattern``), in (0, 1).
    p_treatment : float
        Expected rate with the pattern, in (0, 1) and larger than ``p_control``.
    alpha : float, default 0.05
        One-sided significance level, in (0, 1).
    power : float, default 0.8
        Desired power, in (0, 1).
    dropout : float, default 0.0
        Expected share of participants lost (dropped out or excluded), in [0, 1).
    cells : int, default 1
        Counterbalancing cells of the study; the total is a multiple of it.
    conditions : int, default 2
        Conditions of the study. Every participant sees each setting once, in one
        condition, so each setting needs ``n`` participants in each condition.

    Returns
    -------
    SamplePlan
        See its attributes.

    Raises
    ------
    AnalysisInputError
        If a rate is not strictly between 0 and 1, ``p_treatment <= p_control``
        (the one-sided test cannot detect that), ``dropout`` is outside [0, 1),
        ``alpha`` or ``power`` is outside (0, 1), ``cells`` < 1 or
        ``conditions`` < 2.

    Notes
    -----
    ``n_per_condition`` comes from :func:`analysis.stats.sample_size_per_condition`,
    i.e. ``statsmodels.stats.power.NormalIndPower().solve_power(effect_size=h,
    alpha=alpha, power=power, ratio=1, alternative="larger")`` with Cohen's h from
    ``statsmodels.stats.proportion.proportion_effectsize``. The dropout inflation
    ``n / (1 - dropout)`` is the usual correction for attrition (Chow, Shao & Wang 2008,
    section 1.3).

    References
    ----------
    .. [1] Cohen, J. (1988). *Statistical Power Analysis for the Behavioral Sciences*
       (2nd ed.), chapter 6 (Table 6.4.1). Erlbaum.
    .. [2] Chow, S.-C., Shao, J. & Wang, H. (2008). *Sample Size Calculations in
       Clinical Research* (2nd ed.). Chapman & Hall/CRC.

    Examples
    --------
    >>> plan = plan_sample_size(0.3, 0.6, dropout=0.1, cells=4)
    >>> plan.n_per_condition, plan.n_per_condition_with_dropout, plan.n_total
    (33, 37, 76)
    """
    p_control = _check_rate(p_control, "p_control")
    p_treatment = _check_rate(p_treatment, "p_treatment")
    if p_treatment <= p_control:
        raise AnalysisInputError(
            f"p_treatment ({p_treatment:g}) must be larger than p_control ({p_control:g}): "
            "the study's test is one-sided (higher identification rate with the pattern)"
        )
    dropout = float(dropout)
    if not 0 <= dropout < 1:
        raise AnalysisInputError(f"dropout must be in [0, 1), got {dropout:g}")
    cells = _check_whole(cells, "cells", 1)
    conditions = _check_whole(conditions, "conditions", 2)
    n = sample_size_per_condition(
        p_treatment, p_control, alpha=alpha, power=power, alternative=PLAN_ALTERNATIVE
    )
    # Float noise (33 / 0.9 * 0.9) must not add a participant; the 1e-9 matches stats.py.
    n_dropout = math.ceil(n / (1 - dropout) - 1e-9)
    n_total = cells * math.ceil(n_dropout * conditions / cells)
    return SamplePlan(
        p_control=p_control,
        p_treatment=p_treatment,
        alpha=float(alpha),
        power=float(power),
        dropout=dropout,
        alternative=PLAN_ALTERNATIVE,
        cohens_h=cohens_h(p_treatment, p_control),
        n_per_condition=n,
        n_per_condition_with_dropout=n_dropout,
        conditions=conditions,
        cells=cells,
        n_total=n_total,
        n_per_cell=n_total // cells,
    )
