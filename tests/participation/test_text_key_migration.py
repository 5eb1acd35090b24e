"""Migration 0011 stores the key of every answer saved before ``TaskResponse.text_key`` existed,
the same key a save writes now, so the identical-answer counts do not change (issue 39)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from spotlight_study.participation import flag_queries, flags
from spotlight_study.participation.models import TaskResponse
from spotlight_study.participation.near_duplicates import text_key
from spotlight_study.participation.pilot import pilot_run

BEFORE = [("participation", "0010_merge_page_answer_sketch_function")]
AFTER = [("participation", "0011_taskresponse_text_key")]
PILOT_SEED = 5150

pytestmark = pytest.mark.django_db(transaction=True)


def _migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def test_migration_fills_the_key_of_every_saved_answer(demo_study):
    """Answers saved, the column dropped by migrating back, then forward again: every answered
    row has the key of its normalized text, unanswered rows none, and the flag counts are
    those of the texts."""
    pilot_run(study=demo_study, participants=4, seed=PILOT_SEED)
    # Two participants with one text in different spacing and case: an identical pair.
    first, second = TaskResponse.objects.filter(answered_at__isnull=False, position=1).order_by("pk")[:2]
    TaskResponse.objects.filter(pk=first.pk).update(answer="Same  TEXT here")
    TaskResponse.objects.filter(pk=second.pk).update(answer="same text\u00a0here")
    TaskResponse.objects.update(text_key=None)
    expected = flag_queries.study_flag_counts(study=demo_study, pilot=None)  # keyed from the texts
    try:
        _migrate(BEFORE)
        _migrate(AFTER)
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    answered = TaskResponse.objects.filter(answered_at__isnull=False)
    assert answered.exists()
    for r in answered:
        assert r.text_key == text_key(flags.normalize_answer(r.answer))
    assert not TaskResponse.objects.filter(answered_at__isnull=True, text_key__isnull=False).exists()
    assert flag_queries.study_flag_counts(study=demo_study, pilot=None) == expected
    pilots = expected[True].by_participant
    assert sum(c[flags.IDENTICAL_ANSWER] for c in pilots.values()) >= 2
