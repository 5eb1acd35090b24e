"""From validated study data to the content of ``results.json`` (every test and summary).

The tables are built in :mod:`analysis.tables`; the whole run, writing every file, is
:func:`analysis.run.run_analysis`.
"""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Mapping

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
)
from .stats._checks import check_alpha, check_alternative
from .survey_measures import typed_results

__all__ = [
    "BACKGROUND_ITEMS",
    "DEFAULT_LIKERT_ALTERNATIVES",
    "HOLM_FAMILIES",
    "section_name",
    "compute_results",
    "likert_alternatives_for",
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
        ``software``; with survey items that name a type, the sections of
        :func:`analysis.survey_measures.typed_results`. Sections of a comparison the design does not have are
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
    check_alternative(alternative, stats.PROPORTION_ALTERNATIVES)
    alpha = check_alpha(alpha)
    resp = data.responses
    settings = sorted(resp["setting"].unique())
    conditions = _present(resp["condition"], RESPONSE_CONDITIONS)
    treatments = _treatments(conditions)
    identification = _identification_by_treatment(resp, settings, treatments, alternative, alpha)
    survey = _survey_results(data.survey, likert_alternatives)
    sections = _sections(identification, survey["likert"], survey["likert_paired"])
    holm = _holm_by_section(sections, alpha)

    n_excluded = int(sum(data.exclusions.values()))
    results = {
        "identification": sections["identification"],
        "likert": sections["likert"],
        "time_on_task": _time_on_task_by_setting(resp, settings),
        "other_differences": _shares_by_setting(resp, settings, "other_difference"),
        "exclusions": dict(data.exclusions),
        "input_sha256": data.input_sha256,
        "identification_with_distractors": sections["identification_with_distractors"],
        "likert_with_distractors": sections["likert_with_distractors"],
        "likert_paired": sections["likert_paired"],
        "likert_paired_with_distractors": sections["likert_paired_with_distractors"],
        "holm": holm,
        "no_difference": _shares_by_setting(resp, settings, "no_difference"),
        "likert_distribution": survey["distribution"],
        "background": _background(data.survey),
        "design": {"settings": settings, "conditions": conditions,
                   "compared": [[t, BASELINE_CONDITION] for t in treatments],
                   "survey_conditions": survey["conditions"],
                   "survey_compared": [[t, BASELINE_CONDITION] for t in survey["treatments"]]},
        "participants": {"total": data.n_participants, "included": data.n_included,
                         "excluded": n_excluded},
        "input_files": dict(data.file_sha256),
        "parameters": {"alpha": alpha, "identification_alternative": alternative,
                       "likert_alternatives": survey["alternatives"]},
        "software": _software_versions(),
    }
    # Items with a type (analysis/survey_measures.py): their own sections, only when there are any.
    results.update(typed_results(data, alpha=alpha, alternatives=likert_alternatives))
    return results


def survey_results(data: StudyData, *, likert_alternatives: Mapping[str, str] | None = None,
                   alpha: float = 0.05) -> dict:
    """The survey's tests alone, as :func:`compute_results` gives them, for a study whose
    declared codebook outcome is no proportion (its outcome is tested by
    :mod:`analysis.codebook_analysis`, and ``data`` may come from
    ``load_export(..., outcomes=False)``).

    Returns
    -------
    dict
        ``likert``, ``likert_paired`` and their ``_with_distractors`` sections, ``holm`` (of
        those sections, the same families), ``likert_distribution``, ``background``,
        ``design`` (``survey_conditions``, ``survey_compared``), ``parameters``
        (``likert_alternatives``) and, with typed items, the sections of
        :func:`analysis.survey_measures.typed_results`; every test as in :func:`compute_results`.
    """
    alpha = check_alpha(alpha)
    survey = _survey_results(data.survey, likert_alternatives)
    empty = {t: {} for t in PATTERN_CONDITIONS}
    sections = _sections(empty, survey["likert"], survey["likert_paired"])
    holm = _holm_by_section(sections, alpha)
    results = {name: sections[name] for name in sections if not name.startswith("identification")}
    results.update(
        holm={name: v for name, v in holm.items() if not name.startswith("identification")},
        likert_distribution=survey["distribution"],
        background=_background(data.survey),
        design={"survey_conditions": survey["conditions"],
                "survey_compared": [[t, BASELINE_CONDITION] for t in survey["treatments"]]},
        parameters={"alpha": alpha, "likert_alternatives": survey["alternatives"]},
    )
    results.update(typed_results(data, alpha=alpha, alternatives=likert_alternatives))
    return results


# The steps of compute_results, in the order it runs them.
def _identification_by_treatment(resp: pd.DataFrame, settings: list[str], treatments: list[str],
                                 alternative: str, alpha: float) -> dict[str, dict]:
    """``{pattern condition: {setting: comparison dict}}``: each treatment versus no pattern."""
    identification: dict[str, dict] = {t: {} for t in PATTERN_CONDITIONS}
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
    return identification


def _survey_results(survey: pd.DataFrame, configured: Mapping[str, str] | None) -> dict:
    """The per-condition survey items: tests per treatment, distributions, and what was compared.

    Returns ``likert`` and ``likert_paired`` (``{treatment: {item: entry}}``), ``distribution``
    (``{item: {condition: {level: count}}}``), ``conditions`` and ``treatments`` of the survey,
    and ``alternatives`` (``{item: alternative}``).
    """
    per_condition = survey[survey["condition"].isin(LIKERT_CONDITIONS)]
    survey_conditions = _present(per_condition["condition"], LIKERT_CONDITIONS)
    survey_treatments = _treatments(survey_conditions)
    items = _ordered(per_condition["item"].unique(), DEFAULT_LIKERT_ALTERNATIVES)
    item_alternatives = _likert_alternatives(items, configured)
    likert: dict[str, dict] = {t: {} for t in PATTERN_CONDITIONS}
    likert_paired: dict[str, dict] = {t: {} for t in PATTERN_CONDITIONS}
    distribution = {}
    for item in items:
        answers = per_condition[per_condition["item"] == item]
        by_condition = {c: answers.loc[answers["condition"] == c].set_index("participant")["response"]
                        for c in survey_conditions}
        for treatment in survey_treatments:
            likert[treatment][item], likert_paired[treatment][item] = _likert_comparison(
                by_condition[treatment], by_condition[BASELINE_CONDITION], treatment,
                item_alternatives[item])
        distribution[item] = {
            c: {str(level): int((by_condition[c] == level).sum()) for level in _LIKERT_LEVELS}
            for c in survey_conditions
        }
    return {"likert": likert, "likert_paired": likert_paired, "distribution": distribution,
            "conditions": survey_conditions, "treatments": survey_treatments,
            "alternatives": item_alternatives}


def _sections(identification: Mapping, likert: Mapping, likert_paired: Mapping) -> dict[str, dict]:
    """The comparisons keyed by results section (:func:`section_name`)."""
    sections = {}
    for base, by_treatment in (("identification", identification), ("likert", likert),
                               ("likert_paired", likert_paired)):
        for treatment in PATTERN_CONDITIONS:
            sections[section_name(base, treatment)] = by_treatment[treatment]
    return sections


def _holm_by_section(sections: Mapping[str, Mapping], alpha: float) -> dict[str, dict]:
    """Holm within each of :data:`HOLM_FAMILIES`, keyed by section in the order of ``sections``."""
    holm: dict[str, dict] = {}
    for family in HOLM_FAMILIES.values():
        holm.update(_holm_family({name: sections[name] for name in family}, alpha))
    return {name: holm[name] for name in sections}


def _time_on_task_by_setting(resp: pd.DataFrame, settings: list[str]) -> dict:
    """``{setting: {condition: {mean_s, median_s, sd_s, n}}}``."""
    time_df = stats.time_on_task(resp)
    return {
        s: {r.condition: {"mean_s": r.mean_s, "median_s": r.median_s, "sd_s": r.sd_s, "n": r.n}
            for r in time_df[time_df["setting"] == s].itertuples()}
        for s in settings
    }


def _shares_by_setting(resp: pd.DataFrame, settings: list[str], outcome: str) -> dict:
    """``{setting: {condition: share}}`` of participants with ``outcome`` 1."""
    df = stats.other_differences(resp, outcome_col=outcome)
    return {s: {r.condition: r.share for r in df[df["setting"] == s].itertuples()} for s in settings}


def _background(survey: pd.DataFrame) -> dict:
    """``{item: {level: count, ..., "n": answers}}`` of the background items."""
    bg = survey[survey["condition"] == "background"]
    background = {}
    for item in _ordered(bg["item"].unique(), BACKGROUND_ITEMS):
        values = bg.loc[bg["item"] == item, "response"]
        background[item] = {**{str(level): int((values == level).sum()) for level in _LIKERT_LEVELS},
                            "n": len(values)}
    return background
