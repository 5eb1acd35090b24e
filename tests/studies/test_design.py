"""Counterbalancing design: balanced Latin squares and cells."""
from collections import Counter
from itertools import pairwise

import pytest

from spotlight_study.studies.design import balanced_latin_square, build_cells


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
def test_latin_square_rows_are_permutations_and_columns_balanced(n):
    """Every row is a permutation and every treatment appears equally often at each position."""
    rows = balanced_latin_square(n)
    assert len(rows) == (2 * n if n % 2 and n > 1 else n)
    for row in rows:
        assert sorted(row) == list(range(n))
    for col in range(n):
        counts = Counter(row[col] for row in rows)
        assert set(counts) == set(range(n))
        assert len(set(counts.values())) == 1


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_latin_square_balances_first_order_carryover(n):
    """Every ordered pair of different treatments is adjacent equally often (Williams design)."""
    rows = balanced_latin_square(n)
    pairs = Counter(p for row in rows for p in pairwise(row))
    expected = {(a, b) for a in range(n) for b in range(n) if a != b}
    assert set(pairs) == expected
    assert len(set(pairs.values())) == 1


def test_two_settings_two_conditions_make_the_four_reference_cells():
    """2 settings x 2 conditions give the 4 cells of the reference study (order x pattern placement)."""
    cells = build_cells(["doctor", "farming"], ["no_pattern", "pattern"])
    assert len(cells) == 4
    combos = {tuple((t.setting, t.condition) for t in c.tasks) for c in cells}
    assert combos == {
        (("doctor", "no_pattern"), ("farming", "pattern")),
        (("doctor", "pattern"), ("farming", "no_pattern")),
        (("farming", "pattern"), ("doctor", "no_pattern")),
        (("farming", "no_pattern"), ("doctor", "pattern")),
    }
    assert [c.index for c in cells] == [0, 1, 2, 3]


@pytest.mark.parametrize("k,c", [(3, 2), (4, 2), (2, 3), (3, 3)])
def test_every_setting_meets_every_condition_and_position_equally(k, c):
    """Across the cells, each setting appears in each condition and at each position equally often."""
    keys = [f"s{i}" for i in range(k)]
    conditions = ["no_pattern", "pattern", "pattern_with_distractors"][:c]
    cells = build_cells(keys, conditions)
    for cell in cells:
        assert sorted(t.setting for t in cell.tasks) == sorted(keys)
    by_condition = Counter((t.setting, t.condition) for cell in cells for t in cell.tasks)
    assert len(by_condition) == k * c and len(set(by_condition.values())) == 1
    by_position = Counter((i, t.setting) for cell in cells for i, t in enumerate(cell.tasks))
    assert len(by_position) == k * k and len(set(by_position.values())) == 1


def test_bad_designs_are_refused():
    """Empty or repeated settings/conditions raise ValueError."""
    with pytest.raises(ValueError):
        build_cells([], ["pattern"])
    with pytest.raises(ValueError):
        build_cells(["a", "a"], ["pattern"])
    with pytest.raises(ValueError):
        balanced_latin_square(0)


def test_design_warnings_regular_design_has_none():
    """The reference design (2 settings, 2 conditions, 48 participants in 4 cells) is regular."""
    from spotlight_study.studies.design import design_warnings

    assert design_warnings(setting_keys=["a", "b"], conditions=["no_pattern", "pattern"], target_sample_size=48) == []


def test_design_warnings_fewer_settings_than_conditions_and_uneven_sample():
    """Two settings with three conditions leave a condition unseen; 50 does not split into 6 cells."""
    from spotlight_study.studies.design import design_warnings

    warnings = design_warnings(
        setting_keys=["a", "b"],
        conditions=["no_pattern", "pattern", "pattern_with_distractors"],
        target_sample_size=50,
    )
    assert len(warnings) == 2
    assert warnings[0].startswith("2 main setting(s) but 3 conditions")
    assert "not a multiple of the 6 cells" in warnings[1] and "(use 48 or 54)" in warnings[1]
