"""Every compiled statement of the participant flow's steps, and its only call site.

"Where is the SQL that saves an answer?" is answered here: each write is written out below as
the literal SQL it runs (``tests/participation/test_statements.py`` checks the text against
what :mod:`spotlight_study.compiled_sql` compiles, on SQLite and PostgreSQL), next to the one
function that runs it. The step specs (:mod:`.consent`, :mod:`.task`, ...) name the statements
they use in ``StepSpec.statements``. The statements are compiled once per process and database
(docs/performance.md): building the queryset or the query object costs more than running it.

The arrival's reads (``assignment.py``, ``selectors.py``) are not steps' statements and stay
with their callers.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import IntegrityError, transaction
from django.db.models import Case, F, OuterRef, Subquery, Value, When

from spotlight_study.compiled_sql import (
    SENTINEL_INT,
    SENTINEL_STR,
    PreparedQuery,
    PreparedUpdate,
    PreparedUpsert,
    fields_save,
    rows_insert,
)

from ..models import InstructionCheckAttempt, Participant, SurveyAnswer, TaskResponse
from ..selectors import PAGE_DEFERRED
from . import keys

#: The locked read of every POST (and of the pilot's turns): the participant, its study's
#: definition version and when its current task page was first served. Backend-dependent SQL
#: (``FOR UPDATE OF`` on PostgreSQL, nothing on SQLite), so not written out here.
LOCKED_READ = "participant_locked"
#: ``UPDATE "participation_participant" SET <the step's fields> WHERE "id" = %s``.
PARTICIPANT_SAVE = "participant_save"
#: See :data:`TASK_SERVED_SQL`.
TASK_SERVED = "task_served"
#: See :data:`ANSWER_SAVED_SQL`.
ANSWER_SAVED = "answer_saved"
#: ``INSERT INTO "participation_surveyanswer" (...) VALUES (...), (...)``: one row per item.
SURVEY_INSERTED = "survey_inserted"
#: See :data:`TYPED_DRAFT_SAVED_SQL` (the typed draft of a step page, ``POST /s/<slug>/draft/``).
TYPED_DRAFT_SAVED = "typed_draft_saved"
#: See :func:`check_attempt_kept`.
CHECK_ATTEMPT_KEPT = "check_attempt_kept"


def _locked_queryset():
    # FOR UPDATE OF the participant only: the join (for the definition version) must not lock
    # the study row, which every participant of the study shares.
    current_position = Case(
        When(step=keys.TRAINING, then=Value(0)), default=F("task_index") + 1
    )
    return (
        Participant.objects.select_for_update(of=("self",))
        .defer(*PAGE_DEFERRED)
        .annotate(
            definition_version=F("study__definition_version"),
            current_position=current_position,
        )
        .annotate(
            # When the current task page was first served (None: not served, or not a task).
            served_at=Subquery(
                TaskResponse.objects.filter(
                    participant=OuterRef("pk"),
                    position=OuterRef("current_position"),
                    answered_at__isnull=True,
                ).values("served_at")[:1]
            )
        )
    )


_LOCKED_READ = PreparedQuery(
    lambda participant_id, slug: _locked_queryset().filter(pk=participant_id, study__slug=slug)[:1],
    participant_id=SENTINEL_INT,
    slug=SENTINEL_STR,
)
_LOCKED_READ_BY_ID = PreparedQuery(
    lambda participant_id: _locked_queryset().filter(pk=participant_id)[:1],
    participant_id=SENTINEL_INT,
)


@contextmanager
def participant_locked(*, participant_id: int, slug: str | None = None) -> Iterator[Participant | None]:
    """A transaction holding the row lock of participant ``participant_id`` (of study ``slug``,
    when given).

    Yields the participant (``None`` if there is no such participant), read in one query with
    ``definition_version`` (the study's current definition version, for
    :func:`spotlight_study.studies.plan.study_plan`) and ``served_at`` (when the current task
    page was first served, or ``None``). Writes made inside the block commit together at its
    end, or not at all if it raises.
    """
    with transaction.atomic():
        if slug is None:
            rows = _LOCKED_READ_BY_ID.fetch(participant_id=participant_id)
        else:
            rows = _LOCKED_READ.fetch(participant_id=participant_id, slug=slug)
        yield rows[0] if rows else None


def participant_save(participant: Participant, fields: list[str]) -> None:
    """Write ``fields`` of a locked participant: one ``UPDATE`` by primary key
    (:func:`spotlight_study.compiled_sql.fields_save`; ``updated_at`` is stamped when listed)."""
    fields_save(participant, fields)


#: The serving of a task page: the response row is created at the first serving and only
#: touched (``last_served_at``, ``serve_count``) at later ones, while unanswered.
TASK_SERVED_SQL = (
    'INSERT INTO "participation_taskresponse" ("participant_id", "setting_id", "position", '
    '"condition", "group1_order", "group2_order", "pattern_ids", "served_at", '
    '"last_served_at", "serve_count", "answer", "answered_at", "time_on_task_ms", "paste_count", '
    '"paste_chars", "hidden_ms", "blur_count", "client_events", "typed_chars", "dropped_chars", '
    '"replaced_chars", "insertions", "deletions", "typing_ms", "largest_insert_chars", '
    '"away_before_paste_ms", "shown_overlap_permille", "near_duplicate_score", "text_key") '
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
    "%s, %s, %s, %s, %s, %s, %s, %s, %s) "
    'ON CONFLICT ("participant_id", "position") DO UPDATE SET '
    '"last_served_at" = EXCLUDED."last_served_at", '
    '"serve_count" = "participation_taskresponse"."serve_count" + 1 '
    'WHERE "participation_taskresponse"."answered_at" IS NULL RETURNING "serve_count"'
)
_SERVED = PreparedUpsert(
    TaskResponse,
    conflict_fields=["participant", "position"],
    set_fields=["last_served_at"],
    increments=["serve_count"],
    where_null=["answered_at"],
    returning="serve_count",
)

#: The saving of an answer: only an unanswered row is updated, so neither a reload nor a second
#: answer can overwrite the first.
ANSWER_SAVED_SQL = (
    'UPDATE "participation_taskresponse" SET "answer" = %s, "answered_at" = %s, '
    '"time_on_task_ms" = %s, "paste_count" = %s, "paste_chars" = %s, "hidden_ms" = %s, '
    '"blur_count" = %s, "client_events" = %s, "typed_chars" = %s, "dropped_chars" = %s, '
    '"replaced_chars" = %s, "insertions" = %s, "deletions" = %s, "typing_ms" = %s, '
    '"largest_insert_chars" = %s, "away_before_paste_ms" = %s, '
    '"shown_overlap_permille" = %s, "near_duplicate_score" = %s, "text_key" = %s '
    'WHERE "participant_id" = %s AND "position" = %s AND "answered_at" IS NULL'
)
_ANSWERED = PreparedUpdate(
    TaskResponse,
    set_fields=["answer", "answered_at", "time_on_task_ms", "paste_count", "paste_chars",
                "hidden_ms", "blur_count", "client_events", "typed_chars", "dropped_chars",
                "replaced_chars", "insertions", "deletions", "typing_ms",
                "largest_insert_chars", "away_before_paste_ms", "shown_overlap_permille",
                "near_duplicate_score", "text_key"],
    where_fields=["participant", "position"],
    where_null=["answered_at"],
)


def task_served(response: TaskResponse) -> int | None:
    """Run :data:`TASK_SERVED_SQL` for the unsaved ``response``; its ``serve_count`` after the
    statement (1: the first serving), ``None`` when the row is already answered, or ``-1`` when
    a row for the same setting exists at another position (nothing written).

    Outside a transaction the statement needs no BEGIN and COMMIT; inside one, a savepoint
    keeps a conflict on the other constraint (setting) from breaking the transaction.
    """
    try:
        if transaction.get_connection().in_atomic_block:
            with transaction.atomic():
                return _SERVED.execute(response)
        return _SERVED.execute(response)
    except IntegrityError:
        return -1


def answer_saved(*, participant_id: int, position: int, values: dict) -> int:
    """Run :data:`ANSWER_SAVED_SQL`: ``values`` are ``{field: value}`` for the answer and its
    telemetry; returns the rows changed (0: already answered)."""
    return _ANSWERED.execute(values=values, where={"participant": participant_id, "position": position})


def check_attempt_kept(*, participant_id: int, attempt: int, passed: bool) -> None:
    """Move a locked participant's answered training response (position 0) into an
    :class:`~..models.InstructionCheckAttempt` numbered ``attempt`` and delete it, so that the
    next serving of the training page starts a fresh response (its own ``served_at``).

    An ``INSERT ... SELECT`` and a ``DELETE`` through the ORM, not compiled: it runs once per
    participant at most (a failed first check with ``instruction_check_attempts: 2``).
    """
    responses = TaskResponse.objects.filter(
        participant_id=participant_id, position=0, answered_at__isnull=False
    )
    for r in responses:
        InstructionCheckAttempt.objects.create(
            participant_id=participant_id, attempt=attempt, setting_id=r.setting_id,
            answer=r.answer, passed=passed, served_at=r.served_at, answered_at=r.answered_at,
            time_on_task_ms=r.time_on_task_ms, paste_count=r.paste_count,
            paste_chars=r.paste_chars, hidden_ms=r.hidden_ms, blur_count=r.blur_count,
            client_events=r.client_events,
        )
    responses.delete()


def survey_inserted(rows: list[SurveyAnswer]) -> None:
    """Insert the survey's answers in one ``INSERT`` (:func:`spotlight_study.compiled_sql.rows_insert`)."""
    rows_insert(rows)


#: On PostgreSQL the draft's UPDATE commits without waiting for its WAL to reach the disk
#: (``synchronous_commit`` off for its own one-statement transaction, set by the statement
#: itself: no extra round trip). Waiting cost the app about 0.15 ms of CPU per save (psycopg's
#: wait for the commit) and 1.5-4 ms of latency on this machine. A database crash may lose the
#: drafts of its last fraction of a second, never an answer: every other write commits as
#: before, and its synchronous commit also flushes the earlier drafts' WAL.
ASYNC_COMMIT_CONDITION = "set_config('synchronous_commit', 'off', true) IS NOT NULL"

#: A typed draft: one conditional ``UPDATE`` (no read, no lock) that lands only while the
#: participant is in progress on the step its token names; on PostgreSQL the condition
#: :data:`ASYNC_COMMIT_CONDITION` is appended (`` AND set_config(...) IS NOT NULL``).
TYPED_DRAFT_SAVED_SQL = (
    'UPDATE "participation_participant" SET "draft" = %s, "updated_at" = %s '
    'WHERE "id" = %s AND "study_id" = %s AND "status" = %s AND "step" = %s AND "task_index" = %s'
)
_TYPED_DRAFT = PreparedUpdate(
    Participant,
    set_fields=["draft", "updated_at"],
    where_fields=["id", "study", "status", "step", "task_index"],
    vendor_conditions={"postgresql": ASYNC_COMMIT_CONDITION},
)


def typed_draft_saved(*, values: dict, where: dict) -> int:
    """Run :data:`TYPED_DRAFT_SAVED_SQL`: ``values`` ``{"draft", "updated_at"}``, ``where``
    ``{"id", "study", "status", "step", "task_index"}``; the rows changed (0: a stale page)."""
    return _TYPED_DRAFT.execute(values=values, where=where)


def compiled_sql_of(name: str, connection) -> str:
    """The SQL the statement ``name`` (:data:`TASK_SERVED`, :data:`ANSWER_SAVED` or
    :data:`TYPED_DRAFT_SAVED`) compiles to on ``connection``, without a vendor's extra condition;
    for the test that keeps the literal text above true."""
    statement = {TASK_SERVED: _SERVED, ANSWER_SAVED: _ANSWERED, TYPED_DRAFT_SAVED: _TYPED_DRAFT}[name]
    sql = statement._compile(connection)[0]
    extra = getattr(statement, "vendor_conditions", {}).get(connection.vendor)
    return sql.removesuffix(f" AND {extra}") if extra else sql
