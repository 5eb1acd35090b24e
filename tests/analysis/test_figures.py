"""Figure geometry and edge cases, checked on the matplotlib objects."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis import wilson_ci
from analysis.figures import background_figure, identification_figure, likert_figure


def rates_row(setting, condition, k, n):
    lo, hi = wilson_ci(k, n)
    return {"setting": setting, "condition": condition, "n": n, "k": k, "rate": k / n, "ci_lo": lo, "ci_hi": hi}


def test_identification_figure_draws_wilson_bars_even_at_0_and_100_percent():
    """Rates of 0 and 1 (Wilson bounds one ulp off) still draw, with bar heights equal to the rates."""
    rates = pd.DataFrame([rates_row("doctor", "pattern", 12, 12), rates_row("doctor", "no_pattern", 0, 9),
                          rates_row("farming", "pattern", 5, 8), rates_row("farming", "no_pattern", 2, 8)])
    assert rates.loc[0, "ci_hi"] <= 1.0
    ax = identification_figure(rates).axes[0]
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == [0.0, 0.25, 0.625, 1.0]
    labels = {t.get_text() for t in ax.texts}
    assert {"12/12", "0/9", "5/8", "2/8"} <= labels


def test_likert_bars_split_neutral_answers_across_zero():
    """Each diverging bar starts at -(share 1 + share 2 + share 3 / 2) and spans the full 100%."""
    counts = {"pattern": [0, 1, 2, 3, 4], "no_pattern": [2, 2, 2, 2, 2]}
    rows = []
    for condition, values in counts.items():
        for level, count in enumerate(values, start=1):
            rows.append({"item": "ease", "condition": condition, "response": level, "count": count,
                         "share": count / sum(values)})
    ax = likert_figure(pd.DataFrame(rows)).axes[0]
    bars = [p for p in ax.patches if p.get_height() == pytest.approx(0.7)]
    assert len(bars) == 10
    first_pattern, first_no = bars[0], bars[5]
    assert first_pattern.get_x() == pytest.approx(-(0 + 0.1 + 0.2 / 2))
    assert first_no.get_x() == pytest.approx(-(0.2 + 0.2 + 0.2 / 2))
    assert sum(p.get_width() for p in bars[:5]) == pytest.approx(1.0)


def test_figures_without_data_show_a_note():
    """Empty survey tables give a figure with a 'no responses' note instead of failing."""
    empty_likert = pd.DataFrame(columns=["item", "condition", "response", "count", "share"])
    empty_bg = pd.DataFrame(columns=["item", "response", "count", "share"])
    assert "No per-condition survey responses" in likert_figure(empty_likert).axes[0].texts[0].get_text()
    assert "No background survey responses" in background_figure(empty_bg).axes[0].texts[0].get_text()
