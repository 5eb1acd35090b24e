"""Agreement from integer codes: exactly the statistics of the same ratings as lists."""

import random

import numpy as np
import pytest

from analysis.errors import AnalysisInputError
from analysis.stats import input_memo
from analysis.stats.agreement import (
    agreement,
    coded_agreement,
    coded_pairwise_agreement,
    pairwise_agreement,
)

N = None


def _random_ratings(rng: random.Random, n_raters: int, n_items: int, values: list) -> list[list]:
    return [[rng.choice(values) for _ in range(n_items)] for _ in range(n_raters)]


def _coded(rows: list[list], codes: dict) -> np.ndarray:
    return np.array([[-1 if v is None else codes[v] for v in r] for r in rows], dtype=np.int64)


@pytest.mark.parametrize("seed", range(12))
def test_coded_agreement_equals_agreement_whatever_the_code_numbers(seed):
    """Any one-to-one coding of the values gives exactly agreement()'s result (==, not approx)."""
    rng = random.Random(seed)
    values = rng.choice([[True, False, N], ["a", "b", "c", N, N], [1, 2, 3, 4, N]])
    rows = _random_ratings(rng, rng.randint(1, 4), rng.randint(1, 40), values)
    distinct = [v for v in values if v is not None]
    shuffled = rng.sample(range(10, 10 + len(distinct)), len(distinct))
    codes = dict(zip(distinct, shuffled, strict=True))
    assert coded_agreement(_coded(rows, codes)) == agreement(rows)


@pytest.mark.parametrize("seed", range(8))
def test_coded_pairwise_agreement_equals_pairwise_agreement(seed):
    """Pairs and against-reference rows from codes equal pairwise_agreement's, in order."""
    rng = random.Random(100 + seed)
    values = [True, False, N]
    rows = _random_ratings(rng, rng.randint(2, 4), rng.randint(1, 30), values)
    reference = [rng.choice(values) for _ in rows[0]]
    names = [f"r{i}" for i in range(len(rows))]
    codes = {False: 3, True: 0}
    got = coded_pairwise_agreement(
        _coded(rows, codes), names, reference=_coded([reference], codes)[0]
    )
    assert got == pairwise_agreement(rows, names, reference=reference)
    assert coded_pairwise_agreement(_coded(rows, codes), names) == pairwise_agreement(rows, names)


def test_coded_input_is_checked():
    """Not 2-D, no row, floats, codes below -1, wrong names or reference: AnalysisInputError."""
    with pytest.raises(AnalysisInputError, match="2-D"):
        coded_agreement(np.array([0, 1]))
    with pytest.raises(AnalysisInputError, match="2-D"):
        coded_agreement(np.zeros((0, 3), dtype=np.int64))
    with pytest.raises(AnalysisInputError, match="integers"):
        coded_agreement(np.array([[0.0, 1.0]]))
    with pytest.raises(AnalysisInputError, match="-1"):
        coded_agreement(np.array([[0, -2]]))
    with pytest.raises(AnalysisInputError, match="raters"):
        coded_pairwise_agreement(np.array([[0, 1], [1, 0]]), ["a"])
    with pytest.raises(AnalysisInputError, match="reference"):
        coded_pairwise_agreement(np.array([[0, 1], [1, 0]]), ["a", "b"], reference=np.array([0]))


def test_memo_gives_the_computed_result_and_follows_every_change(monkeypatch):
    """Equal codes: the earlier result, without computing; one changed code: a new result."""
    input_memo.clear()
    calls = []
    real = input_memo.memoized

    def counting(name, arrays, compute):
        return real(name, arrays, lambda: calls.append(name) or compute())

    monkeypatch.setattr(input_memo, "memoized", counting)
    rows = [[True, False, True, N, True], [True, True, True, False, N]]
    codes = {True: 0, False: 1}
    first = coded_agreement(_coded(rows, codes))
    assert first == agreement(rows) and "cohen_kappa_score" in calls
    calls.clear()
    assert coded_agreement(_coded(rows, codes)) == first and calls == []
    rows[1][1] = False
    changed = coded_agreement(_coded(rows, codes))
    assert changed == agreement(rows) and changed != first and "coded_agreement" in calls


def test_memo_keeps_at_most_max_entries(monkeypatch):
    """The memo forgets the least recently used results beyond MAX_ENTRIES."""
    input_memo.clear()
    monkeypatch.setattr(input_memo, "MAX_ENTRIES", 3)
    for i in range(5):
        input_memo.memoized("f", (np.array([i]),), lambda i=i: i)
    assert len(input_memo._results) == 3
    assert input_memo.memoized("f", (np.array([0]),), lambda: "recomputed") == "recomputed"
    assert input_memo.memoized("f", (np.array([4]),), lambda: "recomputed") == 4
    # The same bytes with another dtype or shape are another input.
    assert input_memo.array_key(np.array([1, 2])) != input_memo.array_key(np.array([[1, 2]]))
    assert input_memo.array_key(np.array([1], np.int64)) != input_memo.array_key(np.array([1.0]))
