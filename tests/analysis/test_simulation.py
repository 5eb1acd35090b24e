"""Simulation-based power: ``analysis.simulate_power`` and ``python -m analysis simulate``."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from statsmodels.stats.power import NormalIndPower

from analysis import AnalysisInputError, cohens_h, holm_correction, simulate_power
from analysis.__main__ import main
from analysis.design import design_cells, load_study_design, study_cells
from analysis.simulation import holm_reject
from spotlight_study.studies.design import build_cells
from spotlight_study.studies.schema import parse_study_file, validate_study_data

from ..processes import run_python

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "spotlight-replication.yaml"
THREE_SETTINGS = REPO / "tests" / "analysis" / "fixtures" / "distractor-study.yaml"
TWO = ["no_pattern", "pattern"]
THREE = ["no_pattern", "pattern", "pattern_with_distractors"]


def write_study(tmp_path: Path, *, settings=("a",), conditions=TWO, target=200, name="study.yaml") -> Path:
    """A minimal study file with the fields the simulation reads."""
    data = {"settings": [{"key": k} for k in settings], "conditions": list(conditions)}
    if target is not None:
        data["target_sample_size"] = target
    path = tmp_path / name
    path.write_text(json.dumps(data) if name.endswith(".json") else yaml.safe_dump(data), encoding="utf-8")
    return path


def platform_cells(path: Path) -> list[tuple[int, tuple[tuple[str, str], ...]]]:
    """The cells the platform builds when it imports ``path`` (its own parser and validation)."""
    data = validate_study_data(parse_study_file(path))
    cells = build_cells([s["key"] for s in data["settings"]], list(data["conditions"]))
    return [(c.index, tuple((t.setting, t.condition) for t in c.tasks)) for c in cells]


# --------------------------------------------------------------------------
# design
# --------------------------------------------------------------------------
@pytest.mark.parametrize("path", [DEMO, THREE_SETTINGS], ids=["demo", "three-settings"])
def test_cells_equal_the_platform_cells(path):
    """The simulated cells of a study file are the platform's cells, in the same order."""
    ours = [(c.index, c.tasks) for c in study_cells(path)]
    assert ours == platform_cells(path)
    assert len(ours) == {DEMO: 4, THREE_SETTINGS: 18}[path]


@pytest.mark.parametrize("n_settings", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("conditions", [TWO, THREE, ["pattern", "no_pattern"]])
def test_design_cells_match_build_cells(n_settings, conditions):
    """For 1 to 6 settings and any condition list, design_cells equals the platform's build_cells."""
    keys = [f"s{i}" for i in range(n_settings)]
    ours = [(c.index, c.tasks) for c in design_cells(keys, conditions)]
    theirs = [(c.index, tuple((t.setting, t.condition) for t in c.tasks)) for c in build_cells(keys, conditions)]
    assert ours == theirs


def test_holm_reject_matches_holm_correction():
    """The vectorised Holm decisions equal analysis.holm_correction (statsmodels) row by row."""
    rng = np.random.default_rng(7)
    # Ties, NaN, values on the step-down thresholds (0.05/6 .. 0.05/1) and an all-NaN row.
    p = rng.choice([0.001, 0.05 / 6, 0.01, 0.0125, 0.05 / 3, 0.025, 0.04, 0.05, 0.2, np.nan], size=(400, 6))
    p[:200] = rng.random((200, 6)) * 0.06
    p[399] = np.nan
    # statsmodels' multipletests runs gc.collect() on every call: cheap here only because the
    # suite froze the heap it built (tests/conftest.py, pytest_collection_finish).
    for alpha, rows in ((0.05, p), (0.1, p[::2])):
        ours = holm_reject(rows, alpha)
        for row, decisions in zip(rows, ours):
            assert decisions.tolist() == holm_correction(row.tolist(), alpha=alpha).reject.tolist()
        assert ours.any() and not ours.all()


# --------------------------------------------------------------------------
# power
# --------------------------------------------------------------------------
@pytest.mark.parametrize("p0, p1", [(0.3, 0.45), (0.4, 0.55)])
def test_power_matches_normal_ind_power_in_the_closed_form_case(p0, p1):
    """One setting, no dropout or exclusion, 100 per condition: power is NormalIndPower's within 3 MC SEs."""
    runs = 4000
    result = simulate_power(["a"], TWO, p_control=p0, p_treatment=p1, n=200, runs=runs, seed=11)
    (comparison,) = result.comparisons
    assert comparison["mean_n_treatment"] == comparison["mean_n_control"] == 100
    expected = NormalIndPower().power(effect_size=cohens_h(p1, p0), nobs1=100, alpha=0.05, ratio=1.0,
                                      alternative="larger")
    assert comparison["mc_se"] == pytest.approx(math.sqrt(comparison["power"] * (1 - comparison["power"]) / runs))
    assert abs(comparison["power"] - expected) < 3 * comparison["mc_se"]
    # With one comparison, "all" and "any" are that comparison.
    assert result.power_all.power == result.power_any.power == comparison["power"]


def test_equal_rates_keep_the_family_wise_error_at_alpha():
    """With P1 = P0, Holm keeps the share of runs with any rejection near alpha, not 1 - 0.95**6."""
    result = simulate_power(["a", "b", "c"], THREE, p_control=0.4, p_treatment=0.4, n=360, runs=3000, seed=5)
    assert len(result.comparisons) == 6
    assert result.power_any.power < 0.05 + 3 * result.power_any.mc_se
    assert result.power_any.power > 0.01


def test_same_seed_same_result_and_other_seed_differs():
    """A seed reproduces the whole result; another seed gives other draws."""
    kwargs = dict(p_control=0.3, p_treatment=0.6, n=48, dropout=0.2, exclusion_rate=0.1, runs=300)
    first = simulate_power(["doctor", "farming"], TWO, seed=42, **kwargs).as_dict()
    again = simulate_power(["doctor", "farming"], TWO, seed=42, **kwargs).as_dict()
    other = simulate_power(["doctor", "farming"], TWO, seed=43, **kwargs).as_dict()
    assert first == again
    assert first["parameters"]["seed"] == 42
    assert first != other


def test_dropout_costs_arrivals_not_completed_participants():
    """With dropout every run still completes exactly N, balanced over the cells; arrivals grow to about N/(1-D)."""
    result = simulate_power(["doctor", "farming"], TWO, p_control=0.3, p_treatment=0.6, n=48, dropout=0.3,
                            runs=2000, seed=3)
    assert result.min_analysed == result.max_analysed == 48
    for comparison in result.comparisons:
        assert comparison["mean_n_treatment"] == comparison["mean_n_control"] == 24
    assert result.mean_arrivals == pytest.approx(48 / 0.7, rel=0.02)
    assert result.p95_arrivals > result.mean_arrivals
    none = simulate_power(["doctor", "farming"], TWO, p_control=0.3, p_treatment=0.6, n=48, runs=50, seed=3)
    assert none.mean_arrivals == none.p95_arrivals == 48


def test_exclusions_reduce_the_analysed_n_by_about_the_rate():
    """With exclusion rate E the analysed N averages N(1 - E), and power falls."""
    kwargs = dict(p_control=0.3, p_treatment=0.5, n=100, runs=2000, seed=9)
    excluded = simulate_power(["a", "b"], TWO, exclusion_rate=0.2, **kwargs)
    full = simulate_power(["a", "b"], TWO, **kwargs)
    assert abs(excluded.mean_analysed - 80) < 0.5
    assert excluded.min_analysed < 80 < excluded.max_analysed <= 100
    assert full.mean_analysed == 100
    assert excluded.comparisons[0]["power"] < full.comparisons[0]["power"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"p_control": -0.1}, "p_control must be in [0, 1]"),
        ({"p_treatment": 1.5}, "p_treatment must be in [0, 1]"),
        ({"dropout": 1.0}, "dropout must be in [0, 1)"),
        ({"exclusion_rate": -0.2}, "exclusion_rate must be in [0, 1)"),
        ({"alpha": 0.0}, "alpha must be between 0 and 1"),
        ({"runs": 0}, "runs must be between 1 and 100000"),
        ({"runs": 2.5}, "runs must be a whole number"),
        ({"n": 3}, "below the 4 counterbalancing cells"),
        ({"seed": -1}, "seed must be between 0"),
    ],
)
def test_simulate_power_rejects_bad_values(kwargs, message):
    """Out-of-range arguments raise AnalysisInputError naming the argument."""
    args = dict(p_control=0.3, p_treatment=0.6, n=48, runs=10, seed=1) | kwargs
    with pytest.raises(AnalysisInputError, match=re.escape(message)):
        simulate_power(["doctor", "farming"], TWO, **args)


# --------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------
def test_cli_json_output_shape(capsys):
    """--json prints one object: design, parameters, comparisons, overall and participants."""
    code = main(["simulate", "--study", str(THREE_SETTINGS), "--p-control", "0.3", "--p-treatment", "0.6",
                 "--n", "36", "--runs", "200", "--seed", "4", "--dropout", "0.1", "--exclusion-rate", "0.05",
                 "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"design", "parameters", "comparisons", "overall", "participants"}
    assert out["design"] == {"settings": ["bakery", "commute", "garden"], "conditions": THREE, "n_cells": 18}
    assert out["parameters"] == {"n": 36, "runs": 200, "seed": 4, "p_control": 0.3, "p_treatment": 0.6,
                                 "dropout": 0.1, "exclusion_rate": 0.05, "alpha": 0.05,
                                 "alternative": "larger", "correction": "holm"}
    assert [(c["setting"], c["treatment"]) for c in out["comparisons"]] == [
        (s, t) for s in ("bakery", "commute", "garden") for t in ("pattern", "pattern_with_distractors")]
    for entry in [*out["comparisons"], out["overall"]["all"], out["overall"]["any"]]:
        assert 0 <= entry["power"] <= 1
        assert entry["mc_se"] == pytest.approx(math.sqrt(entry["power"] * (1 - entry["power"]) / 200))
    assert out["overall"]["all"]["power"] <= min(c["power"] for c in out["comparisons"])
    assert out["overall"]["any"]["power"] >= max(c["power"] for c in out["comparisons"])
    assert set(out["participants"]) == {"mean_analysed", "min_analysed", "max_analysed", "mean_arrivals",
                                        "p95_arrivals"}


def test_cli_text_uses_the_target_sample_size(capsys):
    """Without --n the study's target_sample_size is simulated and the text names each comparison."""
    assert main(["simulate", "--study", str(DEMO), "--p-control", "0.3", "--p-treatment", "0.6",
                 "--runs", "100", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "= 4 cells; N = 48 completing; 100 runs, seed 1" in out
    assert out.count("pattern vs no_pattern") == 2
    assert "All comparisons significant:" in out and "Any comparison significant:" in out


def test_cli_runs_as_a_module_without_django():
    """``python -m analysis simulate`` works in a fresh interpreter and never imports Django."""
    code = ("import sys; from analysis.__main__ import main; "
            f"rc = main(['simulate', '--study', {str(DEMO)!r}, '--p-control', '0.3', '--p-treatment', '0.6', "
            "'--runs', '50', '--seed', '2', '--json']); "
            "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules), 'django imported'; "
            "sys.exit(rc)")
    proc = run_python("-c", code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["design"]["n_cells"] == 4


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing file", "no such study file"),
        ("bad yaml", "is not valid YAML"),
        ("bad json", "is not valid JSON"),
        ("list at top", "top level must be a mapping"),
        ("no settings", "`settings` must be a non-empty list"),
        ("setting without key", "settings[0] has no `key`"),
        ("unknown condition", "unknown condition(s) highlight"),
        ("no baseline", "no no_pattern condition"),
        ("no pattern condition", "no pattern condition"),
        ("no target", "has no target_sample_size; give --n"),
        ("p out of range", "p_treatment must be in [0, 1]"),
        ("dropout 1", "dropout must be in [0, 1)"),
        ("n below cells", "below the 2 counterbalancing cells"),
    ],
)
def test_cli_bad_input_exits_2_with_a_message(tmp_path, capsys, case, message):
    """Each bad input prints ``error: <message>`` on stderr, nothing on stdout, and exits 2."""
    study = write_study(tmp_path)
    extra: list[str] = []
    if case == "missing file":
        study = tmp_path / "nope.yaml"
    elif case == "bad yaml":
        study.write_text("settings: [a\n", encoding="utf-8")
    elif case == "bad json":
        study = tmp_path / "study.json"
        study.write_text("{", encoding="utf-8")
    elif case == "list at top":
        study.write_text("- a\n- b\n", encoding="utf-8")
    elif case == "no settings":
        study = write_study(tmp_path, settings=())
    elif case == "setting without key":
        study.write_text("settings: [{title: x}]\nconditions: [no_pattern, pattern]\n", encoding="utf-8")
    elif case == "unknown condition":
        study = write_study(tmp_path, conditions=["no_pattern", "highlight"])
    elif case == "no baseline":
        study = write_study(tmp_path, conditions=["pattern", "pattern_with_distractors"])
    elif case == "no pattern condition":
        study = write_study(tmp_path, conditions=["no_pattern"])
    elif case == "no target":
        study = write_study(tmp_path, target=None)
    elif case == "p out of range":
        extra = ["--p-treatment", "1.2"]
    elif case == "dropout 1":
        extra = ["--dropout", "1"]
    elif case == "n below cells":
        extra = ["--n", "1"]
    code = main(["simulate", "--study", str(study), "--p-control", "0.3", "--p-treatment", "0.6",
                 "--runs", "10", *extra])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err.startswith("error: ")
    assert message in captured.err


@pytest.mark.parametrize("args", [["--p-treatment", "high"], ["--runs", "many"], []])
def test_cli_bad_syntax_exits_2(capsys, args):
    """A non-number or a missing required option is an argparse error with status 2."""
    base = ["simulate", "--study", str(DEMO), "--p-control", "0.3"]
    if args != []:
        base += ["--p-treatment", "0.6"]
    with pytest.raises(SystemExit) as exc:
        main(base + args)
    assert exc.value.code == 2
    assert "usage: python -m analysis simulate" in capsys.readouterr().err


def test_load_study_design_reads_json(tmp_path):
    """A JSON study file gives the same design fields as its YAML twin."""
    as_json = write_study(tmp_path, settings=("x", "y"), name="study.json")
    as_yaml = write_study(tmp_path, settings=("x", "y"), name="study.yaml")
    assert load_study_design(as_json) == load_study_design(as_yaml) == {
        "settings": ["x", "y"], "conditions": TWO, "target_sample_size": 200}
