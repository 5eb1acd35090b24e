"""The annotator's queue page offers "Next item" only when there is an item for it to open."""
from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.utils import timezone

from spotlight_study.annotation.models import Assignment
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import assignment_next

from .conftest import label, make_user

ALL_LABELED = "All items labeled"
NEXT_BUTTON = '<button type="submit">Next item</button>'


def _queue_page(user, study) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/annotate/{study.slug}/")
    assert response.status_code == 200
    return response.content.decode()


def _label_everything(study, annotator) -> int:
    """Label every item open to ``annotator``; returns how many."""
    n = 0
    while (item := assignment_next(study=study, annotator=annotator)) is not None:
        label_save(study=study, annotator=annotator, public_id=item.public_id, label=label())
        n += 1
    return n


def test_next_item_is_offered_while_items_are_open(demo_study, answered, annotators):
    """With items left, the queue page has the "Next item" button, and no "all labeled" note."""
    page = _queue_page(annotators[0], demo_study)
    assert NEXT_BUTTON in page and ALL_LABELED not in page


def test_an_open_reservation_is_offered_as_continue(demo_study, answered, annotators):
    """An item reserved for the annotator is offered as "Continue with your open item"."""
    assignment_next(study=demo_study, annotator=annotators[0])
    page = _queue_page(annotators[0], demo_study)
    assert "Continue with your open item" in page and NEXT_BUTTON not in page


def test_all_items_labeled_hides_next_item(demo_study, answered, annotators):
    """Once the annotator has labeled everything open to them, the page says so, no button."""
    a = annotators[0]
    assert _label_everything(demo_study, a) == 6
    page = _queue_page(a, demo_study)
    assert ALL_LABELED in page
    assert NEXT_BUTTON not in page and f"/annotate/{demo_study.slug}/next/" not in page


def test_items_full_with_other_annotators_hide_next_item(demo_study, answered, annotators):
    """Items whose k places are taken by others are not open to a new annotator: no button."""
    for other in annotators[: demo_study.annotators_per_item]:
        _label_everything(demo_study, other)
    newcomer = make_user("late-annotator", "annotators")
    page = _queue_page(newcomer, demo_study)
    assert NEXT_BUTTON not in page and "nothing for you to label in this study yet" in page


def test_a_study_without_answers_has_nothing_to_label(demo_study, annotators):
    """Before any participant has answered, the page says there is nothing to label yet."""
    page = _queue_page(annotators[0], demo_study)
    assert NEXT_BUTTON not in page and "nothing for you to label in this study yet" in page


def test_an_expired_reservation_of_ones_own_is_still_offered(demo_study, answered, annotators):
    """The annotator's own lapsed reservation of the last item counts as open: "Next item"
    is shown and opens that item again."""
    a = annotators[0]
    for _ in range(5):
        item = assignment_next(study=demo_study, annotator=a)
        label_save(study=demo_study, annotator=a, public_id=item.public_id, label=label())
    last = assignment_next(study=demo_study, annotator=a)
    Assignment.objects.filter(item=last, annotator=a).update(expires_at=timezone.now() - timedelta(minutes=1))
    page = _queue_page(a, demo_study)
    assert NEXT_BUTTON in page and ALL_LABELED not in page
    assert assignment_next(study=demo_study, annotator=a) == last
