"""Sample-size planning: ``analysis.plan_sample_size`` and ``python -m analysis plan``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from analysis import AnalysisInputError, plan_sample_size
from analysis.__main__ import main

from ..processes import run_python

REPO = Path(__file__).resolve().parents[2]


def rates_for_h(h: float, p0: float = 0.3) -> tuple[float, float]:
    """P0 and the P1 whose Cohen's h against P0 is exactly ``h``."""
    phi0 = 2 * math.asin(math.sqrt(p0))
    return p0, math.sin((phi0 + h) / 2) ** 2


@pytest.mark.parametrize(
    "p0, p1, alpha, power",
    [(0.3, 0.6, 0.05, 0.8), (0.1, 0.2, 0.05, 0.9), (0.45, 0.55, 0.01, 0.8), (0.5, 0.95, 0.1, 0.95)],
)
def test_n_per_condition_matches_statsmodels(p0, p1, alpha, power):
    """n per condition is statsmodels' NormalIndPower for Cohen's h (one-sided, larger), rounded up."""
    h = proportion_effectsize(p1, p0)
    raw = NormalIndPower().solve_power(effect_size=h, alpha=alpha, power=power, ratio=1.0, alternative="larger")
    plan = plan_sample_size(p0, p1, alpha=alpha, power=power)
    assert plan.n_per_condition == math.ceil(float(raw))
    assert plan.cohens_h == pytest.approx(h)
    assert plan.alternative == "larger"


@pytest.mark.parametrize("h, published_n", [(0.5, 50), (0.2, 310)])
def test_matches_cohens_table(h, published_n):
    """Cohen (1988) Table 6.4.1, one-tailed alpha .05, power .80: h=.2 -> 310, h=.5 -> 50."""
    p0, p1 = rates_for_h(h)
    assert plan_sample_size(p0, p1).n_per_condition == published_n


def test_dropout_inflation_and_cells():
    """Dropout inflates n by 1/(1 - d), rounded up; the total covers every condition and fills the cells equally."""
    base = plan_sample_size(0.3, 0.6).n_per_condition
    plan = plan_sample_size(0.3, 0.6, dropout=0.2, cells=4, conditions=2)
    assert plan.n_per_condition == base
    assert plan.n_per_condition_with_dropout == math.ceil(base / 0.8)
    assert plan.n_total % 4 == 0
    assert plan.n_total >= 2 * plan.n_per_condition_with_dropout
    assert plan.n_total - 4 < 2 * plan.n_per_condition_with_dropout
    assert plan.n_per_cell * 4 == plan.n_total
    three = plan_sample_size(0.3, 0.6, dropout=0.2, cells=6, conditions=3)
    assert three.n_total % 6 == 0 and three.n_total >= 3 * three.n_per_condition_with_dropout


def test_dropout_that_divides_exactly_adds_no_participant():
    """A dropout that gives a whole number (n=50, d=0.5 -> 100) is not rounded up by float noise."""
    p0, p1 = rates_for_h(0.5)
    assert plan_sample_size(p0, p1, dropout=0.5).n_per_condition_with_dropout == 100


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"p_control": 0.0, "p_treatment": 0.5}, "p_control must be a proportion"),
        ({"p_control": 0.3, "p_treatment": 1.0}, "p_treatment must be a proportion"),
        ({"p_control": float("nan"), "p_treatment": 0.5}, "p_control must be a proportion"),
        ({"p_control": 0.6, "p_treatment": 0.3}, "must be larger than p_control"),
        ({"p_control": 0.4, "p_treatment": 0.4}, "must be larger than p_control"),
        ({"p_control": 0.3, "p_treatment": 0.6, "dropout": 1.0}, "dropout must be in [0, 1)"),
        ({"p_control": 0.3, "p_treatment": 0.6, "dropout": -0.1}, "dropout must be in [0, 1)"),
        ({"p_control": 0.3, "p_treatment": 0.6, "cells": 0}, "cells must be a whole number"),
        ({"p_control": 0.3, "p_treatment": 0.6, "power": 1.0}, "power must be between 0 and 1"),
    ],
)
def test_bad_inputs_raise_clear_errors(kwargs, fragment):
    """Rates outside (0, 1), P1 <= P0, dropout outside [0, 1) and bad cells or power raise AnalysisInputError."""
    with pytest.raises(AnalysisInputError) as info:
        plan_sample_size(**kwargs)
    assert fragment in str(info.value)


def test_cli_json_prints_one_object(capsys):
    """``plan --json`` prints exactly one JSON object with the planner's numbers."""
    code = main(["plan", "--p-control", "0.3", "--p-treatment", "0.6", "--dropout", "0.1", "--cells", "4", "--json"])
    assert code == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert out.strip().count("\n") == 0
    assert data == plan_sample_size(0.3, 0.6, dropout=0.1, cells=4).as_dict()


def test_cli_text_names_each_number(capsys):
    """Plain ``plan`` output states n per condition, with dropout, and the total for the cells."""
    assert main(["plan", "--p-control", "0.3", "--p-treatment", "0.6", "--dropout", "0.1", "--cells", "4"]) == 0
    out = capsys.readouterr().out
    plan = plan_sample_size(0.3, 0.6, dropout=0.1, cells=4)
    assert f"n per condition:                {plan.n_per_condition}\n" in out
    assert f"with dropout:   {plan.n_per_condition_with_dropout} " in out
    assert f"total participants:             {plan.n_total} (2 conditions, 4 cells of {plan.n_per_cell})" in out


@pytest.mark.parametrize(
    "args",
    [
        ["--p-control", "0.6", "--p-treatment", "0.3"],
        ["--p-control", "1.5", "--p-treatment", "0.3"],
        ["--p-control", "0.3", "--p-treatment", "0.6", "--dropout", "1"],
    ],
)
def test_cli_bad_input_exits_2_without_traceback(args):
    """Bad values exit with status 2 and a one-line ``error:`` message, no traceback, nothing on stdout."""
    proc = run_python("-m", "analysis", "plan", *args, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
