"""Writes of the annotator's queue: items for new answers, and handing out and giving
back places on items (reservations). Locking: see :mod:`.pool`."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from spotlight_study.participation.models import TaskResponse
from spotlight_study.studies.models import Study

from ..errors import ItemNotFound, PilotRoundClosed, ReservationLost
from ..models import Assignment, Item
from ..pilot_round import pilot_round_is_open
from ..selectors import answer_digest, queue_order_key
from .pool import (
    active_places,
    places_taken_by_others,
    pool_lock,
    reservations_release_expired,
    seat_ensure,
)


def items_sync(*, study: Study) -> int:
    """Create an :class:`Item` for every answered task response (training and main) of ``study``
    that has none yet. Idempotent; safe to run concurrently (the response is unique per item).

    Returns the number of items it tried to create (a concurrent call may have made some).
    A pilot participant's answer becomes an item with ``is_pilot`` set (the pilot annotation
    round, :mod:`..pilot_round`), never one of the real queues.

    Notes
    -----
    Participation does not know about annotation (the dependency points the other way), and a
    participant's request stays at one locked read and one write, so items are not made when a
    participant saves an answer. Instead the annotation's write paths call this first: *Next
    item* (:func:`assignment_next`), the opening of the pilot round, the label import and the
    machine coder, and the downloads that hand out item ids (``final_labels.csv``: web, CLI and
    API; the API's item list). The annotator's queue and item pages and the researcher's
    overview write nothing: they count the answers that have no item yet as open items
    (:func:`..selectors.answers_without_item`). It costs one query when nothing is missing (an
    anti-join of the answers on their items) and one bulk insert more otherwise, whatever the
    number of answers.
    """
    missing = TaskResponse.objects.filter(
        participant__study=study, answered_at__isnull=False, annotation_item__isnull=True
    ).values_list("pk", "setting_id", "answer", "participant__is_pilot")
    new = [
        Item(
            study=study,
            response_id=pk,
            setting_id=setting_id,
            answer_digest=answer_digest(answer),
            is_pilot=is_pilot,
        )
        for pk, setting_id, answer, is_pilot in missing
    ]
    if not new:
        return 0
    with transaction.atomic():
        Item.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)


def assignment_next(
    *, study: Study, annotator, now: datetime | None = None, pilot: bool = False
) -> Item | None:
    """The annotator's next item: the one reserved for them, or a new reservation.

    Parameters
    ----------
    study : Study
    annotator : User
        A member of ``annotators`` (the view checks the role).
    now : datetime, optional
        For tests; defaults to the current time.
    pilot : bool
        ``False`` (default): the real items only. ``True``: the pilot annotation round's items
        (pilot participants' answers), handed out only while the round is open.

    Returns
    -------
    Item or None
        ``None`` when no item of the round needs this annotator. An annotator holds at most one
        open reservation per round; calling again (refresh, a second tab) returns the same item.

    Raises
    ------
    PilotRoundClosed
        With ``pilot=True`` when the study's pilot round is not open.

    Notes
    -----
    Under the pool lock: new answers become items (:func:`items_sync`), expired reservations are
    released, and among the items with fewer than k places taken (submitted or reserved and
    unexpired) that the annotator has not taken, the first in the annotator's own random order
    (:func:`~spotlight_study.annotation.selectors.queue_order_key` with their stored seed) is
    reserved for ``study.annotation_reservation_minutes``; items the annotator skipped come after
    all others. A released or skipped item may come back to the same annotator (on the same
    assignment row), never to a (k+1)-th one.
    """
    now = now or timezone.now()
    items_sync(study=study)
    with transaction.atomic():
        pool_lock(study)
        if pilot and not pilot_round_is_open(study):
            raise PilotRoundClosed()
        reservations_release_expired(study, now)
        seat = seat_ensure(study, annotator)
        current = (
            Assignment.objects.filter(
                item__study=study,
                item__is_pilot=pilot,
                annotator=annotator,
                state=Assignment.State.RESERVED,
                expires_at__gt=now,
            )
            .select_related("item")
            .first()
        )
        if current is not None:
            return current.item
        pk = _next_open_item(
            study=study, annotator=annotator, order_seed=seat.order_seed, now=now, pilot=pilot
        )
        if pk is None:
            return None
        Assignment.objects.update_or_create(
            item_id=pk,
            annotator=annotator,
            defaults={
                "state": Assignment.State.RESERVED,
                "reserved_at": now,
                "expires_at": now + timedelta(minutes=study.annotation_reservation_minutes),
            },
        )
        return Item.objects.get(pk=pk)


def _next_open_item(
    *, study: Study, annotator, order_seed: int, now: datetime, pilot: bool
) -> int | None:
    """The pk of the first item of the round (real or ``pilot``) open to the annotator in their
    order (skipped ones last), or ``None``. Open: fewer than k places in use and not taken by
    them (released or skipped assignments of theirs do not count as taken). Call with the pool
    lock held."""
    mine = Assignment.objects.filter(item__study=study, item__is_pilot=pilot, annotator=annotator)
    free_again = (Assignment.State.RELEASED, Assignment.State.SKIPPED)
    taken_by_me = mine.exclude(state__in=free_again).values("item_id")
    skipped = set(mine.filter(state=Assignment.State.SKIPPED).values_list("item_id", flat=True))
    counts: dict[int, int] = {}
    for row in (
        Assignment.objects.filter(active_places(now), item__study=study, item__is_pilot=pilot)
        .values("item_id")
        .order_by()
    ):
        counts[row["item_id"]] = counts.get(row["item_id"], 0) + 1
    candidates = [
        (pk, public_id)
        for pk, public_id in Item.objects.filter(study=study, is_pilot=pilot)
        .exclude(pk__in=taken_by_me)
        .values_list("pk", "public_id")
        if counts.get(pk, 0) < study.annotators_per_item
    ]
    if not candidates:
        return None
    pk, _ = min(
        candidates,
        key=lambda c: (c[0] in skipped, queue_order_key(order_seed=order_seed, public_id=c[1])),
    )
    return pk


def item_open(*, study: Study, annotator, public_id: str, now: datetime | None = None) -> Item:
    """The item as its annotator opens it (the item page's GET, the API's item GET): checks
    only, writes nothing and takes no lock.

    Returns the item (with response, setting and study joined). A reservation is not renewed
    here: the label's save checks again, under the pool lock, that the item can still be the
    annotator's (:func:`.labels.label_save`), so a page a GET shows can always be saved unless
    the item went to k others meanwhile, which the save then says.

    Raises
    ------
    ItemNotFound
        If the item does not exist or was never given to this annotator.
    PilotRoundClosed
        If it is a pilot item and the pilot round is closed.
    ReservationLost
        If their reservation lapsed and k other annotators have taken the item since.
    """
    now = now or timezone.now()
    item, assignment = assignment_own(study, annotator, public_id)
    pilot_round_check(item)
    if assignment.state != Assignment.State.SUBMITTED:
        assignment_retake_check(item, assignment, annotator, study, now)
    return item


def assignment_skip(*, study: Study, annotator, public_id: str) -> bool:
    """Give back the annotator's reservation of an item without labeling it.

    The place is free for other annotators at once, and :func:`assignment_next` offers the item
    to this annotator again only when nothing else is open to them. An item they already
    labeled keeps its label (skipping it just moves on). Returns whether a reservation was
    given back.

    Raises
    ------
    ItemNotFound
        If the item was never given to this annotator.
    """
    with transaction.atomic():
        pool_lock(study)
        _item, assignment = assignment_own(study, annotator, public_id)
        if assignment.state == Assignment.State.SUBMITTED:
            return False
        assignment.state = Assignment.State.SKIPPED
        assignment.save(update_fields=["state"])
    return True


def assignment_own(study: Study, annotator, public_id: str) -> tuple[Item, Assignment]:
    """The item by its public id and the annotator's assignment of it.

    Raises :class:`ItemNotFound` if there is no such item in ``study`` or it was never given to
    ``annotator`` (the same error either way, so ids cannot be probed).
    """
    item = (
        Item.objects.select_related("response", "setting", "study")
        .filter(study=study, public_id=public_id)
        .first()
    )
    assignment = Assignment.objects.filter(item=item, annotator=annotator).first() if item else None
    if assignment is None:
        raise ItemNotFound()
    return item, assignment


def pilot_round_check(item: Item) -> None:
    """Raise :class:`PilotRoundClosed` if ``item`` is a pilot item and its study's pilot round
    is closed (so a pilot item is neither opened nor labelled then). Call with the pool lock held."""
    if item.is_pilot and not pilot_round_is_open(item.study):
        raise PilotRoundClosed()


def assignment_retake_check(
    item: Item, assignment: Assignment, annotator, study: Study, now: datetime
) -> None:
    """Check that a reserved or released item can still be the annotator's.

    Raises :class:`ReservationLost` if their reservation lapsed (expired, released or skipped)
    and k other annotators hold places on the item now. Call with the pool lock held.
    """
    lapsed = (
        assignment.state in (Assignment.State.RELEASED, Assignment.State.SKIPPED)
        or assignment.expires_at <= now
    )
    if lapsed and places_taken_by_others(item, annotator, now) >= study.annotators_per_item:
        raise ReservationLost(
            f"This item was open for more than {study.annotation_reservation_minutes} minutes "
            "and has gone to other annotators meanwhile. Your label for it was not saved."
        )
