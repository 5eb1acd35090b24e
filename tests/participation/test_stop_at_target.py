"""``stop_at_target`` in the study file: with ``true``, an arrival after the target sample size
is reached sees a polite "this study is full" page that asks them to return the submission on
Prolific, and no row is created; with ``false`` (the default) arrivals beyond it are accepted."""
from __future__ import annotations

import pytest
from django.test import Client

from spotlight_study.participation.models import Participant
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.models import Study
from spotlight_study.studies.schema import validate_study_data
from spotlight_study.studies.services import study_import

from ..conftest import new_id


def _ids() -> dict[str, str]:
    return {"PROLIFIC_PID": new_id(), "STUDY_ID": new_id(), "SESSION_ID": new_id()}


def _live(demo_data, **changes) -> Study:
    study_import(data={**demo_data, "target_sample_size": 4, **changes})
    study = Study.objects.get(slug=demo_data["slug"])
    study.status = Study.Status.LIVE
    study.save()
    return study


@pytest.mark.django_db
def test_with_stop_at_target_the_arrival_after_the_target_sees_the_full_page(demo_data, settings):
    """Target 4, stop_at_target: 4 arrivals get in, the next 3 see the full page; nothing created; a resume still works."""
    settings.ENTRY_RATE_LIMIT = "off"
    study = _live(demo_data, stop_at_target=True)
    first = _ids()
    codes = [Client().get(f"/s/{study.slug}/", first).status_code]
    codes += [Client().get(f"/s/{study.slug}/", _ids()).status_code for _ in range(3)]
    assert codes == [302] * 4
    for _ in range(3):
        full = Client().get(f"/s/{study.slug}/", _ids())
        assert full.status_code == 200
        html = full.content.decode()
        assert "This study is full" in html and "return" in html.lower() and "Prolific" in html
    assert Participant.objects.count() == 4
    assert Client().get(f"/s/{study.slug}/", first).status_code == 302  # the resume of a participant


@pytest.mark.django_db
def test_without_stop_at_target_arrivals_beyond_the_target_are_accepted(demo_data, settings):
    """The default (false): 6 arrivals for a target of 4 all get a place, as before."""
    settings.ENTRY_RATE_LIMIT = "off"
    study = _live(demo_data)
    assert Study.objects.get(pk=study.pk).stop_at_target is False
    assert [Client().get(f"/s/{study.slug}/", _ids()).status_code for _ in range(6)] == [302] * 6


def test_the_study_file_field_is_a_boolean_defaulting_to_false(demo_data):
    """stop_at_target is optional (false) and must be true or false."""
    assert validate_study_data(demo_data)["stop_at_target"] is False
    assert validate_study_data({**demo_data, "stop_at_target": True})["stop_at_target"] is True
    with pytest.raises(StudyFileError, match="stop_at_target"):
        validate_study_data({**demo_data, "stop_at_target": "sometimes"})
