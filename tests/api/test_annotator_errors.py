"""The annotator JSON API (``/annotate/api/``) answers errors in the researcher API's shape.

Both APIs go through one handler (``REST_FRAMEWORK["EXCEPTION_HANDLER"]``), so every error body
is ``{"error": {"status", "code", "message", "fields"}}``, with the codes of docs/api.md.
"""
from __future__ import annotations

import pytest
from django.test import Client

from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import assignment_next, assignment_skip

from ..annotation.conftest import complete_participants, label, make_user

LABEL = {"identified": True, "surface_difference": False, "no_difference": False}


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _error(response, status: int, code: str) -> dict:
    """The error object of ``response`` after checking its status, code and keys."""
    assert response.status_code == status, response.content
    body = response.json()
    error = body["error"]
    assert set(error) == {"status", "code", "message", "fields"}
    assert error["status"] == status and error["code"] == code and error["message"]
    return error


def test_item_not_theirs_and_unknown_study_are_404(demo_study):
    """An unknown item is 404 ``item_not_found``; an unknown study 404 ``not_found``."""
    complete_participants(demo_study.slug, 1)
    client = _client(make_user("ann-404", "annotators"))
    error = _error(client.get(f"/annotate/api/{demo_study.slug}/items/nope/"), 404, "item_not_found")
    assert error["fields"] == {}
    _error(client.post("/annotate/api/no-such-study/next/"), 404, "not_found")


def test_bad_label_fields_are_400_with_the_fields_named(demo_study):
    """A body that fails the serializer is 400 ``invalid``; an unknown tag 400 ``invalid_label``."""
    complete_participants(demo_study.slug, 1)
    user = make_user("ann-400", "annotators")
    client = _client(user)
    item = assignment_next(study=demo_study, annotator=user)
    url = f"/annotate/api/{demo_study.slug}/items/{item.public_id}/label/"
    error = _error(client.put(url, {"identified": "x"}, content_type="application/json"), 400, "invalid")
    assert "identified" in error["fields"] and "surface_difference" in error["fields"]
    tagged = client.put(url, {**LABEL, "tags": ["no such tag"]}, content_type="application/json")
    error = _error(tagged, 400, "invalid_label")
    assert error["fields"] and all(isinstance(m, list) for m in error["fields"].values())
    _error(client.put(url, "{not json", content_type="application/json"), 400, "parse_error")


def test_a_json_body_that_is_not_utf8_is_400_invalid_utf8_like_a_form(demo_study):
    """Bytes that are not UTF-8 get ``invalid_utf8`` as JSON as well as as a form; no label saved."""
    complete_participants(demo_study.slug, 1)
    user = make_user("ann-utf8", "annotators")
    client = _client(user)
    item = assignment_next(study=demo_study, annotator=user)
    url = f"/annotate/api/{demo_study.slug}/items/{item.public_id}/label/"
    as_json = client.generic("PUT", url, b'{"identified": true, "note": "\xff\xfe"}', content_type="application/json")
    error = _error(as_json, 400, "invalid_utf8")
    assert "UTF-8" in error["message"] and "codec" not in error["message"] and error["fields"] == {}
    as_form = client.generic("PUT", url, b"note=%ff%fe", content_type="application/x-www-form-urlencoded")
    _error(as_form, 400, "invalid_utf8")
    assert not item.annotations.exists()
    # Valid UTF-8 that is not JSON is still DRF's parse_error.
    _error(client.generic("PUT", url, "{\u00e9".encode(), content_type="application/json"), 400, "parse_error")


def test_a_label_saved_since_base_revision_is_409_with_the_saved_label(demo_study):
    """409 ``stale_label`` keeps the error shape and adds ``current``, ``revision``, ``updated_at``."""
    complete_participants(demo_study.slug, 1)
    user = make_user("ann-409", "annotators")
    client = _client(user)
    item = assignment_next(study=demo_study, annotator=user)
    url = f"/annotate/api/{demo_study.slug}/items/{item.public_id}/label/"
    assert client.put(url, {**LABEL, "base_revision": 0}, content_type="application/json").status_code == 200
    conflict = client.put(url, {**LABEL, "identified": False, "base_revision": 0}, content_type="application/json")
    _error(conflict, 409, "stale_label")
    body = conflict.json()
    assert set(body) == {"error", "current", "revision", "updated_at"}
    assert body["current"]["identified"] is True and body["revision"] == 1 and body["updated_at"]


def test_a_lapsed_reservation_taken_by_others_is_409(demo_study):
    """An item skipped and then labeled by the others is 409 ``reservation_lost``."""
    complete_participants(demo_study.slug, 2)
    a, b, c = (make_user(f"ann-lost{i}", "annotators") for i in range(3))
    first = assignment_next(study=demo_study, annotator=a)
    assignment_skip(study=demo_study, annotator=a, public_id=first.public_id)
    for user in (b, c):
        while (item := assignment_next(study=demo_study, annotator=user)) is not None:
            label_save(study=demo_study, annotator=user, public_id=item.public_id, label=label())
    _error(_client(a).get(f"/annotate/api/{demo_study.slug}/items/{first.public_id}/"), 409, "reservation_lost")


def test_who_may_not_use_it_gets_403_in_the_shape(demo_study):
    """Anonymous callers get 403 ``not_authenticated`` (session only); staff 403 ``permission_denied``."""
    _error(Client().post(f"/annotate/api/{demo_study.slug}/next/"), 403, "not_authenticated")
    staff = _client(make_user("staff-403", staff=True))
    _error(staff.post(f"/annotate/api/{demo_study.slug}/next/"), 403, "permission_denied")


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/", "/api/nonexistent/", "/annotate/api/nope/"])
def test_an_address_no_endpoint_matches_gets_the_json_error_body(client, path):
    """Under the JSON APIs an unknown address answers 404 in their error shape, not an HTML page."""
    response = client.get(path)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": {"status": 404, "code": "not_found", "message": "No API endpoint at this address.", "fields": {}}
    }


@pytest.mark.django_db
def test_an_unknown_page_outside_the_apis_is_still_the_html_page(client):
    response = client.get("/researcher/no/such/page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
