"""Krippendorff's alpha at the nominal, ordinal or interval level, through NLTK (Apache-2.0).

:mod:`analysis.stats.agreement` checks and codes the ratings and decides when alpha is
undefined; this module only hands a table of ratings to NLTK's ``AnnotationTask`` with the
distance of the level:

- nominal: ``nltk.metrics.distance.binary_distance`` (0 when equal, 1 otherwise);
- interval: ``nltk.metrics.distance.interval_distance``, ``(c - k) ** 2``;
- ordinal: Krippendorff's ordinal distance (2011, p. 6), which depends on how often each value
  was used, so it is built from the table's value frequencies by :func:`ordinal_distance` and
  passed to NLTK like the others.

The ``krippendorff`` package gave these numbers before (it is GPL-3.0, which does not fit the
project's MIT licence); ``tests/analysis/test_agreement_alpha.py`` checks that NLTK gives its
alpha to 1e-12 on 360 seeded tables at the three levels and Krippendorff's own worked example.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import AnalysisInputError

#: The levels of measurement alpha is computed for (Krippendorff 2011, section "Metrics").
LEVELS = ("nominal", "ordinal", "interval")


def check_level(level: str) -> str:
    """``level`` if it is one of :data:`LEVELS`; AnalysisInputError naming them otherwise."""
    if level not in LEVELS:
        raise AnalysisInputError(
            f"level must be one of {', '.join(LEVELS)}; got {level!r}."
        )
    return level


def numbers(values: list, level: str) -> np.ndarray | None:
    """The distinct rating values (in code order) as floats for an ordinal or interval alpha,
    ``None`` for nominal; AnalysisInputError if the level is unknown or a value is not a finite
    number (bool is refused: True is not a scale point)."""
    if check_level(level) == "nominal":
        return None
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise AnalysisInputError(
                f"{level} ratings must be finite numbers (or None), got {v!r}."
            )
    return np.array(values, dtype=float)


def scale(coded: np.ndarray, level: str, values: Sequence[float] | np.ndarray | None) -> np.ndarray:
    """The number each code of ``coded`` (int, -1 missing) stands for, as a float array indexed
    by code: ``values`` checked, or the codes themselves when it is ``None``. Empty for nominal
    ratings (numbers unused). AnalysisInputError if the level is unknown or a code has no
    finite number."""
    if check_level(level) == "nominal":
        return np.empty(0)
    highest = int(coded.max(initial=-1))
    if values is None:
        return np.arange(highest + 1, dtype=float)
    try:
        scale = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise AnalysisInputError(f"values must be numbers for {level} alpha.") from None
    if scale.ndim != 1 or len(scale) <= highest:
        raise AnalysisInputError(f"values must give a number for every code 0..{highest}.")
    if not np.isfinite(scale).all():
        raise AnalysisInputError(f"values must be finite numbers for {level} alpha.")
    return scale


def ordinal_distance(values: np.ndarray) -> Callable[[float, float], float]:
    """Krippendorff's ordinal distance for the pairable values of one table.

    Parameters
    ----------
    values : ndarray of float, shape (n,)
        Every rating on the items with two or more ratings (no NaN): their frequencies
        ``n_g`` weigh the distance.

    Returns
    -------
    callable
        ``distance(c, k)`` = ``(sum of n_g for g from c to k - (n_c + n_k) / 2) ** 2``, the
        values ordered by size; 0 for ``c == k``.

    References
    ----------
    K. Krippendorff (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School for
    Communication, University of Pennsylvania, p. 6 (the ordinal metric).
    """
    distinct, counts = np.unique(values, return_counts=True)
    rank = {float(v): i for i, v in enumerate(distinct)}
    # cumulative[i] is the number of values below the i-th distinct value, so a run of ranks
    # c..k holds cumulative[k + 1] - cumulative[c] values.
    cumulative = np.concatenate(([0.0], np.cumsum(counts, dtype=float)))

    def distance(c: float, k: float) -> float:
        i, j = sorted((rank[float(c)], rank[float(k)]))
        between = cumulative[j + 1] - cumulative[i]
        return float((between - (counts[i] + counts[j]) / 2.0) ** 2)

    return distance


def alpha(data: np.ndarray, *, level: str) -> float:
    """Krippendorff's alpha of a table of ratings, computed by NLTK.

    Parameters
    ----------
    data : ndarray of float, shape (n_annotators, n_items)
        Ratings as numbers, NaN where an annotator did not rate an item. For nominal data the
        numbers are codes (only equality matters); for ordinal data only their order matters;
        for interval data their differences. The caller keeps only items with two or more
        ratings and makes sure they hold at least two distinct values (alpha is otherwise
        undefined: :func:`analysis.stats.agreement.krippendorff_alpha` says so).
    level : {"nominal", "ordinal", "interval"}
        The level of measurement, which picks the distance.

    Returns
    -------
    float
        alpha = 1 - D_o / D_e, in (-inf, 1].

    Raises
    ------
    AnalysisInputError
        If ``level`` is not one of :data:`LEVELS`.

    Notes
    -----
    ``nltk.metrics.agreement.AnnotationTask(data=[(annotator, item, value), ...],
    distance=...).alpha()``, with one triple per rating present. NLTK sums the distances over
    the pairable values of each item (observed disagreement) and over all pairable values
    (expected disagreement), as the coincidence matrix of Krippendorff (2011) does.

    References
    ----------
    K. Krippendorff (2011). Computing Krippendorff's Alpha-Reliability.
    S. Bird, E. Klein, E. Loper (2009). Natural Language Processing with Python (NLTK).
    """
    check_level(level)
    from nltk.metrics.agreement import AnnotationTask
    from nltk.metrics.distance import binary_distance, interval_distance

    present = ~np.isnan(data)
    annotators, items = np.nonzero(present)
    ratings = data[present].tolist()
    triples = list(zip(annotators.tolist(), items.tolist(), ratings, strict=True))
    if level == "nominal":
        distance = binary_distance
    elif level == "interval":
        distance = interval_distance
    else:
        distance = ordinal_distance(data[present])
    return float(AnnotationTask(data=triples, distance=distance).alpha())
