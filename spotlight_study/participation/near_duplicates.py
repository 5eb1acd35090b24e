"""The index that finds an answer's likely near-duplicates among the earlier answers of its
setting, so that an answer's save reads a bounded number of rows however large the study grows
(issue 39: before, each save read and scored every earlier answer of the setting).

Each saved answer gets a *sketch* (:func:`sketch_keys`), stored as rows of
:class:`~.models.AnswerSketchKey`:

- **MinHash bands** of the set of its character 4-grams (UTF-8 bytes of the normalized text):
  :data:`BANDS` bands of :data:`ROWS_PER_BAND` min-hashes each. Two answers whose 4-gram sets
  have Jaccard similarity J share a given band with probability J ** ROWS_PER_BAND, so at least
  one of the bands with probability 1 - (1 - J ** 2) ** 32: 0.996 at J = 0.4, 1 - 4e-8 at
  J = 0.6. Answers of ``fuzz.ratio`` 90 and more (the default threshold of the near-duplicate
  flag) mostly have 4-gram sets above J = 0.5; unrelated answers of one setting share far fewer
  4-grams, so few bands. Method: Broder (1997), "On the resemblance and containment of documents"; the banding
  of Leskovec, Rajaraman and Ullman, *Mining of Massive Datasets*, ch. 3.4.
- **The whole normalized text**, so that identical answers always meet.

A new answer's candidates are the answers sharing a key with it, at most
:data:`RECENT_PER_KEY` per key (one index range each, in one statement), ranked by the keys
they share, each key weighing 1 / (the answers read for it): a key that few answers have says
more than one that many have (as inverse document frequency does in text retrieval); the first
:data:`CANDIDATES` are scored with rapidfuzz exactly as before
(``writing.near_duplicate_scores``). Rows read per save: at most ``KEYS_PER_ANSWER *
RECENT_PER_KEY`` index entries and ``CANDIDATES`` answers, whatever the number of earlier
answers. Which scores can differ from a comparison with every earlier answer is written in
docs/answer-quality.md ("Near-duplicates at scale").
"""
from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from functools import lru_cache

import numpy as np
from django.db import connection

from .models import AnswerSketchKey, TaskResponse

#: Characters (UTF-8 bytes) per shingle: 4-grams tell answers apart better than 3-grams (which
#: every English answer shares many of) and still survive small edits.
SHINGLE_BYTES = 4
#: MinHash bands, and min-hashes per band (see the module docstring for the probabilities).
BANDS = 32
ROWS_PER_BAND = 2
#: Keys per answer: the bands and the whole text.
KEYS_PER_ANSWER = BANDS + 1
#: Answers read per key: a key shared by hundreds of answers (a text many participants pasted)
#: reads only its newest few.
RECENT_PER_KEY = 8
#: Answers scored with rapidfuzz per save, those sharing the most keys first.
CANDIDATES = 16

# Fixed odd multipliers and offsets of the multiply-shift hashes (Dietzfelbinger et al. 1997),
# one per min-hash: the same on every server and for ever, since stored keys depend on them.
_RNG = np.random.default_rng(20261206)
_MULTIPLIERS = _RNG.integers(1, 2**63, size=BANDS * ROWS_PER_BAND, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
_OFFSETS = _RNG.integers(0, 2**63, size=BANDS * ROWS_PER_BAND, dtype=np.uint64)
_BAND_MIX = _RNG.integers(1, 2**63, size=(ROWS_PER_BAND + 1,), dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def text_key(text: str) -> int:
    """The key of a whole normalized text: BLAKE2b with an 8-byte digest, as a signed 64-bit
    integer (a ``bigint``). Equal texts have equal keys; two different texts share one with
    probability 2 ** -64 per pair. Stored as the last key of an answer's sketch and as
    ``TaskResponse.text_key`` (the ``identical_answer`` flag's grouping key).

    Parameters
    ----------
    text : str
        The answer as :func:`.flags.normalize_answer` writes it.
    """
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def sketch_keys(text: str) -> list[int]:
    """The sketch of an answer: :data:`KEYS_PER_ANSWER` signed 64-bit keys (fewer for a text
    shorter than :data:`SHINGLE_BYTES` bytes: only the whole-text key).

    Parameters
    ----------
    text : str
        The answer as :func:`.flags.normalize_answer` writes it.

    Returns
    -------
    list of int
        The band keys (each mixes its band's number, so equal min-hashes in different bands
        differ), then the whole-text key (BLAKE2b, 8 bytes).
    """
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.uint64)
    whole = text_key(text)
    if len(data) < SHINGLE_BYTES:
        return [whole]
    shingles = np.zeros(len(data) - SHINGLE_BYTES + 1, dtype=np.uint64)
    for i in range(SHINGLE_BYTES):
        shingles = (shingles << np.uint64(8)) | data[i:len(data) - SHINGLE_BYTES + 1 + i]
    shingles = np.unique(shingles)
    with np.errstate(over="ignore"):  # multiply-shift hashing works modulo 2 ** 64
        hashed = shingles[None, :] * _MULTIPLIERS[:, None] + _OFFSETS[:, None]
        minima = (hashed >> np.uint64(32)).min(axis=1).reshape(BANDS, ROWS_PER_BAND)
        bands = np.arange(BANDS, dtype=np.uint64) * _BAND_MIX[-1]
        for r in range(ROWS_PER_BAND):
            bands = bands + minima[:, r] * _BAND_MIX[r]
    return [int(k) for k in bands.view(np.int64)] + [whole]


@lru_cache(maxsize=KEYS_PER_ANSWER + 1)
def _candidates_sql(n_keys: int) -> str:
    """SQLite's statement: at most RECENT_PER_KEY participant ids per key (one index range
    each), each row tagged with its key's position (SQLite's planner reads each range through
    the index in its order whatever the table holds). Built once per number of keys: the text
    is about 7 kB."""
    table = AnswerSketchKey._meta.db_table
    branch = (
        f"SELECT {{i}}, participant_id FROM (SELECT participant_id FROM {table} "
        "WHERE setting_id = %s AND is_pilot = %s AND sketch_key = %s "
        f"ORDER BY participant_id DESC LIMIT {RECENT_PER_KEY}) AS k{{i}}"
    )
    return " UNION ALL ".join(branch.format(i=i) for i in range(n_keys))


#: PostgreSQL's function of migration 0009 (its text: :data:`POSTGRES_FUNCTION`).
POSTGRES_FUNCTION_NAME = "participation_sketch_candidates"
#: One index range per key, read backward through ``answer_sketch_lookup`` and stopped after
#: RECENT_PER_KEY entries. The function's own settings forbid the bitmap scan, the sort and
#: the sequential scan while its statement is planned: without them the plan depends on the
#: table's statistics, and a table that was never analyzed (autovacuum off, or a table that
#: grew from empty faster than autovacuum ran) is estimated at a few rows per key, so
#: PostgreSQL read every row of a shared key with a bitmap scan and sorted them (22 ms a key
#: at 2,400 participants, issue 39). With the settings the plan is the index range whatever
#: the statistics say. A function with ``SET`` clauses is never inlined, so they hold for the
#: inner statement only, never for the rest of the transaction.
POSTGRES_FUNCTION = f"""
    CREATE OR REPLACE FUNCTION {POSTGRES_FUNCTION_NAME}(p_setting integer, p_pilot boolean, p_keys bigint[])
    RETURNS TABLE (key_position bigint, participant_id integer)
    LANGUAGE sql STABLE
    SET enable_bitmapscan = off SET enable_sort = off SET enable_seqscan = off
    AS $$
        SELECT k.position, s.participant_id
        FROM unnest(p_keys) WITH ORDINALITY AS k(sketch_key, position)
        CROSS JOIN LATERAL (
            SELECT a.participant_id FROM participation_answersketchkey AS a
            WHERE a.setting_id = p_setting AND a.is_pilot = p_pilot AND a.sketch_key = k.sketch_key
            ORDER BY a.participant_id DESC LIMIT {RECENT_PER_KEY}
        ) AS s
    $$
"""
POSTGRES_FUNCTION_DROP = f"DROP FUNCTION IF EXISTS {POSTGRES_FUNCTION_NAME}(integer, boolean, bigint[])"


def candidate_rows(*, setting_id: int, is_pilot: bool, keys: list[int]) -> list[tuple[int, int]]:
    """``(key position, participant id)`` for at most RECENT_PER_KEY answers per key: the
    newest answers in the setting and population that share the key (one statement, one index
    range per key, on PostgreSQL whatever the table's statistics: :data:`POSTGRES_FUNCTION`).
    The key position is 0-based on SQLite, 1-based on PostgreSQL; only its grouping matters."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"SELECT key_position, participant_id FROM {POSTGRES_FUNCTION_NAME}(%s, %s, %s::bigint[])",
                [setting_id, is_pilot, keys],
            )
        else:
            params: list = []
            for key in keys:
                params += [setting_id, is_pilot, key]
            cursor.execute(_candidates_sql(len(keys)), params)
        return cursor.fetchall()


def candidate_ids(*, setting_id: int, is_pilot: bool, keys: list[int], exclude_id: int | None) -> list[int]:
    """Up to :data:`CANDIDATES` ids of participants whose answer in the setting (and
    population) given shares sketch keys with ``keys``, the highest weight of shared keys first
    (then the newest).

    Reads at most ``len(keys) * RECENT_PER_KEY`` index entries, in one statement
    (:func:`candidate_rows`). ``exclude_id`` (the participant whose answer is being saved) is
    never returned.
    """
    if not keys:
        return []
    rows = candidate_rows(setting_id=setting_id, is_pilot=is_pilot, keys=keys)
    per_key = Counter(branch for branch, _pk in rows)
    weight: dict[int, float] = defaultdict(float)
    for branch, pk in rows:
        weight[pk] += 1.0 / per_key[branch]
    weight.pop(exclude_id, None)
    ranked = sorted(weight.items(), key=lambda item: (-item[1], -item[0]))
    return [pk for pk, _count in ranked[:CANDIDATES]]


def candidate_answers(*, setting_id: int, participant_ids: list[int]) -> list[tuple[int, str, int | None]]:
    """``(row id, answer, stored near_duplicate_score)`` of the saved answers in the setting of
    the participants given (one statement; none for no participants). Plain SQL: the ORM's
    query building cost more CPU than the read (issue 39 §4's profile)."""
    if not participant_ids:
        return []
    table = TaskResponse._meta.db_table
    sql = (f"SELECT id, answer, near_duplicate_score FROM {table} "
           "WHERE setting_id = %s AND answered_at IS NOT NULL AND participant_id IN ("
           + ", ".join(["%s"] * len(participant_ids)) + ")")
    with connection.cursor() as cursor:
        cursor.execute(sql, [setting_id, *participant_ids])
        return cursor.fetchall()


def sketch_save(*, participant_id: int, setting_id: int, is_pilot: bool, keys: list[int]) -> None:
    """Store ``keys`` as the sketch of the participant's answer in the setting (one statement).
    Run inside the answer's transaction: an answer is saved once (its ``UPDATE`` requires
    ``answered_at IS NULL``), and a refused save rolls the sketch back with it.

    Plain SQL rather than ``bulk_create``: building 33 model instances and their parameters
    cost about as much CPU as the rest of the near-duplicate check (issue 39 §4's profile)."""
    unique = list(dict.fromkeys(keys))
    if not unique:
        return
    table = AnswerSketchKey._meta.db_table
    columns = f"INSERT INTO {table} (participant_id, setting_id, is_pilot, sketch_key) "
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                columns + "SELECT %s, %s, %s, k FROM unnest(%s::bigint[]) AS k",
                [participant_id, setting_id, is_pilot, unique],
            )
        else:
            cursor.execute(
                columns + "VALUES " + ", ".join(["(%s, %s, %s, %s)"] * len(unique)),
                [x for k in unique for x in (participant_id, setting_id, is_pilot, k)],
            )
