"""Krippendorff's alpha at the nominal, ordinal and interval levels (NLTK since issue 39):
equal to the krippendorff package's old values and to Krippendorff's published example."""

import json
from pathlib import Path

import numpy as np
import pytest

from analysis.errors import AnalysisInputError
from analysis.stats.agreement import (
    agreement,
    coded_agreement,
    coded_pairwise_agreement,
    krippendorff_alpha,
    pairwise_agreement,
)

N = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example of 4 coders and
# 12 units with missing values; the paper gives alpha nominal 0.743, ordinal 0.815,
# interval 0.849.
KRIPP_2011_EXAMPLE = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}
# The krippendorff package (0.9.0) on the same data, to the last digit it printed.
OLD_PACKAGE = {
    "nominal": 0.743421052631579,
    "ordinal": 0.8153875037548814,
    "interval": 0.8491071428571428,
}
REFERENCE = json.loads((Path(__file__).parent / "data" / "krippendorff_reference.json").read_text())


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_published_example_at_each_level(level):
    """Krippendorff's (2011) example gives the paper's alpha, and the old package's to 1e-12."""
    value = krippendorff_alpha(KRIPP_2011_EXAMPLE, level=level).value
    assert value == pytest.approx(PUBLISHED[level], abs=5e-4)
    assert value == pytest.approx(OLD_PACKAGE[level], abs=1e-12)


def test_default_level_is_nominal():
    """Without a level, alpha is nominal, as it was before levels existed."""
    assert krippendorff_alpha(KRIPP_2011_EXAMPLE).value == pytest.approx(
        OLD_PACKAGE["nominal"], abs=1e-12
    )
    assert agreement(KRIPP_2011_EXAMPLE).krippendorff_alpha.value == pytest.approx(
        OLD_PACKAGE["nominal"], abs=1e-12
    )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_equals_old_package_on_seeded_tables(level):
    """On 120 seeded random tables per level (2-5 annotators, gaps, several scales), alpha equals
    the krippendorff package's value (computed once, stored in tests/analysis/data/) to 1e-12."""
    print("tables drawn by:", REFERENCE["source"])
    tables = [t for t in REFERENCE["tables"] if t["level"] == level]
    assert len(tables) == 120
    for table in tables:
        got = krippendorff_alpha(table["ratings"], level=level)
        assert got.value == pytest.approx(table["alpha"], abs=1e-12), table["ratings"]
        # The same through agreement(), the path the annotation app takes.
        assert agreement(table["ratings"], level=level).krippendorff_alpha.value == got.value


def test_levels_differ_where_distances_differ():
    """A disagreement of 1 against 5 costs more at the interval level than 1 against 2; nominal
    does not see the difference (a check that the level reaches the distance)."""
    near = [[1, 2, 3, 4, 5, 1], [2, 2, 3, 4, 5, 1]]
    far = [[1, 2, 3, 4, 5, 1], [5, 2, 3, 4, 5, 1]]
    assert krippendorff_alpha(near).value == krippendorff_alpha(far).value
    assert krippendorff_alpha(near, level="interval").value > krippendorff_alpha(
        far, level="interval"
    ).value
    assert krippendorff_alpha(near, level="ordinal").value > krippendorff_alpha(
        far, level="ordinal"
    ).value


def test_ordinal_depends_on_order_not_spacing():
    """Ordinal alpha is unchanged when the scale points are spaced differently but keep their
    order; interval alpha changes."""
    rows = [[1, 2, 3, 3, 2, 1, 4, 1, 2], [1, 2, 3, 3, 2, 2, 4, 1, 3], [2, 3, 3, 3, 2, 3, 4, 2, 2]]
    stretched = [[{1: 0, 2: 10, 3: 11, 4: 50}[v] for v in r] for r in rows]
    assert krippendorff_alpha(stretched, level="ordinal").value == pytest.approx(
        krippendorff_alpha(rows, level="ordinal").value, abs=1e-12
    )
    assert krippendorff_alpha(stretched, level="interval").value != pytest.approx(
        krippendorff_alpha(rows, level="interval").value, abs=1e-6
    )


def test_coded_agreement_takes_the_numbers_of_the_codes():
    """coded_agreement with values= gives the alpha of the values the codes stand for."""
    ratings = KRIPP_2011_EXAMPLE
    scale = [1.0, 2.0, 3.0, 4.0, 5.0]  # code c is the value c + 1
    coded = np.array([[-1 if v is None else v - 1 for v in r] for r in ratings], dtype=np.int64)
    for level in ("ordinal", "interval"):
        got = coded_agreement(coded, level=level, values=scale).krippendorff_alpha.value
        assert got == pytest.approx(OLD_PACKAGE[level], abs=1e-12)
    # Without values the codes are the numbers: interval distances are unchanged by the shift.
    assert coded_agreement(coded, level="interval").krippendorff_alpha.value == pytest.approx(
        OLD_PACKAGE["interval"], abs=1e-12
    )


def test_pairwise_agreement_passes_the_level():
    """Each pair's alpha is the alpha of the pair's common items at the level asked for."""
    raters = ["A", "B", "C", "D"]
    pairs = pairwise_agreement(KRIPP_2011_EXAMPLE, raters, level="interval")
    first = pairs[0]
    assert (first.rater_a, first.rater_b) == ("A", "B")
    both = [(a, b) for a, b in zip(KRIPP_2011_EXAMPLE[0], KRIPP_2011_EXAMPLE[1]) if N not in (a, b)]
    expected = krippendorff_alpha([[a for a, _ in both], [b for _, b in both]], level="interval")
    assert first.result.krippendorff_alpha.value == pytest.approx(expected.value, abs=1e-12)
    coded = np.array([[-1 if v is None else v for v in r] for r in KRIPP_2011_EXAMPLE])
    same = coded_pairwise_agreement(coded, raters, level="interval")
    assert [p.result.krippendorff_alpha.value for p in same] == pytest.approx(
        [p.result.krippendorff_alpha.value for p in pairs], abs=1e-12
    )


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: krippendorff_alpha([[1, 2], [1, 2]], level="ratio"), "level must be one of"),
        (lambda: agreement([["a", "b"], ["a", "b"]], level="ordinal"), "must be finite numbers"),
        (lambda: agreement([[True, False], [True, True]], level="interval"), "must be finite"),
        (lambda: coded_agreement(np.array([[0, 1], [1, 2]]), level="interval", values=[1.0, 2.0]),
         "every code 0..2"),
        (lambda: coded_agreement(np.array([[0, 1]]), level="ordinal", values=[1.0, float("inf")]),
         "finite numbers"),
    ],
)
def test_bad_level_or_values_are_refused_with_a_message(call, message):
    """An unknown level, a non-numeric ordinal or interval rating, or values missing a code
    raise AnalysisInputError naming the problem."""
    with pytest.raises(AnalysisInputError, match=message):
        call()


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_undefined_cases_hold_at_every_level(level):
    """One value on the paired items, or no paired item, leaves alpha undefined with a reason."""
    same = krippendorff_alpha([[3, 3, 5], [3, 3, N]], level=level)
    assert same.value is None and "same value" in same.undefined_reason
    unpaired = krippendorff_alpha([[1, N], [N, 2]], level=level)
    assert unpaired.value is None and "no item has two ratings" in unpaired.undefined_reason
