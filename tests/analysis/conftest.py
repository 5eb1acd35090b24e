"""Fixtures for the analysis tests: a simulated study export on disk."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

RESPONSE_HEADER = [
    "participant", "setting", "condition", "position", "cell", "answer", "served_at", "answered_at",
    "time_on_task_ms", "paste_count", "paste_chars", "hidden_ms", "blur_count", "flags",
    "identified", "other_difference", "no_difference", "excluded", "exclusion_reason",
]
SURVEY_HEADER = ["participant", "condition", "item", "response"]

# The 4 counterbalancing cells: (order of settings, setting that shows the pattern).
CELLS = [
    (("doctor", "farming"), "doctor"),
    (("doctor", "farming"), "farming"),
    (("farming", "doctor"), "doctor"),
    (("farming", "doctor"), "farming"),
]
# participant -> (reason, settings where the row is marked excluded)
EXCLUDED = {
    "P03": ("failed instruction check", ("doctor", "farming")),
    "P11": ("copy-pasted answers", ("farming",)),  # flagged on one row only
    "P27": ("answer pasted from an AI tool", ("doctor", "farming")),
    "P33": ("failed instruction check", ("doctor", "farming")),
}
BACKGROUND_ITEMS = ["llm_use", "prompt_engineering", "programming", "data_analysis"]


def write_csv(path: Path, header: list[str], rows: list[dict]) -> Path:
    """Write ``rows`` (dicts; missing keys empty) as CSV with ``header``."""
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, "") for k in header})
    return path


def simulate_export(directory: Path, *, n_participants: int = 40, seed: int = 7,
                    distractors: bool = False) -> Path:
    """Write a realistic ``responses.csv`` + ``survey.csv`` for a simulated run of the reference study.

    Participants cycle through the 4 cells. With ``distractors`` every 5th
    participant's pattern setting uses ``pattern_with_distractors`` instead,
    and their survey answers are about that condition.
    """
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    responses, survey = [], []
    for i in range(1, n_participants + 1):
        pid = f"P{i:02d}"
        order, pattern_setting = CELLS[(i - 1) % 4]
        reason, excluded_settings = EXCLUDED.get(pid, ("", ()))
        for position, setting in enumerate(order, start=1):
            condition = "pattern" if setting == pattern_setting else "no_pattern"
            if distractors and condition == "pattern" and i % 5 == 0:
                condition = "pattern_with_distractors"
            excluded = setting in excluded_settings
            p_identify = {"pattern": 0.8, "pattern_with_distractors": 0.6, "no_pattern": 0.3}[condition]
            row = {
                "participant": pid, "setting": setting, "condition": condition, "position": position,
                "cell": (i - 1) % 4 + 1,
                # Free text with a comma, quotes and a line break, as real answers have.
                "answer": f'Group 2 is "more {setting}",\nI think.',
                "served_at": "2025-03-01T10:00:00Z", "answered_at": "2025-03-01T10:03:00Z",
                "time_on_task_ms": int(rng.normal(150_000 if condition == "no_pattern" else 120_000, 30_000)),
                "paste_count": 0, "paste_chars": 0, "hidden_ms": 0, "blur_count": int(rng.integers(0, 3)),
                "flags": "", "excluded": int(excluded), "exclusion_reason": reason if excluded else "",
            }
            if not excluded:  # excluded rows are typically never annotated
                row["identified"] = int(rng.random() < p_identify)
                row["other_difference"] = int(rng.random() < 0.4)
                row["no_difference"] = int(not row["identified"] and rng.random() < 0.3)
            responses.append(row)
        # Each participant rates the conditions they saw, as the platform's survey asks.
        seen = {r["condition"] for r in responses if r["participant"] == pid}
        treated = "pattern_with_distractors" if "pattern_with_distractors" in seen else "pattern"
        for condition, shift in ((treated, 1), ("no_pattern", 0)):
            for item, base in (("ease", 3), ("effort", 3), ("confidence", 3)):
                value = base + (shift if item != "effort" else -shift) + int(rng.integers(-1, 2))
                survey.append({"participant": pid, "condition": condition, "item": item,
                               "response": int(np.clip(value, 1, 5))})
        for item in BACKGROUND_ITEMS:
            survey.append({"participant": pid, "condition": "background", "item": item,
                           "response": int(rng.integers(1, 6))})
    write_csv(directory / "responses.csv", RESPONSE_HEADER, responses)
    write_csv(directory / "survey.csv", SURVEY_HEADER, survey)
    return directory


@pytest.fixture
def export_dir(tmp_path: Path) -> Path:
    """A simulated export of 40 participants in 2 settings and 4 cells, 4 excluded."""
    return simulate_export(tmp_path / "export")


@pytest.fixture
def small_export(tmp_path: Path):
    """Factory writing a hand-made export from lists of row dicts."""

    def make(responses: list[dict], survey: list[dict] | None = None,
             response_header: list[str] | None = None, survey_header: list[str] | None = None) -> Path:
        directory = tmp_path / "small"
        directory.mkdir(exist_ok=True)
        write_csv(directory / "responses.csv", response_header or RESPONSE_HEADER, responses)
        write_csv(directory / "survey.csv", survey_header or SURVEY_HEADER, survey or [])
        return directory

    return make
