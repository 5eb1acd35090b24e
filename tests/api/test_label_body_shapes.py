"""The annotator label API stores no label that nobody gave: sent as a form or multipart body,
a missing yes/no field is refused with 400 as in a JSON body, and every save logs the body's
shape (its content type and the field names sent, never their values)."""
from __future__ import annotations

import logging

import pytest
from django.test import Client
from django.test.client import encode_multipart

from spotlight_study.annotation.models import Annotation, AnnotationRevision
from spotlight_study.annotation.services.queue import assignment_next

from ..annotation.conftest import complete_participants, make_user

FLAGS = ("identified", "surface_difference", "no_difference")


@pytest.fixture
def label_url(demo_study):
    """(client logged in as an annotator, the label API URL of their next item)."""
    complete_participants(demo_study.slug, 1)
    user = make_user("ann-shape", "annotators")
    client = Client()
    client.force_login(user)
    item = assignment_next(study=demo_study, annotator=user)
    return client, f"/annotate/api/{demo_study.slug}/items/{item.public_id}/label/"


@pytest.mark.parametrize("sent", [{"identified": "1"}, {"identified": "true", "no_difference": "false"}, {}])
@pytest.mark.parametrize("shape", ["form", "multipart"])
def test_a_form_or_multipart_label_missing_a_yes_no_field_is_400(label_url, sent, shape):
    """identified=1 alone (or any yes/no field left out) is 400 naming the missing fields; nothing stored."""
    client, url = label_url
    if shape == "form":
        from urllib.parse import urlencode

        response = client.post(url, urlencode(sent), content_type="application/x-www-form-urlencoded")
    else:
        response = client.post(url, encode_multipart("BoUnDaRy", sent), content_type="multipart/form-data; boundary=BoUnDaRy")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert set(error["fields"]) == {f for f in FLAGS if f not in sent}
    assert not Annotation.objects.exists() and not AnnotationRevision.objects.exists()


def test_a_broken_multipart_body_saves_nothing(label_url):
    """A multipart body whose boundary matches nothing is 400, not an all-No label."""
    client, url = label_url
    body = encode_multipart("other-boundary", {f: "true" for f in FLAGS})
    response = client.post(url, body, content_type="multipart/form-data; boundary=BoUnDaRy")
    assert response.status_code == 400, response.content
    assert not Annotation.objects.exists()


@pytest.mark.parametrize("shape", ["json", "form", "multipart"])
def test_a_complete_label_is_saved_from_every_body_shape_and_its_shape_logged(label_url, shape, caplog):
    """All three yes/no fields given: saved as sent; one INFO line names the body shape and field names."""
    client, url = label_url
    sent = {"identified": "true", "surface_difference": "false", "no_difference": "false"}
    with caplog.at_level(logging.INFO, logger="spotlight_study.annotation.label_api"):
        if shape == "json":
            response = client.post(url, {"identified": True, "surface_difference": False, "no_difference": False},
                                   content_type="application/json")
        elif shape == "form":
            from urllib.parse import urlencode

            response = client.post(url, urlencode(sent), content_type="application/x-www-form-urlencoded")
        else:
            response = client.post(url, encode_multipart("BoUnDaRy", sent), content_type="multipart/form-data; boundary=BoUnDaRy")
    assert response.status_code == 200, response.content
    label = Annotation.objects.get()
    assert (label.identified, label.surface_difference, label.no_difference) == (True, False, False)
    lines = [r.getMessage() for r in caplog.records if r.name == "spotlight_study.annotation.label_api"]
    assert len(lines) == 1, lines
    assert f"body {shape}" in lines[0] and "identified,no_difference,surface_difference" in lines[0]
    assert "true" not in lines[0]  # names only, never values
