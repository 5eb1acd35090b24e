"""Inter-annotator agreement for one label, from plain arrays (no Django, no ORM).

The Django side (``spotlight_study.annotation.selectors`` and ``machine_agreement``) gathers the
ratings from the database and calls this module; every statistic lives here.

``ratings[a][i]`` is annotator ``a``'s value for item ``i``, or ``None`` where that annotator
did not label the item. Values are any hashable labels (booleans, strings, ints); they are
nominal, so only equality matters, unless a ``level`` of ``"ordinal"`` or ``"interval"`` says
they are numbers whose order or differences count for Krippendorff's alpha.

Three statistics, each a :class:`Statistic` that is either a number or undefined with a reason:

- percent agreement: the share of items with at least two ratings on which all ratings are equal;
- Cohen's kappa (``sklearn.metrics.cohen_kappa_score``), only when exactly two annotators
  labeled, over the items both labeled;
- Krippendorff's alpha, for any number of annotators with missing ratings, at the level given
  (nominal by default, ordinal or interval): NLTK's ``AnnotationTask.alpha`` with the level's
  distance (:mod:`analysis.stats.alpha`). Percent agreement and kappa stay nominal.

:func:`pairwise_agreement` gives the same three statistics for every pair of annotators and for
each annotator against the final labels.

:func:`coded_agreement` and :func:`coded_pairwise_agreement` take the ratings already coded as
integers (an array, ``-1`` for a missing rating) and give exactly the same results: for callers
that hold many labels as arrays.

Tags are not a single nominal value: :func:`tag_presence` turns tag sets into one present/absent
array per tag, and each is compared on its own.

Kappa with a bootstrap confidence interval and the machine coder's decision rule are in
:mod:`analysis.stats.agreement_ci`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AnalysisInputError
from . import alpha as alpha_lib
from . import input_memo

Ratings = Sequence[Sequence[Hashable | None]]


@dataclass(frozen=True)
class Statistic:
    """A statistic's value, or ``None`` with ``undefined_reason`` saying why it has none."""

    value: float | None
    undefined_reason: str = ""

    @property
    def defined(self) -> bool:
        """Whether there is a number."""
        return self.value is not None

    def display(self, digits: int = 3) -> str:
        """The value rounded to ``digits`` places, or ``undefined (reason)``."""
        if self.value is None:
            return f"undefined ({self.undefined_reason})"
        return f"{self.value:.{digits}f}"


def undefined(reason: str) -> Statistic:
    """A :class:`Statistic` without a value, saying why."""
    return Statistic(value=None, undefined_reason=reason)


@dataclass(frozen=True)
class Agreement:
    """Agreement on one label.

    Attributes
    ----------
    n_items : int
        Items with at least two ratings (the only ones that carry information on agreement).
    n_annotators : int
        Annotators with at least one rating.
    n_ratings : int
        Ratings in all (not ``None``).
    percent_agreement : Statistic
        Share (0..1) of the ``n_items`` on which all ratings are equal.
    cohen_kappa : Statistic
        Cohen's kappa over the items both annotators labeled; defined only for exactly two
        annotators.
    krippendorff_alpha : Statistic
        Krippendorff's alpha at the level asked for (nominal by default), using every item with
        two or more ratings.
    """

    n_items: int
    n_annotators: int
    n_ratings: int
    percent_agreement: Statistic
    cohen_kappa: Statistic
    krippendorff_alpha: Statistic


#: Label types that are hashable and never NaN (exact classes, not subclasses).
_PLAIN_LABEL_TYPES = frozenset({bool, int, str})


def validate_ratings(ratings: Ratings) -> list[list[Hashable | None]]:
    """The ratings as lists of rows; AnalysisInputError if empty, ragged, NaN or unhashable."""
    rows = [list(r) for r in ratings]
    if not rows:
        raise AnalysisInputError("ratings must have at least one annotator (row).")
    n = len(rows[0])
    if any(len(r) != n for r in rows):
        raise AnalysisInputError("Every annotator's row must have one entry per item (same length).")
    for r in rows:
        for v in r:
            # The usual labels (None, bool, int, str) pass at once: the checks below, through
            # the Hashable ABC, cost seconds on 60,000 ratings (issue 11).
            if v is None or v.__class__ in _PLAIN_LABEL_TYPES:
                continue
            if v is not None and (isinstance(v, float) and math.isnan(v)):
                raise AnalysisInputError("Use None, not NaN, for a missing rating.")
            if v is not None and not isinstance(v, Hashable):
                raise AnalysisInputError(f"Rating values must be hashable, got {type(v).__name__}.")
    return rows


def percent_agreement(ratings: Ratings) -> Statistic:
    """Share of items with two or more ratings on which all ratings are equal.

    Parameters
    ----------
    ratings : sequence of sequences, shape (n_annotators, n_items)
        ``None`` marks a missing rating; items with fewer than two ratings are skipped.

    Returns
    -------
    Statistic
        In 0..1; undefined if no item has two ratings.
    """
    return _percent_agreement(_coded(validate_ratings(ratings)))


def _coded(rows: list[list]) -> np.ndarray:
    """Checked rows as an int array of shape (n_annotators, n_items): a code per distinct value
    (any order), ``-1`` where a rating is missing. The statistics below work on it with numpy;
    each recodes the values it uses in order of first appearance, as :func:`value_codes` does,
    so that the libraries see exactly the codes they always saw."""
    return _coded_values(rows)[0]


def _coded_values(rows: list[list]) -> tuple[np.ndarray, list]:
    """:func:`_coded` and the distinct values in code order (``values[code]``)."""
    codes = value_codes(v for r in rows for v in r if v is not None)
    coded = np.array([[-1 if v is None else codes[v] for v in r] for r in rows], dtype=np.int64)
    return coded.reshape(len(rows), len(rows[0]) if rows else 0), list(codes)


def _first_appearance(codes: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, int]:
    """A look-up table from the codes of :func:`_coded` to 0, 1, ... in the order in which they
    first appear in ``order`` (a 1-D array of codes, none missing), and how many there are."""
    distinct, first = np.unique(order, return_index=True)
    lookup = np.full(int(codes.max(initial=0)) + 1, -1, dtype=np.int64)
    lookup[distinct[np.argsort(first, kind="stable")]] = np.arange(len(distinct))
    return lookup, len(distinct)


def _percent_agreement(coded: np.ndarray) -> Statistic:
    """:func:`percent_agreement` of :func:`_coded` ratings."""
    rated = coded >= 0
    pairable = rated.sum(axis=0) >= 2
    paired = int(pairable.sum())
    if paired == 0:
        return undefined("no item has two ratings")
    values, present = coded[:, pairable], rated[:, pairable]
    highest = np.where(present, values, -1).max(axis=0)
    lowest = np.where(present, values, np.iinfo(np.int64).max).min(axis=0)
    agreeing = int((highest == lowest).sum())
    return Statistic(agreeing / paired)


def cohen_kappa(ratings: Ratings) -> Statistic:
    """Cohen's kappa of exactly two annotators over the items both labeled.

    Parameters
    ----------
    ratings : sequence of sequences, shape (n_annotators, n_items)
        Rows of annotators without any rating are ignored.

    Returns
    -------
    Statistic
        Undefined if the number of annotators with ratings is not two, if they share no item,
        or if all their shared ratings have a single value (chance agreement is then 1 and
        kappa is 0/0).

    Notes
    -----
    ``sklearn.metrics.cohen_kappa_score(y1, y2)``: kappa = (p_o - p_e) / (1 - p_e), with p_e
    from each annotator's own label frequencies.

    References
    ----------
    J. Cohen (1960). A coefficient of agreement for nominal scales. Educational and Psychological
    Measurement 20(1), 37-46.
    """
    return _cohen_kappa(_coded(validate_ratings(ratings)))


def _cohen_kappa(coded: np.ndarray) -> Statistic:
    """:func:`cohen_kappa` of :func:`_coded` ratings."""
    from sklearn.metrics import cohen_kappa_score

    rows = coded[(coded >= 0).any(axis=1)]
    if len(rows) != 2:
        return undefined(f"needs exactly two annotators, there are {len(rows)}")
    both = (rows[0] >= 0) & (rows[1] >= 0)
    if not both.any():
        return undefined("the two annotators labeled no item in common")
    a, b = rows[0][both], rows[1][both]
    # First appearance over the pairs (a1, b1, a2, b2, ...).
    lookup, n_values = _first_appearance(coded, np.column_stack((a, b)).ravel())
    if n_values < 2:
        return undefined("every shared rating has the same value")
    y1, y2 = lookup[a], lookup[b]
    value = input_memo.memoized(
        "cohen_kappa_score", (y1, y2), lambda: float(cohen_kappa_score(y1.tolist(), y2.tolist()))
    )
    if math.isnan(value):  # pragma: no cover - excluded by the single-value check above
        return undefined("chance agreement is 1")
    return Statistic(value)


def krippendorff_alpha(ratings: Ratings, *, level: str = "nominal") -> Statistic:
    """Krippendorff's alpha with missing ratings, at the nominal, ordinal or interval level.

    Parameters
    ----------
    ratings : sequence of sequences, shape (n_annotators, n_items)
        ``None`` marks a missing rating. For ``"ordinal"`` and ``"interval"`` every other value
        must be a number (int or float, not bool).
    level : {"nominal", "ordinal", "interval"}
        The level of measurement: which differences between two values count as how much
        disagreement (:mod:`analysis.stats.alpha`).

    Returns
    -------
    Statistic
        Undefined if no item has two ratings, or if the ratings on such items take a single
        value (the expected disagreement is then zero).

    Raises
    ------
    AnalysisInputError
        If the ratings are invalid (see :func:`agreement`), ``level`` is unknown, or an ordinal
        or interval rating is not a number.

    Notes
    -----
    ``nltk.metrics.agreement.AnnotationTask(...).alpha()`` with the level's distance;
    alpha = 1 - D_o / D_e. It equals the ``krippendorff`` package's
    ``alpha(reliability_data=..., level_of_measurement=level)`` to 1e-12, which this module
    called until issue 39.

    References
    ----------
    K. Krippendorff (2011). Computing Krippendorff's Alpha-Reliability: its worked example gives
    0.743 (nominal), 0.815 (ordinal), 0.849 (interval).
    """
    coded, values = _coded_values(validate_ratings(ratings))
    return _krippendorff_alpha(coded, level, alpha_lib.numbers(values, level))


def _krippendorff_alpha(coded: np.ndarray, level: str = "nominal", scale: np.ndarray | None = None) -> Statistic:
    """:func:`krippendorff_alpha` of :func:`_coded` ratings; ``scale[code]`` is the number a
    code stands for (ordinal and interval levels, :func:`analysis.stats.alpha.scale`)."""
    pairable = (coded >= 0).sum(axis=0) >= 2
    if not pairable.any():
        return undefined("no item has two ratings")
    values = coded[:, pairable]
    present = values >= 0
    if level == "nominal":
        # First appearance row by row over the pairable items.
        lookup, n_values = _first_appearance(coded, values[present])
        data = np.where(present, lookup[np.maximum(values, 0)], -1).astype(float)
    else:
        data = scale[np.maximum(values, 0)]
        n_values = len(np.unique(data[present]))
    if n_values < 2:
        return undefined("every rating on items with two ratings has the same value")
    data[~present] = np.nan
    value = input_memo.memoized(
        f"krippendorff alpha {level}", (data,), lambda: alpha_lib.alpha(data, level=level)
    )
    if math.isnan(value):  # pragma: no cover - excluded by the checks above
        return undefined("expected disagreement is zero")
    return Statistic(value)


def agreement(ratings: Ratings, *, level: str = "nominal") -> Agreement:
    """Percent agreement, Cohen's kappa and Krippendorff's alpha for one label.

    Parameters
    ----------
    ratings : sequence of sequences, shape (n_annotators, n_items)
        ``ratings[a][i]`` is annotator ``a``'s value for item ``i`` or ``None``.
    level : {"nominal", "ordinal", "interval"}
        Krippendorff's alpha's level of measurement (:func:`krippendorff_alpha`); percent
        agreement and Cohen's kappa count equal values only, at every level.

    Returns
    -------
    Agreement

    Raises
    ------
    AnalysisInputError
        If there is no row, rows differ in length, or a value is NaN or unhashable; if
        ``level`` is unknown, or an ordinal or interval rating is not a number.

    Examples
    --------
    >>> a = agreement([[True, False, True], [True, True, None]])
    >>> a.n_items, a.percent_agreement.value
    (2, 0.5)
    """
    coded, values = _coded_values(validate_ratings(ratings))  # checked and coded once
    return coded_agreement(coded, level=level, values=alpha_lib.numbers(values, level))


def validate_codes(coded: np.ndarray) -> np.ndarray:
    """``coded`` as an int64 array of shape (n_annotators, n_items); AnalysisInputError if it
    has another dimension, no row, or a code below -1."""
    coded = np.asarray(coded)
    if coded.ndim != 2 or coded.shape[0] == 0:
        raise AnalysisInputError(
            f"coded ratings must be 2-D with at least one annotator (row), got shape {coded.shape}."
        )
    if coded.dtype.kind not in "iu":
        raise AnalysisInputError(f"coded ratings must be integers, got {coded.dtype}.")
    if coded.size and int(coded.min()) < -1:
        raise AnalysisInputError("codes are 0, 1, ... for values and -1 for a missing rating.")
    return coded.astype(np.int64, copy=False)


def coded_agreement(
    coded: np.ndarray,
    *,
    level: str = "nominal",
    values: Sequence[float] | np.ndarray | None = None,
) -> Agreement:
    """:func:`agreement` of ratings already coded as integers.

    Parameters
    ----------
    coded : ndarray of int, shape (n_annotators, n_items)
        One code per distinct value, in any order (equal values, equal codes; the code numbers
        themselves carry no meaning), ``-1`` for a missing rating.
    level : {"nominal", "ordinal", "interval"}
        Krippendorff's alpha's level of measurement, as for :func:`agreement`.
    values : sequence of float, optional
        For ``"ordinal"`` and ``"interval"``: ``values[code]`` is the number the code stands
        for (a scale point). Without it the codes themselves are the numbers. Unused for
        ``"nominal"``.

    Returns
    -------
    Agreement
        Exactly :func:`agreement` of the ratings the codes stand for: each statistic recodes the
        values it uses in order of first appearance before it calls its library.

    Raises
    ------
    AnalysisInputError
        If ``coded`` is not 2-D, has no row or a code below -1 (:func:`validate_codes`); if
        ``level`` is unknown, or ``values`` has no finite number for some code.

    Notes
    -----
    For callers that hold many labels as arrays (the annotation overview: 60,000 labels, some
    thirty statistics): coding once there spares a list of Python values per statistic.
    """
    coded = validate_codes(coded)
    scale = alpha_lib.scale(coded, level, values)
    return input_memo.memoized(
        "coded_agreement" if level == "nominal" else f"coded_agreement {level}",
        (coded, scale),
        lambda: _agreement(coded, level, scale),
    )


def _agreement(coded: np.ndarray, level: str = "nominal", scale: np.ndarray | None = None) -> Agreement:
    """:func:`coded_agreement` of checked codes (``scale`` as :func:`_krippendorff_alpha`)."""
    rated = coded >= 0
    return Agreement(
        n_items=int((rated.sum(axis=0) >= 2).sum()),
        n_annotators=int(rated.any(axis=1).sum()),
        n_ratings=int(rated.sum()),
        percent_agreement=_percent_agreement(coded),
        cohen_kappa=_cohen_kappa(coded),
        krippendorff_alpha=_krippendorff_alpha(coded, level, scale),
    )


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of two raters on one label, over the items both rated.

    ``rater_a``/``rater_b`` are the names passed in (e.g. annotator pseudonyms, or the name of
    the reference such as ``final``); ``result`` holds percent agreement, Cohen's kappa and
    Krippendorff's alpha of the two rows (see :func:`agreement`).
    """

    rater_a: str
    rater_b: str
    result: Agreement


def pairwise_agreement(
    ratings: Ratings,
    raters: Sequence[str],
    *,
    reference: Sequence[Hashable | None] | None = None,
    reference_name: str = "final",
    level: str = "nominal",
) -> list[PairAgreement]:
    """Every pair of raters (annotator x annotator), then every rater against a reference.

    Parameters
    ----------
    ratings : sequence of sequences, shape (n_annotators, n_items)
        As for :func:`agreement`; ``None`` marks a missing rating.
    raters : sequence of str, length n_annotators
        The name of each row.
    reference : sequence, length n_items, optional
        A reference row such as the final (agreed or adjudicated) labels, ``None`` where an
        item has none. Each rater is compared with it as if it were a second rater.
    reference_name : str
        The name of the reference row in the result.
    level : {"nominal", "ordinal", "interval"}
        Krippendorff's alpha's level of measurement, as for :func:`agreement`.

    Returns
    -------
    list of PairAgreement
        Pairs ``(raters[i], raters[j])`` for ``i < j`` in the order of ``raters``, then
        ``(raters[i], reference_name)``; only pairs that rated at least one item in common.
        Each pair's statistics cover exactly the items both rated (``n_ratings == 2 * n_items``).

    Raises
    ------
    AnalysisInputError
        If the rows are invalid (see :func:`agreement`), ``raters`` does not name every row,
        or ``reference`` has another length.

    Notes
    -----
    Each pair's Cohen's kappa is ``sklearn.metrics.cohen_kappa_score`` over the items both
    rated, as in :func:`cohen_kappa`; pairwise kappas are the annotator x annotator view of
    tools such as INCEpTION. Against the final labels a kappa is optimistic for annotators whose
    labels made the final label (an agreed final label equals theirs).
    """
    rows = validate_ratings(ratings)
    if len(raters) != len(rows):
        raise AnalysisInputError(f"raters names {len(raters)} rows, ratings has {len(rows)}.")
    if reference is None:
        coded, values = _coded_values(rows)
        return coded_pairwise_agreement(
            coded, raters, reference_name=reference_name, level=level,
            values=alpha_lib.numbers(values, level),
        )
    ref = validate_ratings([reference])[0]
    if len(ref) != len(rows[0]):
        raise AnalysisInputError("reference must have one entry per item (the length of each row).")
    # One code per value across the raters and the reference.
    coded, values = _coded_values(rows + [ref])
    return coded_pairwise_agreement(
        coded[:-1], raters, reference=coded[-1], reference_name=reference_name, level=level,
        values=alpha_lib.numbers(values, level),
    )


def coded_pairwise_agreement(
    coded: np.ndarray,
    raters: Sequence[str],
    *,
    reference: np.ndarray | None = None,
    reference_name: str = "final",
    level: str = "nominal",
    values: Sequence[float] | np.ndarray | None = None,
) -> list[PairAgreement]:
    """:func:`pairwise_agreement` of ratings already coded as integers.

    Parameters
    ----------
    coded : ndarray of int, shape (n_annotators, n_items)
        As for :func:`coded_agreement`.
    raters : sequence of str, length n_annotators
        The name of each row.
    reference : ndarray of int, shape (n_items,), optional
        The reference row, coded with the same codes as ``coded`` (a value has one code in
        both), ``-1`` where an item has none.
    reference_name : str
        The name of the reference row in the result.
    level, values
        Krippendorff's alpha's level of measurement and the number of each code, as for
        :func:`coded_agreement`.

    Returns
    -------
    list of PairAgreement
        As :func:`pairwise_agreement`: each pair's :func:`coded_agreement` over the items both
        rated (the other ratings of the two rows set to missing), pairs without a common item
        left out.

    Raises
    ------
    AnalysisInputError
        If ``coded`` is invalid (:func:`validate_codes`), ``raters`` does not name every row, or
        ``reference`` has another length.
    """
    coded = validate_codes(coded)
    if len(raters) != len(coded):
        raise AnalysisInputError(f"raters names {len(raters)} rows, ratings has {len(coded)}.")
    pairs = [
        (raters[i], raters[j], coded[i], coded[j])
        for i in range(len(coded))
        for j in range(i + 1, len(coded))
    ]
    if reference is not None:
        ref = validate_codes(np.asarray(reference).reshape(1, -1))[0]
        if len(ref) != coded.shape[1]:
            raise AnalysisInputError("reference must have one entry per item (the length of each row).")
        pairs += [(raters[i], reference_name, coded[i], ref) for i in range(len(coded))]
    out = []
    for name_a, name_b, row_a, row_b in pairs:
        both = (row_a >= 0) & (row_b >= 0)  # as common_items: a rating needs its counterpart
        if not both.any():
            continue
        common = np.where(both, np.stack((row_a, row_b)), -1)
        out.append(PairAgreement(name_a, name_b, coded_agreement(common, level=level, values=values)))
    return out


def common_items(
    row_a: Sequence[Hashable | None], row_b: Sequence[Hashable | None]
) -> tuple[list[Hashable | None], list[Hashable | None]]:
    """The two rows with ratings kept only on the items both rated (``None`` elsewhere).

    Parameters
    ----------
    row_a, row_b : sequence, length n_items
        Nominal ratings, ``None`` where the rater did not rate the item.

    Returns
    -------
    (list, list)
        Both of length n_items.

    Raises
    ------
    ValueError
        If the rows differ in length.

    Notes
    -----
    A rating without its counterpart compares nothing, and would make ``n_ratings`` of
    :func:`agreement` more than twice ``n_items``.
    """
    both = [a is not None and b is not None for a, b in zip(row_a, row_b, strict=True)]
    return ([a if k else None for a, k in zip(row_a, both)],
            [b if k else None for b, k in zip(row_b, both)])


def tag_presence(
    tag_sets: Sequence[Sequence[Iterable[str] | None]],
) -> dict[str, list[list[bool | None]]]:
    """One present/absent rating array per tag, from each annotator's tag sets.

    Parameters
    ----------
    tag_sets : sequence of sequences, shape (n_annotators, n_items)
        The tags an annotator gave an item (an iterable of strings), or ``None`` where the
        annotator did not label it.

    Returns
    -------
    dict
        ``{tag: ratings}`` for every tag used at least once, where ``ratings[a][i]`` is ``True``
        if annotator ``a`` gave item ``i`` the tag, ``False`` if they labeled the item without
        it, and ``None`` if they did not label the item. Sorted by tag.
    """
    rows = [list(r) for r in tag_sets]
    tags = sorted({t for r in rows for s in r if s is not None for t in s})
    return {tag: [[None if s is None else tag in set(s) for s in r] for r in rows] for tag in tags}


def value_codes(values: Iterable[Hashable]) -> dict[Hashable, int]:
    """Integer codes for the distinct values, in order of first appearance."""
    return {v: i for i, v in enumerate(dict.fromkeys(values))}
