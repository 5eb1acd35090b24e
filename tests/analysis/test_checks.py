"""The check pages' failures by condition (analysis/checks.py, issue 36 §2) and their report section."""
from __future__ import annotations

import csv

import pandas as pd

from analysis.checks import check_failures, check_pages
from analysis.run import run_analysis

PAGE = "check_between_tasks"
QUIZ = "quiz_after_instr"


def _people() -> pd.DataFrame:
    rows = [
        # participant, cell_plan, pilot, check passed/outcome, quiz passed/outcome
        ("p1", "doctor:pattern > farming:no_pattern", "False", "True", "passed", "True", "passed"),
        ("p2", "farming:pattern > doctor:no_pattern", "False", "False", "flag", "True", "passed"),
        ("p3", "doctor:no_pattern > farming:pattern", "False", "False", "end", "False", "flag"),
        ("p4", "doctor:pattern", "False", "", "", "True", "passed"),  # left before the check
        ("p5", "doctor:pattern > farming:no_pattern", "True", "False", "flag", "True", "passed"),  # a pilot
    ]
    columns = ["participant", "cell_plan", "pilot", f"{PAGE}_passed", f"{PAGE}_outcome",
               f"{QUIZ}_passed", f"{QUIZ}_outcome"]
    return pd.DataFrame(rows, columns=columns)


def test_failures_are_counted_per_page_and_condition():
    """Each page counts who answered it and whose last try failed, under each condition of the cell, pilots left out."""
    assert check_pages(_people()) == [PAGE, QUIZ]
    result = check_failures(_people())
    assert result[PAGE] == {
        "taken": 3, "failed": 2, "outcomes": {"end": 1, "flag": 1, "passed": 1},
        "by_condition": {"no_pattern": {"taken": 3, "failed": 2}, "pattern": {"taken": 3, "failed": 2}},
    }
    assert result[QUIZ]["by_condition"] == {
        "no_pattern": {"taken": 3, "failed": 1}, "pattern": {"taken": 4, "failed": 1},
    }
    assert check_failures(None) == {}
    assert check_failures(pd.DataFrame({"participant": ["a"], "cell_plan": ["x:pattern"]})) == {}


def test_the_report_shows_each_check_page(export_dir, tmp_path):
    """With participants.csv holding check columns, results.json has ``checks`` and the report a "Check pages" table."""
    responses = pd.read_csv(export_dir / "responses.csv", dtype=str)
    plans = responses.groupby("participant").apply(
        lambda g: " > ".join(f"{s}:{c}" for s, c in zip(g["setting"], g["condition"])), include_groups=False
    )
    with (export_dir / "participants.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["participant", "cell_plan", "pilot", f"{PAGE}_passed", f"{PAGE}_outcome"])
        for i, (pid, plan) in enumerate(sorted(plans.items())):
            failed = i % 8 == 0
            writer.writerow([pid, plan, "False", str(not failed), "flag" if failed else "passed"])
    results = run_analysis(export_dir, tmp_path / "out")
    n = len(plans)
    assert results["checks"][PAGE]["taken"] == n
    assert results["checks"][PAGE]["failed"] == len(range(0, n, 8))
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## Check pages" in report and PAGE in report and "failed_check_page" in report
