"""Who may use the researcher API: staff only; annotators keep their blinded endpoints only."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from ..annotation.conftest import complete_participants, make_user

PATHS = [
    "/api/studies/",
    "/api/studies/{slug}/",
    "/api/studies/{slug}/settings/",
    "/api/studies/{slug}/cells/",
    "/api/studies/{slug}/participants/",
    "/api/studies/{slug}/responses/",
    "/api/studies/{slug}/annotation/final-labels/",
    "/api/stimuli/sets/",
    "/api/schema/",
]


@pytest.mark.parametrize("path", PATHS)
def test_anonymous_callers_get_401(client, demo_study, path):
    """Without credentials every endpoint answers 401 in the API's error shape (not data)."""
    response = APIClient().get(path.format(slug=demo_study.slug))
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "not_authenticated"


@pytest.mark.parametrize("path", PATHS)
def test_annotators_get_403(annotator_api, demo_study, path):
    """An annotator's token reaches nothing of the researcher API (conditions stay hidden)."""
    response = annotator_api.get(path.format(slug=demo_study.slug))
    assert response.status_code == 403
    assert b"pattern_with_distractors" not in response.content and b"no_pattern" not in response.content


@pytest.mark.parametrize("query", ["", "?format=json", "?format=yaml"])
def test_schema_errors_are_json_whatever_format_is_asked(annotator_api, db, query):
    """/api/schema/ answers its 401 and 403 in the JSON error body, not in YAML."""
    anonymous = APIClient().get(f"/api/schema/{query}")
    assert anonymous.status_code == 401 and anonymous["Content-Type"] == "application/json"
    assert anonymous.json() == {"error": {
        "status": 401, "code": "not_authenticated",
        "message": "Authentication credentials were not provided.", "fields": {},
    }}
    assert anonymous.has_header("WWW-Authenticate")
    refused = annotator_api.get(f"/api/schema/{query}")
    assert refused.status_code == 403 and refused["Content-Type"] == "application/json"
    assert refused.json()["error"]["code"] == "permission_denied"


def test_schema_with_an_unknown_format_is_a_json_404(api):
    """An unknown ``?format`` is a 404 in the JSON error body; the schema itself stays YAML."""
    response = api.get("/api/schema/?format=xml")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    schema = api.get("/api/schema/")
    assert schema.status_code == 200 and schema["Content-Type"].startswith("application/vnd.oai.openapi")
    assert schema.content.startswith(b"openapi:")


def test_annotator_cannot_read_conditions_but_can_annotate(client, demo_study, annotator_api):
    """The same annotator is refused the settings and participants, and is served a blind item
    by the annotator API."""
    complete_participants(demo_study.slug, 1)
    for path in ("settings", "participants", "responses", "cells"):
        assert annotator_api.get(f"/api/studies/{demo_study.slug}/{path}/").status_code == 403
    client.force_login(make_user("blind", "annotators"))
    item = client.post(f"/annotate/api/{demo_study.slug}/next/", content_type="application/json").json()["item"]
    assert item is not None and "condition" not in item


def test_staff_with_a_session_may_read(client, demo_study):
    """Session authentication works for staff (the browsable researcher case)."""
    client.force_login(make_user("sess", staff=True))
    assert client.get("/api/studies/").status_code == 200


def test_a_researcher_of_a_study_uses_the_api_for_it(client, demo_study):
    """Issue 40: the API is for instance staff and the owners and researchers of a study; a
    non-staff researcher of the demo study (the old `researchers` group, as migrated) lists it."""
    client.force_login(make_user("group-only", "researchers"))
    listed = client.get("/api/studies/")
    assert listed.status_code == 200
    assert [s["slug"] for s in listed.json()["results"]] == [demo_study.slug]


def test_a_bad_token_is_401(demo_study):
    """An unknown token is refused."""
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION="Token 0000000000000000000000000000000000000000")
    assert c.get("/api/studies/").status_code == 401


def test_swagger_ui_is_staff_only(client, demo_study):
    """Swagger UI: anonymous to the login page (and back), annotator 403, staff 200 with the page."""
    anonymous = client.get("/api/docs/")
    assert anonymous.status_code == 302
    assert anonymous["Location"] == "/accounts/login/?next=/api/docs/"
    assert client.get("/api/docs/?script").status_code == 401
    client.force_login(make_user("ui-annotator", "annotators"))
    refused = client.get("/api/docs/")
    assert refused.status_code == 403
    # The staff area's page (ask an administrator), not the participants' "open it from Prolific".
    page = refused.content.decode()
    assert "ask an administrator" in page and "Prolific" not in page
    client.force_login(make_user("ui-staff", staff=True))
    response = client.get("/api/docs/")
    assert response.status_code == 200 and b"<html" in response.content.lower()
