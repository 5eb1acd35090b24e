"""The near-duplicate index (issue 39): an answer's save reads a bounded number of candidates
whatever the number of earlier answers, and the scores equal a comparison with every earlier
answer wherever the flag can see them."""
import importlib
import random
import secrets

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django.utils import timezone

from spotlight_study.participation import near_duplicates, writing
from spotlight_study.participation.flags import normalize_answer
from spotlight_study.participation.models import AnswerSketchKey, Participant, TaskResponse
from spotlight_study.studies.models import Setting

pytestmark = pytest.mark.django_db

WORDS = (
    "group texts doctor woman man family work patient hospital kind strict young old nurse "
    "career friendly careful calm busy tired caring skilled smart surgeon clinic night day "
    "more often describes mentions both first second difference shows talks about seems"
).split()


def _answer(rng: random.Random) -> str:
    """A participant's own answer: 12-30 words drawn from a small vocabulary of the setting."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 30))).capitalize() + "."


def _edited(rng: random.Random, text: str, edits: int) -> str:
    """``text`` with ``edits`` characters deleted, inserted or replaced at random places."""
    chars = list(text)
    for _ in range(edits):
        i = rng.randrange(len(chars))
        op = rng.choice("dir")
        if op == "d" and len(chars) > 1:
            del chars[i]
        elif op == "i":
            chars.insert(i, rng.choice("abcdefghijklmnopqrstuvwxyz "))
        else:
            chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz ")
    return "".join(chars)


def _saved_answers(study, texts, *, is_pilot=False):
    """Answered rows of ``texts`` in the study's first main setting, each with its sketch, as the
    answer's save leaves them (the sketch through the migration's backfill)."""
    setting = study.settings.filter(kind=Setting.Kind.MAIN).order_by("position").first()
    now = timezone.now()
    people = Participant.objects.bulk_create(
        Participant(
            study=study, prolific_pid=secrets.token_hex(12), prolific_study_id="s",
            prolific_session_id=secrets.token_hex(12), cell_index=0, cell_plan=[],
            assignment_counts={}, assignment_seed=1, shuffle_seed=1, is_pilot=is_pilot,
        )
        for _ in texts
    )
    rows = TaskResponse.objects.bulk_create(
        TaskResponse(
            participant=p, setting=setting, position=1, condition="pattern", group1_order=[],
            group2_order=[], served_at=now, last_served_at=now, answered_at=now,
            time_on_task_ms=60_000, answer=text,
        )
        for p, text in zip(people, texts)
    )
    AnswerSketchKey.objects.bulk_create(
        AnswerSketchKey(participant_id=r.participant_id, setting=setting, is_pilot=is_pilot, sketch_key=k)
        for r in rows
        for k in dict.fromkeys(near_duplicates.sketch_keys(normalize_answer(r.answer)))
    )
    return setting, rows


def _new_participant_row(study, setting):
    """An arriving participant's unanswered row in ``setting``."""
    p = Participant.objects.create(
        study=study, prolific_pid=secrets.token_hex(12), prolific_study_id="s",
        prolific_session_id=secrets.token_hex(12), cell_index=0, cell_plan=[],
        assignment_counts={}, assignment_seed=1, shuffle_seed=1,
    )
    now = timezone.now()
    return TaskResponse.objects.create(
        participant=p, setting=setting, position=1, condition="pattern", group1_order=[],
        group2_order=[], served_at=now, last_served_at=now,
    )


def _scored_on_save(monkeypatch, row, answer):
    """Save ``answer`` for ``row`` through near_duplicate_record; the number of earlier answers
    it scored, the rows its candidate statement read, and the score."""
    seen = []
    original = writing.near_duplicate_scores

    def counting(text, others):
        seen.append(len(others))
        return original(text, others)

    monkeypatch.setattr(writing, "near_duplicate_scores", counting)
    keys = near_duplicates.sketch_keys(normalize_answer(answer))
    index_rows = len(near_duplicates.candidate_rows(setting_id=row.setting_id, is_pilot=False, keys=keys))
    score, _raised = writing.near_duplicate_record(
        answer=answer, setting_id=row.setting_id, participant_id=row.participant_id, is_pilot=False
    )
    return seen[0], index_rows, score


@pytest.mark.parametrize("kind", ["own words", "one pasted text"])
def test_rows_read_do_not_grow_with_earlier_answers(demo_study, monkeypatch, kind):
    """With 50 and with 2,000 earlier answers (each in its own words, or all one lightly edited
    pasted text, the worst case), a save scores at most CANDIDATES answers and reads at most
    KEYS_PER_ANSWER * RECENT_PER_KEY index entries; with one pasted text the same number at both
    sizes."""
    seed = 3901
    print("seed", seed)
    bound = near_duplicates.KEYS_PER_ANSWER * near_duplicates.RECENT_PER_KEY
    pasted = "Group 2 describes the person more often as a woman and mentions family; group 1 is about work."
    results = []
    for n in (50, 2000):
        rng = random.Random(seed)
        if kind == "own words":
            texts = [_answer(rng) for _ in range(n)]
        else:
            texts = [_edited(rng, pasted, 2) for _ in range(n)]
        setting, _rows = _saved_answers(demo_study, texts)
        row = _new_participant_row(demo_study, setting)
        new = _answer(rng) if kind == "own words" else _edited(rng, pasted, 2)
        scored, index_rows, score = _scored_on_save(monkeypatch, row, new)
        assert scored <= near_duplicates.CANDIDATES and index_rows <= bound
        results.append((scored, index_rows, score))
        TaskResponse.objects.filter(setting=setting).delete()
    if kind == "one pasted text":
        # Every earlier answer is a near-duplicate: both sizes score exactly CANDIDATES.
        assert results[0][0] == results[1][0] == near_duplicates.CANDIDATES
        assert results[0][2] >= 90 and results[1][2] >= 90


def _sketch_entries_fetched() -> int:
    """Rows of the sketch table fetched through its indexes in this transaction so far
    (PostgreSQL's per-transaction table statistics, exact and immediate)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables WHERE relname = %s",
            [AnswerSketchKey._meta.db_table],
        )
        row = cursor.fetchone()
    return row[0] if row else 0


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner and statistics")
def test_postgres_reads_a_bounded_range_per_key_without_statistics(demo_study):
    """On a sketch table that was never analyzed (as on a server with autovacuum off, or one
    that grew from empty faster than autovacuum ran), 2,000 earlier answers that are all one
    pasted text (every fifth lightly edited) share most keys, among 200,000 other keys; the candidate read fetches at most RECENT_PER_KEY rows
    per key, not every row of each shared key (the bitmap scan and sort PostgreSQL chose
    without statistics fetched about 2,000 per key, issue 39)."""
    seed = 3903
    print("seed", seed)
    rng = random.Random(seed)
    pasted = "Group 2 describes the person more often as a woman and mentions family; group 1 is about work."
    texts = [_edited(rng, pasted, 2) if i % 5 == 0 else pasted for i in range(2000)]
    setting, _rows = _saved_answers(demo_study, texts)
    with connection.cursor() as cursor:
        # 100 more keys per answer, each its own (random, seeded): the table's size as at
        # several thousand participants, where PostgreSQL's guess without statistics (a few
        # rows per key) made it choose the bitmap scan.
        cursor.execute("SELECT setseed(0.3903)")
        cursor.execute(
            f"INSERT INTO {AnswerSketchKey._meta.db_table} (participant_id, setting_id, is_pilot, sketch_key) "
            "SELECT r.participant_id, r.setting_id, false, (random() * 9e18)::bigint "
            "FROM participation_taskresponse AS r, generate_series(1, 100) WHERE r.setting_id = %s",
            [setting.pk],
        )
        cursor.execute(
            "SELECT reltuples FROM pg_class WHERE relname = %s", [AnswerSketchKey._meta.db_table]
        )
        assert cursor.fetchone()[0] <= 0, "the table must be without statistics for this test"
    keys = near_duplicates.sketch_keys(normalize_answer(pasted))
    before = _sketch_entries_fetched()
    rows = near_duplicates.candidate_rows(setting_id=setting.pk, is_pilot=False, keys=keys)
    fetched = _sketch_entries_fetched() - before
    print("index entries fetched:", fetched, "rows returned:", len(rows))
    assert len(rows) > len(keys)  # the keys are shared: several answers per key
    assert fetched <= len(keys) * near_duplicates.RECENT_PER_KEY


def test_scores_equal_the_full_comparison_on_a_reference_set(demo_study):
    """300 answers of a setting, a third of them edited copies of earlier ones (1 to 40 edits):
    each answer's save gives the score of a comparison with every earlier answer (today's
    method before issue 39) at every score of 90 and above, and misses none of 70 and above by
    more than the documented margin."""
    seed = 3902
    print("seed", seed)
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(300):
        if texts and rng.random() < 1 / 3:
            texts.append(_edited(rng, rng.choice(texts), rng.randint(1, 40)))
        else:
            texts.append(_answer(rng))
    setting, _ = _saved_answers(demo_study, texts[:1])
    rows = [_new_participant_row(demo_study, setting) for _ in texts[1:]]
    differ = []
    for i, (row, text) in enumerate(zip(rows, texts[1:]), start=1):
        full = writing.near_duplicate_scores(text, list(enumerate(texts[:i])))
        expected = max(full.values(), default=0)
        got, _ = writing.near_duplicate_record(
            answer=text, setting_id=setting.pk, participant_id=row.participant_id, is_pilot=False
        )
        TaskResponse.objects.filter(pk=row.pk).update(answer=text, answered_at=timezone.now())
        if expected >= 90:
            assert got == expected, (text, expected, got)
        elif got != expected:
            differ.append((expected, got))
    print("scores under 90 that differ (full, index):", differ)
    assert all(got <= expected for expected, got in differ)
    # Of 299 saves, 8 at this seed: the best earlier answer (ratio 70-89) was not among the
    # candidates; each such score is lower than the full comparison's, never higher.
    assert len(differ) <= 10


def test_pilot_and_real_answers_never_meet(demo_study):
    """A pilot participant's identical answer is not a candidate for a real participant's."""
    text = "Group 2 describes the doctor as a woman more often."
    setting, _ = _saved_answers(demo_study, [text], is_pilot=True)
    row = _new_participant_row(demo_study, setting)
    score, raised = writing.near_duplicate_record(
        answer=text, setting_id=setting.pk, participant_id=row.participant_id, is_pilot=False
    )
    assert score == 0 and raised == {}


def test_a_saved_answer_has_its_sketch(demo_study):
    """The save stores one key per band and one for the whole text, for its participant and
    setting, and a later answer finds it."""
    setting, _ = _saved_answers(demo_study, ["An earlier answer about doctors and nurses."])
    row = _new_participant_row(demo_study, setting)
    text = "First version of the answer, about women doctors."
    writing.near_duplicate_record(
        answer=text, setting_id=setting.pk, participant_id=row.participant_id, is_pilot=False
    )
    keys = list(AnswerSketchKey.objects.filter(participant_id=row.participant_id, setting=setting)
                .values_list("sketch_key", flat=True))
    assert sorted(keys) == sorted(near_duplicates.sketch_keys(normalize_answer(text)))
    assert len(keys) == near_duplicates.KEYS_PER_ANSWER
    later = _new_participant_row(demo_study, setting)
    TaskResponse.objects.filter(pk=row.pk).update(answer=text, answered_at=timezone.now())
    score, raised = writing.near_duplicate_record(
        answer=text + "!", setting_id=setting.pk, participant_id=later.participant_id, is_pilot=False
    )
    assert score >= 98 and raised == {row.pk: score}


def test_sketch_is_stable_and_case_and_space_blind():
    """The keys depend on the normalized text only, and are the same in every process (fixed
    seeds, no Python hash): a known text's first key is pinned."""
    a = near_duplicates.sketch_keys(normalize_answer("Group 2  is about WOMEN."))
    b = near_duplicates.sketch_keys(normalize_answer("group 2 is about women."))
    assert a == b and len(a) == near_duplicates.KEYS_PER_ANSWER
    assert near_duplicates.sketch_keys("ab") == near_duplicates.sketch_keys("ab")[:1]
    assert a[0] == PINNED_FIRST_KEY


def test_migration_backfills_earlier_answers(demo_study):
    """Answers saved before the index existed get their sketch from the migration."""
    setting, rows = _saved_answers(demo_study, ["Saved before the index.", "Also saved before."])
    AnswerSketchKey.objects.all().delete()
    migration = importlib.import_module("spotlight_study.participation.migrations.0006_near_duplicate_sketch")
    migration.sketch_saved_answers(django_apps, None)
    for r in rows:
        keys = set(AnswerSketchKey.objects.filter(participant_id=r.participant_id).values_list("sketch_key", flat=True))
        assert keys == set(near_duplicates.sketch_keys(normalize_answer(r.answer)))


PINNED_FIRST_KEY = 7228746197608071488
