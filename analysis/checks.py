"""How many participants failed each check page, by condition (issue 36 §2).

A study file's check pages (``attention_check``, ``comprehension_quiz``) are exported in
``participants.csv`` as five columns per page, named by the page's step: ``<page>_passed``
(``True``/``False`` at the last answered try), ``<page>_tries``, ``<page>_answer``, ``<page>_ms``
and ``<page>_outcome`` (``passed``, ``flag``, ``end``, ``return``; docs/export.md). This module
reads them from the participants table of an export (:func:`analysis.sample.read_participants`)
and counts, per page and per condition, the participants who took it and who failed it.

A participant counts under every condition of their cell plan (``cell_plan``:
``setting:condition > ...``): in the reference design each participant sees both conditions, so
the two rows of a page are equal; in a between-participant design they split. Counting uses
every participant of the export (the failures are themselves a planned exclusion,
``failed_check_page``: the exclusions apply to the tests, not to this count). Plain counts, no
statistic. Pure: no Django.
"""
from __future__ import annotations

import pandas as pd

from .document import Code, Heading, Para, Table

#: The suffix of the column that marks a check page in participants.csv.
OUTCOME_SUFFIX = "_outcome"


def check_pages(participants: pd.DataFrame) -> list[str]:
    """The check pages of an export, in column order: each ``<page>`` that has both a
    ``<page>_outcome`` and a ``<page>_passed`` column."""
    return [
        column[: -len(OUTCOME_SUFFIX)]
        for column in participants.columns
        if column.endswith(OUTCOME_SUFFIX) and f"{column[: -len(OUTCOME_SUFFIX)]}_passed" in participants.columns
    ]


def _conditions(cell_plan: str) -> list[str]:
    """The distinct conditions of a ``cell_plan`` cell (``doctor:pattern > farming:no_pattern``)."""
    found = [part.split(":", 1)[1].strip() for part in str(cell_plan).split(">") if ":" in part]
    return list(dict.fromkeys(c for c in found if c))


def check_failures(participants: pd.DataFrame | None) -> dict:
    """Participants who took and who failed each check page, overall and by condition.

    Parameters
    ----------
    participants : pandas.DataFrame or None
        ``participants.csv`` as text cells (:func:`analysis.sample.read_participants`); ``None``
        (no such file) gives ``{}``. Rows with ``pilot`` ``True`` are left out.

    Returns
    -------
    dict
        ``{page: {"taken": n, "failed": n, "outcomes": {outcome: n}, "by_condition":
        {condition: {"taken": n, "failed": n}}}}`` in the pages' column order, conditions sorted;
        ``{}`` for an export without check pages. ``taken``: participants with an answered try
        (an outcome); ``failed``: those whose last try failed (``<page>_passed`` ``False``),
        whatever the policy then did.
    """
    if participants is None:
        return {}
    people = participants
    if "pilot" in people.columns:
        people = people[people["pilot"].astype(str).str.strip() != "True"]
    conditions = (
        people["cell_plan"].map(_conditions) if "cell_plan" in people.columns
        else pd.Series([[] for _ in range(len(people))], index=people.index)
    )
    out: dict[str, dict] = {}
    for page in check_pages(people):
        outcome = people[f"{page}{OUTCOME_SUFFIX}"].astype(str).str.strip()
        taken = outcome != ""
        failed = taken & (people[f"{page}_passed"].astype(str).str.strip() == "False")
        by_condition: dict[str, dict[str, int]] = {}
        for index in people.index[taken]:
            for condition in conditions[index]:
                row = by_condition.setdefault(condition, {"taken": 0, "failed": 0})
                row["taken"] += 1
                row["failed"] += int(bool(failed[index]))
        out[page] = {
            "taken": int(taken.sum()),
            "failed": int(failed.sum()),
            "outcomes": {k: int(v) for k, v in sorted(outcome[taken].value_counts().items())},
            "by_condition": dict(sorted(by_condition.items())),
        }
    return out


def check_blocks(results: dict) -> list:
    """The report's section "Check pages": per page, participants who took it and who failed
    it, overall and by condition, and what the failures led to; ``[]`` without check pages."""


    checks = results.get("checks") or {}
    if not checks:
        return []
    rows = []
    for page, c in checks.items():
        rows.append([page, "all", str(c["taken"]), str(c["failed"])])
        rows += [[page, condition, str(n["taken"]), str(n["failed"])]
                 for condition, n in c["by_condition"].items()]
    led = "; ".join(
        f"{page}: " + ", ".join(f"{k} {v}" for k, v in c["outcomes"].items()) for page, c in checks.items()
    )
    return [
        Heading(2, "Check pages"),
        Para("Participants who answered each check page of the study file (attention checks, "
             "comprehension quizzes) and those whose last try failed, from ", Code("participants.csv"),
             " (pilots left out). A participant counts under each condition of their cell. A failed "
             "check is the planned exclusion ", Code("failed_check_page"),
             ": those participants are left out of every test above."),
        Table(["Page", "Condition", "Took it", "Failed"], rows),
        Para("What the answers led to (outcome of the last try): " + led + "."),
    ]
