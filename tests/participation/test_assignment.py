"""Balanced assignment at arrival: least-filled cell, freed places, audit data, concurrency."""
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import cell_counts
from spotlight_study.participation.assignment import assignment_create
from spotlight_study.studies.selectors import study_get_with_settings

from ..conftest import new_id


def _arrive(study, pid=None):
    return assignment_create(
        study=study, prolific_pid=pid or new_id(), prolific_study_id=new_id(), prolific_session_id=new_id()
    )


def test_sequential_arrivals_fill_cells_evenly(demo_study):
    """Each block of four arrivals fills each of the four cells once."""
    for block in range(3):
        cells = [_arrive(demo_study).cell_index for _ in range(4)]
        assert sorted(cells) == [0, 1, 2, 3]
    assert cell_counts(study=demo_study, n_cells=4) == {0: 3, 1: 3, 2: 3, 3: 3}


def test_assignment_stores_audit_trail(demo_study):
    """The counts seen, the seed and the plan are stored, and the choice is reproducible from them."""
    import random

    _arrive(demo_study)
    p = _arrive(demo_study)
    counts = {int(k): v for k, v in p.assignment_counts.items()}
    assert sum(counts.values()) == 1 and counts[p.cell_index] == 0
    tied = sorted(i for i, n in counts.items() if n == min(counts.values()))
    assert random.Random(p.assignment_seed).choice(tied) == p.cell_index
    assert [t["setting"] for t in p.cell_plan] in (["doctor", "farming"], ["farming", "doctor"])


def test_ties_are_broken_at_random(demo_study):
    """The first arrival's cell varies between otherwise identical studies (random tie-break)."""
    first_cells = set()
    for _ in range(40):
        p = _arrive(demo_study)
        first_cells.add(p.cell_index)
        p.delete()
    assert len(first_cells) > 1


@pytest.mark.parametrize(
    "status,holds",
    [
        (Participant.Status.COMPLETED, True),
        (Participant.Status.IN_PROGRESS, True),
        (Participant.Status.RETURNED, False),
        (Participant.Status.TIMED_OUT, False),
        (Participant.Status.REJECTED, False),
        (Participant.Status.NO_CONSENT, False),
        (Participant.Status.FAILED_CHECK, False),
    ],
)
def test_which_statuses_hold_a_place(demo_study, status, holds):
    """Completed and recent in-progress participants hold a place; returned and others free it."""
    p = _arrive(demo_study)
    Participant.objects.filter(pk=p.pk).update(status=status)
    assert cell_counts(study=demo_study, n_cells=4)[p.cell_index] == (1 if holds else 0)


def test_abandoned_participants_free_their_place(demo_study):
    """An in-progress participant older than the abandonment timeout no longer holds a place."""
    p = _arrive(demo_study)
    old = timezone.now() - timedelta(minutes=demo_study.abandonment_timeout_minutes + 1)
    Participant.objects.filter(pk=p.pk).update(started_at=old)
    assert cell_counts(study=demo_study, n_cells=4)[p.cell_index] == 0


def test_returned_place_is_taken_by_next_arrival(demo_study):
    """When a participant returns, the next arrival is assigned to the freed cell."""
    arrivals = [_arrive(demo_study) for _ in range(4)]
    gone = arrivals[2]
    Participant.objects.filter(pk=gone.pk).update(status=Participant.Status.RETURNED)
    assert _arrive(demo_study).cell_index == gone.cell_index


def _arrive_concurrently(study_slug: str, n: int) -> list[int]:
    """Call assignment_create from n threads released at once; return the cells."""
    barrier = threading.Barrier(n)
    cells, errors = [], []

    def worker():
        try:
            study = study_get_with_settings(slug=study_slug)
            barrier.wait(timeout=30)
            cells.append(_arrive(study).cell_index)
        except Exception as exc:  # reported below; a thread cannot fail the test itself
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    return cells


@pytest.mark.django_db(transaction=True)
def test_forty_simultaneous_arrivals_stay_balanced(demo_data):
    """40 arrivals at the same instant end with cell counts that differ by at most 1."""
    from spotlight_study.studies.services import study_import

    study_import(data=demo_data)
    cells = _arrive_concurrently(demo_data["slug"], 40)
    counts = Counter(cells)
    assert len(cells) == 40 and Participant.objects.count() == 40
    assert set(counts) == {0, 1, 2, 3}
    assert max(counts.values()) - min(counts.values()) <= 1, counts


@pytest.mark.django_db(transaction=True)
def test_same_pid_arriving_twice_at_once_gets_one_participant(demo_data):
    """Two simultaneous arrivals with the same PID (double click) create one participant."""
    from spotlight_study.studies.services import study_import

    study_import(data=demo_data)
    study = study_get_with_settings(slug=demo_data["slug"])
    pid = new_id()
    barrier = threading.Barrier(2)
    ids, errors = [], []

    def worker():
        try:
            barrier.wait(timeout=30)
            ids.append(_arrive(study, pid=pid).pk)
        except Exception as exc:
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and len(set(ids)) == 1 and Participant.objects.count() == 1
