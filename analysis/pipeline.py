"""From validated study data to ``results.json``, tables, figures and report."""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from . import stats
from .errors import AnalysisInputError
from .inputs import (
    BASELINE_CONDITION,
    LIKERT_CONDITIONS,
    LIKERT_MAX,
    LIKERT_MIN,
    PATTERN_CONDITIONS,
    RESPONSE_CONDITIONS,
    StudyData,
    load_export,
)

__all__ = [
    "BACKGROUND_ITEMS",
    "DEFAULT_LIKERT_ALTERNATIVES",
    "HOLM_FAMILIES",
    "section_name",
    "build_tables",
    "compute_results",
    "likert_alternatives_for",
    "run_analysis",
    "to_json",
]

#: Default one-sided alternatives (pattern versus no pattern) per Likert item.
DEFAULT_LIKERT_ALTERNATIVES = {"ease": "greater", "effort": "less", "confidence": "greater"}
#: Background items of the reference survey, in display order.
BACKGROUND_ITEMS = ("llm_use", "prompt_engineering", "programming", "data_analysis")
#: Alternative for per-condition items without a configured or default one.
FALLBACK_LIKERT_ALTERNATIVE = "two-sided"
_LIKERT_LEVELS = tuple(range(LIKERT_MIN, LIKERT_MAX + 1))
# Each pattern condition's comparisons with no_pattern live in their own results section; the
# plain pattern keeps the unsuffixed names of the reference design.
_SECTION_SUFFIX = {"pattern": "", "pattern_with_distractors": "_with_distractors"}
#: Holm families: each family corrects across every comparison of its sections (all settings or
#: items, and both pattern conditions against no_pattern).
HOLM_FAMILIES = {
    "identification": ("identification", "identification_with_distractors"),
    "likert": ("likert", "likert_with_distractors"),
    "likert_paired": ("likert_paired", "likert_paired_with_distractors"),
}


def section_name(base: str, treatment: str) -> str:
    """Results section holding the comparisons of ``treatment`` with ``no_pattern``.

    Parameters
    ----------
    base : {"identification", "likert", "likert_paired"}
        The kind of comparison.
    treatment : {"pattern", "pattern_with_distractors"}
        The pattern condition compared with ``no_pattern``.

    Returns
    -------
    str
        ``base`` for ``"pattern"`` (the reference design's section) and
        ``base + "_with_distractors"`` for ``"pattern_with_distractors"``.

    Raises
    ------
    KeyError
        If ``treatment`` is not a pattern condition.

    Notes
    -----
    Keeping ``pattern`` in the unsuffixed sections keeps ``results.json``
    of two-condition studies in the shape issue 4 documented.

    References
    ----------
    .. [1] ``docs/analysis.md``, section "results.json".

    Examples
    --------
    >>> section_name("likert", "pattern_with_distractors")
    'likert_with_distractors'
    """
    return base + _SECTION_SUFFIX[treatment]


# --------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------
def _clean(value):
    """Make ``value`` JSON-safe: numpy scalars to Python, tuples to lists, NaN/inf to None."""
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_clean(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def to_json(results: Mapping) -> str:
    """Serialise a results dict as strict JSON.

    Parameters
    ----------
    results : Mapping
        As returned by :func:`compute_results`; may hold numpy scalars and
        NaN.

    Returns
    -------
    str
        Indented JSON (2 spaces, UTF-8 text, trailing newline) in which every
        undefined or infinite float is ``null``.

    Raises
    ------
    ValueError
        Never for dicts from :func:`compute_results`; ``json.dumps`` is
        called with ``allow_nan=False`` as a guard.

    Notes
    -----
    Keys keep their insertion order, which follows the issue's documented
    shape.

    References
    ----------
    .. [1] RFC 8259, *The JavaScript Object Notation (JSON) Data Interchange
       Format* (NaN is not valid JSON).

    Examples
    --------
    >>> print(to_json({"z": float("nan")}), end="")
    {
      "z": null
    }
    """
    return json.dumps(_clean(results), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# --------------------------------------------------------------------------
# computing
# --------------------------------------------------------------------------
def _likert_alternatives(items: list[str], configured: Mapping[str, str] | None) -> dict[str, str]:
    merged = dict(DEFAULT_LIKERT_ALTERNATIVES)
    for item, alternative in (configured or {}).items():
        if alternative not in stats.RANK_ALTERNATIVES:
            raise AnalysisInputError(
                f"Likert alternative for item {item!r} must be one of "
                f"{', '.join(stats.RANK_ALTERNATIVES)}; got {alternative!r}"
            )
        merged[item] = alternative
    return {item: merged.get(item, FALLBACK_LIKERT_ALTERNATIVE) for item in items}


def likert_alternatives_for(items: list[str], configured: Mapping[str, str] | None = None) -> dict[str, str]:
    """The alternative each per-condition survey item is tested with.

    Parameters
    ----------
    items : list of str
        Item keys of the survey's per-condition items.
    configured : mapping of str to str, optional
        Overrides (``--likert-alternative``), as in :func:`compute_results`.

    Returns
    -------
    dict of str to str
        ``item -> "greater" | "less" | "two-sided"``: the configured value,
        else :data:`DEFAULT_LIKERT_ALTERNATIVES`, else two-sided.

    Raises
    ------
    AnalysisInputError
        If a configured alternative is not a rank-test alternative.

    Notes
    -----
    The same choice :func:`compute_results` makes, so a preregistered plan
    states exactly the alternatives the analysis will use.

    References
    ----------
    .. [1] ``docs/analysis.md``, section "Preregistration".

    Examples
    --------
    >>> likert_alternatives_for(["ease", "effort", "clarity"])
    {'ease': 'greater', 'effort': 'less', 'clarity': 'two-sided'}
    """
    return _likert_alternatives(list(items), configured)


def _ordered(values, preferred) -> list[str]:
    values = set(values)
    return [v for v in preferred if v in values] + sorted(values - set(preferred))


def _present(values: pd.Series, known) -> list[str]:
    """The values of ``known`` that occur in ``values``, in the order of ``known``."""
    found = set(values)
    return [v for v in known if v in found]


def _treatments(conditions: list[str]) -> list[str]:
    """Pattern conditions that can be compared: present, and with a no-pattern group to compare with."""
    if BASELINE_CONDITION not in conditions:
        return []
    return [c for c in PATTERN_CONDITIONS if c in conditions]


def _likert_comparison(treated: pd.Series, baseline: pd.Series, treatment: str,
                       alternative: str) -> tuple[dict, dict]:
    """Mann-Whitney and paired Wilcoxon entries of one item, ``treatment`` versus no pattern.

    Both Series hold responses indexed by participant.
    """
    mw = stats.mann_whitney(treated.to_numpy(), baseline.to_numpy(), alternative=alternative)
    between = {"U": mw.u_val, "p": mw.p_val, "alternative": mw.alternative, "rbc": mw.rbc,
               f"n_{treatment}": mw.n_pattern, "n_no_pattern": mw.n_no_pattern}
    both = sorted(set(treated.index) & set(baseline.index))
    if not both:
        return between, {"W": math.nan, "p": math.nan, "alternative": alternative,
                         "n_pairs": 0, "n_nonzero": 0}
    wx = stats.wilcoxon_paired(treated.loc[both].to_numpy(), baseline.loc[both].to_numpy(),
                               alternative=alternative)
    return between, {"W": wx.w_val, "p": wx.p_val, "alternative": wx.alternative,
                     "n_pairs": wx.n_pairs, "n_nonzero": wx.n_nonzero}


def _comparison_dict(c: stats.ProportionComparison, treatment: str) -> dict:
    """Flatten a comparison using ``treatment`` as the name of the pattern-side group."""
    out = {
        f"n_{treatment}": c.n_pattern,
        f"k_{treatment}": c.k_pattern,
        f"rate_{treatment}": c.rate_pattern,
        f"ci_{treatment}": list(c.ci_pattern),
        "n_no_pattern": c.n_no_pattern,
        "k_no_pattern": c.k_no_pattern,
        "rate_no_pattern": c.rate_no_pattern,
        "ci_no_pattern": list(c.ci_no_pattern),
        "z": c.z_val,
        "p": c.p_val,
        "alternative": c.alternative,
        "cohens_h": c.cohens_h,
        "fisher_p": c.fisher_p,
    }
    if treatment == "pattern":
        # The documented key order.
        keys = ["n_no_pattern", "n_pattern", "k_no_pattern", "k_pattern", "rate_no_pattern",
                "rate_pattern", "z", "p", "alternative", "ci_no_pattern", "ci_pattern",
                "cohens_h", "fisher_p"]
        out = {k: out[k] for k in keys}
    return out


def _holm_family(sections: Mapping[str, Mapping[str, Mapping]], alpha: float) -> dict[str, dict]:
    """Holm across every test of ``sections`` (one family); the result is split back per section."""
    keys = [(section, name) for section, entries in sections.items() for name in entries]
    holm = stats.holm_correction([sections[sec][name]["p"] for sec, name in keys], alpha=alpha)
    out: dict[str, dict] = {section: {} for section in sections}
    for i, (section, name) in enumerate(keys):
        out[section][name] = {"p": sections[section][name]["p"], "p_holm": holm.p_adjusted[i],
                              "reject": bool(holm.reject[i])}
    return out


def _software_versions() -> dict[str, str]:
    import matplotlib
    import scipy
    import statsmodels

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "scipy": scipy.__version__,
        "statsmodels": statsmodels.__version__,
        "matplotlib": matplotlib.__version__,
    }


def compute_results(
    data: StudyData,
    *,
    alternative: str = "larger",
    likert_alternatives: Mapping[str, str] | None = None,
    alpha: float = 0.05,
) -> dict:
    """Run every test and summary on validated study data.

    Parameters
    ----------
    data : StudyData
        From :func:`analysis.load_export` or :func:`analysis.prepare_data`.
    alternative : {"larger", "smaller", "two-sided"}, default "larger"
        Alternative of the identification z-tests and Fisher tests
        (``"larger"``: higher rate with the pattern).
    likert_alternatives : mapping of str to str, optional
        Per-item alternative (``"greater"``, ``"less"``, ``"two-sided"``) of
        the Mann-Whitney and Wilcoxon tests, overriding
        :data:`DEFAULT_LIKERT_ALTERNATIVES`. Items with neither are tested
        two-sided. Entries for items absent from the survey are ignored.
    alpha : float, default 0.05
        Level of the Wilson intervals (1 - alpha) and of the Holm
        correction.

    Returns
    -------
    dict
        The ``results.json`` content (documented in ``docs/analysis.md``):
        ``identification``, ``likert``, ``time_on_task``,
        ``other_differences``, ``exclusions`` and ``input_sha256`` in the
        issue's shape, followed by the additions
        ``identification_with_distractors``, ``likert_with_distractors``,
        ``likert_paired``, ``likert_paired_with_distractors``, ``holm``,
        ``no_difference``, ``likert_distribution``, ``background``,
        ``design``, ``participants``, ``input_files``, ``parameters`` and
        ``software``. Sections of a comparison the design does not have are
        empty dicts. Undefined statistics are NaN here and ``null`` after
        :func:`to_json`.

    Raises
    ------
    AnalysisInputError
        If ``alternative``, a Likert alternative or ``alpha`` is invalid.

    Notes
    -----
    The design is read from the data: any number of settings, and the
    conditions found among ``pattern``, ``no_pattern`` and
    ``pattern_with_distractors``. Each pattern condition present is compared
    with ``no_pattern`` in every setting
    (:func:`analysis.stats.compare_proportions`: one-sided two-proportion
    z-test by default, Wilson intervals, Cohen's h, Fisher's exact test):
    ``pattern`` in ``identification``, ``pattern_with_distractors`` in
    ``identification_with_distractors``. Per-condition survey items get, for
    each pattern condition present in the survey,
    :func:`analysis.stats.mann_whitney` against the ``no_pattern`` answers
    and :func:`analysis.stats.wilcoxon_paired` on participants who answered
    both (``likert``/``likert_paired`` for ``pattern``, the
    ``_with_distractors`` sections for the distractor condition). Without a
    ``no_pattern`` group, or without a pattern condition, no test is run
    and only descriptive numbers are reported.

    Holm corrections run within three families (:data:`HOLM_FAMILIES`):
    the identification tests across every setting and both pattern
    conditions, the Mann-Whitney tests across every item and both pattern
    conditions, and the Wilcoxon tests likewise. With only ``pattern`` and
    ``no_pattern`` this is the correction across settings (or items) of the
    reference design.

    References
    ----------
    .. [1] Hedderich et al. (2025). What's the Difference? Supporting Users
       in Identifying the Effects of Prompt and Model Changes Through Token
       Patterns. ACL 2025.
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. *Scandinavian Journal of Statistics*, 6(2), 65-70.

    Examples
    --------
    >>> results = compute_results(load_export("export/"))  # doctest: +SKIP
    >>> results["identification"]["doctor"]["alternative"]  # doctest: +SKIP
    'larger'
    """
    stats._check_alternative(alternative, stats.PROPORTION_ALTERNATIVES)
    alpha = stats._check_alpha(alpha)
    resp, survey = data.responses, data.survey
    settings = sorted(resp["setting"].unique())
    conditions = _present(resp["condition"], RESPONSE_CONDITIONS)
    treatments = _treatments(conditions)

    identification = {t: {} for t in PATTERN_CONDITIONS}
    for setting in settings:
        rows = resp[resp["setting"] == setting]
        base = rows.loc[rows["condition"] == BASELINE_CONDITION, "identified"]
        for treatment in treatments:
            group = rows.loc[rows["condition"] == treatment, "identified"]
            comparison = stats.compare_proportions(
                int(group.sum()), len(group), int(base.sum()), len(base),
                alternative=alternative, alpha=alpha,
            )
            identification[treatment][setting] = _comparison_dict(comparison, treatment)

    time_df = stats.time_on_task(resp)
    time_on_task = {
        s: {r.condition: {"mean_s": r.mean_s, "median_s": r.median_s, "sd_s": r.sd_s, "n": r.n}
            for r in time_df[time_df["setting"] == s].itertuples()}
        for s in settings
    }

    def shares(outcome: str) -> dict:
        df = stats.other_differences(resp, outcome_col=outcome)
        return {s: {r.condition: r.share for r in df[df["setting"] == s].itertuples()} for s in settings}

    per_condition = survey[survey["condition"].isin(LIKERT_CONDITIONS)]
    survey_conditions = _present(per_condition["condition"], LIKERT_CONDITIONS)
    survey_treatments = _treatments(survey_conditions)
    items = _ordered(per_condition["item"].unique(), DEFAULT_LIKERT_ALTERNATIVES)
    item_alternatives = _likert_alternatives(items, likert_alternatives)
    likert = {t: {} for t in PATTERN_CONDITIONS}
    likert_paired = {t: {} for t in PATTERN_CONDITIONS}
    likert_distribution = {}
    for item in items:
        answers = per_condition[per_condition["item"] == item]
        by_condition = {c: answers.loc[answers["condition"] == c].set_index("participant")["response"]
                        for c in survey_conditions}
        for treatment in survey_treatments:
            likert[treatment][item], likert_paired[treatment][item] = _likert_comparison(
                by_condition[treatment], by_condition[BASELINE_CONDITION], treatment,
                item_alternatives[item])
        likert_distribution[item] = {
            c: {str(level): int((by_condition[c] == level).sum()) for level in _LIKERT_LEVELS}
            for c in survey_conditions
        }

    bg = survey[survey["condition"] == "background"]
    background = {}
    for item in _ordered(bg["item"].unique(), BACKGROUND_ITEMS):
        values = bg.loc[bg["item"] == item, "response"]
        background[item] = {**{str(level): int((values == level).sum()) for level in _LIKERT_LEVELS},
                            "n": len(values)}

    sections = {}
    for base, by_treatment in (("identification", identification), ("likert", likert),
                               ("likert_paired", likert_paired)):
        for treatment in PATTERN_CONDITIONS:
            sections[section_name(base, treatment)] = by_treatment[treatment]
    holm: dict[str, dict] = {}
    for family in HOLM_FAMILIES.values():
        holm.update(_holm_family({name: sections[name] for name in family}, alpha))
    holm = {name: holm[name] for name in sections}

    n_excluded = int(sum(data.exclusions.values()))
    return {
        "identification": sections["identification"],
        "likert": sections["likert"],
        "time_on_task": time_on_task,
        "other_differences": shares("other_difference"),
        "exclusions": dict(data.exclusions),
        "input_sha256": data.input_sha256,
        "identification_with_distractors": sections["identification_with_distractors"],
        "likert_with_distractors": sections["likert_with_distractors"],
        "likert_paired": sections["likert_paired"],
        "likert_paired_with_distractors": sections["likert_paired_with_distractors"],
        "holm": holm,
        "no_difference": shares("no_difference"),
        "likert_distribution": likert_distribution,
        "background": background,
        "design": {"settings": settings, "conditions": conditions,
                   "compared": [[t, BASELINE_CONDITION] for t in treatments],
                   "survey_conditions": survey_conditions,
                   "survey_compared": [[t, BASELINE_CONDITION] for t in survey_treatments]},
        "participants": {"total": data.n_participants, "included": data.n_included,
                         "excluded": n_excluded},
        "input_files": dict(data.file_sha256),
        "parameters": {"alpha": alpha, "identification_alternative": alternative,
                       "likert_alternatives": item_alternatives},
        "software": _software_versions(),
    }


# --------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------
def build_tables(results: Mapping, data: StudyData) -> dict[str, pd.DataFrame]:
    """Tidy tables behind the report, one DataFrame per ``tables/<name>.csv``.

    Parameters
    ----------
    results : Mapping
        From :func:`compute_results` on the same ``data``.
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
        - ``exclusions``: reason, participants.

    Raises
    ------
    KeyError
        If ``results`` lacks a section from :func:`compute_results`.

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
    alpha = results["parameters"]["alpha"]

    def comparison_rows(section: str, treatment: str) -> pd.DataFrame:
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

    rates = []
    for (setting, condition), grp in resp.groupby(["setting", "condition"], sort=True):
        k, n = int(grp["identified"].sum()), len(grp)
        lo, hi = stats.wilson_ci(k, n, alpha=alpha)
        rates.append({"setting": setting, "condition": condition, "n": n, "k": k,
                      "rate": k / n, "ci_lo": lo, "ci_hi": hi})

    by_position = (resp.groupby(["setting", "position", "condition"], sort=True)["identified"]
                   .agg(n="count", k="sum").reset_index())
    by_position["rate"] = by_position["k"] / by_position["n"]

    outcomes = None
    for outcome in ("identified", "other_difference", "no_difference"):
        df = stats.other_differences(resp, outcome_col=outcome).rename(
            columns={"k": f"k_{outcome}", "share": f"share_{outcome}"})
        outcomes = df if outcomes is None else outcomes.merge(df, on=["setting", "condition", "n"])

    per_condition = survey[survey["condition"].isin(LIKERT_CONDITIONS)]

    def likert_rows(treatment: str) -> pd.DataFrame:
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

    def paired_rows(treatment: str) -> pd.DataFrame:
        section = section_name("likert_paired", treatment)
        rows = [{"item": item, "alternative": r["alternative"], "W": r["W"], "p": r["p"],
                 "p_holm": results["holm"][section][item]["p_holm"],
                 "n_pairs": r["n_pairs"], "n_nonzero": r["n_nonzero"]}
                for item, r in results[section].items()]
        return pd.DataFrame(rows, columns=["item", "alternative", "W", "p", "p_holm", "n_pairs", "n_nonzero"])

    dist_rows = []
    for item, by_condition in results["likert_distribution"].items():
        for condition, counts in by_condition.items():
            total = sum(counts.values())
            for level, count in counts.items():
                dist_rows.append({"item": item, "condition": condition, "response": int(level),
                                  "count": count, "share": count / total if total else math.nan})

    bg_rows = []
    for item, counts in results["background"].items():
        for level in _LIKERT_LEVELS:
            count = counts[str(level)]
            bg_rows.append({"item": item, "response": level, "count": count,
                            "share": count / counts["n"] if counts["n"] else math.nan})

    return {
        "identification": comparison_rows("identification", "pattern"),
        "identification_with_distractors": comparison_rows(
            section_name("identification", "pattern_with_distractors"), "pattern_with_distractors"),
        "identification_rates": pd.DataFrame(
            rates, columns=["setting", "condition", "n", "k", "rate", "ci_lo", "ci_hi"]),
        "identification_by_position": by_position[["setting", "position", "condition", "n", "k", "rate"]],
        "time_on_task": stats.time_on_task(resp),
        "outcomes": outcomes,
        "likert": likert_rows("pattern"),
        "likert_with_distractors": likert_rows("pattern_with_distractors"),
        "likert_paired": paired_rows("pattern"),
        "likert_paired_with_distractors": paired_rows("pattern_with_distractors"),
        "likert_distribution": pd.DataFrame(
            dist_rows, columns=["item", "condition", "response", "count", "share"]),
        "background": pd.DataFrame(bg_rows, columns=["item", "response", "count", "share"]),
        "exclusions": pd.DataFrame(list(results["exclusions"].items()), columns=["reason", "participants"]),
    }


# --------------------------------------------------------------------------
# the whole run
# --------------------------------------------------------------------------
def run_analysis(
    input_dir: str | Path,
    out_dir: str | Path,
    *,
    likert_alternatives: Mapping[str, str] | None = None,
    alternative: str = "larger",
    alpha: float = 0.05,
    plan: Mapping | None = None,
) -> dict:
    """Analyse an export directory and write results, tables, figures and report.

    Parameters
    ----------
    input_dir : str or pathlib.Path
        Directory with ``responses.csv`` and ``survey.csv``.
    out_dir : str or pathlib.Path
        Output directory; created if needed. Files of earlier runs with the
        same names are overwritten.
    likert_alternatives : mapping of str to str, optional
        Per-item alternatives for the Likert tests; see
        :func:`compute_results`.
    alternative : {"larger", "smaller", "two-sided"}, default "larger"
        Alternative of the identification tests.
    alpha : float, default 0.05
        Level of the Wilson intervals and of the Holm correction.
    plan : Mapping, optional
        A preregistered plan (:func:`analysis.deviations.load_plan`). The
        tests run as the other arguments say; the plan is compared with them
        afterwards: ``results.json`` gains ``preregistration``
        (``plan_sha256`` and the ``deviations`` of
        :func:`analysis.deviations.compare_to_plan`), the report cites the
        hash and gets the section "Deviations from the preregistered plan",
        and the plan is copied to ``plan.json`` in ``out_dir``.

    Returns
    -------
    dict
        The content of ``results.json`` after JSON round-tripping (plain
        Python types; undefined numbers are ``None``).

    Raises
    ------
    AnalysisInputError
        If the input is missing or invalid (see
        :func:`analysis.prepare_data`), an argument is out of range, or
        ``plan`` is not a plan. Nothing is written in that case.
    OSError
        If the output directory cannot be written.

    Notes
    -----
    Writes into ``out_dir``: ``results.json``; ``tables/<name>.csv`` for
    each table of :func:`build_tables`; ``figures/identification_rate``,
    ``figures/likert`` and ``figures/background`` as ``.png`` and
    ``.svg``; ``report.md`` (links the figures) and ``report.html``
    (self-contained, figures embedded). The output holds no timestamps, so
    the same input and software give the same files.

    References
    ----------
    .. [1] Hedderich et al. (2025). What's the Difference? Supporting Users
       in Identifying the Effects of Prompt and Model Changes Through Token
       Patterns. ACL 2025.

    Examples
    --------
    >>> results = run_analysis("export/", "out/")  # doctest: +SKIP
    >>> sorted(results)[:3]  # doctest: +SKIP
    ['background', 'exclusions', 'holm']
    """
    from .figures import write_figures
    from .report import write_report

    from .deviations import canonical_json, check_plan, compare_to_plan

    if plan is not None:
        check_plan(plan)
    data = load_export(input_dir)
    results = compute_results(data, alternative=alternative, likert_alternatives=likert_alternatives,
                              alpha=alpha)
    if plan is not None:
        deviations = compare_to_plan(plan, json.loads(to_json(results)),
                                     correction={"method": "holm", "families": HOLM_FAMILIES})
        results["preregistration"] = {"plan_sha256": deviations["plan_sha256"], "deviations": deviations}
    tables = build_tables(results, data)

    out = Path(out_dir)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        table.to_csv(out / "tables" / f"{name}.csv", index=False, lineterminator="\n")
    figures = write_figures(tables, out / "figures")
    text = to_json(results)
    write_report(json.loads(text), tables, figures, out)
    if plan is not None:
        # The exact bytes the hash is computed over: ``sha256sum plan.json`` prints the cited hash.
        (out / "plan.json").write_bytes(canonical_json(plan))
    (out / "results.json").write_text(text, encoding="utf-8")
    return json.loads(text)
