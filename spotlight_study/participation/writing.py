"""The server's measures of an answer's writing, taken once when the answer is saved.

Two numbers join the browser's (:class:`.services.Telemetry`) on the ``TaskResponse`` row, so
that the flags of :mod:`.flags` read them as columns and no page compares texts on a request:

- :func:`shown_overlap_permille`: the share of the answer found in the texts the participant
  was shown (both groups of the setting), per mille;
- :func:`near_duplicate_scores`: the answer's similarity (0-100) to the other participants'
  answers in the same setting and population (real or pilot).

Both use rapidfuzz (a maintained C++ library of string metrics), on the texts as
:func:`.flags.normalize_answer` writes them (whitespace collapsed, case folded).

A similarity is symmetric, so the save records it on both answers: the new answer gets its
highest score, and an earlier answer whose score the new one beats is raised to it
(:func:`near_duplicate_record`). Each answer then holds its highest similarity to any other
saved answer that the sketch index offered as a candidate (:mod:`.near_duplicates`: at most
16 per save, however many answers the setting has), and a study may change its threshold later
without a new comparison. Two answers
saved at the same instant do not see each other (each save reads the committed answers); a
participant's erasure leaves the scores it raised (both are evidence only: docs/answer-quality.md).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from functools import lru_cache

from django.db import connection
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Indel

from . import near_duplicates
from .flags import normalize_answer
from .models import TaskResponse

#: A run of at least this many characters in common with a shown text counts as copied; a
#: shorter one is a quoted word or phrase, which answers describing the texts use.
COPIED_BLOCK_MIN_CHARS = 12
#: Similarities under this (0-100) are not recorded: the study file's
#: ``near_duplicate_similarity`` may not be set below it. Two answers describing the same
#: texts in their own words rarely reach 70.
NEAR_DUPLICATE_FLOOR = 70


def shown_overlap_permille(answer: str, shown_texts: Iterable[str]) -> int:
    """The share of ``answer``'s characters (0-1000, per mille) that lie in a run of at least
    :data:`COPIED_BLOCK_MIN_CHARS` characters shared with one of ``shown_texts``.

    The runs are the matching blocks of rapidfuzz's longest-common-subsequence alignment
    (``Indel.opcodes``) of the answer with each text; a character covered by runs of several
    texts counts once. A lightly edited copy keeps most of its runs; an answer in its own words
    has none of that length. 0 for an empty answer.

    Only the texts that share a run of :data:`COPIED_BLOCK_MIN_CHARS` characters with the answer
    are aligned: a matching block of that length is such a shared run, so a text without one
    adds nothing, and the result is the same as aligning every text. The shown texts'
    normalized forms and runs are worked out once per process for each setting's texts
    (:func:`_shown_runs`), not on every answer.
    """
    text = normalize_answer(answer)
    if not text:
        return 0
    runs = _runs(text)
    covered = bytearray(len(text))
    for other, other_runs in _shown_runs(tuple(shown_texts)):
        if runs.isdisjoint(other_runs):
            continue
        for block in Indel.opcodes(text, other).as_matching_blocks():
            if block.size >= COPIED_BLOCK_MIN_CHARS:
                covered[block.a:block.a + block.size] = b"\x01" * block.size
    return sum(covered) * 1000 // len(text)


def _runs(text: str) -> set[str]:
    """Every run of :data:`COPIED_BLOCK_MIN_CHARS` consecutive characters of ``text``."""
    n = COPIED_BLOCK_MIN_CHARS
    return {text[i:i + n] for i in range(len(text) - n + 1)}


@lru_cache(maxsize=256)
def _shown_runs(shown_texts: tuple[str, ...]) -> tuple[tuple[str, frozenset[str]], ...]:
    """``(normalized text, its runs)`` of each shown text long enough to hold a copied block;
    kept per process for a setting's texts (the study plan's tuples, the same on every save)."""
    normalized = (normalize_answer(shown) for shown in shown_texts)
    return tuple((other, frozenset(_runs(other))) for other in normalized
                 if len(other) >= COPIED_BLOCK_MIN_CHARS)


def near_duplicate_scores(answer: str, others: list[tuple[int, str]]) -> dict[int, int]:
    """``{row id: similarity}`` of ``answer`` with each of ``others`` (``(row id, text)``)
    whose similarity is at least :data:`NEAR_DUPLICATE_FLOOR`.

    The similarity is rapidfuzz's ``fuzz.ratio`` (the normalized Indel similarity, 0-100) of the
    normalized texts, compared with the floor unrounded and then rounded to the nearest whole
    number (``process.cdist`` with ``dtype="uint8"``: 89.66 is stored as 90, 69.57 is below the
    floor). ``process.cdist`` skips pairs whose lengths alone rule out the floor, so a long
    answer is compared only with answers of similar length.
    """
    if not others:
        return {}
    text = normalize_answer(answer)
    scores = process.cdist(
        [text],
        [normalize_answer(other) for _pk, other in others],
        scorer=fuzz.ratio,
        score_cutoff=NEAR_DUPLICATE_FLOOR,
        dtype="uint8",
        workers=1,
    )[0]
    return {pk: int(score) for (pk, _text), score in zip(others, scores) if score}


def near_duplicate_record(
    *, answer: str, setting_id: int, participant_id: int, is_pilot: bool
) -> tuple[int, dict[int, int]]:
    """The new answer's ``near_duplicate_score`` and the earlier answers it raises.

    Finds the candidates among the saved answers of the other participants in setting
    ``setting_id`` and the same population through the sketch index
    (:func:`.near_duplicates.candidate_ids`: a bounded number of index entries, never every
    earlier answer), reads them with their stored scores (one query), scores them
    (:func:`near_duplicate_scores`), stores the new answer's sketch, and raises the stored score of each earlier answer that the new one beats: the beaten rows
    are locked in primary-key order (one ``SELECT ... ORDER BY id FOR UPDATE``, so concurrent
    saves cannot deadlock), then one ``UPDATE`` per distinct new score among them, so at most 31
    (scores 70-100) and usually none. An answer already at or above its new score is neither
    locked nor written: when many participants paste the same text, the save of the hundredth
    does not rewrite the ninety-nine before it (it did, one ``UPDATE`` each, until issue 24's
    profile of the flow). Returns ``(score, {row id:
    score})``: the highest similarity (0 when none reaches the floor) and the rows scored at or
    above the floor (each now holds at least its score). Run inside the answer's transaction.
    """
    keys = near_duplicates.sketch_keys(normalize_answer(answer))
    candidates = near_duplicates.candidate_ids(
        setting_id=setting_id, is_pilot=is_pilot, keys=keys, exclude_id=participant_id
    )
    others = near_duplicates.candidate_answers(setting_id=setting_id, participant_ids=candidates)
    near_duplicates.sketch_save(
        participant_id=participant_id, setting_id=setting_id, is_pilot=is_pilot, keys=keys
    )
    scores = near_duplicate_scores(answer, [(pk, text) for pk, text, _stored in others])
    stored = {pk: score for pk, _text, score in others}
    beaten = [pk for pk, score in scores.items() if stored[pk] is None or stored[pk] < score]
    if beaten:
        # Locked in primary-key order before any is written: two saves in one setting that raise
        # overlapping rows then queue behind each other on PostgreSQL instead of locking the rows
        # in different orders and deadlocking (SQLite's IMMEDIATE transactions already run one at
        # a time). The locked read also sees a score a concurrent save raised since the read above.
        # Plain SQL, as the ORM's query building cost more CPU than these two small
        # statements (issue 39 §4); SQLite has no FOR UPDATE and needs none.
        table = TaskResponse._meta.db_table
        lock = " FOR UPDATE" if connection.vendor == "postgresql" else ""
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, near_duplicate_score FROM {table} WHERE id IN ("
                + ", ".join(["%s"] * len(beaten)) + f") ORDER BY id{lock}",
                beaten,
            )
            current = dict(cursor.fetchall())
            raised: dict[int, list[int]] = defaultdict(list)
            for pk in beaten:
                if pk in current and (current[pk] is None or current[pk] < scores[pk]):
                    raised[scores[pk]].append(pk)
            for score, pks in raised.items():
                cursor.execute(
                    f"UPDATE {table} SET near_duplicate_score = %s WHERE id IN ("
                    + ", ".join(["%s"] * len(pks)) + ")",
                    [score, *pks],
                )
    return max(scores.values(), default=0), scores
