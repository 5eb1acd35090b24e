"""The compiled reads and writes of the participant path (participation/prepared.py) do what the
ORM calls they replace do, on SQLite and PostgreSQL alike: same rows, same converted values,
auto_now fields, rowcounts, and errors."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from spotlight_study.participation.assignment import assignment_create
from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.compiled_sql import (
    SENTINEL_DATETIME,
    SENTINEL_INT,
    SENTINEL_STR,
    PreparedQuery,
    PreparedUpdate,
    PreparedUpsert,
    fields_save,
    rows_insert,
)
from spotlight_study.participation.selectors import cell_counts

from ..conftest import new_id


def _arrive(study) -> Participant:
    return assignment_create(study=study, prolific_pid=new_id(), prolific_study_id=new_id(),
                             prolific_session_id=new_id())


_BY_PID = PreparedQuery(
    lambda pid, since: Participant.objects.filter(prolific_pid=pid, started_at__gte=since),
    pid=SENTINEL_STR,
    since=SENTINEL_DATETIME,
)
_CELLS = PreparedQuery(
    lambda study_id: Participant.objects.filter(study_id=study_id)
    .order_by("pk").values_list("pk", "cell_plan", "started_at"),
    study_id=SENTINEL_INT,
)


@pytest.mark.django_db
def test_a_prepared_read_gives_what_the_queryset_gives(demo_study):
    """Model rows with JSON and datetime fields converted as the ORM converts them, and a
    datetime parameter put in its sentinel's place (a string on SQLite)."""
    p = _arrive(demo_study)
    since = timezone.now() - timedelta(minutes=5)
    (row,) = _BY_PID.fetch(pid=p.prolific_pid, since=since)
    expected = Participant.objects.get(pk=p.pk)
    assert row.pk == p.pk and not row._state.adding and row._state.db == "default"
    for field in Participant._meta.concrete_fields:
        assert getattr(row, field.attname) == getattr(expected, field.attname), field.name
    assert _BY_PID.fetch(pid=p.prolific_pid, since=timezone.now() + timedelta(minutes=5)) == []
    assert _CELLS.fetch(study_id=demo_study.pk) == [(expected.pk, expected.cell_plan, expected.started_at)]


def test_a_build_that_ignores_a_sentinel_is_refused(db):
    query = PreparedQuery(lambda pid: Participant.objects.all(), pid=SENTINEL_STR)
    with pytest.raises(ValueError, match="does not use pid"):
        query.fetch(pid="x")


@pytest.mark.django_db
def test_fields_save_writes_only_the_fields_and_sets_auto_now(demo_study):
    p = _arrive(demo_study)
    before = Participant.objects.get(pk=p.pk).updated_at
    p.comment = "changed"
    p.step = "instructions"
    p.task_index = 7  # not in the fields: must stay as stored
    fields_save(p, ["comment", "step", "updated_at"])
    stored = Participant.objects.get(pk=p.pk)
    assert (stored.comment, stored.step, stored.task_index) == ("changed", "instructions", 0)
    assert stored.updated_at > before and stored.updated_at == p.updated_at


@pytest.mark.django_db
def test_fields_save_of_a_missing_row_raises_like_save(demo_study):
    p = _arrive(demo_study)
    Participant.objects.filter(pk=p.pk).delete()
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        fields_save(p, ["comment"])
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        p.save(update_fields=["comment"])


@pytest.mark.django_db
def test_rows_insert_returns_the_pk_and_fills_auto_now_add(demo_study):
    p = _arrive(demo_study)  # assignment_create inserts through rows_insert(returning_pk=True)
    stored = Participant.objects.get(pk=p.pk)
    assert stored.prolific_pid == p.prolific_pid and stored.started_at == p.started_at
    answers = [SurveyAnswer(participant=p, condition="pattern", item=f"q{i}", response=i) for i in (1, 2, 3)]
    rows_insert(answers)
    assert sorted(SurveyAnswer.objects.filter(participant=p).values_list("item", "response")) == [
        ("q1", 1), ("q2", 2), ("q3", 3)]
    assert all(a.created_at is not None for a in SurveyAnswer.objects.filter(participant=p))


@pytest.mark.django_db(transaction=True)
def test_rows_insert_raises_integrity_error_and_writes_nothing(demo_study):
    p = _arrive(demo_study)
    rows_insert([SurveyAnswer(participant=p, condition="pattern", item="q1", response=1)])
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            rows_insert([SurveyAnswer(participant=p, condition="pattern", item="q2", response=2),
                         SurveyAnswer(participant=p, condition="pattern", item="q1", response=3)])
    assert list(SurveyAnswer.objects.filter(participant=p).values_list("item", flat=True)) == ["q1"]


@pytest.mark.django_db
def test_prepared_update_matches_only_unanswered_rows_and_counts(demo_study):
    p = _arrive(demo_study)
    setting = demo_study.settings.first()
    now = timezone.now()
    TaskResponse.objects.create(participant=p, setting=setting, position=0, condition="pattern",
                                group1_order=[0], group2_order=[0], served_at=now, last_served_at=now)
    again = PreparedUpdate(TaskResponse, set_fields=["last_served_at"], increments=["serve_count"],
                           where_fields=["participant", "position"], where_null=["answered_at"])
    later = now + timedelta(seconds=3)
    assert again.execute(values={"last_served_at": later}, where={"participant": p.pk, "position": 0}) == 1
    row = TaskResponse.objects.get(participant=p, position=0)
    assert (row.serve_count, row.last_served_at) == (2, later)
    TaskResponse.objects.filter(pk=row.pk).update(answered_at=later)
    assert again.execute(values={"last_served_at": now}, where={"participant": p.pk, "position": 0}) == 0
    assert TaskResponse.objects.get(pk=row.pk).serve_count == 2


_SERVED = PreparedUpsert(TaskResponse, conflict_fields=["participant", "position"],
                         set_fields=["last_served_at"], increments=["serve_count"],
                         where_null=["answered_at"], returning="serve_count")


def _response(p, setting, position, when, order=(0,)):
    return TaskResponse(participant=p, setting=setting, position=position, condition="pattern",
                        group1_order=list(order), group2_order=[0], served_at=when, last_served_at=when)


@pytest.mark.django_db
def test_prepared_upsert_inserts_then_touches_then_leaves_an_answered_row(demo_study):
    """First call: a new row (1). Second: the same row, count 2, served_at and order kept.
    Answered: None and nothing changes. Another position for the same setting: IntegrityError."""
    p = _arrive(demo_study)
    setting = demo_study.settings.first()
    now = timezone.now()
    later = now + timedelta(seconds=3)
    assert _SERVED.execute(_response(p, setting, 0, now, order=(2, 0, 1))) == 1
    assert _SERVED.execute(_response(p, setting, 0, later, order=(0, 1, 2))) == 2
    row = TaskResponse.objects.get(participant=p, position=0)
    assert (row.serve_count, row.served_at, row.last_served_at, row.group1_order) == (2, now, later, [2, 0, 1])
    TaskResponse.objects.filter(pk=row.pk).update(answered_at=later, answer="kept")
    assert _SERVED.execute(_response(p, setting, 0, later + timedelta(seconds=1))) is None
    row.refresh_from_db()
    assert (row.serve_count, row.last_served_at, row.answer) == (2, later, "kept")
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            _SERVED.execute(_response(p, setting, 5, later))
    assert TaskResponse.objects.filter(participant=p).count() == 1


@pytest.mark.django_db
def test_prepared_cell_counts_agree_with_the_orm(demo_study):
    for _ in range(6):
        _arrive(demo_study)
    counts = cell_counts(study=demo_study, n_cells=4)
    by_orm = {i: Participant.objects.filter(study=demo_study, cell_index=i).count() for i in range(4)}
    assert counts == by_orm and sum(counts.values()) == 6
    # Past the abandonment timeout in-progress participants hold no place.
    late = timezone.now() + timedelta(minutes=demo_study.abandonment_timeout_minutes + 1)
    assert cell_counts(study=demo_study, n_cells=4, now=late) == {0: 0, 1: 0, 2: 0, 3: 0}


@pytest.mark.django_db
def test_fields_save_refuses_a_deferred_field_without_a_new_value(demo_study):
    """Saving a column the hot path's read left out would read it first: refused, not hidden."""
    p = _arrive(demo_study)
    partial = Participant.objects.defer("comment", "finished_at").get(pk=p.pk)
    with pytest.raises(ValueError, match="comment is deferred"):
        fields_save(partial, ["step", "comment"])
    partial.comment = "assigned, so it may be saved"
    fields_save(partial, ["comment", "updated_at"])  # updated_at is deferred-safe: auto_now
    assert Participant.objects.get(pk=p.pk).comment == "assigned, so it may be saved"


# --- the statements' cursors --------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_compiled_statements_work_across_a_replaced_connection(demo_study):
    """A connection closed between two compiled statements is reopened and the statements still
    give the right rows."""
    from django.db import connections

    p = _arrive(demo_study)
    (row,) = _BY_PID.fetch(pid=p.prolific_pid, since=timezone.now() - timedelta(minutes=5))
    assert row.pk == p.pk
    p.comment = "one"
    fields_save(p, ["comment"])
    connections["default"].close()
    (row,) = _BY_PID.fetch(pid=p.prolific_pid, since=timezone.now() - timedelta(minutes=5))
    assert row.comment == "one"


@pytest.mark.django_db(transaction=True)
def test_compiled_statements_keep_execute_wrappers_error_translation_and_query_capture(demo_study):
    """Django's execute wrappers see every compiled statement, a unique violation still arrives
    as Django's IntegrityError and leaves the cursor usable, and captured queries are recorded."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    p = _arrive(demo_study)
    seen = []

    def wrapper(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        rows_insert([SurveyAnswer(participant=p, condition="pattern", item="q1", response=1)])
        with pytest.raises(IntegrityError):
            with transaction.atomic():
                rows_insert([SurveyAnswer(participant=p, condition="pattern", item="q1", response=2)])
        assert len(_CELLS.fetch(study_id=demo_study.pk)) == 1
    # SQLite's BEGIN IMMEDIATE goes through the wrappers too; the three statements must.
    statements = [sql.split()[0] for sql in seen if not sql.startswith("BEGIN")]
    assert statements == ["INSERT", "INSERT", "SELECT"]
    with CaptureQueriesContext(connection) as captured:
        _CELLS.fetch(study_id=demo_study.pk)
    assert len(captured) == 1 and captured[0]["sql"].startswith("SELECT")
