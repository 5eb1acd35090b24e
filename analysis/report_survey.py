"""The report's section **Survey items with types**: each typed item's test and summary, in the
researcher's own words (item texts, labels and options word for word).

Built from the sections of :func:`analysis.survey_measures.typed_results` and the study's words
(``results["survey_words"]``, :func:`analysis.survey_measures.item_words`); absent when the
study has no typed items, so the reference study's report has no such section.
"""

from __future__ import annotations

from collections.abc import Mapping

from .document import Bullets, Data, Heading, Para, Table, fmt_num, fmt_p, fmt_pct
from .stats.nominal import NOMINAL_RULE, TEST_WORDS
from .survey_measures import SURVEY_TESTS

__all__ = ["typed_survey_blocks"]

_TREAT_WORDS = {"pattern": "the pattern", "pattern_with_distractors": "pattern and distractors"}
_CONDITION_WORDS = {"pattern": "with pattern", "no_pattern": "without pattern",
                    "pattern_with_distractors": "pattern + distractors", "background": "asked once"}


def _text(results: Mapping, key: str) -> str:
    return ((results.get("survey_words") or {}).get("items") or {}).get(key, key)


def _test_words(entry: Mapping, treatment: str) -> str:
    """One test's result in words: its statistic, p and Holm-adjusted p."""
    test = TEST_WORDS.get(entry.get("method")) or entry["test"]  # a nominal item: the test its rule chose
    if "U" in entry:
        stat = f"U = {fmt_num(entry['U'], 1)}, rank-biserial r = {fmt_num(entry.get('rbc'))}"
    elif "W" in entry:
        stat = f"W = {fmt_num(entry['W'], 1)} on {entry['n_pairs']} pairs"
    elif "t" in entry:
        stat = f"t({fmt_num(entry.get('df'), 1)}) = {fmt_num(entry['t'])}"
    elif entry.get("method") == "chi_square":
        stat = f"chi-square({entry['dof']}) = {fmt_num(entry['statistic'])}"
    else:
        stat = f"smallest expected count {fmt_num(entry.get('min_expected'))}"
    sizes = ""
    if f"n_{treatment}" in entry:
        sizes = (f", n = {entry[f'n_{treatment}']} with and {entry['n_no_pattern']} without, median "
                 f"{entry[f'median_{treatment}']:g} with and {entry['median_no_pattern']:g} without")
    return (f"{test} ({entry['alternative']}): {stat}, p = {fmt_p(entry['p'])}{sizes}; "
            f"Holm-adjusted p = {fmt_p(entry.get('p_holm'))}.")


def _test_blocks(results: Mapping) -> list:
    blocks: list = []
    for section, paired_section, treatment in (
            ("survey_items", "survey_items_paired", "pattern"),
            ("survey_items_with_distractors", "survey_items_paired_with_distractors", "pattern_with_distractors")):
        if not results.get(section):
            continue
        blocks.append(Para(f"With {_TREAT_WORDS[treatment]} versus without the pattern:"))
        items = []
        for name, entry in results[section].items():
            key, _, option = name.partition(":")
            parts = ["Item ", Data(key), " (", Data(_text(results, key)), ")"]
            if option:
                parts += [", option ", Data(option)]
            parts.append(": " + _test_words(entry, treatment))
            paired = results.get(paired_section, {}).get(name)
            if paired is not None:
                parts.append(" Paired (same participants): " + _test_words(paired, treatment))
            items.append(parts)
        blocks.append(Bullets(items))
    return blocks


def _summary_table(item: str, summary: Mapping) -> Table | None:
    """Counts and shares per label or option and condition, or the numbers' summary."""
    by = summary["by_condition"]
    conditions = list(by)
    heads = [_CONDITION_WORDS.get(c, c) for c in conditions]
    if summary["type"] in ("likert", "choice", "multi_choice"):
        words = list(next(iter(by.values()))["counts"]) if by else []
        rows = [[Data(w), *(f"{by[c]['counts'][w]} ({fmt_pct(by[c]['shares'][w])})" for c in conditions)]
                for w in words]
        rows.append(["n", *(str(by[c]["n"]) for c in conditions)])
        return Table(["Answer", *heads], rows)
    if summary["type"] == "number":
        return Table(["", *heads], [[label, *(fmt_num(by[c][k]) if k != "n" else str(by[c][k]) for c in conditions)]
                                    for label, k in (("n", "n"), ("mean", "mean"), ("median", "median"), ("SD", "sd"))])
    return Table(["", *heads], [["answered", *(f"{by[c]['n_answered']} of {by[c]['n']}" for c in conditions)]])


def typed_survey_blocks(results: Mapping) -> list:
    """The section on the survey items that name a type, or ``[]`` when there are none."""
    summaries = results.get("survey_items_summary")
    if not summaries:
        return []
    used = sorted({s["type"] for s in summaries.values()})
    blocks: list = [
        Heading(2, "Survey items with types"),
        Para("Each item is tested by its type (analysis/survey_measures.py, docs/analysis.md). Items "
             "asked once per condition are compared between the conditions; background items are "
             "only described. Holm's correction runs across the between-condition tests of these "
             "items, and separately across their paired tests."),
        Bullets([[Data(t), ": ", SURVEY_TESTS[t]["level"], "; ",
                  _between(t), (f"; paired: {_paired(t)}" if SURVEY_TESTS[t]["paired"] else ""), "."]
                 for t in used]),
    ]
    if any(t in ("choice", "multi_choice") for t in used):
        blocks.append(Para(f"Nominal items: {NOMINAL_RULE}."))
    blocks += _test_blocks(results)
    for key, summary in summaries.items():
        blocks.append(Para("Item ", Data(key), ": ", Data(_text(results, key)),
                           f" ({summary['type']}, {'per condition' if summary['where'] == 'condition' else 'asked once'})"))
        blocks.append(_summary_table(key, summary))
    return blocks


def _between(kind: str) -> str:
    test = SURVEY_TESTS[kind]["between"]
    if isinstance(test, Mapping):
        return " or ".join(test.values()) + ", as the study file says"
    return test or "not tested (exported only)"


def _paired(kind: str) -> str:
    test = SURVEY_TESTS[kind]["paired"]
    return " or ".join(test.values()) if isinstance(test, Mapping) else test
