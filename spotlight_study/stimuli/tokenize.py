"""Tokenizing outputs with spaCy (no database access).

The default pipeline is ``spacy.blank("en")``: spaCy's rule-based English tokenizer, the
tokenization of the Spotlight paper (Hedderich et al., ACL 2025). A setting or command can name an
installed pipeline instead (e.g. ``en_core_web_sm`` if it is installed); only its tokenizer is
used. Whitespace tokens (spaCy keeps runs of spaces and line breaks as tokens) are dropped: a line
break is not a word a participant could see in a pattern box.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, Iterable

from .errors import TokenizerError

DEFAULT_PIPELINE = ""  # means spacy.blank("en")


def pipeline_label(name: str) -> str:
    """How a pipeline name is shown: ``spacy.blank("en")`` for the default."""
    return name or 'spacy.blank("en")'


@lru_cache(maxsize=4)
def load_pipeline(name: str = DEFAULT_PIPELINE):
    """The spaCy ``Language`` for ``name`` (cached per process).

    ``""`` or ``"blank:en"`` give ``spacy.blank("en")``; ``"blank:xx"`` a blank pipeline for
    language ``xx``; anything else is passed to ``spacy.load`` (an installed package or a path).

    Raises
    ------
    TokenizerError
        If the pipeline is not installed or cannot be loaded.
    """
    import spacy

    if not name or name.startswith("blank:"):
        lang = name.split(":", 1)[1] if name else "en"
        try:
            return spacy.blank(lang)
        except Exception as exc:  # spaCy raises ImportError or its own errors for unknown codes
            raise TokenizerError(f"spaCy has no blank pipeline for language '{lang}' ({exc}).") from None
    try:
        return spacy.load(name)
    except OSError:
        raise TokenizerError(
            f"The spaCy pipeline '{name}' is not installed here. Leave the pipeline empty to use "
            'spacy.blank("en"), or install the pipeline package first.'
        ) from None


def tokenize_texts(
    texts: Iterable[str],
    *,
    pipeline: str = DEFAULT_PIPELINE,
    batch_size: int = 256,
    on_progress: Callable[[int], None] | None = None,
) -> list[list[str]]:
    """Tokenize texts with spaCy, in batches through ``nlp.pipe``.

    Parameters
    ----------
    texts : iterable of str
    pipeline : str
        See :func:`load_pipeline`. Components other than the tokenizer are disabled.
    batch_size : int
        Texts per ``nlp.pipe`` batch; ``on_progress`` is called after each batch.
    on_progress : callable(int) or None
        Called with the number of texts tokenized so far.

    Returns
    -------
    list of list of str
        One token list per text, whitespace tokens removed, in text order.

    Raises
    ------
    TokenizerError
        If the pipeline cannot be loaded.
    """
    nlp = load_pipeline(pipeline)
    texts = list(texts)
    result: list[list[str]] = []
    with nlp.select_pipes(disable=nlp.pipe_names):
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            for doc in nlp.pipe(batch, batch_size=batch_size):
                result.append([tok.text for tok in doc if not tok.is_space])
            if on_progress is not None:
                on_progress(len(result))
    return result


def token_spans(text: str, tokens: list[str]) -> list[tuple[int, int, str]]:
    """Character spans ``(start, end, token)`` of ``tokens`` in ``text``, in order.

    spaCy's tokenization is non-destructive, so each token is found after the previous one; a
    token that cannot be found (the text changed since it was tokenized) is skipped.
    """
    spans = []
    pos = 0
    for tok in tokens:
        start = text.find(tok, pos)
        if start < 0:
            continue
        spans.append((start, start + len(tok), tok))
        pos = start + len(tok)
    return spans
