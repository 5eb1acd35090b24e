"""Simulation-based power for a whole study design.

The closed-form planner (:mod:`analysis.planning`) answers one question: how many
participants per condition one z-test needs. A study runs several such tests, Holm-corrected,
on groups whose sizes come out of counterbalancing, dropouts and exclusions. This module
simulates that whole pipeline many times and counts how often the preregistered
identification tests reject.

One run:

1. **Assignment.** Places for ``n`` participants are open. Every arrival is assigned to the
   least-filled cell, ties broken uniformly at random (as
   ``spotlight_study.participation.assignment.assignment_create`` does); a participant in
   progress holds a place.
2. **Dropouts.** Each participant in progress drops out with probability ``dropout`` and
   frees the place; new arrivals fill the freed places (again least-filled first) until ``n``
   participants have completed.
3. **Exclusions.** Each completed participant is excluded with probability
   ``exclusion_rate``. An excluded participant keeps the place (the study does not recruit a
   replacement), so the analysed N falls below ``n``.
4. **Outcomes.** In every main setting each analysed participant identifies the target with
   probability ``p_treatment`` if the setting is shown in a pattern condition
   (``pattern`` or ``pattern_with_distractors``), else ``p_control``; outcomes are
   independent across participants and settings.
5. **Tests.** Per setting, each pattern condition against ``no_pattern``: the pooled
   one-sided two-proportion z-test (:func:`analysis.stats.two_proportion_ztest`), then Holm
   across all these comparisons (:func:`holm_reject`, the decisions of
   :func:`analysis.stats.holm_correction`), the family the analysis uses for identification.

Power is the share of runs in which a test is rejected; its Monte-Carlo standard error is
:math:`\\sqrt{\\hat p (1 - \\hat p) / R}`.

The cells are computed from the study file exactly as the platform does (Williams balanced
Latin square of the main settings times the rotation of the conditions); see
:mod:`analysis.design`. The command line (``python -m analysis simulate``) is in
:mod:`analysis.__main__`. This module never imports Django.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .design import DesignCell, design_cells
from .errors import AnalysisInputError
from .inputs import BASELINE_CONDITION, PATTERN_CONDITIONS
from .stats import two_proportion_ztest

__all__ = ["PowerEstimate", "SimulationResult", "holm_reject", "simulate_power"]

#: The study's confirmatory identification tests are one-sided (higher rate with the pattern).
SIMULATION_ALTERNATIVE = "larger"
#: Upper bounds that keep one call within seconds to minutes.
MAX_RUNS = 100_000
MAX_PARTICIPANTS = 100_000


@dataclass(frozen=True)
class PowerEstimate:
    """A simulated rejection rate.

    Attributes
    ----------
    power : float
        Share of runs in which the test (or event) occurred, in [0, 1].
    mc_se : float
        Monte-Carlo standard error ``sqrt(power * (1 - power) / runs)``.
    """

    power: float
    mc_se: float


@dataclass(frozen=True)
class SimulationResult:
    """Result of :func:`simulate_power`.

    Attributes
    ----------
    settings : tuple of str
        Main setting keys in definition order.
    conditions : tuple of str
        The study's conditions.
    n_cells : int
        Counterbalancing cells.
    n : int
        Participants who complete per run (the target).
    runs, seed : int
        Number of runs and the seed that reproduces them.
    p_control, p_treatment, dropout, exclusion_rate, alpha : float
        The inputs, as used.
    alternative : str
        Always ``"larger"``.
    comparisons : list of dict
        One entry per (setting, pattern condition) with keys ``setting``, ``treatment``,
        ``control`` (``"no_pattern"``), ``power`` and ``mc_se`` (Holm-rejected share),
        ``mean_n_treatment`` and ``mean_n_control`` (analysed participants per run).
    power_all, power_any : PowerEstimate
        Share of runs in which every comparison, or at least one, is rejected.
    mean_analysed, min_analysed, max_analysed : float
        Mean, smallest and largest number of analysed participants in a run (completed minus
        excluded).
    mean_arrivals, p95_arrivals : float
        Mean and 95th percentile of the arrivals needed for ``n`` completions.
    """

    settings: tuple[str, ...]
    conditions: tuple[str, ...]
    n_cells: int
    n: int
    runs: int
    seed: int
    p_control: float
    p_treatment: float
    dropout: float
    exclusion_rate: float
    alpha: float
    alternative: str
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    power_all: PowerEstimate = PowerEstimate(math.nan, math.nan)
    power_any: PowerEstimate = PowerEstimate(math.nan, math.nan)
    mean_analysed: float = math.nan
    min_analysed: float = math.nan
    max_analysed: float = math.nan
    mean_arrivals: float = math.nan
    p95_arrivals: float = math.nan

    def as_dict(self) -> dict[str, Any]:
        """The result as plain JSON-ready data (the shape of ``simulate --json``)."""
        return {
            "design": {"settings": list(self.settings), "conditions": list(self.conditions),
                       "n_cells": self.n_cells},
            "parameters": {"n": self.n, "runs": self.runs, "seed": self.seed,
                           "p_control": self.p_control, "p_treatment": self.p_treatment,
                           "dropout": self.dropout, "exclusion_rate": self.exclusion_rate,
                           "alpha": self.alpha, "alternative": self.alternative,
                           "correction": "holm"},
            "comparisons": [dict(c) for c in self.comparisons],
            "overall": {"all": {"power": self.power_all.power, "mc_se": self.power_all.mc_se},
                        "any": {"power": self.power_any.power, "mc_se": self.power_any.mc_se}},
            "participants": {"mean_analysed": self.mean_analysed,
                             "min_analysed": self.min_analysed, "max_analysed": self.max_analysed,
                             "mean_arrivals": self.mean_arrivals,
                             "p95_arrivals": self.p95_arrivals},
        }


# --------------------------------------------------------------------------
# simulation
# --------------------------------------------------------------------------
def _check_rate(value: float, name: str, *, upper_open: bool = False) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise AnalysisInputError(f"{name} must be a number, got {value!r}") from None
    if not (0.0 <= value < 1.0 if upper_open else 0.0 <= value <= 1.0):
        bound = "[0, 1)" if upper_open else "[0, 1]"
        raise AnalysisInputError(f"{name} must be in {bound}, got {value!r}")
    return value


def _check_whole(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise AnalysisInputError(f"{name} must be a whole number, got {value!r}")
    if not low <= int(value) <= high:
        raise AnalysisInputError(f"{name} must be between {low} and {high}, got {value}")
    return int(value)


def _check_level(alpha: Any) -> float:
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise AnalysisInputError(f"alpha must be a number, got {alpha!r}") from None
    if not 0.0 < alpha < 1.0:
        raise AnalysisInputError(f"alpha must be between 0 and 1 (exclusive), got {alpha!r}")
    return alpha


def _treatments_to_test(conditions: Sequence[str], *, n: int, n_cells: int) -> list[str]:
    """The pattern conditions to compare with no pattern; AnalysisInputError if the design
    cannot be simulated (too few participants for the cells, or nothing to compare)."""
    if n < n_cells:
        raise AnalysisInputError(
            f"n = {n} is below the {n_cells} counterbalancing cells; every cell needs a participant"
        )
    if BASELINE_CONDITION not in conditions:
        raise AnalysisInputError(f"the design has no {BASELINE_CONDITION} condition to compare with")
    treatments = [c for c in PATTERN_CONDITIONS if c in conditions]
    if not treatments:
        raise AnalysisInputError(
            f"the design has no pattern condition ({', '.join(PATTERN_CONDITIONS)}) to test"
        )
    return treatments


def _membership(cells: Sequence[DesignCell], group_index: dict[tuple[str, str], int]) -> np.ndarray:
    """(cells, groups) of 0/1: 1 where the participants of a cell are in a (setting, condition) group."""
    membership = np.zeros((len(cells), len(group_index)), dtype=np.int64)
    for cell in cells:
        for task in cell.tasks:
            membership[cell.index, group_index[task]] = 1
    return membership


def _fill_places(held: np.ndarray, open_places: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Assign arrivals one at a time to the least-filled cell, per run.

    ``held`` is (runs, cells), places held before; ``open_places`` is (runs,), arrivals to
    assign. Returns (runs, cells), the arrivals each cell received. A uniform jitter in [0, 1)
    added to whole-number counts makes ``argmin`` pick uniformly among the tied cells.
    """
    held = held.astype(float)
    added = np.zeros(held.shape, dtype=np.int64)
    remaining = open_places.copy()
    rows = np.arange(held.shape[0])
    while True:
        active = rows[remaining > 0]
        if active.size == 0:
            return added
        jitter = rng.random((active.size, held.shape[1]))
        chosen = np.argmin(held[active] + jitter, axis=1)
        held[active, chosen] += 1
        added[active, chosen] += 1
        remaining[active] -= 1


def _assign(n: int, n_cells: int, runs: int, dropout: float,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Completed participants per cell, (runs, cells), and arrivals per run, (runs,)."""
    completed = np.zeros((runs, n_cells), dtype=np.int64)
    arrivals = np.zeros(runs, dtype=np.int64)
    while True:
        open_places = n - completed.sum(axis=1)
        if not open_places.any():
            return completed, arrivals
        in_progress = _fill_places(completed, open_places, rng)
        arrivals += open_places
        # Dropouts free their places; the rest complete. Refill happens on the next pass.
        completed += in_progress - rng.binomial(in_progress, dropout)


def _ztest_p_values(tables: np.ndarray) -> np.ndarray:
    """One-sided p-values of the analysis' z-test for tables (runs, 4) of ``k_t, n_t, k_c, n_c``.

    Each distinct table is tested once with :func:`analysis.stats.two_proportion_ztest`;
    a table with an empty group gets NaN, as an undefined test does.
    """
    distinct, inverse = np.unique(tables, axis=0, return_inverse=True)
    p_distinct = np.array([
        two_proportion_ztest(k_t, n_t, k_c, n_c, alternative=SIMULATION_ALTERNATIVE).p_val
        if n_t >= 1 and n_c >= 1 else math.nan
        for k_t, n_t, k_c, n_c in distinct.tolist()
    ], dtype=float)
    return p_distinct[np.asarray(inverse).reshape(-1)]


def holm_reject(p_values: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down decisions for many families at once.

    Parameters
    ----------
    p_values : numpy.ndarray of float, shape (families, m)
        One family of p-values per row; NaN marks an undefined test.
    alpha : float
        Family-wise error rate, in (0, 1).

    Returns
    -------
    numpy.ndarray of bool, shape (families, m)
        Whether each hypothesis is rejected. NaN entries are never rejected and do not count
        towards the family size, as in :func:`analysis.stats.holm_correction`.

    Raises
    ------
    None

    Notes
    -----
    With the ``d`` defined p-values of a row sorted, :math:`p_{(1)} \\le \\dots \\le p_{(d)}`,
    hypotheses ``(1) .. (r)`` are rejected where ``r`` is the largest index with
    :math:`p_{(i)} \\le \\alpha / (d - i + 1)` for every ``i <= r``: the rule of statsmodels'
    ``multipletests(method="holm")``, which :func:`analysis.stats.holm_correction` calls for
    one family. It is reimplemented here for whole arrays because ``multipletests`` runs
    ``gc.collect()`` on every call, which makes thousands of calls take tens of seconds; a
    test checks that both give the same decisions.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics*, 6(2), 65-70.

    Examples
    --------
    >>> holm_reject(np.array([[0.01, 0.04, 0.03], [0.01, np.nan, 0.04]]), 0.05).tolist()
    [[True, False, False], [True, False, True]]
    """
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, axis=1, kind="stable")  # NaN sorts last
    sorted_p = np.take_along_axis(p, order, axis=1)
    defined = (~np.isnan(p)).sum(axis=1, keepdims=True)
    rank = np.arange(p.shape[1])[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        passes = (rank < defined) & (sorted_p <= alpha / (defined - rank))
    n_rejected = np.cumprod(passes, axis=1).sum(axis=1, keepdims=True)
    reject = np.zeros(p.shape, dtype=bool)
    np.put_along_axis(reject, order, rank < n_rejected, axis=1)
    return reject


def _estimate(hits: np.ndarray) -> PowerEstimate:
    p = float(np.mean(hits))
    return PowerEstimate(power=p, mc_se=math.sqrt(p * (1.0 - p) / hits.size))


def simulate_power(
    setting_keys: Sequence[str],
    conditions: Sequence[str],
    *,
    p_control: float,
    p_treatment: float,
    n: int,
    dropout: float = 0.0,
    exclusion_rate: float = 0.0,
    runs: int = 1000,
    seed: int | None = None,
    alpha: float = 0.05,
) -> SimulationResult:
    """Power of the preregistered identification tests, by simulating the whole design.

    Parameters
    ----------
    setting_keys : sequence of str
        Main setting keys in definition order.
    conditions : sequence of str
        The study's conditions; must hold ``no_pattern`` and at least one of ``pattern`` and
        ``pattern_with_distractors``.
    p_control : float
        Identification rate without a pattern, in [0, 1].
    p_treatment : float
        Identification rate in a pattern condition, in [0, 1]. Equal to ``p_control``, the
        "power" is the family-wise false-positive rate.
    n : int
        Participants who complete the study in each run, at least the number of cells.
    dropout : float, default 0
        Probability that a participant in progress drops out (returns or times out), in [0, 1).
    exclusion_rate : float, default 0
        Probability that a completed participant is excluded from the analysis, in [0, 1).
    runs : int, default 1000
        Simulated studies, ``1 .. 100000``.
    seed : int, optional
        Seed of ``numpy.random.default_rng``; drawn from fresh entropy (and reported) if None.
    alpha : float, default 0.05
        Family-wise level of the Holm correction, in (0, 1).

    Returns
    -------
    SimulationResult
        Power per comparison and overall with Monte-Carlo standard errors, plus the mean
        analysed N and the arrivals needed.

    Raises
    ------
    AnalysisInputError
        If a rate, ``dropout``, ``exclusion_rate`` or ``alpha`` is out of range, ``n`` or
        ``runs`` is not a whole number in range, ``n`` is below the number of cells, the
        design has nothing to compare, or the design itself is invalid.

    Notes
    -----
    The steps of a run are listed in the module docstring. Assignment loops over arrivals
    (vectorised over runs); outcomes are binomial draws per (setting, condition) group,
    which equals independent Bernoulli outcomes per participant. The z-test p-values come
    from :func:`analysis.stats.two_proportion_ztest` (statsmodels ``proportions_ztest``,
    ``alternative="larger"``), computed once per distinct table; Holm's decisions come from
    :func:`holm_reject`, for all runs at once. A comparison whose p-value is undefined (a group with no analysed
    participant, or a pooled rate of 0 or 1) is not rejected, as in the analysis.
    Outcomes of one participant in two settings are independent here; a positive
    correlation would leave the per-comparison power nearly unchanged and raise ``power_all``.

    References
    ----------
    .. [1] Morris, T. P., White, I. R., & Crowther, M. J. (2019). Using simulation studies to
       evaluate statistical methods. *Statistics in Medicine*, 38(11), 2074-2102 (Monte-Carlo
       standard error of a rejection rate, table 6).
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics*, 6(2), 65-70.

    Examples
    --------
    >>> r = simulate_power(["doctor", "farming"], ["no_pattern", "pattern"], p_control=0.3,
    ...                    p_treatment=0.6, n=48, runs=200, seed=1)
    >>> round(r.power_all.power, 2)  # doctest: +SKIP
    0.55
    """
    p_control = _check_rate(p_control, "p_control")
    p_treatment = _check_rate(p_treatment, "p_treatment")
    dropout = _check_rate(dropout, "dropout", upper_open=True)
    exclusion_rate = _check_rate(exclusion_rate, "exclusion_rate", upper_open=True)
    alpha = _check_level(alpha)
    runs = _check_whole(runs, "runs", 1, MAX_RUNS)
    cells = design_cells(setting_keys, conditions)
    n = _check_whole(n, "n", 1, MAX_PARTICIPANTS)
    treatments = _treatments_to_test(conditions, n=n, n_cells=len(cells))
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
    seed = _check_whole(seed, "seed", 0, 2**63 - 1)
    rng = np.random.default_rng(seed)

    setting_keys, conditions = list(setting_keys), list(conditions)
    groups = [(s, c) for s in setting_keys for c in conditions]
    group_index = {g: i for i, g in enumerate(groups)}
    membership = _membership(cells, group_index)

    completed, arrivals = _assign(n, len(cells), runs, dropout, rng)
    analysed = completed - rng.binomial(completed, exclusion_rate)
    group_n = analysed @ membership
    rates = np.array([p_treatment if c in PATTERN_CONDITIONS else p_control for _, c in groups])
    group_k = rng.binomial(group_n, rates)

    pairs = [(s, t) for s in setting_keys for t in treatments]
    t_cols = [group_index[(s, t)] for s, t in pairs]
    c_cols = [group_index[(s, BASELINE_CONDITION)] for s, _ in pairs]
    p_values = np.column_stack([
        _ztest_p_values(np.column_stack([group_k[:, t], group_n[:, t], group_k[:, c], group_n[:, c]]))
        for t, c in zip(t_cols, c_cols)
    ])
    reject = holm_reject(p_values, alpha)

    comparisons = []
    for j, (s, t) in enumerate(pairs):
        est = _estimate(reject[:, j])
        comparisons.append({
            "setting": s, "treatment": t, "control": BASELINE_CONDITION,
            "power": est.power, "mc_se": est.mc_se,
            "mean_n_treatment": float(group_n[:, t_cols[j]].mean()),
            "mean_n_control": float(group_n[:, c_cols[j]].mean()),
        })
    return SimulationResult(
        settings=tuple(setting_keys), conditions=tuple(conditions), n_cells=len(cells), n=n,
        runs=runs, seed=seed, p_control=p_control, p_treatment=p_treatment, dropout=dropout,
        exclusion_rate=exclusion_rate, alpha=alpha, alternative=SIMULATION_ALTERNATIVE,
        comparisons=comparisons,
        power_all=_estimate(reject.all(axis=1)), power_any=_estimate(reject.any(axis=1)),
        mean_analysed=float(analysed.sum(axis=1).mean()),
        min_analysed=float(analysed.sum(axis=1).min()),
        max_analysed=float(analysed.sum(axis=1).max()),
        mean_arrivals=float(arrivals.mean()),
        p95_arrivals=float(np.percentile(arrivals, 95)),
    )
