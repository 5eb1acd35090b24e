"""Items, assignment, reservations, saving with history, final labels and adjudication."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from spotlight_study.annotation.errors import InvalidLabel, ItemNotFound, NotAllowed, ReservationLost
from spotlight_study.annotation.services.adjudication import adjudication_save
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import assignment_next, item_open, items_sync
from spotlight_study.annotation.models import (
    Annotation,
    AnnotationRevision,
    Assignment,
    CodebookTag,
    FinalLabel,
    Item,
    StudyAnnotator,
)
from spotlight_study.annotation.selectors import annotator_queue, codebook
from spotlight_study.participation.models import TaskResponse

from .conftest import complete_participants, label


def _label_all(study, user, make=lambda item: label()):
    """Let ``user`` take and label items until none is left; return the public ids."""
    done = []
    while (item := assignment_next(study=study, annotator=user)) is not None:
        label_save(study=study, annotator=user, public_id=item.public_id, label=make(item))
        done.append(item.public_id)
    return done


def test_items_sync_makes_one_opaque_item_per_answer(demo_study, answered):
    """Every answered response (training and main) gets one item with a random id; re-running adds none."""
    assert items_sync(study=demo_study) == 6
    assert items_sync(study=demo_study) == 0
    items = list(Item.objects.filter(study=demo_study))
    assert len(items) == TaskResponse.objects.filter(answered_at__isnull=False).count() == 6
    assert {i.setting.kind for i in items} == {"training", "main"}
    ids = [i.public_id for i in items]
    assert len(set(ids)) == 6 and all(len(pid) == 16 and not pid.isdigit() for pid in ids)
    for item in items:
        assert (
            str(item.pk) != item.public_id
            and item.response.participant.prolific_pid not in item.public_id
        )


def test_each_item_goes_to_k_annotators_and_no_more(demo_study, answered, annotators):
    """Labeling in turn, every item ends with exactly k=2 distinct annotators."""
    a, b, c = annotators
    first = _label_all(demo_study, a)
    assert len(first) == 6  # the first annotator can take every item
    second = _label_all(demo_study, b)
    assert sorted(second) == sorted(first)
    assert _label_all(demo_study, c) == []  # every item already has k=2
    for item in Item.objects.all():
        assert item.annotations.count() == 2


def test_each_annotator_has_an_own_random_order(demo_study, annotators):
    """Two annotators' queues over the same items come in different orders (seeded per annotator)."""
    complete_participants(demo_study.slug, 5)
    demo_study.annotators_per_item = 3
    demo_study.save()
    orders = []
    for user in annotators[:2]:
        orders.append(_label_all(demo_study, user))
    assert sorted(orders[0]) == sorted(orders[1]) and orders[0] != orders[1]
    seats = StudyAnnotator.objects.filter(study=demo_study).order_by("number")
    assert [s.pseudonym for s in seats] == ["annotator_1", "annotator_2"]
    assert seats[0].order_seed != seats[1].order_seed


def test_refresh_returns_the_open_reservation(demo_study, answered, annotators):
    """Asking again for the next item (refresh, second tab) returns the same reserved item."""
    a = annotators[0]
    first = assignment_next(study=demo_study, annotator=a)
    again = assignment_next(study=demo_study, annotator=a)
    assert first.pk == again.pk
    assert Assignment.objects.filter(annotator=a).count() == 1
    assert annotator_queue(study=demo_study, annotator=a)["open"] == first.public_id


def test_expired_reservation_is_released_to_others(demo_study, annotators):
    """After the timeout an open item goes to another annotator; the lapsed one cannot save it then."""
    complete_participants(demo_study.slug, 1)
    demo_study.annotators_per_item = 1
    demo_study.save()
    a, b, _ = annotators
    now = timezone.now()
    item_a = assignment_next(study=demo_study, annotator=a, now=now)
    taken = {item_a.pk}
    for user in (b, b):  # b labels two items while a's reservation is open
        it = assignment_next(study=demo_study, annotator=user, now=now)
        label_save(
            study=demo_study, annotator=user, public_id=it.public_id, label=label(), now=now
        )
        taken.add(it.pk)
    assert item_a.pk not in {i.pk for i in Item.objects.filter(annotations__annotator=b)}
    later = now + timedelta(minutes=demo_study.annotation_reservation_minutes + 1)
    assert assignment_next(study=demo_study, annotator=b, now=later).pk == item_a.pk
    assert Assignment.objects.get(item=item_a, annotator=a).state == Assignment.State.RELEASED
    label_save(
        study=demo_study, annotator=b, public_id=item_a.public_id, label=label(), now=later
    )
    with pytest.raises(ReservationLost, match="gone to other annotators"):
        label_save(
            study=demo_study, annotator=a, public_id=item_a.public_id, label=label(), now=later
        )
    assert not Annotation.objects.filter(annotator=a).exists()


def test_lapsed_reservation_can_still_be_saved_while_a_place_is_free(
    demo_study, answered, annotators
):
    """A late save after the timeout succeeds when nobody took the place meanwhile."""
    a = annotators[0]
    now = timezone.now()
    item = assignment_next(study=demo_study, annotator=a, now=now)
    later = now + timedelta(hours=5)
    label_save(
        study=demo_study, annotator=a, public_id=item.public_id, label=label(), now=later
    )
    assert Assignment.objects.get(item=item, annotator=a).state == Assignment.State.SUBMITTED


def test_last_save_wins_and_history_is_kept(demo_study, answered, annotators):
    """Saving twice (two tabs) keeps one current annotation, the last one, and both revisions."""
    a = annotators[0]
    item = assignment_next(study=demo_study, annotator=a)
    label_save(
        study=demo_study, annotator=a, public_id=item.public_id, label=label(identified=True)
    )
    label_save(
        study=demo_study, annotator=a, public_id=item.public_id, label=label(identified=False)
    )
    (current,) = Annotation.objects.filter(item=item, annotator=a)
    assert current.identified is False and current.revision == 2
    revisions = AnnotationRevision.objects.filter(annotation=current).order_by("revision")
    assert [r.identified for r in revisions] == [True, False]


def test_database_refuses_a_second_annotation_per_item_and_annotator(
    demo_study, answered, annotators
):
    """The unique constraint backs 'one current annotation per item x annotator'."""
    a = annotators[0]
    item = assignment_next(study=demo_study, annotator=a)
    label_save(study=demo_study, annotator=a, public_id=item.public_id, label=label())
    with pytest.raises(IntegrityError), transaction.atomic():
        Annotation.objects.create(
            item=item, annotator=a, identified=True, surface_difference=False, no_difference=False
        )


def test_items_of_other_annotators_are_not_found(demo_study, answered, annotators):
    """An annotator cannot open or label an item that was not given to them."""
    a, b, _ = annotators
    item = assignment_next(study=demo_study, annotator=a)
    with pytest.raises(ItemNotFound):
        item_open(study=demo_study, annotator=b, public_id=item.public_id)
    with pytest.raises(ItemNotFound):
        label_save(study=demo_study, annotator=b, public_id=item.public_id, label=label())
    with pytest.raises(ItemNotFound):
        label_save(study=demo_study, annotator=a, public_id="no-such-item", label=label())


@pytest.mark.parametrize(
    "overrides,field",
    [
        ({"exclusion": "other"}, "exclusion_note"),
        ({"exclusion": "bogus"}, "exclusion"),
        ({"tags": ["not in the codebook"]}, "tags"),
        ({"no_difference": True}, "no_difference"),
    ],
)
def test_invalid_labels_are_refused_and_nothing_is_saved(
    demo_study, answered, annotators, overrides, field
):
    """A label that breaks the schema raises InvalidLabel naming the field; nothing is stored."""
    a = annotators[0]
    item = assignment_next(study=demo_study, annotator=a)
    with pytest.raises(InvalidLabel) as info:
        label_save(
            study=demo_study, annotator=a, public_id=item.public_id, label=label(**overrides)
        )
    assert field in info.value.errors
    assert not Annotation.objects.exists()


def test_annotators_extend_the_codebook(demo_study, answered, annotators):
    """A new tag is added to the setting's codebook and can then be chosen by others."""
    a = annotators[0]
    item = assignment_next(study=demo_study, annotator=a)
    label_save(
        study=demo_study,
        annotator=a,
        public_id=item.public_id,
        label=label(tags=[codebook(item.setting)[0]], new_tags=["  Night  Shift "]),
    )
    assert "night shift" in codebook(item.setting)
    assert CodebookTag.objects.get(name="night shift").setting == item.setting
    assert Annotation.objects.get().tags == sorted([codebook(item.setting)[0], "night shift"])


def test_full_agreement_becomes_the_final_label(demo_study, answered, annotators):
    """When both annotators agree on every field, the agreed label is final without adjudication."""
    a, b, _ = annotators
    _label_all(demo_study, a)
    assert not FinalLabel.objects.exists()  # one label per item is not enough with k=2
    _label_all(demo_study, b)
    assert FinalLabel.objects.count() == 6
    assert set(FinalLabel.objects.values_list("source", flat=True)) == {"agreement"}


def test_disagreement_goes_to_adjudication_and_back(demo_study, answered, annotators, adjudicator):
    """Disagreeing labels wait for an adjudicator; a changed label can also undo an agreement."""
    a, b, _ = annotators
    _label_all(demo_study, a, make=lambda item: label(identified=True))
    _label_all(demo_study, b, make=lambda item: label(identified=item.setting.kind == "main"))
    training = Item.objects.filter(setting__kind="training").first()
    assert not FinalLabel.objects.filter(item__setting__kind="training").exists()
    assert FinalLabel.objects.count() == 4  # the main items agree
    with pytest.raises(NotAllowed):
        adjudication_save(
            study=demo_study, adjudicator=a, public_id=training.public_id, label=label()
        )
    final = adjudication_save(
        study=demo_study,
        adjudicator=adjudicator,
        public_id=training.public_id,
        label=label(identified=False),
    )
    assert (
        final.source == "adjudication"
        and final.adjudicator == adjudicator
        and final.identified is False
    )
    # b changes a main label: the agreement-based final label goes, the item needs adjudication.
    main = Item.objects.filter(setting__kind="main").first()
    label_save(
        study=demo_study, annotator=b, public_id=main.public_id, label=label(identified=False)
    )
    assert not FinalLabel.objects.filter(item=main).exists()
    # Items that agree are not open to adjudication.
    agreed = FinalLabel.objects.filter(source="agreement").first().item
    with pytest.raises(ItemNotFound):
        adjudication_save(
            study=demo_study, adjudicator=adjudicator, public_id=agreed.public_id, label=label()
        )
