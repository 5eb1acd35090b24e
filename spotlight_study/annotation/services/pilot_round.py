"""Writes of the pilot annotation round: opening and closing it (see :mod:`..pilot_round`).

Opening or closing only flips the study's flag under the pool lock, the lock every hand-out of
an item takes, so no annotator is given a pilot item after the round was closed. Labels are never
touched: a closed round keeps its labels and final labels, which stay in its own part of the
overview and the exports, and an annotator who reopens a pilot item of a closed round is told
that the round is closed.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from spotlight_study.studies.models import Study

from ..models import AnnotationPool
from .pool import pool_lock
from .queue import items_sync


def pilot_round_set(*, study: Study, open_: bool, now: datetime | None = None) -> bool:
    """Open (``open_=True``) or close the study's pilot annotation round.

    Returns whether the state changed (``False`` when it already was as asked; nothing is
    written then). Opening makes the items of the pilot answers saved so far
    (:func:`.queue.items_sync`), so the round's queue pages, which write nothing, find them.
    ``now`` is for tests.
    """
    now = now or timezone.now()
    if open_:
        items_sync(study=study)
    with transaction.atomic():
        pool_lock(study)
        pool = AnnotationPool.objects.get(study=study)
        if pool.pilot_round_open == open_:
            return False
        pool.pilot_round_open = open_
        pool.pilot_round_changed_at = now
        pool.save(update_fields=["pilot_round_open", "pilot_round_changed_at"])
    return True
