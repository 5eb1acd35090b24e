"""Survey items with types: each type's test (one table, :data:`SURVEY_TESTS`), reading the
export's ``survey_items.json``, and the tests and summaries of the typed items.

An item without a type (``scale``) is analysed by :mod:`analysis.pipeline` exactly as before
(sections ``likert``, ``likert_paired``, ``background``); the items with a type get the
sections of :data:`TYPED_SECTIONS` and ``survey_items_summary``, added to ``results.json`` only
when the study has such items. Per-condition items are within-participant (each participant
answers them for every condition they saw): the between-condition test is the reference
study's kind (it compares all answers about one condition with all about the other), and
ordinal and number items also get the paired test on participants who answered both. Pure
Python: no Django.
"""

from __future__ import annotations

import json
import math
import textwrap
import unicodedata
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from . import stats
from .errors import AnalysisInputError
from .stats.nominal import NOMINAL_RULE, nominal_test
from .stats.means import paired_t, welch_t

__all__ = ["SURVEY_ITEMS_FILE", "SURVEY_TESTS", "TYPED_FAMILIES", "TYPED_SECTIONS", "item_words",
           "load_survey_items", "split_typed_rows", "typed_planned_tests", "typed_results"]

SURVEY_ITEMS_FILE = "survey_items.json"
SURVEY_ITEMS_FORMAT = "spotlight-survey-items/1"
TYPES = ("scale", "likert", "choice", "multi_choice", "number", "text")

#: Each survey item type: its level of measurement, the test between conditions, the paired test
#: (within-participant, on those who answered both conditions) and the sources. ``number``'s
#: tests follow the item's ``test`` key (the plan records it).
SURVEY_TESTS = {
    "scale": {"level": "ordinal", "between": "Mann-Whitney U test", "paired": "Wilcoxon signed-rank test",
              "library": "scipy.stats.mannwhitneyu, scipy.stats.wilcoxon",
              "source": "Mann & Whitney (1947); Wilcoxon (1945); the reference study's test"},
    "likert": {"level": "ordinal", "between": "Mann-Whitney U test", "paired": "Wilcoxon signed-rank test",
               "library": "scipy.stats.mannwhitneyu, scipy.stats.wilcoxon",
               "source": "Mann & Whitney (1947); Wilcoxon (1945)"},
    "choice": {"level": "nominal", "between": "chi-square test, or Fisher's exact test for small counts",
               "paired": None, "library": "scipy.stats.chi2_contingency(correction=False), scipy.stats.fisher_exact",
               "source": "Pearson (1900); Fisher (1922); Cochran (1954): Fisher when an expected count < 5"},
    "multi_choice": {"level": "nominal (one 0/1 per option)",
                     "between": "per option: chi-square test, or Fisher's exact test for small counts",
                     "paired": None, "library": "scipy.stats.chi2_contingency(correction=False), scipy.stats.fisher_exact",
                     "source": "Pearson (1900); Fisher (1922); Cochran (1954)"},
    "number": {"level": "interval", "between": {"mann_whitney": "Mann-Whitney U test", "welch_t": "Welch's t-test"},
               "paired": {"mann_whitney": "Wilcoxon signed-rank test", "welch_t": "paired t-test"},
               "library": "scipy.stats.mannwhitneyu / ttest_ind(equal_var=False); wilcoxon / ttest_rel",
               "source": "Mann & Whitney (1947); Welch (1947); Wilcoxon (1945); Student (1908)"},
    "text": {"level": "free text", "between": None, "paired": None, "library": None,
             "source": "exported, not tested"},
}
#: Results sections of the typed items' tests, in the shape of ``likert``: section -> (kind,
#: treatment). ``kind`` ``survey_items`` is the between-condition test, ``survey_items_paired``
#: the paired one.
TYPED_SECTIONS = {
    "survey_items": ("survey_items", "pattern"),
    "survey_items_with_distractors": ("survey_items", "pattern_with_distractors"),
    "survey_items_paired": ("survey_items_paired", "pattern"),
    "survey_items_paired_with_distractors": ("survey_items_paired", "pattern_with_distractors"),
}
#: Holm families of the typed items' tests (each across every item, option and pattern condition).
TYPED_FAMILIES = {
    "survey_items": ("survey_items", "survey_items_with_distractors"),
    "survey_items_paired": ("survey_items_paired", "survey_items_paired_with_distractors"),
}
_BASELINE = "no_pattern"
_TREATMENTS = ("pattern", "pattern_with_distractors")
_SEPARATOR = ";"


# --------------------------------------------------------------------------
# the definitions
# --------------------------------------------------------------------------
def load_survey_items(input_dir: str | Path) -> dict | None:
    """The export's ``survey_items.json``, checked, or ``None`` when the directory has none.

    Returns
    -------
    dict or None
        ``{"format", "likert_scale", "frequency_scale", "items": [{"key", "text", "where",
        "type", ...}]}`` (docs/export.md).

    Raises
    ------
    AnalysisInputError
        If the file is not UTF-8 JSON of :data:`SURVEY_ITEMS_FORMAT`, or an item lacks its key,
        text, place, a known type or its type's labels, options or bounds.
    """
    path = Path(input_dir) / SURVEY_ITEMS_FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalysisInputError(f"{SURVEY_ITEMS_FILE} is not valid UTF-8 JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != SURVEY_ITEMS_FORMAT:
        raise AnalysisInputError(f"{SURVEY_ITEMS_FILE}: format must be {SURVEY_ITEMS_FORMAT!r}")
    needs = {"likert": ("labels",), "choice": ("options",), "multi_choice": ("options",),
             "number": ("min", "max")}
    for i, item in enumerate(doc.get("items") or []):
        where = f"{SURVEY_ITEMS_FILE} items[{i}]"
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("key", "text")):
            raise AnalysisInputError(f"{where}: needs a key and a text")
        if item.get("type") not in TYPES or item.get("where") not in ("condition", "background"):
            raise AnalysisInputError(f"{where} ({item['key']}): unknown type or place")
        missing = [k for k in needs.get(item["type"], ()) if k not in item]
        if missing:
            raise AnalysisInputError(f"{where} ({item['key']}): a {item['type']} item needs {', '.join(missing)}")
    return doc


def item_words(doc: Mapping | None) -> dict:
    """The researcher's words for the report and figures: ``{"items": {key: text},
    "agreement": [likert_scale labels], "frequency": [frequency_scale labels]}``; empty lists
    and no texts without a definition (the keys are shown then)."""
    if not doc:
        return {"items": {}, "agreement": [], "frequency": []}
    return {"items": {i["key"]: i["text"] for i in doc.get("items", [])},
            "agreement": list(doc.get("likert_scale") or []),
            "frequency": list(doc.get("frequency_scale") or [])}


def wrapped(text: str, width: int = 48) -> str:
    """``text`` broken into lines of at most ``width`` characters, for a figure's axis."""
    return "\n".join(textwrap.wrap(text, width)) or text


def _typed(doc: Mapping | None) -> dict[str, dict]:
    return {i["key"]: i for i in (doc or {}).get("items", []) if i["type"] != "scale"}


def split_typed_rows(frame: pd.DataFrame, doc: Mapping | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split the parsed ``survey.csv`` into the rows of items without a type (checked and
    analysed as before) and those of typed items (:func:`typed_results`).

    Without ``doc``, or without typed items, the first frame is ``frame`` itself.
    """
    typed = _typed(doc)
    if not typed or "item" not in frame.columns:
        return frame, frame.iloc[0:0]
    mask = frame["item"].astype(str).str.strip().isin(list(typed))
    return frame[~mask].reset_index(drop=True), frame[mask].reset_index(drop=True)


# --------------------------------------------------------------------------
# reading the typed answers
# --------------------------------------------------------------------------
def _canonical(value: str) -> str:
    return " ".join(unicodedata.normalize("NFC", value).split()).casefold()


def _parsed(item: Mapping, raw: str, where: str):
    """The answer ``raw`` (a ``survey.csv`` cell) to ``item``: an int point, an option, a list
    of options, a float, or the text; AnalysisInputError naming the row if it does not fit."""
    kind = item["type"]

    def bad(what: str):
        return AnalysisInputError(f"survey.csv {where} (item {item['key']!r}): {raw!r} {what}")

    if kind == "likert":
        try:
            point = float(raw)
        except ValueError:
            raise bad("is not a point of the scale") from None
        if point % 1 or not 1 <= point <= len(item["labels"]):
            raise bad(f"must be a whole number from 1 to {len(item['labels'])}")
        return int(point)
    if kind in ("choice", "multi_choice"):
        options = {_canonical(o): o for o in item["options"]}
        given = [raw] if kind == "choice" else [v for v in raw.split(_SEPARATOR) if v.strip()]
        if kind == "choice" and not raw:
            raise bad("is empty")
        unknown = [v for v in given if _canonical(v) not in options]
        if unknown:
            raise bad(f"is not one of the options ({'; '.join(item['options'])})")
        chosen = [options[_canonical(v)] for v in given]
        return chosen[0] if kind == "choice" else chosen
    if kind == "number":
        try:
            number = float(raw)
        except ValueError:
            raise bad("is not a number") from None
        if not math.isfinite(number) or not item["min"] <= number <= item["max"]:
            raise bad(f"must be a number from {item['min']:g} to {item['max']:g}")
        return number
    return raw


def _answers(rows: pd.DataFrame, doc: Mapping, included: set[str]) -> dict[str, pd.DataFrame]:
    """``{item key: DataFrame(participant, condition, value)}`` of the included participants."""
    typed = _typed(doc)
    out = {}
    for key, item in typed.items():
        sub = rows[(rows["item"].astype(str).str.strip() == key)
                   & rows["participant"].astype(str).str.strip().isin(included)]
        values = [_parsed(item, str(r["response"]).strip(), r.get("_where", "")) for _, r in sub.iterrows()]
        out[key] = pd.DataFrame({"participant": sub["participant"].astype(str).str.strip().tolist(),
                                 "condition": sub["condition"].astype(str).str.strip().tolist(),
                                 "value": values})
    return out


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------
def _ordered_comparison(item, treated: pd.Series, base: pd.Series, treatment: str,
                        alternative: str) -> tuple[dict, dict]:
    """Between and paired entries of a likert or number item (Series indexed by participant)."""
    test = item.get("test", "mann_whitney") if item["type"] == "number" else "mann_whitney"
    x, y = treated.to_numpy(dtype=float), base.to_numpy(dtype=float)
    if test == "welch_t":
        r = welch_t(x, y, alternative=alternative)
        between = {"test": SURVEY_TESTS["number"]["between"]["welch_t"], "t": r.t_val, "df": r.df,
                   "p": r.p_val, "alternative": alternative, "mean_diff": r.mean_diff}
    else:
        r = stats.mann_whitney(x, y, alternative=alternative)
        between = {"test": "Mann-Whitney U test", "U": r.u_val, "p": r.p_val,
                   "alternative": alternative, "rbc": r.rbc}
    between.update({f"n_{treatment}": len(x), "n_no_pattern": len(y),
                    f"median_{treatment}": float(np.median(x)), "median_no_pattern": float(np.median(y))})
    both = sorted(set(treated.index) & set(base.index))
    paired = {"test": SURVEY_TESTS["number"]["paired"][test], "p": math.nan,
              "alternative": alternative, "n_pairs": len(both)}
    if both:
        a, b = treated.loc[both].to_numpy(dtype=float), base.loc[both].to_numpy(dtype=float)
        if test == "welch_t":
            t = paired_t(a, b, alternative=alternative)
            paired.update({"t": t.t_val, "df": t.df, "p": t.p_val})
        else:
            w = stats.wilcoxon_paired(a, b, alternative=alternative)
            paired.update({"W": w.w_val, "p": w.p_val, "n_nonzero": w.n_nonzero})
    return between, paired


def _nominal_entry(table: list[list[int]], columns: list[str], treatment: str, kind: str) -> dict:
    """A nominal comparison: ``test`` is the planned rule of :data:`SURVEY_TESTS`, ``method``
    the test the rule chose for this table (``chi_square`` or ``fisher_exact``; ``None`` when
    the table leaves nothing to compare), from :func:`analysis.stats.nominal.nominal_test`."""
    res = nominal_test(table)
    return {"test": SURVEY_TESTS[kind]["between"], "method": res.test, "statistic": res.statistic,
            "dof": res.dof, "p": res.p_val,
            "alternative": "two-sided", "min_expected": res.min_expected,
            "counts": {treatment: dict(zip(columns, table[0])), _BASELINE: dict(zip(columns, table[1]))}}


def _item_tests(item, answers: pd.DataFrame, treatment: str, alternative: str) -> tuple[dict, dict]:
    """``({name: between entry}, {name: paired entry})`` of one typed condition item."""
    by = {c: answers[answers["condition"] == c].set_index("participant")["value"]
          for c in (treatment, _BASELINE)}
    if by[treatment].empty or by[_BASELINE].empty:
        return {}, {}
    kind = item["type"]
    if kind in ("likert", "number"):
        between, paired = _ordered_comparison(item, by[treatment], by[_BASELINE], treatment, alternative)
        return {item["key"]: between}, {item["key"]: paired}
    if kind == "choice":
        table = [[int((by[c] == o).sum()) for o in item["options"]] for c in (treatment, _BASELINE)]
        return {item["key"]: _nominal_entry(table, item["options"], treatment, kind)}, {}
    if kind == "multi_choice":
        out = {}
        for option in item["options"]:
            table = [[int(sum(option in v for v in by[c])), int(sum(option not in v for v in by[c]))]
                     for c in (treatment, _BASELINE)]
            out[f"{item['key']}:{option}"] = _nominal_entry(table, ["chosen", "not chosen"], treatment, kind)
        return out, {}
    return {}, {}


def _summary(item, answers: pd.DataFrame) -> dict:
    """Per condition (or ``background``): counts and shares of each label or option, or the
    numbers' n, mean, median and SD, or how many answered a text item."""
    out = {}
    for condition in dict.fromkeys(answers["condition"]):
        values = answers.loc[answers["condition"] == condition, "value"].tolist()
        n = len(values)
        kind = item["type"]
        if kind in ("likert", "choice", "multi_choice"):
            words = item["labels"] if kind == "likert" else item["options"]
            counts = {w: int(sum((v == i + 1) if kind == "likert" else (v == w if kind == "choice" else w in v)
                                 for v in values)) for i, w in enumerate(words)}
            out[condition] = {"n": n, "counts": counts,
                              "shares": {w: (c / n if n else math.nan) for w, c in counts.items()}}
        elif kind == "number":
            arr = np.asarray(values, dtype=float)
            out[condition] = {"n": n, "mean": float(arr.mean()) if n else math.nan,
                              "median": float(np.median(arr)) if n else math.nan,
                              "sd": float(arr.std(ddof=1)) if n > 1 else math.nan}
        else:
            out[condition] = {"n": n, "n_answered": sum(1 for v in values if v)}
    return out


def typed_results(data, *, alpha: float = 0.05, alternatives: Mapping[str, str] | None = None) -> dict:
    """Tests and summaries of the survey's typed items, as sections of ``results.json``.

    Parameters
    ----------
    data : StudyData
        From :func:`analysis.load_export`; uses ``survey_items`` (the definitions) and
        ``survey_typed`` (their rows of ``survey.csv``), and the included participants.
    alpha : float
        Level of the Holm corrections.
    alternatives : mapping of str to str, optional
        Per-item alternative of the ordinal and number tests (default two-sided); nominal tests
        are two-sided.

    Returns
    -------
    dict
        ``{}`` without typed items; else the sections of :data:`TYPED_SECTIONS` (``{name:
        entry}``; a multi_choice item's names are ``<item>:<option>``), each entry with
        ``test``, ``p``, ``p_holm`` (Holm within :data:`TYPED_FAMILIES`) and ``reject``, and
        ``survey_items_summary`` (``{item: {"type", "where", "by_condition"}}``).

    Raises
    ------
    AnalysisInputError
        If an answer does not fit its item (a point, option or number outside it), naming the row.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics*, 6(2), 65-70.
    """
    doc = getattr(data, "survey_items", None)
    typed = _typed(doc)
    if not typed:
        return {}
    included = set(data.responses["participant"])
    answers = _answers(data.survey_typed, doc, included)
    sections = {name: {} for name in TYPED_SECTIONS}
    conditions = set(data.responses["condition"])
    for key, item in typed.items():
        if item["where"] != "condition" or _BASELINE not in conditions:
            continue
        alternative = (alternatives or {}).get(key, "two-sided")
        for treatment in (t for t in _TREATMENTS if t in conditions):
            between, paired = _item_tests(item, answers[key], treatment, alternative)
            suffix = "" if treatment == "pattern" else "_with_distractors"
            sections[f"survey_items{suffix}"].update(between)
            sections[f"survey_items_paired{suffix}"].update(paired)
    for family in TYPED_FAMILIES.values():
        keys = [(s, n) for s in family for n in sections[s]]
        holm = stats.holm_correction([sections[s][n]["p"] for s, n in keys], alpha=alpha)
        for i, (s, n) in enumerate(keys):
            sections[s][n].update({"p_holm": holm.p_adjusted[i], "reject": bool(holm.reject[i])})
    summary = {key: {"type": item["type"], "where": item["where"],
                     "by_condition": _summary(item, answers[key])} for key, item in typed.items()}
    return {**sections, "survey_items_summary": summary}


def typed_planned_tests(doc_items: list[Mapping], conditions, *, alternatives: Mapping[str, str] | None = None) -> list[dict]:
    """The confirmatory tests of the typed per-condition items, in the shape of
    :func:`analysis.deviations.planned_tests` (``id`` ``<section>/<name>``), with the item's
    ``type`` and ``test`` named, for the preregistered plan."""
    treatments = [t for t in _TREATMENTS if t in conditions] if _BASELINE in conditions else []
    family_of = {s: f for f, sections in TYPED_FAMILIES.items() for s in sections}
    out = []
    for item in doc_items:
        kind = item.get("type") or "scale"
        if kind in ("scale", "text") or item.get("where", "condition") != "condition":
            continue
        number_test = item.get("test", "mann_whitney")
        between = SURVEY_TESTS[kind]["between"]
        paired = SURVEY_TESTS[kind]["paired"]
        if kind == "number":
            between, paired = between[number_test], paired[number_test]
        names = ([f"{item['key']}:{o}" for o in item["options"]] if kind == "multi_choice" else [item["key"]])
        alternative = "two-sided" if kind in ("choice", "multi_choice") else (alternatives or {}).get(item["key"], "two-sided")
        for treatment in treatments:
            suffix = "" if treatment == "pattern" else "_with_distractors"
            for base, test in ((f"survey_items{suffix}", between), (f"survey_items_paired{suffix}", paired)):
                if test is None:
                    continue
                for name in names:
                    out.append({"id": f"{base}/{name}", "section": base, "name": name,
                                "kind": TYPED_SECTIONS[base][0], "treatment": treatment, "type": kind,
                                "test": test, "alternative": alternative, "family": family_of[base],
                                "hypothesis": f"The answers to item {item['key']} differ between {treatment} "
                                              f"and no_pattern ({test})."})
    return out
