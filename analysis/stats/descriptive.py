"""Descriptive summaries of long-format responses per setting x condition (pandas)."""

from __future__ import annotations

import pandas as pd

from ..errors import AnalysisInputError
from ._checks import check_columns

__all__ = ["other_differences", "time_on_task"]


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
    check_columns(responses, [setting_col, condition_col, time_col], "responses")
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
    check_columns(responses, [setting_col, condition_col, outcome_col], "responses")
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
