"""The optional ``annotation`` section of study files."""

import pytest

from spotlight_study.studies.models import Setting
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.schema import validate_study_data
from spotlight_study.studies.services import study_import


def test_demo_study_ships_annotation_defaults(demo_study):
    """The demo study has k=2, a reservation timeout, and a codebook for every setting."""
    assert demo_study.annotators_per_item == 2 and demo_study.annotation_reservation_minutes == 30
    tags = {s.key: s.annotation_tags for s in Setting.objects.filter(study=demo_study)}
    assert (
        "hard work" in tags["doctor"]
        and "machinery" in tags["farming"]
        and "gear" in tags["angler"]
    )
    assert "Smith" in Setting.objects.get(study=demo_study, key="doctor").surface_difference


@pytest.mark.django_db
def test_annotation_section_is_optional(demo_data):
    """A study file without the section imports with the defaults (k=2, 30 minutes, no tags)."""
    del demo_data["annotation"]
    study = study_import(data=demo_data)
    assert study.annotators_per_item == 2 and study.annotation_reservation_minutes == 30
    assert all(s.annotation_tags == [] for s in study.settings.all())


def test_annotation_section_errors_name_the_field(demo_data):
    """Bad values in the section are reported by their path."""
    demo_data["annotation"]["annotators_per_item"] = 0
    demo_data["annotation"]["settings"]["nope"] = {"tags": ["x"]}
    with pytest.raises(StudyFileError) as info:
        validate_study_data(demo_data)
    assert "annotation.annotators_per_item" in info.value.errors
    demo_data["annotation"]["annotators_per_item"] = 2
    with pytest.raises(StudyFileError) as info:
        validate_study_data(demo_data)
    assert "annotation.settings.nope" in info.value.errors
    del demo_data["annotation"]["settings"]["nope"]
    demo_data["annotation"]["settings"]["doctor"]["tags"] = ["Kindness", "kindness "]
    with pytest.raises(StudyFileError, match="Tags repeat: kindness"):
        validate_study_data(demo_data)
