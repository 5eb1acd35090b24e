"""The report's Participants section: counts, exclusions, demographics and study duration.

The fixture is an export of 54 participants with answers (4 excluded, so 50 analysed, as in the
reference study's appendix E.2) plus 3 who returned the study without answering. The 50 get
demographics that reproduce E.2: 39 from the UK and 11 from the US; 29 female, 20 male, 1 not
specified; ages 19 to 78 with mean 38.9, median 35.5 and SD 13.8; a median duration of 12:13.
The expected figures are computed here by pandas from the fixture, independently of the code.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

from analysis import run_analysis
from analysis.sample import format_mmss

from .conftest import EXCLUDED, simulate_export, write_csv

# 50 ages (years) found by a seeded search (random.Random(22)) for E.2's figures.
AGES = [19, 21, 22, 22, 22, 22, 23, 23, 23, 23, 25, 25, 27, 28, 28, 29, 29, 30, 30, 31, 31, 32,
        34, 35, 35, 36, 42, 43, 43, 47, 47, 48, 48, 48, 48, 48, 50, 51, 52, 52, 52, 53, 53, 54,
        55, 55, 56, 58, 59, 78]
SEED = 22
HEADER = ["participant", "cell", "status", "started", "finished", "consented", "pilot", "age", "sex",
          "country_of_residence", "first_language", "nationality"]


def _participants(seed: int) -> list[dict]:
    """participants.csv rows: the 50 analysed (E.2's demographics, shuffled), 4 excluded, 3
    returned. Durations of the analysed: 243 s + 20 s x k, k = 0..49 (median 733 s = 12:13)."""
    rng = np.random.default_rng(seed)
    analysed = [f"P{i:02d}" for i in range(1, 55) if f"P{i:02d}" not in EXCLUDED]
    countries = ["United Kingdom"] * 39 + ["United States"] * 11
    sexes = ["Female"] * 29 + ["Male"] * 20 + [""]
    languages = ["English"] * 47 + ["Polish", "Spanish", ""]
    ages, durations = list(AGES), [243 + 20 * k for k in range(50)]
    for values in (countries, sexes, languages, ages, durations):
        rng.shuffle(values)
    start = datetime(2025, 5, 1, 10, 0, tzinfo=timezone.utc)
    rows = []
    for i, pid in enumerate(analysed):
        consented = start + timedelta(minutes=i, seconds=7)
        rows.append({
            "participant": pid, "status": "completed", "started": (consented - timedelta(seconds=40)).isoformat(),
            "consented": consented.isoformat(),
            "finished": (consented + timedelta(seconds=int(durations[i]))).isoformat(),
            "pilot": 0, "age": ages[i], "sex": sexes[i], "country_of_residence": countries[i],
            "first_language": languages[i], "nationality": countries[i],
        })
    for pid in EXCLUDED:  # excluded: their demographics must not count
        rows.append({"participant": pid, "status": "completed", "consented": start.isoformat(),
                     "finished": (start + timedelta(hours=2)).isoformat(), "age": 99, "sex": "Male",
                     "country_of_residence": "France", "first_language": "French"})
    for k in range(3):
        rows.append({"participant": f"R{k}", "status": "returned", "consented": start.isoformat()})
    return rows


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    """The analysis of the E.2 fixture: (rows of participants.csv, results, report.md, table)."""
    print(f"seed {SEED}")
    root = tmp_path_factory.mktemp("sample")
    export = simulate_export(root / "export", n_participants=54, seed=SEED)
    rows = _participants(SEED)
    write_csv(export / "participants.csv", HEADER, rows)
    results = run_analysis(export, root / "out")
    report = (root / "out" / "report.md").read_text(encoding="utf-8")
    table = pd.read_csv(root / "out" / "tables" / "participants.csv", dtype=str)
    return pd.DataFrame(rows[:50]), results, report, table


def _value(table: pd.DataFrame, section: str, item: str) -> str:
    (value,) = table.loc[(table["section"] == section) & (table["item"] == item), "value"]
    return value


def test_section_reproduces_the_reference_papers_figures(sample_run):
    """The Participants section prints E.2's counts, countries, sexes, age figures and duration."""
    _, results, report, _ = sample_run
    section = report.split("## Participants", 1)[1].split("\n## ", 1)[0]
    assert "57 participants arrived from Prolific (54 completed, 3 returned)" in section
    assert "54 have answers in the data (before exclusions); 4 were excluded and 50 are analysed" in section
    assert "| failed instruction check | 2 |" in section
    assert "39 United Kingdom, 11 United States (country of residence)" in section
    assert "29 female, 20 male, 1 not specified" in section
    assert "age 19 to 78, mean 38.9, median 35.5, SD 13.8" in section
    assert "first language: 47 English, 1 Polish, 1 Spanish, 1 not specified" in section
    assert "12:13 minutes" in section
    assert results["sample"]["demographics_fetched"] is True


def test_figures_equal_pandas_on_the_fixture(sample_run):
    """Every figure of tables/participants.csv equals pandas' value computed from the fixture."""
    people, results, _, table = sample_run
    ages = people["age"].astype(float)
    assert float(_value(table, "age", "mean")) == pytest.approx(ages.mean(), abs=1e-9)
    assert float(_value(table, "age", "median")) == pytest.approx(ages.median(), abs=1e-9)
    assert float(_value(table, "age", "sd")) == pytest.approx(ages.std(ddof=1), abs=1e-9)
    assert (int(_value(table, "age", "min")), int(_value(table, "age", "max"))) == (ages.min(), ages.max())
    assert round(ages.mean(), 1) == 38.9 and ages.median() == 35.5 and round(ages.std(ddof=1), 1) == 13.8
    seconds = (pd.to_datetime(people["finished"]) - pd.to_datetime(people["consented"])).dt.total_seconds()
    assert float(_value(table, "duration", "median_s")) == seconds.median() == 733
    assert _value(table, "duration", "median_mmss") == "12:13"
    for column in ("country_of_residence", "sex"):
        expected = people[column].replace("", "not specified").value_counts()
        got = table[table["section"] == column].set_index("item")["value"].astype(int)
        assert got.to_dict() == expected.to_dict()
    assert int(_value(table, "counts", "included")) == results["participants"]["included"] == 50


def test_sd_is_the_sample_sd(sample_run):
    """The reported SD is the sample SD (ddof=1), which differs from the population SD here."""
    people, results, report, _ = sample_run
    ages = people["age"].astype(float).to_numpy()
    assert results["sample"]["age"]["sd"] == pytest.approx(np.std(ages, ddof=1))
    assert f"SD {np.std(ages, ddof=0):.1f}" not in report and f"SD {np.std(ages, ddof=1):.1f}" in report


def test_without_demographics_the_section_says_so(tmp_path):
    """Without demographic columns the section gives counts and duration and says they were not fetched."""
    export = simulate_export(tmp_path / "export", n_participants=54, seed=SEED)
    rows = [{k: v for k, v in r.items() if k in ("participant", "status", "consented", "finished")}
            for r in _participants(SEED)]
    write_csv(export / "participants.csv", ["participant", "status", "consented", "finished", "age", "sex"], rows)
    run_analysis(export, tmp_path / "out")
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    section = report.split("## Participants", 1)[1].split("\n## ", 1)[0]
    assert "Demographics were not fetched from Prolific" in section
    assert "4 were excluded and 50 are analysed" in section and "12:13 minutes" in section
    table = pd.read_csv(tmp_path / "out" / "tables" / "participants.csv", dtype=str)
    assert _value(table, "demographics", "fetched") == "0"


def test_without_participants_file_counts_remain(tmp_path):
    """An export without participants.csv still gets the counts, and says the duration is unavailable."""
    export = simulate_export(tmp_path / "export", n_participants=40, seed=SEED)
    run_analysis(export, tmp_path / "out")
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "36 are analysed" in report and "Demographics were not fetched" in report
    assert "Study duration: not available" in report


@pytest.mark.parametrize("seconds,text", [(733.4, "12:13"), (59.5, "1:00"), (3725, "62:05"), (None, None)])
def test_mmss_formatting(seconds, text):
    """Durations are written as minutes:seconds, rounded to the second, minutes not capped."""
    assert format_mmss(seconds) == text
