"""The completed participants per cell that the database keeps (CellPlaceCount, issue 39) equal
a count of the rows after every kind of write, and the arrival's cell counts equal the old
count of every holding participant."""
import random
import secrets
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Count
from django.utils import timezone

from spotlight_study.participation import place_counts
from spotlight_study.participation.models import CellPlaceCount, Participant
from spotlight_study.participation.selectors import cell_counts, holding_filter

pytestmark = pytest.mark.django_db

S = Participant.Status


def _rows_count(study) -> dict[int, int]:
    """The completed real participants per cell, counted from the rows (the reference)."""
    rows = (Participant.objects.filter(study=study, is_pilot=False, status=S.COMPLETED)
            .values("cell_index").annotate(n=Count("pk")).values_list("cell_index", "n"))
    return {cell: n for cell, n in rows if n}


def _kept(study) -> dict[int, int]:
    """What the triggers kept, leaving out cells at zero."""
    return {c: n for c, n in CellPlaceCount.objects.filter(study=study).values_list("cell_index", "completed") if n}


def _people(study, n, rng, **fields):
    return Participant.objects.bulk_create(
        Participant(
            study=study, prolific_pid=secrets.token_hex(12), prolific_study_id="s",
            prolific_session_id=secrets.token_hex(12), cell_index=rng.randrange(4), cell_plan=[],
            assignment_counts={}, assignment_seed=1, shuffle_seed=1, **fields,
        )
        for _ in range(n)
    )


def test_counts_follow_every_kind_of_write(demo_study):
    """Inserts, status moves both ways, pilot flags, cell moves, single saves, bulk updates and
    deletes: after each, the kept counts equal the rows' count."""
    seed = 3903
    print("seed", seed)
    rng = random.Random(seed)
    people = _people(demo_study, 40, rng, status=S.COMPLETED)
    _people(demo_study, 10, rng, status=S.COMPLETED, is_pilot=True)
    _people(demo_study, 15, rng)
    assert _kept(demo_study) == _rows_count(demo_study) != {}
    steps = [
        lambda: Participant.objects.filter(pk__in=[p.pk for p in people[:5]]).update(status=S.RETURNED),
        lambda: Participant.objects.filter(status=S.IN_PROGRESS).update(status=S.COMPLETED),
        lambda: Participant.objects.filter(pk__in=[p.pk for p in people[5:9]]).update(is_pilot=True),
        lambda: Participant.objects.filter(pk=people[10].pk).update(cell_index=(people[10].cell_index + 1) % 4),
        lambda: Participant.objects.filter(pk__in=[p.pk for p in people[11:14]]).delete(),
        lambda: Participant.objects.filter(pk__in=[p.pk for p in people[:3]]).update(status=S.COMPLETED),
    ]
    for step in steps:
        step()
        assert _kept(demo_study) == _rows_count(demo_study)
    # A whole-row save that leaves the status as it was changes nothing.
    p = Participant.objects.get(pk=people[20].pk)
    p.comment = "thanks"
    p.save()
    assert _kept(demo_study) == _rows_count(demo_study)


def test_cell_counts_equal_the_holding_filter(demo_study):
    """The arrival's counts (kept completed + in-progress in the window) equal the count of
    holding_filter over the rows, with stale in-progress, ended and pilot participants around."""
    rng = random.Random(3904)
    now = timezone.now()
    _people(demo_study, 12, rng, status=S.COMPLETED)
    _people(demo_study, 5, rng, status=S.RETURNED)
    _people(demo_study, 4, rng, is_pilot=True)
    fresh = _people(demo_study, 7, rng)
    stale = _people(demo_study, 6, rng)
    Participant.objects.filter(pk__in=[p.pk for p in stale]).update(started_at=now - timedelta(days=2))
    expected = {i: 0 for i in range(4)}
    for cell, n in (Participant.objects.filter(study=demo_study, is_pilot=False)
                    .filter(holding_filter(study=demo_study, now=now))
                    .values("cell_index").annotate(n=Count("pk")).values_list("cell_index", "n")):
        expected[cell] = n
    assert cell_counts(study=demo_study, n_cells=4, now=now) == expected
    assert sum(expected.values()) == 12 + len(fresh)


def test_lost_triggers_are_made_again_and_counts_recounted(demo_study):
    """Where the triggers are gone (SQLite drops them when a migration rebuilds the table), the
    check after migrate makes them again and counts from the rows."""
    rng = random.Random(3905)
    _people(demo_study, 9, rng, status=S.COMPLETED)
    place_counts.triggers_drop(connection)
    _people(demo_study, 4, rng, status=S.COMPLETED)  # not counted: no trigger
    assert _kept(demo_study) != _rows_count(demo_study)
    assert place_counts.triggers_ensure(connection) is True
    assert _kept(demo_study) == _rows_count(demo_study)
    assert place_counts.triggers_ensure(connection) is False  # present: nothing to do
    _people(demo_study, 2, rng, status=S.COMPLETED)
    assert _kept(demo_study) == _rows_count(demo_study)
