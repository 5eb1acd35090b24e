"""A NUL character in a URL path (``%00``) is a 404 on SQLite and PostgreSQL alike, never the
500 of PostgreSQL refusing NUL in a query."""
from __future__ import annotations

import pytest
from django.test import Client

from ..annotation.conftest import complete_participants, make_user

ITEM_URLS = [
    ("get", "/annotate/{slug}/items/{item}/"),
    ("post", "/annotate/{slug}/items/{item}/skip/"),
    ("get", "/annotate/api/{slug}/items/{item}/"),
    ("put", "/annotate/api/{slug}/items/{item}/label/"),
    ("get", "/annotate/{slug}/adjudicate/{item}/"),
]


@pytest.mark.parametrize("method,template", ITEM_URLS)
def test_nul_in_an_annotator_item_url_is_404(demo_study, method, template):
    """An item id with NUL (``x%00y``) in every annotator item URL answers 404."""
    complete_participants(demo_study.slug, 1)
    client = Client()
    client.force_login(make_user("ann-nul", "annotators", staff=True))
    url = template.format(slug=demo_study.slug, item="x%00y")
    response = getattr(client, method)(url)
    assert response.status_code == 404, (url, response.status_code)
    if "/api/" in url:
        assert response.json()["error"]["code"] == "not_found"


def test_nul_anywhere_in_a_path_is_404(db, client):
    """NUL in a study slug position or a stimulus job kind is 404 too."""
    for url in ("/s/ab%00c/", "/stimuli/jobs/gen%00/1/progress.json", "/annotate/x%00/"):
        assert client.get(url).status_code == 404, url
