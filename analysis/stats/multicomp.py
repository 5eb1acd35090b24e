"""Correction for multiple testing within one family of tests (Holm)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from statsmodels.stats.multitest import multipletests

from ..errors import AnalysisInputError
from ._checks import check_alpha

__all__ = ["HolmResult", "holm_correction"]


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
    alpha = check_alpha(alpha)
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
