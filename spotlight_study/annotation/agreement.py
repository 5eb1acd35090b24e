"""Inter-annotator agreement for one label, from plain arrays (no Django, no ORM).

Input layout follows the ``krippendorff`` package: ``ratings[a][i]`` is annotator ``a``'s value
for item ``i``, or ``None`` where that annotator did not label the item. Values are any hashable
labels (booleans, strings, ints); they are nominal, so only equality matters.

Three statistics, each a :class:`Statistic` that is either a number or undefined with a reason:

- percent agreement: the share of items with at least two ratings on which all ratings are equal;
- Cohen's kappa (``sklearn.metrics.cohen_kappa_score``), only when exactly two annotators
  labeled, over the items both labeled;
- Krippendorff's alpha, nominal (``krippendorff.alpha(..., level_of_measurement="nominal")``),
  for any number of annotators with missing ratings.

:func:`pairwise_agreement` gives the same three statistics for every pair of annotators and for
each annotator against the final labels.

Tags are not a single nominal value: :func:`tag_presence` turns tag sets into one present/absent
array per tag, and each is compared on its own.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

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


def _undefined(reason: str) -> Statistic:
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
        Krippendorff's alpha, nominal metric, using every item with two or more ratings.
    """

    n_items: int
    n_annotators: int
    n_ratings: int
    percent_agreement: Statistic
    cohen_kappa: Statistic
    krippendorff_alpha: Statistic


def _validate(ratings: Ratings) -> list[list[Hashable | None]]:
    rows = [list(r) for r in ratings]
    if not rows:
        raise ValueError("ratings must have at least one annotator (row).")
    n = len(rows[0])
    if any(len(r) != n for r in rows):
        raise ValueError("Every annotator's row must have one entry per item (same length).")
    for r in rows:
        for v in r:
            if v is not None and (isinstance(v, float) and math.isnan(v)):
                raise ValueError("Use None, not NaN, for a missing rating.")
            if v is not None and not isinstance(v, Hashable):
                raise ValueError(f"Rating values must be hashable, got {type(v).__name__}.")
    return rows


def percent_agreement(ratings: Ratings) -> Statistic:
    """Share of items with two or more ratings on which all ratings are equal.

    Parameters
    ----------
    ratings : sequence of sequences, shape (n_annotators, n_items)
        ``None`` marks a missing rating.

    Returns
    -------
    Statistic
        In 0..1; undefined if no item has two ratings.
    """
    rows = _validate(ratings)
    n_items = len(rows[0])
    paired = agreeing = 0
    for i in range(n_items):
        values = [r[i] for r in rows if r[i] is not None]
        if len(values) < 2:
            continue
        paired += 1
        agreeing += len(set(values)) == 1
    if paired == 0:
        return _undefined("no item has two ratings")
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
    from sklearn.metrics import cohen_kappa_score

    rows = [r for r in _validate(ratings) if any(v is not None for v in r)]
    if len(rows) != 2:
        return _undefined(f"needs exactly two annotators, there are {len(rows)}")
    pairs = [(a, b) for a, b in zip(*rows, strict=True) if a is not None and b is not None]
    if not pairs:
        return _undefined("the two annotators labeled no item in common")
    codes = _codes(v for pair in pairs for v in pair)
    if len(codes) < 2:
        return _undefined("every shared rating has the same value")
    y1 = [codes[a] for a, _ in pairs]
    y2 = [codes[b] for _, b in pairs]
    value = float(cohen_kappa_score(y1, y2))
    if math.isnan(value):  # pragma: no cover - excluded by the single-value check above
        return _undefined("chance agreement is 1")
    return Statistic(value)


def krippendorff_alpha(ratings: Ratings) -> Statistic:
    """Krippendorff's alpha for nominal data with missing ratings.

    Parameters
    ----------
    ratings : sequence of sequences, shape (n_annotators, n_items)
        ``None`` marks a missing rating.

    Returns
    -------
    Statistic
        Undefined if no item has two ratings, or if the ratings on such items take a single
        value (the expected disagreement is then zero).

    Notes
    -----
    ``krippendorff.alpha(reliability_data=..., level_of_measurement="nominal")`` with values
    coded as integers and missing ratings as NaN; alpha = 1 - D_o / D_e.

    References
    ----------
    K. Krippendorff (2011). Computing Krippendorff's Alpha-Reliability.
    """
    import krippendorff

    rows = _validate(ratings)
    n_items = len(rows[0])
    pairable = [i for i in range(n_items) if sum(r[i] is not None for r in rows) >= 2]
    if not pairable:
        return _undefined("no item has two ratings")
    codes = _codes(r[i] for r in rows for i in pairable if r[i] is not None)
    if len(codes) < 2:
        return _undefined("every rating on items with two ratings has the same value")
    data = np.array(
        [[np.nan if r[i] is None else codes[r[i]] for i in pairable] for r in rows], dtype=float
    )
    value = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    if math.isnan(value):  # pragma: no cover - excluded by the checks above
        return _undefined("expected disagreement is zero")
    return Statistic(value)


def agreement(ratings: Ratings) -> Agreement:
    """Percent agreement, Cohen's kappa and Krippendorff's alpha for one label.

    Parameters
    ----------
    ratings : sequence of sequences, shape (n_annotators, n_items)
        ``ratings[a][i]`` is annotator ``a``'s value for item ``i`` or ``None``.

    Returns
    -------
    Agreement

    Raises
    ------
    ValueError
        If there is no row, rows differ in length, or a value is NaN or unhashable.

    Examples
    --------
    >>> a = agreement([[True, False, True], [True, True, None]])
    >>> a.n_items, a.percent_agreement.value
    (2, 0.5)
    """
    rows = _validate(ratings)
    n_items = len(rows[0])
    return Agreement(
        n_items=sum(1 for i in range(n_items) if sum(r[i] is not None for r in rows) >= 2),
        n_annotators=sum(1 for r in rows if any(v is not None for v in r)),
        n_ratings=sum(v is not None for r in rows for v in r),
        percent_agreement=percent_agreement(rows),
        cohen_kappa=cohen_kappa(rows),
        krippendorff_alpha=krippendorff_alpha(rows),
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

    Returns
    -------
    list of PairAgreement
        Pairs ``(raters[i], raters[j])`` for ``i < j`` in the order of ``raters``, then
        ``(raters[i], reference_name)``; only pairs that rated at least one item in common.
        Each pair's statistics cover exactly the items both rated (``n_ratings == 2 * n_items``).

    Raises
    ------
    ValueError
        If the rows are invalid (see :func:`agreement`), ``raters`` does not name every row,
        or ``reference`` has another length.

    Notes
    -----
    Each pair's Cohen's kappa is ``sklearn.metrics.cohen_kappa_score`` over the items both
    rated, as in :func:`cohen_kappa`; pairwise kappas are the annotator x annotator view of
    tools such as INCEpTION. Against the final labels a kappa is optimistic for annotators whose
    labels made the final label (an agreed final label equals theirs).
    """
    rows = _validate(ratings)
    if len(raters) != len(rows):
        raise ValueError(f"raters names {len(raters)} rows, ratings has {len(rows)}.")
    pairs = [
        (raters[i], raters[j], rows[i], rows[j])
        for i in range(len(rows))
        for j in range(i + 1, len(rows))
    ]
    if reference is not None:
        ref = _validate([reference])[0]
        if len(ref) != len(rows[0]):
            raise ValueError("reference must have one entry per item (the length of each row).")
        pairs += [(raters[i], reference_name, rows[i], ref) for i in range(len(rows))]
    out = []
    for name_a, name_b, row_a, row_b in pairs:
        both = [a is not None and b is not None for a, b in zip(row_a, row_b, strict=True)]
        if not any(both):
            continue
        # Only the items both rated: a rating without its counterpart compares nothing, and
        # would make n_ratings more than twice n_items.
        common_a = [a if k else None for a, k in zip(row_a, both)]
        common_b = [b if k else None for b, k in zip(row_b, both)]
        out.append(PairAgreement(name_a, name_b, agreement([common_a, common_b])))
    return out


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


def _codes(values: Iterable[Hashable]) -> dict[Hashable, int]:
    """Integer codes for the distinct values, in order of first appearance."""
    codes: dict[Hashable, int] = {}
    for v in values:
        codes.setdefault(v, len(codes))
    return codes


# --- Cohen's kappa with a bootstrap confidence interval (machine coder) ------------------------


@dataclass(frozen=True)
class KappaCI:
    """Cohen's kappa of two raters with a bootstrap confidence interval.

    ``kappa``, ``ci_low`` and ``ci_high`` are each a :class:`Statistic`; ``n_items`` is the
    number of items both rated; ``confidence_level`` e.g. 0.95; ``n_resamples`` and ``seed``
    make the interval reproducible.
    """

    n_items: int
    kappa: Statistic
    ci_low: Statistic
    ci_high: Statistic
    confidence_level: float
    n_resamples: int
    seed: int


#: The largest share of bootstrap resamples without a kappa (0/0) that still gives an interval.
MAX_DEGENERATE_SHARE = 0.05


def _kappa_vectorized(a: np.ndarray, b: np.ndarray, n_codes: int, axis: int = -1) -> np.ndarray:
    """Cohen's kappa along ``axis`` of integer-coded ratings (NaN where chance agreement is 1)."""
    a = np.moveaxis(np.asarray(a), axis, -1)
    b = np.moveaxis(np.asarray(b), axis, -1)
    p_o = np.mean(a == b, axis=-1)
    p_e = sum(np.mean(a == c, axis=-1) * np.mean(b == c, axis=-1) for c in range(n_codes))
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (p_o - p_e) / (1.0 - p_e)
    return np.where(np.isclose(p_e, 1.0), np.nan, kappa)


def kappa_with_ci(
    rater_a: Sequence[Hashable | None],
    rater_b: Sequence[Hashable | None],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 20260101,
) -> KappaCI:
    """Cohen's kappa of two raters over the items both rated, with a paired bootstrap CI.

    Parameters
    ----------
    rater_a, rater_b : sequence, length n_items
        Nominal ratings, ``None`` where a rater did not rate the item.
    confidence_level : float
        In (0, 1).
    n_resamples : int
        Bootstrap resamples (at least 100).
    seed : int
        Seed of ``numpy.random.default_rng`` passed to scipy, so the interval is reproducible.

    Returns
    -------
    KappaCI
        ``kappa`` is undefined as in :func:`cohen_kappa`. The interval is undefined if kappa
        is, if fewer than 5 items were rated by both, or if more than
        :data:`MAX_DEGENERATE_SHARE` of the resamples have a single value (kappa 0/0), which
        happens with very few items or very little variation.

    Raises
    ------
    ValueError
        If the rows differ in length or the parameters are out of range.

    Notes
    -----
    ``scipy.stats.bootstrap((a, b), statistic, paired=True, vectorized=True,
    method="percentile", rng=default_rng(seed))``: items are resampled with replacement, each
    keeping both raters' ratings together (paired), and the interval is the percentile interval
    of the resampled kappas. Percentile rather than BCa, because BCa's jackknife fails on the
    degenerate leave-one-out samples that small pilot sets produce.

    References
    ----------
    B. Efron, R. J. Tibshirani (1993). An Introduction to the Bootstrap, ch. 13. Chapman & Hall.
    """
    from scipy.stats import bootstrap

    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be between 0 and 1.")
    if n_resamples < 100:
        raise ValueError("n_resamples must be at least 100.")
    rows = _validate([rater_a, rater_b])
    pairs = [(x, y) for x, y in zip(*rows, strict=True) if x is not None and y is not None]
    kappa = cohen_kappa([[x for x, _ in pairs], [y for _, y in pairs]]) if pairs else _undefined(
        "the two raters rated no item in common"
    )

    def result(low: Statistic, high: Statistic) -> KappaCI:
        return KappaCI(len(pairs), kappa, low, high, confidence_level, n_resamples, seed)

    if not kappa.defined:
        return result(_undefined("kappa is undefined"), _undefined("kappa is undefined"))
    if len(pairs) < 5:
        reason = f"only {len(pairs)} items rated by both (a bootstrap needs at least 5)"
        return result(_undefined(reason), _undefined(reason))
    codes = _codes(v for pair in pairs for v in pair)
    a = np.array([codes[x] for x, _ in pairs])
    b = np.array([codes[y] for _, y in pairs])
    res = bootstrap(
        (a, b),
        lambda x, y, axis=-1: _kappa_vectorized(x, y, len(codes), axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    resampled = np.asarray(res.bootstrap_distribution, dtype=float)
    degenerate = int(np.isnan(resampled).sum())
    if degenerate > MAX_DEGENERATE_SHARE * n_resamples:
        reason = (
            f"{degenerate} of {n_resamples} resamples have a single value (kappa 0/0): too few "
            "items or too little variation"
        )
        return result(_undefined(reason), _undefined(reason))
    alpha = (1 - confidence_level) / 2
    # scipy's percentile interval, over the resamples where kappa is defined.
    low, high = (float(q) for q in np.nanpercentile(resampled, [100 * alpha, 100 * (1 - alpha)]))
    return result(Statistic(low), Statistic(high))


@dataclass(frozen=True)
class NonInferiority:
    """The decision whether a machine coder could replace a second human coder on one label.

    ``non_inferior`` is ``True``/``False``, or ``None`` when it cannot be decided (``reason``
    says why). ``machine_ci_low`` is the lower bound of kappa(machine, final labels);
    ``human_kappa`` the human x human kappa it is held against; ``margin`` the allowed loss.
    ``statement`` is the decision in words.
    """

    non_inferior: bool | None
    machine_ci_low: float | None
    human_kappa: float | None
    margin: float
    statement: str
    reason: str = ""


def non_inferiority(
    *, field: str, machine_ci_low: Statistic, human_kappa: Statistic, margin: float = 0.1
) -> NonInferiority:
    """Apply the decision rule: non-inferior if ``machine_ci_low >= human_kappa - margin``.

    Parameters
    ----------
    field : str
        The label's name, for the statement.
    machine_ci_low : Statistic
        Lower bound of the bootstrap CI of kappa(machine, final labels).
    human_kappa : Statistic
        Kappa between human coders (the mean over pairs when there are several).
    margin : float
        The largest loss in kappa accepted, in kappa units, in [0, 1].

    Raises
    ------
    ValueError
        If ``margin`` is outside [0, 1].

    Notes
    -----
    A one-sided non-inferiority comparison in the sense of the CONSORT extension for
    non-inferiority trials (Piaggio et al. 2012, JAMA 308(24)): the whole lower CI bound must
    clear the reference minus the margin. The default margin of 0.1 is a convention of this
    project (half the width of one Landis & Koch 1977 band), not a published standard; choose
    and preregister your own.
    """
    if not 0 <= margin <= 1:
        raise ValueError("margin must be between 0 and 1.")
    if not machine_ci_low.defined or not human_kappa.defined:
        reason = (
            f"no CI for kappa(machine, final): {machine_ci_low.undefined_reason}"
            if not machine_ci_low.defined
            else f"no human x human kappa: {human_kappa.undefined_reason}"
        )
        return NonInferiority(
            None,
            machine_ci_low.value,
            human_kappa.value,
            margin,
            f"{field}: cannot decide whether the machine coder could replace a second human "
            f"coder ({reason}).",
            reason,
        )
    low, ref = machine_ci_low.value, human_kappa.value
    ok = low >= ref - margin
    verdict = "is non-inferior to" if ok else "is not shown to be non-inferior to"
    relation = ">=" if ok else "<"
    return NonInferiority(
        ok,
        low,
        ref,
        margin,
        f"{field}: the machine coder {verdict} a second human coder: the lower 95% bound of "
        f"kappa(machine, final) is {low:.3f} {relation} {ref:.3f} - {margin:g} = "
        f"{ref - margin:.3f} (human x human kappa minus the margin).",
    )
