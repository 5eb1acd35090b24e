"""Mining token patterns that tell two groups of tokenized outputs apart (no database access).

Two methods:

- :func:`mine_premise`: Premise (Hedderich et al. 2022), through the ``pypremise`` package. A
  pattern is a conjunction of clauses, each an "or" of tokens, e.g. ``(He or he) and (his)``.
- :func:`mine_ctfidf`: the class-based TF-IDF of BERTopic (Grootendorst 2022), computed with
  scikit-learn; single tokens, fast.

Both return :class:`PatternResult` objects whose :meth:`PatternResult.to_dict` is the stable
JSON shape of ``manage.py mine_patterns`` (``docs/stimuli.md``).

References
----------
M. A. Hedderich, J. Fischer, D. Klakow, J. Vreeken (2022). "Label-Descriptive Patterns and Their
Application to Characterizing Classification Errors". ICML 2022. (Premise, PyPremise.)

M. Grootendorst (2022). "BERTopic: Neural topic modeling with a class-based TF-IDF procedure".
arXiv:2203.05794.
"""
from __future__ import annotations

import math
import platform
import sys
from dataclasses import dataclass
from typing import Sequence

from .errors import MiningError

METHODS = ("premise", "ctfidf")

# The Premise programs pypremise 0.2 ships (it runs a compiled program; nothing is built at
# install): (sys.platform, platform.machine() in lower case) -> what to call the platform.
# A server is Linux, so in practice: x86-64 only (an ARM server, e.g. AWS Graviton, cannot).
PREMISE_PLATFORMS = {
    ("linux", "x86_64"): "x86-64 Linux",
    ("linux", "amd64"): "x86-64 Linux",
    ("darwin", "arm64"): "Apple-silicon macOS",
    ("win32", "amd64"): "x86-64 Windows",
    ("win32", "x86_64"): "x86-64 Windows",
}


def premise_platform_problem(machine: str, system: str) -> str | None:
    """Why Premise cannot run on a platform, or None when pypremise ships a program for it.

    ``machine`` is ``platform.machine()`` (``"x86_64"``, ``"aarch64"``, ``"AMD64"``), ``system``
    is ``sys.platform`` (``"linux"``, ``"darwin"``, ``"win32"``). The message names c-TF-IDF,
    which runs everywhere, as the alternative.
    """
    if (system.lower(), machine.lower()) in PREMISE_PLATFORMS:
        return None
    shipped = ", ".join(sorted(set(PREMISE_PLATFORMS.values()), key=lambda n: "Linux" not in n))
    return (
        f"Premise cannot run on this server ({machine or 'unknown machine'}, {system}): PyPremise "
        f"ships its Premise program for {shipped} only. Mine with c-TF-IDF instead (method "
        "ctfidf), which runs on any platform, or run Premise on an x86-64 Linux server."
    )


def premise_problem_here() -> str | None:
    """:func:`premise_platform_problem` for the machine this process runs on."""
    return premise_platform_problem(platform.machine(), sys.platform)


@dataclass(frozen=True)
class PatternResult:
    """One mined pattern.

    Attributes
    ----------
    clauses : list of list of str
        The pattern is the "and" of its clauses; a clause is an "or" of tokens.
    group : int
        1 or 2, the group where the pattern is relatively more frequent: for Premise the higher
        share of outputs (``count_group1 / n_group1`` vs ``count_group2 / n_group2``), for
        c-TF-IDF the higher share of tokens (the class with the higher c-TF-IDF weight).
    count_group1, count_group2 : int
        Outputs of each group that contain the pattern.
    n_group1, n_group2 : int
        Outputs mined per group.
    mdl_gain : float or None
        Premise only: the change in description length in bits reported by Premise (negative
        values compress; more negative is better).
    fisher_p : float or None
        One-sided Fisher exact test p-value that the pattern is more frequent in ``group``.
    method : str
        ``"premise"`` or ``"ctfidf"``.
    score : float or None
        c-TF-IDF only: the token's c-TF-IDF weight in ``group`` minus its weight in the other.
    """

    clauses: list[list[str]]
    group: int
    count_group1: int
    count_group2: int
    n_group1: int
    n_group2: int
    mdl_gain: float | None
    fisher_p: float | None
    method: str
    score: float | None = None

    def to_dict(self) -> dict:
        """The stable JSON shape (``docs/stimuli.md``); ``score`` is not part of it."""
        return {
            "clauses": [list(c) for c in self.clauses],
            "group": self.group,
            "count_group1": self.count_group1,
            "count_group2": self.count_group2,
            "n_group1": self.n_group1,
            "n_group2": self.n_group2,
            "mdl_gain": self.mdl_gain,
            "fisher_p": self.fisher_p,
            "method": self.method,
        }


def contains_pattern(tokens: Sequence[str] | set[str], clauses: Sequence[Sequence[str]]) -> bool:
    """Whether an output (its tokens) contains the pattern: every clause has one of its tokens."""
    present = tokens if isinstance(tokens, set) else set(tokens)
    return all(any(tok in present for tok in clause) for clause in clauses)


def leaning_group(count_group1: int, n_group1: int, count_group2: int, n_group2: int, *, tie: int = 1) -> int:
    """1 or 2: the group where the share of outputs with the pattern is higher (``tie`` if equal)."""
    # Cross-multiplied to compare count1/n1 with count2/n2 without rounding.
    left, right = count_group1 * n_group2, count_group2 * n_group1
    if left == right:
        return tie
    return 1 if left > right else 2


def _check_groups(group1_tokens, group2_tokens) -> None:
    for number, group in ((1, group1_tokens), (2, group2_tokens)):
        if not group:
            raise MiningError(f"Group {number} has no outputs to mine.")
        empty = [i for i, tokens in enumerate(group) if not tokens]
        if empty:
            raise MiningError(
                f"Group {number} has {len(empty)} output(s) without any token (first at index "
                f"{empty[0]}); leave them out before mining."
            )


def premise_fisher_and_mdl(first: float, second: float, expected_p: float) -> tuple[float, float]:
    """Tell Premise's Fisher p-value from its MDL gain by their values.

    pypremise 0.2.1 parses Premise's result line "pattern;counts;direction;fisher;mdl;..." but
    passes the two numbers positionally into ``PremiseResult(..., mdl_gain, fisher_value)``, so
    ``.mdl_gain`` holds the p-value and ``.fisher_value`` the MDL gain; its ``__version__`` string
    is wrong too, so the version cannot say whether a release fixed this. The values can: a
    p-value lies in [0, 1] and equals the one-sided Fisher test of the pattern's counts, while
    Premise reports the MDL gain as negative bits.

    Args:
        first: ``PremiseResult.fisher_value`` as pypremise gives it.
        second: ``PremiseResult.mdl_gain`` as pypremise gives it.
        expected_p: the one-sided Fisher p-value of the pattern's counts in its own group
            (``analysis.stats.fisher_exact_test``), the value the p-value field must hold.

    Returns:
        ``(fisher_p, mdl_gain)``: the field closer to ``expected_p`` on a log scale (among those in
        [0, 1]) is the p-value, the other the MDL gain.
    """

    def distance(value: float) -> float:
        if not 0.0 <= value <= 1.0:
            return math.inf
        return abs(math.log(max(value, 1e-300)) - math.log(max(expected_p, 1e-300)))

    return min(((first, second), (second, first)), key=lambda pair: distance(pair[0]))


def mine_premise(
    group1_tokens: Sequence[Sequence[str]],
    group2_tokens: Sequence[Sequence[str]],
    *,
    fisher_p_value: float = 0.01,
    clause_max_overlap: float = 0.05,
    min_overlap: float = 0.3,
) -> list[PatternResult]:
    """Mine token patterns with Premise.

    Parameters
    ----------
    group1_tokens, group2_tokens : sequence of sequence of str
        The tokenized outputs of group 1 and group 2 (each output a non-empty token list).
    fisher_p_value, clause_max_overlap, min_overlap : float
        Passed to ``pypremise.Premise`` (its defaults).

    Returns
    -------
    list of PatternResult
        In the order Premise reports them, with ``method="premise"``.

    Raises
    ------
    MiningError
        At once on a platform without a Premise program (:func:`premise_platform_problem`); if
        a group is empty, an output has no token (Premise aborts on one), or Premise fails.

    Notes
    -----
    ``Premise(...).find_patterns(instances)`` on
    ``data_loaders.from_token_lists(group1_tokens, group2_tokens)``: in pypremise 0.2.x this takes
    the two groups, the first becoming Premise's label 0, so ``Direction.GROUP_0`` means group 1.
    Each output is a set of tokens (bag of words). Premise's counts are the outputs per group that
    contain the pattern. ``group`` is the group with the higher share of outputs containing the
    pattern; on a tie, Premise's direction.
    """
    problem = premise_problem_here()
    if problem:
        raise MiningError(problem)
    from pypremise import Direction, Premise, data_loaders

    _check_groups(group1_tokens, group2_tokens)
    g1 = [list(t) for t in group1_tokens]
    g2 = [list(t) for t in group2_tokens]
    instances, _token_to_index, index_to_token = data_loaders.from_token_lists(g1, g2)
    premise = Premise(
        voc_index_to_token=index_to_token,
        fisher_p_value=fisher_p_value,
        clause_max_overlap=clause_max_overlap,
        min_overlap=min_overlap,
        group_0_name="group 1",
        group_1_name="group 2",
    )
    try:
        raw = premise.find_patterns(instances)
    except Exception as exc:  # pypremise raises bare Exception when the Premise binary fails
        raise MiningError(f"Premise failed: {exc}") from exc
    from analysis.stats import fisher_exact_test

    n1, n2 = len(g1), len(g2)
    results = []
    for r in raw:
        premise_group = 1 if r.direction == Direction.GROUP_0 else 2
        c1, c2 = int(r.label0_count), int(r.label1_count)
        group = leaning_group(c1, n1, c2, n2, tie=premise_group)
        count_in, n_in, count_out, n_out = (c1, n1, c2, n2) if group == 1 else (c2, n2, c1, n1)
        expected = fisher_exact_test(count_in, n_in, count_out, n_out, alternative="larger").p_val
        fisher, mdl = premise_fisher_and_mdl(float(r.fisher_value), float(r.mdl_gain), expected)
        results.append(
            PatternResult(
                clauses=[[str(tok) for tok in clause] for clause in r.pattern.clauses],
                group=group,
                count_group1=c1,
                count_group2=c2,
                n_group1=n1,
                n_group2=n2,
                mdl_gain=float(mdl),
                fisher_p=float(fisher),
                method="premise",
            )
        )
    return results


def mine_ctfidf(
    group1_tokens: Sequence[Sequence[str]],
    group2_tokens: Sequence[Sequence[str]],
    *,
    top_k: int = 25,
) -> list[PatternResult]:
    """Rank single tokens with class-based TF-IDF (c-TF-IDF, Grootendorst 2022).

    Parameters
    ----------
    group1_tokens, group2_tokens : sequence of sequence of str
        The tokenized outputs of each group (non-empty token lists).
    top_k : int
        Tokens kept per group (>= 1).

    Returns
    -------
    list of PatternResult
        At most ``top_k`` tokens per group, highest ``score`` first, each a one-clause pattern
        with ``method="ctfidf"``, ``mdl_gain=None`` and a one-sided Fisher p-value
        (:func:`analysis.stats.fisher_exact_test`, scipy's ``fisher_exact``).

    Raises
    ------
    MiningError
        If a group is empty, an output has no token, or ``top_k < 1``.

    Notes
    -----
    The two groups are the classes. Token counts come from scikit-learn's ``CountVectorizer``
    over the spaCy tokens (no lowercasing, no further tokenization). As in BERTopic's
    ``ClassTfidfTransformer``, the weight of token t in class c is

        W(t, c) = tf(t, c) * log(1 + A / f(t))

    with tf(t, c) the frequency of t in c divided by the number of tokens in c, f(t) the frequency
    of t in both classes and A the average number of tokens per class (an integer, as in
    BERTopic). With only two classes, the top tokens of a class are mostly stop words and
    punctuation common to both, so a token is assigned to the class where its weight is higher
    and ranked by ``score = W(t, c) - W(t, other)``. Counts are outputs containing the token.
    """
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer

    # The 2x2 test lives in analysis/ with the other statistics; imported here, like the
    # libraries above, so that importing this module stays light.
    from analysis.stats import fisher_exact_test

    _check_groups(group1_tokens, group2_tokens)
    if top_k < 1:
        raise MiningError("top_k must be at least 1.")
    docs = [list(t) for t in group1_tokens] + [list(t) for t in group2_tokens]
    n1, n2 = len(group1_tokens), len(group2_tokens)
    vectorizer = CountVectorizer(analyzer=lambda tokens: tokens, lowercase=False)
    counts = vectorizer.fit_transform(docs).tocsr()  # outputs x vocabulary
    vocab = vectorizer.get_feature_names_out()
    per_class = np.vstack(
        [np.asarray(counts[:n1].sum(axis=0)).ravel(), np.asarray(counts[n1:].sum(axis=0)).ravel()]
    ).astype(float)
    f_t = per_class.sum(axis=0)
    avg_tokens = int(per_class.sum(axis=1).mean())
    idf = np.log(1.0 + avg_tokens / f_t)
    tf = per_class / per_class.sum(axis=1, keepdims=True)
    weight = tf * idf
    present = counts > 0
    df = np.vstack(
        [np.asarray(present[:n1].sum(axis=0)).ravel(), np.asarray(present[n1:].sum(axis=0)).ravel()]
    )
    results = []
    for c in (0, 1):
        diff = weight[c] - weight[1 - c]
        candidates = np.flatnonzero(diff > 0)
        best = candidates[np.argsort(-diff[candidates], kind="stable")][:top_k]
        for t in best:
            c1, c2 = int(df[0, t]), int(df[1, t])
            group = c + 1
            count_in, n_in, count_out, n_out = (c1, n1, c2, n2) if group == 1 else (c2, n2, c1, n1)
            results.append(
                PatternResult(
                    clauses=[[str(vocab[t])]],
                    group=group,
                    count_group1=c1,
                    count_group2=c2,
                    n_group1=n1,
                    n_group2=n2,
                    mdl_gain=None,
                    # One-sided: the token is more frequent in its own group (Premise's p-value).
                    fisher_p=fisher_exact_test(
                        count_in, n_in, count_out, n_out, alternative="larger"
                    ).p_val,
                    method="ctfidf",
                    score=float(diff[t]),
                )
            )
    results.sort(key=lambda r: -r.score)
    return results
