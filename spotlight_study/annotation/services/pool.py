"""The pool lock and the places on items, shared by every write that hands out or takes a place.

Locking: every write that hands out or takes a place on an item locks the study's
:class:`~spotlight_study.annotation.models.AnnotationPool` row (``select_for_update``; on SQLite
every transaction is ``BEGIN IMMEDIATE``, which serializes writers), so places are counted and
taken one request at a time and an item never has more than k annotators.

A place in use is a submitted assignment or an unexpired reservation (:func:`active_places`).
"""

from __future__ import annotations

import secrets
from datetime import datetime

from django.db.models import Max, Q

from spotlight_study.studies.models import Study

from ..models import AnnotationPool, Assignment, Item, StudyAnnotator


def pool_lock(study: Study) -> None:
    """Lock the study's pool row for the current transaction (created on first use).

    Call inside ``transaction.atomic()``; the lock is held until the transaction ends.
    """
    AnnotationPool.objects.get_or_create(study=study)
    AnnotationPool.objects.select_for_update().get(study=study)


def seat_ensure(study: Study, user) -> StudyAnnotator:
    """The user's seat in the study (pseudonym number and order seed), created on first use.

    Call with the pool lock held: numbers are handed out as max + 1.
    """
    seat = StudyAnnotator.objects.filter(study=study, user=user).first()
    if seat is None:
        number = (
            StudyAnnotator.objects.filter(study=study).aggregate(m=Max("number"))["m"] or 0
        ) + 1
        seat = StudyAnnotator.objects.create(
            study=study, user=user, number=number, order_seed=secrets.randbits(62)
        )
    return seat


def active_places(now: datetime) -> Q:
    """Filter of the assignments that hold a place at ``now``: submitted, or reserved and
    not yet expired."""
    return Q(state=Assignment.State.SUBMITTED) | Q(
        state=Assignment.State.RESERVED, expires_at__gt=now
    )


def reservations_release_expired(study: Study, now: datetime) -> None:
    """Mark the study's reservations that expired by ``now`` as released (their places free)."""
    Assignment.objects.filter(
        item__study=study, state=Assignment.State.RESERVED, expires_at__lte=now
    ).update(state=Assignment.State.RELEASED)


def places_taken_by_others(item: Item, user, now: datetime) -> int:
    """How many places of ``item`` other annotators than ``user`` hold at ``now``."""
    return Assignment.objects.filter(active_places(now), item=item).exclude(annotator=user).count()
