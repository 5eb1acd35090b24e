"""Argument checks shared by the statistics modules (explicit messages, AnalysisInputError)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import AnalysisInputError

#: Alternatives for proportion tests, in statsmodels' spelling.
PROPORTION_ALTERNATIVES = ("larger", "smaller", "two-sided")
#: Alternatives for rank tests, in scipy's spelling.
RANK_ALTERNATIVES = ("greater", "less", "two-sided")


def check_count(k: int, n: int, label: str) -> tuple[int, int]:
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


def check_alternative(alternative: str, allowed: Sequence[str]) -> str:
    """Return ``alternative`` if it is one of ``allowed``, else raise AnalysisInputError."""
    if alternative not in allowed:
        raise AnalysisInputError(
            f"alternative must be one of {', '.join(allowed)}; got {alternative!r}"
        )
    return alternative


def check_alpha(alpha: float, name: str = "alpha") -> float:
    """Return ``alpha`` as a float if it is in (0, 1), else raise AnalysisInputError naming ``name``."""
    if not 0 < float(alpha) < 1:
        raise AnalysisInputError(f"{name} must be between 0 and 1 (exclusive), got {alpha!r}")
    return float(alpha)


def as_sample(values, label: str) -> np.ndarray:
    """``values`` as a 1-D float array; AnalysisInputError if empty, not 1-D or with NaN."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise AnalysisInputError(f"{label} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise AnalysisInputError(f"{label} is empty; at least one response is needed")
    if np.isnan(arr).any():
        raise AnalysisInputError(f"{label} contains missing values")
    return arr



def check_columns(df: pd.DataFrame, columns: Sequence[str], label: str) -> None:
    """Raise AnalysisInputError naming the columns of ``columns`` missing from ``df``."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise AnalysisInputError(f"{label} is missing column(s): {', '.join(missing)}")

