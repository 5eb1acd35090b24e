"""The annotator's pages that only read write nothing, and a label's save opens its item once."""
from __future__ import annotations

import re

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from spotlight_study.annotation.models import Annotation, Assignment, Item
from spotlight_study.annotation.services.pilot_round import pilot_round_set
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.pilot import pilot_run

from .conftest import make_user

_WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
_POOL = re.compile(r'FROM "annotation_annotationpool"', re.IGNORECASE)
VALID = {
    "identified": "1", "surface_difference": "0", "no_difference": "0", "exclusion": "none",
    "exclusion_note": "", "new_tags": "",
}


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _writes(captured) -> list[str]:
    # django_session is the staff login's session table, not the page's own work.
    return [q["sql"] for q in captured.captured_queries
            if _WRITE.match(q["sql"]) and "django_session" not in q["sql"]]


def test_queue_and_item_pages_make_no_insert_or_update(demo_study, answered, annotators):
    """GETs of the queue (before any item exists), the pilot queue and an item page write nothing."""
    a = annotators[0]
    client = _client(a)
    with CaptureQueriesContext(connection) as captured:
        queue = client.get(f"/annotate/{demo_study.slug}/")
        client.get(f"/annotate/{demo_study.slug}/pilot/")
    assert queue.status_code == 200 and queue.context["queue"]["available"] == 6
    assert _writes(captured) == [] and not Item.objects.exists()
    item = assignment_next(study=demo_study, annotator=a)
    before = Assignment.objects.get(item=item, annotator=a).expires_at
    with CaptureQueriesContext(connection) as captured:
        page = client.get(f"/annotate/{demo_study.slug}/items/{item.public_id}/")
        api = client.get(f"/annotate/api/{demo_study.slug}/items/{item.public_id}/")
        queue = client.get(f"/annotate/{demo_study.slug}/")
    assert page.status_code == 200 and api.status_code == 200
    assert _writes(captured) == []
    assert queue.context["queue"]["open"] == item.public_id
    assert Assignment.objects.get(item=item, annotator=a).expires_at == before


def test_overview_writes_nothing_and_counts_answers_not_yet_items(demo_study, answered):
    """The researcher's overview counts the 6 answers as items in progress without making them.
    Its one write is the summary it shares with the other processes (``OverviewSnapshot``)."""
    client = _client(make_user("res", "researchers", staff=True))
    with CaptureQueriesContext(connection) as captured:
        page = client.get(f"/annotate/{demo_study.slug}/overview/")
    assert page.status_code == 200
    assert page.context["o"]["items"] == 6 and page.context["o"]["status"]["in_progress"] == 6
    assert [q for q in _writes(captured) if "annotation_overviewsnapshot" not in q] == []
    assert not Item.objects.exists()


def test_a_label_save_opens_its_item_once(demo_study, answered, annotators):
    """The item page's POST locks the pool once and writes the reservation once (submitted)."""
    a = annotators[0]
    item = assignment_next(study=demo_study, annotator=a)
    client = _client(a)
    url = f"/annotate/{demo_study.slug}/items/{item.public_id}/"
    with CaptureQueriesContext(connection) as captured:
        response = client.post(url, {**VALID, "base_revision": "0", "save": "1"})
    assert response.status_code == 302
    statements = [q["sql"] for q in captured.captured_queries]
    # pool_lock: get_or_create's read and the locking read, once (item_open took them again).
    assert len([s for s in statements if _POOL.search(s)]) == 2
    assignment_updates = [s for s in statements if s.startswith('UPDATE "annotation_assignment"')]
    assert len(assignment_updates) == 1 and '"submitted_at"' in assignment_updates[0]
    assert Annotation.objects.filter(item=item, annotator=a).count() == 1
    assert Assignment.objects.get(item=item, annotator=a).state == Assignment.State.SUBMITTED


def test_opening_the_pilot_round_makes_the_pilot_items(demo_study, annotators):
    """Pilot answers become items when the round opens, so its queue finds them without writing."""
    seed = 3
    print(f"pilot seed {seed}")
    pilot_run(study=demo_study, participants=2, seed=seed)
    assert not Item.objects.exists()
    pilot_round_set(study=demo_study, open_=True)
    made = Item.objects.filter(study=demo_study, is_pilot=True).count()
    assert made > 0 and made == Item.objects.count()
    client = _client(annotators[0])
    with CaptureQueriesContext(connection) as captured:
        page = client.get(f"/annotate/{demo_study.slug}/pilot/")
    assert page.context["queue"]["available"] == made
    assert _writes(captured) == []
