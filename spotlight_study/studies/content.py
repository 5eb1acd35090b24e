"""Content checks of token patterns: do a pattern's tokens occur in its setting's texts, and is
its "more often in group N" claim true of the texts participants see?

Texts are tokenized with ``spacy.blank("en")``, the default tokenizer of the stimuli app
(``spotlight_study/stimuli/tokenize.py``) and of the Spotlight paper, so a mined token is found
here exactly as the miner found it. (The miner counted all outputs; this check counts only the
texts the setting shows, which is what a participant can verify.) A text *contains* a pattern when every
token of the pattern is one of the text's tokens (case-sensitive, as mining is); this is how the
stimuli app counts a pattern's outputs. A plain substring search would be wrong: ``her`` is
inside "there" and ``beans`` inside "soybeans". Shares, not raw counts, decide the claim, so
groups of different sizes compare fairly; a tie supports neither group.

The functions take plain lists (no database), so the study-file validation and the launch
check (on the stored study) use the same rules.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence


@lru_cache(maxsize=1)
def _tokenizer():
    # Imported lazily: spaCy takes about a second to load, and only validation needs it.
    import spacy

    return spacy.blank("en").tokenizer


def tokenizer_warm() -> None:
    """Build the tokenizer now (about 0.5 s), e.g. in the server's master before it forks, so
    that the first check of a definition in each worker does not wait for it."""
    _tokenizer()


@lru_cache(maxsize=4096)
def text_tokens(text: str) -> frozenset[str]:
    """The set of spaCy tokens of ``text`` (whitespace tokens dropped)."""
    return frozenset(tok.text for tok in _tokenizer()(text) if not tok.is_space)


@dataclass(frozen=True)
class PatternCounts:
    """How many texts of each group contain a pattern (``n_group1``/``n_group2``: group sizes)."""

    count_group1: int
    count_group2: int
    n_group1: int
    n_group2: int

    @property
    def leaning_group(self) -> int | None:
        """1 or 2, the group with the higher share of texts containing the pattern; None if tied."""
        left, right = self.count_group1 * self.n_group2, self.count_group2 * self.n_group1
        if left == right:
            return None
        return 1 if left > right else 2


def pattern_counts(
    tokens: Sequence[str], group1_texts: Sequence[str], group2_texts: Sequence[str]
) -> PatternCounts:
    """Texts per group that contain every token of the pattern (see the module docstring)."""
    wanted = set(tokens)
    return PatternCounts(
        count_group1=sum(wanted <= text_tokens(t) for t in group1_texts),
        count_group2=sum(wanted <= text_tokens(t) for t in group2_texts),
        n_group1=len(group1_texts),
        n_group2=len(group2_texts),
    )


def _texts(n: int) -> str:
    return "1 text" if n == 1 else f"{n} texts"


def pattern_problems(
    *,
    tokens: Sequence[str],
    group: int,
    group1_texts: Sequence[str],
    group2_texts: Sequence[str],
) -> list[str]:
    """What is wrong with a pattern shown beside these texts; an empty list if nothing is.

    Parameters
    ----------
    tokens : sequence of str
        The pattern's tokens, as shown in the box (``["maize", "beans"]``).
    group : int
        1 or 2: the group the box says the pattern is more frequent in.
    group1_texts, group2_texts : sequence of str
        The setting's texts.

    Returns
    -------
    list of str
        One message per token that occurs in no text (with a close token of the texts as a
        suggestion, or the same word in another case), then, if every token occurs, a message
        when the claim does not hold, giving both counts, e.g. "`maize, beans` occurs in 4 of the
        10 texts of group 1 and 0 of the 10 texts of group 2, but the pattern says more often in
        group 2."
    """
    vocabulary: set[str] = set()
    for text in [*group1_texts, *group2_texts]:
        vocabulary |= text_tokens(text)
    problems = []
    for token in tokens:
        if token in vocabulary:
            continue
        message = f"`{token}` occurs in none of the setting's texts (as a whole token)."
        same_word = sorted(v for v in vocabulary if v.lower() == token.lower())
        close = same_word or difflib.get_close_matches(token, sorted(vocabulary), n=1, cutoff=0.8)
        if close:
            message += f" Did you mean `{close[0]}`?"
        problems.append(message)
    if problems:
        return problems
    counts = pattern_counts(tokens, group1_texts, group2_texts)
    if counts.leaning_group != group:
        label = ", ".join(tokens)
        problems.append(
            f"`{label}` occurs in {counts.count_group1} of the {_texts(counts.n_group1)} of group 1 "
            f"and {counts.count_group2} of the {_texts(counts.n_group2)} of group 2, but the "
            f"pattern says more often in group {group}."
        )
    return problems
