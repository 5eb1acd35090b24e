"""Agreement statistics: known values from the reference examples, undefined cases, invariance."""

import json
import random
from pathlib import Path

import pytest

from analysis.stats.agreement import (
    agreement,
    cohen_kappa,
    krippendorff_alpha,
    percent_agreement,
    tag_presence,
)

N = None
# The krippendorff package's documented example (alpha nominal = 0.691358).
KRIPP_PACKAGE_EXAMPLE = [
    [N, N, N, N, N, 3, 4, 1, 2, 1, 1, 3, 3, N, 3],
    [1, N, 2, 1, 3, 3, 4, 3, N, N, N, N, N, N, N],
    [N, N, 2, 1, 3, 4, 4, N, 2, 1, 1, 3, 3, N, 4],
]
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", p. 8 (4 coders, 12 units),
# also in the package's examples; nominal alpha = 0.743.
KRIPP_2011_EXAMPLE = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]
# scikit-learn's cohen_kappa_score docstring example (kappa = 0.6875).
SKLEARN_Y1 = ["negative", "positive", "negative", "neutral", "positive"]
SKLEARN_Y2 = ["negative", "positive", "negative", "neutral", "negative"]


def test_krippendorff_alpha_matches_package_example():
    """Nominal alpha of the krippendorff package's documented example is 0.691358."""
    assert krippendorff_alpha(KRIPP_PACKAGE_EXAMPLE).value == pytest.approx(0.691358, abs=1e-6)


def test_krippendorff_alpha_matches_published_example():
    """Nominal alpha of Krippendorff's (2011) worked example is 0.743."""
    assert krippendorff_alpha(KRIPP_2011_EXAMPLE).value == pytest.approx(0.743, abs=5e-4)


def test_cohen_kappa_matches_sklearn_example():
    """Cohen's kappa of scikit-learn's documented example is 0.6875."""
    assert cohen_kappa([SKLEARN_Y1, SKLEARN_Y2]).value == pytest.approx(0.6875)


def test_cohen_kappa_by_hand_on_booleans():
    """Kappa of 2x2 data equals (p_o - p_e) / (1 - p_e) worked by hand."""
    a = [True, True, True, False, False, True, False, True]
    b = [True, True, False, False, False, True, True, True]
    p_o = 6 / 8
    p_e = (5 / 8) * (5 / 8) + (3 / 8) * (3 / 8)
    assert cohen_kappa([a, b]).value == pytest.approx((p_o - p_e) / (1 - p_e))


def test_percent_agreement_counts_items_with_two_ratings():
    """Percent agreement is the share of items with 2+ ratings where all ratings agree."""
    stat = percent_agreement([[1, 1, 2, N], [1, 2, 2, 1], [N, 1, 2, N]])
    assert stat.value == pytest.approx(2 / 3)
    assert percent_agreement(KRIPP_PACKAGE_EXAMPLE).value == pytest.approx(9 / 12)


def test_cohen_kappa_uses_only_items_both_labeled():
    """Items that one of the two annotators did not label are left out of kappa."""
    with_missing = [SKLEARN_Y1 + ["neutral", N], SKLEARN_Y2 + [N, "positive"]]
    assert cohen_kappa(with_missing).value == pytest.approx(0.6875)


@pytest.mark.parametrize(
    "ratings,which,reason",
    [
        ([[1, 1, 1], [1, 1, 1]], "cohen_kappa", "same value"),
        ([[1, 1, 1], [1, 1, 1]], "krippendorff_alpha", "same value"),
        (
            [[True, True, N], [True, True, True], [N, True, True]],
            "krippendorff_alpha",
            "same value",
        ),
        ([[1, 2, 1], [1, 2, 2], [1, 1, 1]], "cohen_kappa", "exactly two annotators, there are 3"),
        ([[1, N], [N, 2]], "cohen_kappa", "no item in common"),
        ([[1, N], [N, 2]], "krippendorff_alpha", "no item has two ratings"),
        ([[1, N], [N, 2]], "percent_agreement", "no item has two ratings"),
        ([[1, 2, 3]], "cohen_kappa", "there are 1"),
    ],
)
def test_undefined_statistics_say_why(ratings, which, reason):
    """Undefined statistics carry no number and name the reason (no NaN)."""
    stat = getattr(agreement(ratings), which)
    assert stat.value is None and not stat.defined
    assert reason in stat.undefined_reason
    assert stat.display().startswith("undefined (")


def test_single_value_on_paired_items_is_undefined_even_if_others_vary():
    """Values only on unpaired items do not make alpha defined when paired ratings never vary."""
    stat = krippendorff_alpha([[1, 1, 5], [1, 1, N]])
    assert stat.value is None and "same value" in stat.undefined_reason


def test_invalid_input_is_rejected():
    """Ragged rows, NaN and empty input raise ValueError with a message."""
    with pytest.raises(ValueError, match="same length"):
        agreement([[1, 2], [1]])
    with pytest.raises(ValueError, match="not NaN"):
        agreement([[1.0, float("nan")], [1.0, 2.0]])
    with pytest.raises(ValueError, match="at least one annotator"):
        agreement([])


def _stats(ratings):
    a = agreement(ratings)
    return a.percent_agreement.value, a.cohen_kappa.value, a.krippendorff_alpha.value


def _assert_same(x, y):
    for u, v in zip(x, y, strict=True):
        assert (u is None) == (v is None)
        if u is not None:
            assert u == pytest.approx(v, abs=1e-12)


@pytest.mark.parametrize(
    "data", [KRIPP_PACKAGE_EXAMPLE, KRIPP_2011_EXAMPLE, [SKLEARN_Y1, SKLEARN_Y2]]
)
def test_invariant_under_reordering_and_renaming(data):
    """Reordering annotators or items and renaming label values leave every statistic unchanged."""
    rng = random.Random(7)
    base = _stats(data)
    for _ in range(5):
        rows = [list(r) for r in data]
        rng.shuffle(rows)  # annotators in another order
        order = list(range(len(rows[0])))
        rng.shuffle(order)  # items in another order
        rows = [[r[i] for i in order] for r in rows]
        values = sorted({v for r in rows for v in r if v is not None}, key=str)
        renamed = dict(zip(values, [f"label-{rng.random()}" for _ in values], strict=True))  # new names
        rows = [[None if v is None else renamed[v] for v in r] for r in rows]
        _assert_same(_stats(rows), base)


def test_invariant_on_random_binary_data():
    """On random present/absent data with gaps, relabeling True<->False keeps the statistics."""
    rng = random.Random(11)
    for _ in range(20):
        rows = [[rng.choice([True, False, None]) for _ in range(15)] for _ in range(2)]
        flipped = [[None if v is None else not v for v in r] for r in rows]
        _assert_same(_stats(flipped), _stats(rows))


def test_tags_are_compared_one_by_one():
    """Tag sets become one present/absent array per tag; unlabeled items stay missing."""
    presence = tag_presence(
        [
            [["hard work", "weather"], [], None],
            [["hard work"], ["weather"], ["family"]],
        ]
    )
    assert list(presence) == ["family", "hard work", "weather"]
    assert presence["hard work"] == [[True, False, None], [True, False, False]]
    assert presence["weather"] == [[True, False, None], [False, True, False]]
    # Whole sets agree on no item here, but the tag "hard work" agrees on both shared items.
    assert percent_agreement(presence["hard work"]).value == 1.0


# Alpha of the tables below as the krippendorff package (0.9.0, GPL-3.0, replaced by NLTK in
# issue 39) computed it, written down once as numbers: tests/analysis/data/.
_OLD_ALPHA = json.loads(
    (Path(__file__).parent / "data" / "krippendorff_reference.json").read_text()
)["definition_tables"]["alpha"]


def _by_definition(rows):
    """The statistics of ``agreement`` computed item by item from their definitions, with the
    library called on codes in order of first appearance (the oracle of the numpy version);
    alpha is only said to be defined or not here (its values are in ``_OLD_ALPHA``)."""
    from sklearn.metrics import cohen_kappa_score

    columns = list(zip(*rows))
    pairable = [c for c in columns if sum(v is not None for v in c) >= 2]
    agreeing = sum(len({v for v in c if v is not None}) == 1 for c in pairable)
    rated = [r for r in rows if any(v is not None for v in r)]
    kappa = None
    if len(rated) == 2:
        pairs = [(a, b) for a, b in zip(*rated) if a is not None and b is not None]
        codes = {}
        for a, b in pairs:
            codes.setdefault(a, len(codes))
            codes.setdefault(b, len(codes))
        if len(codes) >= 2:
            kappa = float(cohen_kappa_score([codes[a] for a, _ in pairs], [codes[b] for _, b in pairs]))
    alpha = None
    kept = [[c[a] for c in pairable] for a in range(len(rows))]
    codes = {}
    for r in kept:
        for v in r:
            if v is not None:
                codes.setdefault(v, len(codes))
    if len(codes) >= 2:
        alpha = "defined"
    return {
        "n_items": len(pairable),
        "n_annotators": len(rated),
        "n_ratings": sum(v is not None for r in rows for v in r),
        "percent": agreeing / len(pairable) if pairable else None,
        "kappa": kappa,
        "alpha": alpha,
    }


@pytest.mark.parametrize("seed", range(40))
def test_agreement_equals_its_definitions_to_the_last_digit(seed):
    """Random tables (1-4 annotators, missing ratings, bool/str/int labels): the vectorised
    statistics equal the item-by-item definitions exactly, and alpha the krippendorff package's
    old value to 1e-12 (the alpha now comes from NLTK, issue 39)."""
    rng = random.Random(seed)
    for k in range(25):
        values = rng.choice([[True, False], ["a", "b", "c"], [0, 1, 2, 3]])
        n_rows, n_items = rng.randint(1, 4), rng.randint(1, 40)
        rows = [[None if rng.random() < 0.3 else rng.choice(values) for _ in range(n_items)]
                for _ in range(n_rows)]
        got, expected = agreement(rows), _by_definition(rows)
        assert (got.n_items, got.n_annotators, got.n_ratings) == (
            expected["n_items"], expected["n_annotators"], expected["n_ratings"])
        assert got.percent_agreement.value == expected["percent"]
        assert got.cohen_kappa.value == expected["kappa"]
        old = _OLD_ALPHA[str(seed)][k]
        assert (expected["alpha"] is None) == (old is None)
        if old is None:
            assert got.krippendorff_alpha.value is None
        else:
            assert got.krippendorff_alpha.value == pytest.approx(old, abs=1e-12)
