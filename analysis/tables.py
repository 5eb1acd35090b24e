"""The tidy tables behind the report, one DataFrame per ``tables/<name>.csv``."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from . import stats
from .inputs import BASELINE_CONDITION, LIKERT_CONDITIONS, LIKERT_MAX, LIKERT_MIN, StudyData
from .pipeline import section_name
from .sample import describe_sample, sample_table

__all__ = ["LIKERT_LEVELS", "build_tables"]

#: The response levels of every Likert item, 1 to 5.
LIKERT_LEVELS = tuple(range(LIKERT_MIN, LIKERT_MAX + 1))


def build_tables(results: Mapping, data: StudyData) -> dict[str, pd.DataFrame]:
    """Tidy tables behind the report, one DataFrame per ``tables/<name>.csv``.

    Parameters
    ----------
    results : Mapping
        From :func:`analysis.compute_results` on the same ``data``.
    data : StudyData
        The validated data.

    Returns
    -------
    dict of str to pandas.DataFrame
        Keys and columns (rates and shares in [0, 1], times in seconds):

        - ``identification``: setting, n/k/rate/ci_lo/ci_hi for pattern and
          no_pattern, z, p, p_holm, alternative, cohens_h, fisher_p;
        - ``identification_with_distractors``: the same with the
          ``pattern_with_distractors`` group (empty without that group);
        - ``identification_rates``: setting, condition, n, k, rate, ci_lo,
          ci_hi (every condition; drawn in the figure);
        - ``identification_by_position``: setting, position, condition, n,
          k, rate (to inspect order effects);
        - ``time_on_task``: setting, condition, n, mean_s, median_s, sd_s;
        - ``outcomes``: setting, condition, n, then k_ and share_ for
          identified, other_difference and no_difference;
        - ``likert``: item, alternative, U, p, p_holm, rbc, n_pattern,
          n_no_pattern, median_pattern, median_no_pattern;
        - ``likert_with_distractors``: the same with the
          ``pattern_with_distractors`` answers (columns
          ``n_pattern_with_distractors``, ``median_pattern_with_distractors``);
        - ``likert_paired``: item, alternative, W, p, p_holm, n_pairs,
          n_nonzero;
        - ``likert_paired_with_distractors``: the same for the distractor
          condition;
        - ``likert_distribution``: item, condition, response, count, share;
        - ``background``: item, response, count, share;
        - ``exclusions``: reason, participants;
        - ``participants``: section, item, value: the figures of the report's Participants
          section (:func:`analysis.sample.sample_table`; counts only when ``results`` has no
          ``sample``).

    Raises
    ------
    KeyError
        If ``results`` lacks a section from :func:`analysis.compute_results`.

    Notes
    -----
    Every table is produced even when empty, so a re-run into the same
    output directory never leaves a stale table behind.

    References
    ----------
    .. [1] Wickham, H. (2014). Tidy data. *Journal of Statistical Software*,
       59(10).

    Examples
    --------
    >>> tables = build_tables(results, data)  # doctest: +SKIP
    >>> list(tables["time_on_task"].columns)  # doctest: +SKIP
    ['setting', 'condition', 'n', 'mean_s', 'median_s', 'sd_s']
    """
    resp, survey = data.responses, data.survey
    per_condition = survey[survey["condition"].isin(LIKERT_CONDITIONS)]
    distractors = "pattern_with_distractors"
    return {
        "identification": _comparison_rows(results, "identification", "pattern"),
        "identification_with_distractors": _comparison_rows(
            results, section_name("identification", distractors), distractors),
        "identification_rates": _identification_rates(resp, results["parameters"]["alpha"]),
        "identification_by_position": _identification_by_position(resp),
        "time_on_task": stats.time_on_task(resp),
        "outcomes": _outcomes(resp),
        "likert": _likert_rows(results, per_condition, "pattern"),
        "likert_with_distractors": _likert_rows(results, per_condition, distractors),
        "likert_paired": _paired_rows(results, "pattern"),
        "likert_paired_with_distractors": _paired_rows(results, distractors),
        "likert_distribution": _likert_distribution(results),
        "background": _background_rows(results),
        "exclusions": pd.DataFrame(list(results["exclusions"].items()), columns=["reason", "participants"]),
        "participants": sample_table(results.get("sample") or describe_sample(data, None)),
    }


# The tables of build_tables, in its order.
def _comparison_rows(results: Mapping, section: str, treatment: str) -> pd.DataFrame:
    """One row per setting of an identification section, with its Holm-adjusted p."""
    cols = ["setting"]
    for grp in (treatment, "no_pattern"):
        cols += [f"n_{grp}", f"k_{grp}", f"rate_{grp}", f"ci_{grp}_lo", f"ci_{grp}_hi"]
    cols += ["z", "p", "p_holm", "alternative", "cohens_h", "fisher_p"]
    rows = []
    for setting, r in results[section].items():
        row = {"setting": setting}
        for grp in (treatment, "no_pattern"):
            row.update({f"n_{grp}": r[f"n_{grp}"], f"k_{grp}": r[f"k_{grp}"],
                        f"rate_{grp}": r[f"rate_{grp}"], f"ci_{grp}_lo": r[f"ci_{grp}"][0],
                        f"ci_{grp}_hi": r[f"ci_{grp}"][1]})
        row.update({"z": r["z"], "p": r["p"], "p_holm": results["holm"][section][setting]["p_holm"],
                    "alternative": r["alternative"], "cohens_h": r["cohens_h"],
                    "fisher_p": r["fisher_p"]})
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def _identification_rates(resp: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Rate and Wilson interval of every setting x condition (the figure's bars)."""
    rates = []
    for (setting, condition), grp in resp.groupby(["setting", "condition"], sort=True):
        k, n = int(grp["identified"].sum()), len(grp)
        lo, hi = stats.wilson_ci(k, n, alpha=alpha)
        rates.append({"setting": setting, "condition": condition, "n": n, "k": k,
                      "rate": k / n, "ci_lo": lo, "ci_hi": hi})
    return pd.DataFrame(rates, columns=["setting", "condition", "n", "k", "rate", "ci_lo", "ci_hi"])


def _identification_by_position(resp: pd.DataFrame) -> pd.DataFrame:
    """Rates per setting x position x condition, to inspect order effects."""
    by_position = (resp.groupby(["setting", "position", "condition"], sort=True)["identified"]
                   .agg(n="count", k="sum").reset_index())
    by_position["rate"] = by_position["k"] / by_position["n"]
    return by_position[["setting", "position", "condition", "n", "k", "rate"]]


def _outcomes(resp: pd.DataFrame) -> pd.DataFrame:
    """k and share of each annotated outcome per setting x condition, side by side."""
    outcomes = None
    for outcome in ("identified", "other_difference", "no_difference"):
        df = stats.other_differences(resp, outcome_col=outcome).rename(
            columns={"k": f"k_{outcome}", "share": f"share_{outcome}"})
        outcomes = df if outcomes is None else outcomes.merge(df, on=["setting", "condition", "n"])
    return outcomes


def _likert_rows(results: Mapping, per_condition: pd.DataFrame, treatment: str) -> pd.DataFrame:
    """Mann-Whitney results per item of ``treatment`` versus no pattern, with the medians."""
    section = section_name("likert", treatment)
    cols = ["item", "alternative", "U", "p", "p_holm", "rbc", f"n_{treatment}", "n_no_pattern",
            f"median_{treatment}", "median_no_pattern"]
    rows = []
    for item, r in results[section].items():
        medians = {c: float(per_condition.loc[(per_condition["item"] == item)
                                              & (per_condition["condition"] == c), "response"].median())
                   for c in (treatment, BASELINE_CONDITION)}
        rows.append({"item": item, "alternative": r["alternative"], "U": r["U"], "p": r["p"],
                     "p_holm": results["holm"][section][item]["p_holm"], "rbc": r["rbc"],
                     f"n_{treatment}": r[f"n_{treatment}"], "n_no_pattern": r["n_no_pattern"],
                     f"median_{treatment}": medians[treatment],
                     "median_no_pattern": medians[BASELINE_CONDITION]})
    return pd.DataFrame(rows, columns=cols)


def _paired_rows(results: Mapping, treatment: str) -> pd.DataFrame:
    """Wilcoxon results per item of ``treatment`` versus no pattern."""
    section = section_name("likert_paired", treatment)
    rows = [{"item": item, "alternative": r["alternative"], "W": r["W"], "p": r["p"],
             "p_holm": results["holm"][section][item]["p_holm"],
             "n_pairs": r["n_pairs"], "n_nonzero": r["n_nonzero"]}
            for item, r in results[section].items()]
    return pd.DataFrame(rows, columns=["item", "alternative", "W", "p", "p_holm", "n_pairs", "n_nonzero"])


def _likert_distribution(results: Mapping) -> pd.DataFrame:
    """Count and share of each response level per item x condition."""
    dist_rows = []
    for item, by_condition in results["likert_distribution"].items():
        for condition, counts in by_condition.items():
            total = sum(counts.values())
            for level, count in counts.items():
                dist_rows.append({"item": item, "condition": condition, "response": int(level),
                                  "count": count, "share": count / total if total else math.nan})
    return pd.DataFrame(dist_rows, columns=["item", "condition", "response", "count", "share"])


def _background_rows(results: Mapping) -> pd.DataFrame:
    """Count and share of each response level per background item."""
    bg_rows = []
    for item, counts in results["background"].items():
        for level in LIKERT_LEVELS:
            count = counts[str(level)]
            bg_rows.append({"item": item, "response": level, "count": count,
                            "share": count / counts["n"] if counts["n"] else math.nan})
    return pd.DataFrame(bg_rows, columns=["item", "response", "count", "share"])
