"""One validation path (issue 35): import_study, the REST API (JSON body and uploaded file) and
launch_check on a file refuse a bad study file with the same messages, by the same paths."""
from __future__ import annotations

import copy
import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.models import Study
from spotlight_study.studies.schema import validate_study_data

from ..conftest import make_staff


def _broken(data: dict) -> dict:
    """Three kinds of refusal at once: a field rule, a rule across fields, an unknown key."""
    data = copy.deepcopy(data)
    data["settings"][1]["group2"] = []
    data["completion_codes"]["no_consent"] = data["completion_codes"]["completed"]
    data["annotation"]["annotators_per_itme"] = 3
    return data


@pytest.mark.django_db
def test_every_way_in_refuses_with_the_same_messages(demo_data, tmp_path):
    """The command, the API's JSON and upload imports and launch_check FILE name the same paths
    with the same messages as validate_study_data, and create nothing."""
    data = _broken(demo_data)
    with pytest.raises(StudyFileError) as info:
        validate_study_data(copy.deepcopy(data))
    expected = info.value.errors
    assert {"settings[1].group2", "completion_codes.no_consent", "annotation.annotators_per_itme"} <= set(expected)
    lines = [f"{path}: {' '.join(msgs)}" for path, msgs in sorted(expected.items())]

    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CommandError) as command:
        call_command("import_study", str(path))
    for line in lines:
        assert line in str(command.value)

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_staff()).key}")
    body = api.post("/api/studies/import/", {"study": data}, format="json").json()["error"]
    assert body["code"] == "invalid_study_file" and body["fields"] == expected
    upload = SimpleUploadedFile("broken.json", path.read_bytes(), content_type="application/json")
    body = api.post("/api/studies/import/", {"file": upload}, format="multipart").json()["error"]
    assert body["fields"] == expected

    out = StringIO()
    with pytest.raises(CommandError):
        call_command("launch_check", str(path), stdout=out)
    for where, msgs in expected.items():
        assert f"Study file: {where}: {' '.join(msgs)}" in out.getvalue()
    assert not Study.objects.exists()
