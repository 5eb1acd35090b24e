"""The quality flags of :mod:`.flags`, read from the database for the pages that count them.

The researcher page and the live monitor count flags over every saved main answer of a study
(20,000 on a large one) on each request. Building an :class:`~.flags.AnswerEvidence` per answer
and testing it in Python costs about half a second there, so the flags that depend on the answer's
own numbers (``very_short_time``, ``pasted``, ``long_time_hidden`` and the writing-process
flags, whose similarities are measured when the answer is saved) are computed by the database,
as boolean columns of the query that reads the answers (:func:`answer_flag_columns`).
``identical_answer`` is decided in Python over the population's ``text_key`` column: the key
of each answer's :func:`.flags.normalize_answer` form (:func:`.near_duplicates.text_key`),
written with the answer. The normalization's case folding and Unicode whitespace have no exact
SQL equivalent on both SQLite and PostgreSQL, so the key is made in Python when the answer is
saved, and the pages read integers instead of every answer's text (at 20,000 participants,
reading and normalizing the 40,000 texts took 0.48 of the dashboard's 0.52 s; issue 39). The
key is equal exactly when the normalized texts are (up to a 2 ** -64 chance per pair), so the
pages agree with ``responses.csv``. ``tests/participation/test_flags_sql.py`` checks the SQL forms against the
Python ones at every boundary.

:func:`study_flag_counts` is the one read both pages use: one query, whatever the number
of participants.
"""
from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from django.db.models import BooleanField, ExpressionWrapper, F, FloatField, Q, Value
from django.db.models.functions import Length
from django.db.models.lookups import GreaterThan, GreaterThanOrEqual

from spotlight_study.studies.models import Setting, Study

from . import flags as quality_flags
from .models import TaskResponse
from .near_duplicates import text_key

#: Rows read per statement when answers without a ``text_key`` are keyed from their text.
_UNKEYED_BATCH = 5000

#: The flags :func:`answer_flag_columns` computes in the database, in ``FLAG_KEYS`` order.
SQL_FLAGS: tuple[str, ...] = (
    quality_flags.VERY_SHORT_TIME,
    quality_flags.PASTED,
    quality_flags.LONG_TIME_HIDDEN,
    quality_flags.TYPED_IMPLAUSIBLY_FAST,
    quality_flags.INSERTED_WITHOUT_TYPING,
    quality_flags.COPIED_FROM_SHOWN_TEXTS,
    quality_flags.NEAR_DUPLICATE,
    quality_flags.HIDDEN_THEN_PASTED,
)


def _flag(condition) -> ExpressionWrapper:
    return ExpressionWrapper(condition, output_field=BooleanField())


def answer_flag_columns(
    *,
    short_time_flag_seconds: int | float,
    thresholds: quality_flags.FlagThresholds = quality_flags.DEFAULT_THRESHOLDS,
) -> dict[str, ExpressionWrapper]:
    """``{flag key: boolean expression}`` over ``TaskResponse`` columns, one per :data:`SQL_FLAGS`.

    Each is the SQL form of its predicate in :mod:`.flags` (``is_very_short_time``,
    ``is_pasted``, ``is_long_time_hidden``, ``is_typed_implausibly_fast``, ...), for
    ``.annotate(**...)`` or ``.values_list(...)`` on a ``TaskResponse`` queryset.
    ``short_time_flag_seconds`` is the study's threshold in seconds, ``thresholds`` its
    writing-process thresholds. Never NULL: an unknown time on task is ``False`` for
    ``very_short_time`` and lets only the 30 s bound decide ``long_time_hidden``, and an
    unmeasured overlap or similarity is ``False``, as in Python.
    """
    t = thresholds
    share = ExpressionWrapper(
        F("time_on_task_ms") * Value(quality_flags.LONG_HIDDEN_MIN_SHARE), output_field=FloatField()
    )
    inserted = F("dropped_chars") + F("replaced_chars")
    return {
        quality_flags.VERY_SHORT_TIME: ExpressionWrapper(
            Q(time_on_task_ms__isnull=False, time_on_task_ms__lt=short_time_flag_seconds * 1000),
            output_field=BooleanField(),
        ),
        quality_flags.PASTED: ExpressionWrapper(
            Q(paste_count__gt=0) | Q(paste_chars__gt=0), output_field=BooleanField()
        ),
        quality_flags.LONG_TIME_HIDDEN: ExpressionWrapper(
            Q(hidden_ms__gte=quality_flags.LONG_HIDDEN_MIN_MS)
            # ``not time_on_task_ms`` in Python: unknown or 0.
            & (Q(time_on_task_ms__isnull=True) | Q(time_on_task_ms=0) | Q(hidden_ms__gte=share)),
            output_field=BooleanField(),
        ),
        quality_flags.TYPED_IMPLAUSIBLY_FAST: _flag(
            Q(typed_chars__gte=quality_flags.TYPED_FAST_MIN_CHARS)
            & GreaterThan(
                F("typed_chars") * Value(60_000), F("typing_ms") * Value(t.typed_chars_per_minute_max)
            )
        ),
        quality_flags.INSERTED_WITHOUT_TYPING: _flag(
            GreaterThanOrEqual(inserted, Value(quality_flags.INSERTED_MIN_CHARS))
            & GreaterThanOrEqual(
                ExpressionWrapper(inserted * Value(1.0), output_field=FloatField()),
                ExpressionWrapper(
                    Length("answer") * Value(float(t.inserted_without_typing_share)),
                    output_field=FloatField(),
                ),
            )
        ),
        quality_flags.COPIED_FROM_SHOWN_TEXTS: _flag(
            Q(shown_overlap_permille__isnull=False)
            & Q(shown_overlap_permille__gte=float(t.copied_from_shown_texts_share) * 1000)
        ),
        quality_flags.NEAR_DUPLICATE: _flag(
            Q(near_duplicate_score__isnull=False)
            & Q(near_duplicate_score__gte=t.near_duplicate_similarity)
        ),
        quality_flags.HIDDEN_THEN_PASTED: _flag(
            Q(away_before_paste_ms__gt=0)
            & Q(away_before_paste_ms__gte=t.away_before_paste_seconds * 1000)
        ),
    }


class FlagCounts(NamedTuple):
    """The flags of one population's saved main answers, per participant.

    ``by_participant`` is ``{participant_id: Counter(flag key -> number of flagged answers)}``
    for the participants with at least one flagged answer only; ``failed_instruction_check``
    is not in it (callers count it from the participant rows, per answer or per participant).
    ``answers`` is ``{participant_id: number of saved main answers}`` for every participant
    with one (the per-answer count of ``failed_instruction_check``).
    """

    by_participant: dict[int, Counter]
    answers: Counter


def study_flag_counts(*, study: Study, pilot: bool | None = False) -> dict[bool, FlagCounts]:
    """The flags of ``study``'s saved main answers, per population: one query (and one more
    for the text of any answer saved without its ``text_key``).

    Parameters
    ----------
    study : Study
        Its ``short_time_flag_seconds`` (s) is the threshold.
    pilot : bool or None
        ``False``: real participants only; ``True``: pilot participants only; ``None``: both.

    Returns
    -------
    dict
        ``{is_pilot: FlagCounts}`` for each population read (both keys always present for
        ``None``, one for the others). ``identical_answer`` is computed within each population
        (real answers against real answers, pilot against pilot), as in ``responses.csv``.
    """
    filters = Q(participant__study=study, answered_at__isnull=False, setting__kind=Setting.Kind.MAIN)
    if pilot is not None:
        filters &= Q(participant__is_pilot=pilot)
    columns = answer_flag_columns(
        short_time_flag_seconds=study.short_time_flag_seconds,
        thresholds=quality_flags.thresholds_of(study),
    )
    rows = (
        TaskResponse.objects.filter(filters)
        .order_by()
        .values_list("pk", "participant_id", "participant__is_pilot", "text_key", *columns.values())
    )
    populations = (False, True) if pilot is None else (pilot,)
    keyed: dict[bool, list[tuple[int, int | None]]] = {p: [] for p in populations}
    unkeyed: dict[int, int] = {}  # row pk -> its position in keyed[...]: no text_key stored
    out = {p: FlagCounts({}, Counter()) for p in populations}
    for pk, pid, is_pilot, key, *sql_flags in rows:
        mine = out[is_pilot]
        mine.answers[pid] += 1
        if key is None:
            unkeyed[pk] = len(keyed[is_pilot])
        keyed[is_pilot].append((pid, key))
        if any(sql_flags):
            counts = mine.by_participant.get(pid)
            if counts is None:
                counts = mine.by_participant[pid] = Counter()
            for key_name, flagged in zip(SQL_FLAGS, sql_flags):
                if flagged:
                    counts[key_name] += 1
    if unkeyed:
        # Answers written by a path that stores no key (rows made before migration 0011 are
        # filled by it): their key from the text, as the save would have written it.
        # In slices: SQLite refuses a statement with more than 32,766 parameters.
        pks = list(unkeyed)
        for start in range(0, len(pks), _UNKEYED_BATCH):
            for pk, is_pilot, answer in TaskResponse.objects.filter(
                pk__in=pks[start:start + _UNKEYED_BATCH]
            ).values_list("pk", "participant__is_pilot", "answer"):
                at = unkeyed[pk]
                keyed[is_pilot][at] = (keyed[is_pilot][at][0], text_key(quality_flags.normalize_answer(answer)))
    for is_pilot, pairs in keyed.items():
        seen = Counter(key for _pid, key in pairs)
        by_participant = out[is_pilot].by_participant
        for pid, key in pairs:
            if seen[key] > 1:
                counts = by_participant.get(pid)
                if counts is None:
                    counts = by_participant[pid] = Counter()
                counts[quality_flags.IDENTICAL_ANSWER] += 1
    return out
