"""Cohen's kappa with a bootstrap confidence interval, and the machine coder's decision rule.

:func:`kappa_with_ci` gives kappa of two raters with a paired percentile bootstrap interval
(``scipy.stats.bootstrap``); :func:`non_inferiority` applies the documented rule whether a machine
coder could replace a second human coder on one label (``docs/analysis.md``, "Machine coder").
Inputs follow :mod:`analysis.stats.agreement`: nominal ratings, ``None`` for a missing one.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import fmean

import numpy as np

from ..errors import AnalysisInputError
from .agreement import (
    Agreement,
    Statistic,
    agreement,
    cohen_kappa,
    common_items,
    undefined,
    validate_ratings,
    value_codes,
)

__all__ = [
    "MAX_DEGENERATE_SHARE",
    "KappaCI",
    "NonInferiority",
    "kappa_with_ci",
    "mean_pairwise_kappa",
    "non_inferiority",
    "pair_with_kappa_ci",
]


@dataclass(frozen=True)
class KappaCI:
    """Cohen's kappa of two raters with a bootstrap confidence interval.

    ``kappa``, ``ci_low`` and ``ci_high`` are each a :class:`Statistic`; ``n_items`` is the
    number of items both rated; ``confidence_level`` e.g. 0.95; ``n_resamples`` and ``seed``
    make the interval reproducible.
    """

    n_items: int
    kappa: Statistic
    ci_low: Statistic
    ci_high: Statistic
    confidence_level: float
    n_resamples: int
    seed: int


#: The largest share of bootstrap resamples without a kappa (0/0) that still gives an interval.
MAX_DEGENERATE_SHARE = 0.05


def _kappa_vectorized(a: np.ndarray, b: np.ndarray, n_codes: int, axis: int = -1) -> np.ndarray:
    """Cohen's kappa along ``axis`` of integer-coded ratings (NaN where chance agreement is 1)."""
    a = np.moveaxis(np.asarray(a), axis, -1)
    b = np.moveaxis(np.asarray(b), axis, -1)
    p_o = np.mean(a == b, axis=-1)
    p_e = sum(np.mean(a == c, axis=-1) * np.mean(b == c, axis=-1) for c in range(n_codes))
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (p_o - p_e) / (1.0 - p_e)
    return np.where(np.isclose(p_e, 1.0), np.nan, kappa)


def kappa_with_ci(
    rater_a: Sequence[Hashable | None],
    rater_b: Sequence[Hashable | None],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 20260101,
) -> KappaCI:
    """Cohen's kappa of two raters over the items both rated, with a paired bootstrap CI.

    Parameters
    ----------
    rater_a, rater_b : sequence, length n_items
        Nominal ratings, ``None`` where a rater did not rate the item.
    confidence_level : float
        In (0, 1).
    n_resamples : int
        Bootstrap resamples (at least 100).
    seed : int
        Seed of ``numpy.random.default_rng`` passed to scipy, so the interval is reproducible.

    Returns
    -------
    KappaCI
        ``kappa`` is undefined as in :func:`cohen_kappa`. The interval is undefined if kappa
        is, if fewer than 5 items were rated by both, or if more than
        :data:`MAX_DEGENERATE_SHARE` of the resamples have a single value (kappa 0/0), which
        happens with very few items or very little variation.

    Raises
    ------
    AnalysisInputError
        If the rows differ in length or the parameters are out of range.

    Notes
    -----
    ``scipy.stats.bootstrap((a, b), statistic, paired=True, vectorized=True,
    method="percentile", rng=default_rng(seed))``: items are resampled with replacement, each
    keeping both raters' ratings together (paired), and the interval is the percentile interval
    of the resampled kappas. Percentile rather than BCa, because BCa's jackknife fails on the
    degenerate leave-one-out samples that small pilot sets produce.

    References
    ----------
    B. Efron, R. J. Tibshirani (1993). An Introduction to the Bootstrap, ch. 13. Chapman & Hall.
    """
    from scipy.stats import bootstrap

    if not 0 < confidence_level < 1:
        raise AnalysisInputError("confidence_level must be between 0 and 1.")
    if n_resamples < 100:
        raise AnalysisInputError("n_resamples must be at least 100.")
    rows = validate_ratings([rater_a, rater_b])
    pairs = [(x, y) for x, y in zip(*rows, strict=True) if x is not None and y is not None]
    kappa = cohen_kappa([[x for x, _ in pairs], [y for _, y in pairs]]) if pairs else undefined(
        "the two raters rated no item in common"
    )

    def result(low: Statistic, high: Statistic) -> KappaCI:
        return KappaCI(len(pairs), kappa, low, high, confidence_level, n_resamples, seed)

    if not kappa.defined:
        return result(undefined("kappa is undefined"), undefined("kappa is undefined"))
    if len(pairs) < 5:
        reason = f"only {len(pairs)} items rated by both (a bootstrap needs at least 5)"
        return result(undefined(reason), undefined(reason))
    codes = value_codes(v for pair in pairs for v in pair)
    a = np.array([codes[x] for x, _ in pairs])
    b = np.array([codes[y] for _, y in pairs])
    res = bootstrap(
        (a, b),
        lambda x, y, axis=-1: _kappa_vectorized(x, y, len(codes), axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    resampled = np.asarray(res.bootstrap_distribution, dtype=float)
    degenerate = int(np.isnan(resampled).sum())
    if degenerate > MAX_DEGENERATE_SHARE * n_resamples:
        reason = (
            f"{degenerate} of {n_resamples} resamples have a single value (kappa 0/0): too few "
            "items or too little variation"
        )
        return result(undefined(reason), undefined(reason))
    alpha = (1 - confidence_level) / 2
    # scipy's percentile interval, over the resamples where kappa is defined.
    low, high = (float(q) for q in np.nanpercentile(resampled, [100 * alpha, 100 * (1 - alpha)]))
    return result(Statistic(low), Statistic(high))


@dataclass(frozen=True)
class NonInferiority:
    """The decision whether a machine coder could replace a second human coder on one label.

    ``non_inferior`` is ``True``/``False``, or ``None`` when it cannot be decided (``reason``
    says why). ``machine_ci_low`` is the lower bound of kappa(machine, final labels);
    ``human_kappa`` the human x human kappa it is held against; ``margin`` the allowed loss.
    ``statement`` is the decision in words.
    """

    non_inferior: bool | None
    machine_ci_low: float | None
    human_kappa: float | None
    margin: float
    statement: str
    reason: str = ""


def non_inferiority(
    *, field: str, machine_ci_low: Statistic, human_kappa: Statistic, margin: float = 0.1
) -> NonInferiority:
    """Apply the decision rule: non-inferior if ``machine_ci_low >= human_kappa - margin``.

    Parameters
    ----------
    field : str
        The label's name, for the statement.
    machine_ci_low : Statistic
        Lower bound of the bootstrap CI of kappa(machine, final labels).
    human_kappa : Statistic
        Kappa between human coders (the mean over pairs when there are several).
    margin : float
        The largest loss in kappa accepted, in kappa units, in [0, 1].

    Raises
    ------
    AnalysisInputError
        If ``margin`` is outside [0, 1].

    Notes
    -----
    A one-sided non-inferiority comparison in the sense of the CONSORT extension for
    non-inferiority trials (Piaggio et al. 2012, JAMA 308(24)): the whole lower CI bound must
    clear the reference minus the margin. The default margin of 0.1 is a convention of this
    project (half the width of one Landis & Koch 1977 band), not a published standard; choose
    and preregister your own.
    """
    if not 0 <= margin <= 1:
        raise AnalysisInputError("margin must be between 0 and 1.")
    if not machine_ci_low.defined or not human_kappa.defined:
        reason = (
            f"no CI for kappa(machine, final): {machine_ci_low.undefined_reason}"
            if not machine_ci_low.defined
            else f"no human x human kappa: {human_kappa.undefined_reason}"
        )
        return NonInferiority(
            None,
            machine_ci_low.value,
            human_kappa.value,
            margin,
            f"{field}: cannot decide whether the machine coder could replace a second human "
            f"coder ({reason}).",
            reason,
        )
    low, ref = machine_ci_low.value, human_kappa.value
    ok = low >= ref - margin
    verdict = "is non-inferior to" if ok else "is not shown to be non-inferior to"
    relation = ">=" if ok else "<"
    return NonInferiority(
        ok,
        low,
        ref,
        margin,
        f"{field}: the machine coder {verdict} a second human coder: the lower 95% bound of "
        f"kappa(machine, final) is {low:.3f} {relation} {ref:.3f} - {margin:g} = "
        f"{ref - margin:.3f} (human x human kappa minus the margin).",
    )


def pair_with_kappa_ci(
    row_a: Sequence[Hashable | None],
    row_b: Sequence[Hashable | None],
    *,
    n_resamples: int = 2000,
    seed: int = 20260101,
) -> tuple[Agreement, KappaCI]:
    """Agreement of two raters over the items both rated, and their kappa with a bootstrap CI.

    Parameters
    ----------
    row_a, row_b : sequence, length n_items
        Nominal ratings, ``None`` where a rater did not rate the item.
    n_resamples, seed : int
        Of the bootstrap (:func:`kappa_with_ci`).

    Returns
    -------
    (Agreement, KappaCI)
        :func:`agreement` and :func:`kappa_with_ci` of :func:`common_items` of the two rows.

    Raises
    ------
    AnalysisInputError
        As :func:`agreement` and :func:`kappa_with_ci`.
    """
    common_a, common_b = common_items(row_a, row_b)
    return (agreement([common_a, common_b]),
            kappa_with_ci(common_a, common_b, seed=seed, n_resamples=n_resamples))


def mean_pairwise_kappa(kappas: Sequence[float]) -> Statistic:
    """The human x human reference of the decision rule: the mean of pairwise Cohen's kappas.

    Parameters
    ----------
    kappas : sequence of float
        The defined kappas of every pair of human annotators.

    Returns
    -------
    Statistic
        Their mean (with one pair, its kappa); undefined when there is none.

    Notes
    -----
    Light's kappa for more than two raters: the arithmetic mean of the pairwise kappas.

    References
    ----------
    R. J. Light (1971). Measures of response agreement for qualitative data: some
    generalizations and alternatives. Psychological Bulletin 76(5), 365-377.
    """
    values = [float(k) for k in kappas]
    if not values:
        return undefined("no pair of human annotators has a defined kappa")
    return Statistic(fmean(values))
