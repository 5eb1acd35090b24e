"""Hostile JSON bodies on both JSON APIs: 10,000 levels of nesting answer 400 with the one
error body (``parse_error``), never a RecursionError's 500, and store nothing."""
from __future__ import annotations

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from spotlight_study.annotation.models import Annotation
from spotlight_study.annotation.services.queue import assignment_next

from ..annotation.conftest import complete_participants, make_user

DEPTH = 10_000


def nested(depth: int, opener: str = "[", closer: str = "]") -> str:
    """A JSON text of ``depth`` nested arrays (or objects)."""
    return opener * depth + closer * depth


def deep_object(depth: int) -> str:
    """``{"a": {"a": ... 1 ...}}`` with ``depth`` levels."""
    return '{"a": ' * depth + "1" + "}" * depth


def _assert_parse_error(response) -> None:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    error = response.json()["error"]
    assert set(error) == {"status", "code", "message", "fields"}
    assert error["status"] == 400 and error["code"] == "parse_error" and "nest" in error["message"]


def _researcher_writes(slug: str, bonus_id: int, job_id: int) -> list[tuple[str, str]]:
    """Every POST/PUT/PATCH of the researcher API, from its OpenAPI schema, with path ids filled in."""
    schema = SchemaGenerator(patterns=None).get_schema(request=None, public=True)
    found = []
    for path, operations in schema["paths"].items():
        for method in ("post", "put", "patch"):
            if method in operations:
                url = path.replace("{slug}", slug).replace("{pk}", str(bonus_id if "bonus" in path else job_id))
                found.append((method, url))
    return found


@pytest.mark.parametrize("body", [nested(DEPTH), deep_object(DEPTH)], ids=["arrays", "objects"])
def test_deep_json_on_every_researcher_api_write_is_400(api, demo_study, body):
    """Each POST/PUT/PATCH of the researcher API answers 400 parse_error to 10,000 levels."""
    from spotlight_study.stimuli.services import generation_job_create

    job = generation_job_create(title="t", prompt_group1="a", prompt_group2="b", model="m", n_per_group=1)
    writes = _researcher_writes(demo_study.slug, 1, job.pk)
    assert len(writes) >= 4, writes
    parsed = 0
    for method, url in writes:
        response = getattr(api, method)(url, body, content_type="application/json")
        assert response.status_code < 500, (method, url, response.content[:300])
        if response.status_code == 400:
            _assert_parse_error(response)
            parsed += 1
    # The rest never read the body (analysis, sync) or name an object that does not exist.
    assert parsed >= 3, writes


@pytest.mark.parametrize("body", [nested(DEPTH), deep_object(DEPTH)], ids=["arrays", "objects"])
def test_deep_json_on_the_annotator_label_api_is_400_and_saves_nothing(demo_study, body):
    """PUT and POST of a label with 10,000 levels: 400 parse_error, no label stored."""
    complete_participants(demo_study.slug, 1)
    user = make_user("ann-deep", "annotators")
    client = Client()
    client.force_login(user)
    item = assignment_next(study=demo_study, annotator=user)
    url = f"/annotate/api/{demo_study.slug}/items/{item.public_id}/label/"
    for method in ("put", "post"):
        response = getattr(client, method)(url, body, content_type="application/json")
        if response.status_code == 405:
            continue
        _assert_parse_error(response)
    assert Annotation.objects.count() == 0
    next_url = f"/annotate/api/{demo_study.slug}/next/"
    response = client.post(next_url, body, content_type="application/json")
    assert response.status_code in (200, 400), response.status_code
