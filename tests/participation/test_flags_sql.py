"""The database forms of the flags (participation/flag_queries.py) agree with the Python ones
(participation/flags.py) at every boundary, and the researcher page's figures with a Python
recount of the same rows."""
import itertools
import secrets
import statistics
from collections import Counter

import pytest
from django.utils import timezone

from spotlight_study.participation import flag_queries, flags
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.participation.selectors import study_dashboard
from spotlight_study.studies.models import Setting

pytestmark = pytest.mark.django_db

TIMES_MS = (None, 0, 1, 19_999, 20_000, 59_999, 60_000, 60_001, 120_000)
HIDDEN_MS = (0, 29_999, 30_000, 30_001, 59_999, 60_000)
PASTES = ((0, 0), (1, 0), (0, 5))


def _answers(study, rows, *, pilot=False, check=True):
    """One participant per row of ``(answer, time_on_task_ms, paste_count, paste_chars,
    hidden_ms)``, with that row as their first main answer; their ``TaskResponse`` rows."""
    setting = study.settings.filter(kind=Setting.Kind.MAIN).order_by("position").first()
    now = timezone.now()
    people = Participant.objects.bulk_create(
        Participant(
            study=study, prolific_pid=secrets.token_hex(12), prolific_study_id="s",
            prolific_session_id=secrets.token_hex(12), cell_index=0, cell_plan=[],
            assignment_counts={}, assignment_seed=1, shuffle_seed=1, is_pilot=pilot,
            instruction_check_passed=check,
        )
        for _ in rows
    )
    return TaskResponse.objects.bulk_create(
        TaskResponse(
            participant=p, setting=setting, position=1, condition="pattern", group1_order=[],
            group2_order=[], served_at=now, last_served_at=now, answered_at=now, answer=answer,
            time_on_task_ms=time_ms, paste_count=count, paste_chars=chars, hidden_ms=hidden,
        )
        for p, (answer, time_ms, count, chars, hidden) in zip(people, rows)
    )


def test_sql_flags_equal_the_python_predicates_at_every_boundary(demo_study):
    """Each SQL flag column equals its predicate in flags.py over a grid of boundary values."""
    grid = list(itertools.product(TIMES_MS, HIDDEN_MS, PASTES))
    _answers(demo_study, [(f"a{i}", t, c, ch, h) for i, (t, h, (c, ch)) in enumerate(grid)])
    seconds = 20
    assert demo_study.short_time_flag_seconds == seconds
    columns = flag_queries.answer_flag_columns(short_time_flag_seconds=seconds)
    rows = TaskResponse.objects.values_list(
        "time_on_task_ms", "paste_count", "paste_chars", "hidden_ms", *columns.values()
    )
    assert len(rows) == len(grid)
    for time_ms, count, chars, hidden, short, pasted, long_hidden, *_writing in rows:
        assert bool(short) is flags.is_very_short_time(time_ms, seconds), (time_ms,)
        assert bool(pasted) is flags.is_pasted(count, chars), (count, chars)
        assert bool(long_hidden) is flags.is_long_time_hidden(hidden, time_ms), (hidden, time_ms)


def test_participant_flag_counts_equal_the_python_count_per_population(demo_study):
    """Counts per participant equal flags.participant_flag_counts, identical texts compared
    with case folding and Unicode whitespace, and real answers never against pilot ones."""
    texts = ["Straße ist gleich", "STRASSE\u00a0ist   gleich", "own text", "Shared", "shared "]
    rows = [(t, 5_000 * (i + 1), i % 2, 0, 40_000 * (i % 3)) for i, t in enumerate(texts)]
    _answers(demo_study, rows)
    _answers(demo_study, [("own text", 90_000, 0, 0, 0)], pilot=True)
    got = flag_queries.study_flag_counts(study=demo_study, pilot=None)
    for pilot in (False, True):
        answers = TaskResponse.objects.filter(participant__is_pilot=pilot).order_by("pk")
        expected = flags.participant_flag_counts(
            ((r.participant_id, flags.evidence_of(r)) for r in answers),
            short_time_flag_seconds=demo_study.short_time_flag_seconds,
        )
        assert got[pilot].by_participant == expected
        assert got[pilot].answers == Counter(r.participant_id for r in answers)
    identical = [c[flags.IDENTICAL_ANSWER] for c in got[False].by_participant.values()]
    assert sum(identical) == 4  # the two "Straße" and the two "shared", not "own text"


@pytest.mark.parametrize("n", [1, 2, 5, 6])
def test_dashboard_median_times_equal_statistics_median(demo_study, n):
    """The database-ranked median of an odd and of an even count equals statistics.median."""
    times = [7_300, 1_000, 61_250, 3_100, 3_100, 250_000][:n]
    _answers(demo_study, [(f"t{i}", ms, 0, 0, 0) for i, ms in enumerate(times)])
    _answers(demo_study, [("pilot", 999_999, 0, 0, 0)], pilot=True)  # never counted
    (row,) = study_dashboard(study=demo_study)["median_times"]
    assert row["n"] == n
    assert row["median_s"] == round(statistics.median(times) / 1000, 1)


def test_dashboard_lists_at_most_flag_rows_and_counts_them_all(demo_study):
    """With flag_rows, the page lists that many flagged participants, oldest first, and counts all."""
    _answers(demo_study, [(f"x{i}", 1_000, 0, 0, 0) for i in range(5)], check=False)
    full = study_dashboard(study=demo_study)
    capped = study_dashboard(study=demo_study, flag_rows=2)
    assert full["flagged"] == capped["flagged"] == 5
    assert capped["flags"] == full["flags"][:2]
    assert capped["flag_counts"] == full["flag_counts"]
    failed = next(c for c in full["flag_counts"] if c["flag"] == flags.FAILED_INSTRUCTION_CHECK)
    assert failed == {**failed, "answers": 5, "participants": 5}


def test_identical_answers_are_counted_from_the_stored_text_key_without_reading_texts(demo_study):
    """With ``text_key`` stored (as every save writes it), the counts equal those of the texts,
    the read selects no answer text, and rows without a key (written by another path) are
    keyed from their text, so a keyed and an unkeyed copy of one answer still count as
    identical (issue 39)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from spotlight_study.participation.near_duplicates import text_key

    texts = ["Straße ist gleich", "STRASSE\u00a0ist   gleich", "own text", "Shared", "shared ", "lone"]
    rows = _answers(demo_study, [(t, 50_000, 0, 0, 0) for t in texts])
    unkeyed = TaskResponse.objects.filter(participant__study=demo_study).count()
    expected = flag_queries.study_flag_counts(study=demo_study, pilot=False)  # every row unkeyed
    assert unkeyed == len(texts)
    for r in rows:
        TaskResponse.objects.filter(pk=r.pk).update(text_key=text_key(flags.normalize_answer(r.answer)))
    with CaptureQueriesContext(connection) as queries:
        keyed = flag_queries.study_flag_counts(study=demo_study, pilot=False)
    assert keyed == expected
    assert len(queries.captured_queries) == 1
    # The answer column is read only inside LENGTH() (the typing flags), never as a text.
    sql = queries.captured_queries[0]["sql"]
    assert sql.count('"answer"') == sql.count('LENGTH("participation_taskresponse"."answer")'), sql
    identical = sorted(c[flags.IDENTICAL_ANSWER] for c in keyed[False].by_participant.values())
    assert identical == [1, 1, 1, 1]
    # One copy keyed, the other not: still a pair.
    TaskResponse.objects.filter(pk=rows[3].pk).update(text_key=None)
    assert flag_queries.study_flag_counts(study=demo_study, pilot=False) == expected


def test_an_answer_save_writes_the_key_of_its_normalized_text(demo_study):
    """The flow's own save (run by the pilot, seed 3911) stores ``text_key`` for every answer,
    equal to the key of the normalized text; unanswered rows have none."""
    from spotlight_study.participation.near_duplicates import text_key
    from spotlight_study.participation.pilot import pilot_run

    pilot_run(study=demo_study, participants=3, seed=3911)
    answered = TaskResponse.objects.filter(participant__study=demo_study, answered_at__isnull=False)
    assert answered.count() >= 6
    for r in answered:
        assert r.text_key == text_key(flags.normalize_answer(r.answer)), r.answer
    assert not TaskResponse.objects.filter(answered_at__isnull=True, text_key__isnull=False).exists()


def test_many_answers_without_a_key_are_read_in_slices(demo_study, monkeypatch):
    """Answers without a stored key are keyed from their text in slices of ``_UNKEYED_BATCH``
    rows (SQLite refuses a statement with more than 32,766 parameters): the counts do not
    depend on the slice size."""
    _answers(demo_study, [(f"text {i % 4}", 50_000, 0, 0, 0) for i in range(11)])
    whole = flag_queries.study_flag_counts(study=demo_study, pilot=False)
    monkeypatch.setattr(flag_queries, "_UNKEYED_BATCH", 3)
    assert flag_queries.study_flag_counts(study=demo_study, pilot=False) == whole
    assert sum(c[flags.IDENTICAL_ANSWER] for c in whole[False].by_participant.values()) == 11
