"""Concurrent "next item" requests: never a (k+1)-th annotator, never one annotator twice."""

import threading
from collections import Counter, defaultdict

import pytest
from django.db import connections
from django.test import Client

from spotlight_study.annotation.models import Annotation, Assignment, Item
from spotlight_study.studies.services import study_import

from .conftest import complete_participants, make_user

N_REQUESTS = 20
LABEL = {"identified": True, "surface_difference": False, "no_difference": False}


def _run_in_threads(clients_by_thread, work):
    """Run ``work(i, client)`` in one thread per client, released together; return results."""
    barrier = threading.Barrier(len(clients_by_thread))
    results, errors = {}, []

    def worker(i, client):
        try:
            barrier.wait(timeout=30)
            results[i] = work(i, client)
        except Exception as exc:  # reported below; a thread cannot fail the test itself
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=worker, args=(i, c)) for i, c in enumerate(clients_by_thread)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    assert not errors, errors
    assert len(results) == len(clients_by_thread)
    return results


@pytest.mark.django_db(transaction=True)
def test_twenty_parallel_next_item_requests_from_three_annotators(demo_data):
    """20 simultaneous next-item calls (3 annotators, k=2): each annotator holds one item, no item has 3."""
    study = study_import(data=demo_data)
    assert study.annotators_per_item == 2
    complete_participants(study.slug, 1)  # 3 items: fewer than the annotators want
    users = [make_user(f"racer{i}", "annotators") for i in range(3)]
    clients = []
    for i in range(N_REQUESTS):
        client = Client()
        client.force_login(users[i % 3])
        clients.append(client)
    url = f"/annotate/api/{study.slug}/next/"

    def next_item(i, client):
        response = client.post(url, content_type="application/json")
        assert response.status_code == 200, response.content
        return response.json()["item"]["id"]

    got = _run_in_threads(clients, next_item)
    by_user = defaultdict(set)
    for i, item_id in got.items():
        by_user[users[i % 3].pk].add(item_id)
    # Every request of one annotator got the same (their one open) item.
    assert all(len(ids) == 1 for ids in by_user.values()) and len(by_user) == 3
    per_item = Counter(Assignment.objects.values_list("item_id", flat=True))
    assert max(per_item.values()) <= 2
    pairs = list(Assignment.objects.values_list("item_id", "annotator_id"))
    assert len(pairs) == len(set(pairs)) == 3

    # Now every thread labels and asks again until nothing is left, all at once.
    def label_until_done(i, client):
        seen = []
        item = client.post(url, content_type="application/json").json()["item"]
        while item is not None:
            saved = client.put(
                f"/annotate/api/{study.slug}/items/{item['id']}/label/",
                LABEL,
                content_type="application/json",
            )
            assert saved.status_code in (200, 409), saved.content
            seen.append(item["id"])
            item = client.post(url, content_type="application/json").json()["item"]
        return seen

    _run_in_threads(clients, label_until_done)
    for item in Item.objects.all():
        annotators = list(item.annotations.values_list("annotator_id", flat=True))
        assert len(annotators) == 2 and len(set(annotators)) == 2
        assert item.assignments.exclude(state=Assignment.State.RELEASED).count() == 2
    assert Annotation.objects.count() == 3 * 2
