"""The studies admin: definitions read-only, and the few editable fields checked by the study
file's validation, with the import's own messages (issue 35, one validation path)."""
from __future__ import annotations

import pytest

from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.models import Setting, Study
from spotlight_study.studies.schema import validate_study_data

from ..conftest import make_staff
from .test_freeze import _form


@pytest.fixture
def admin_client(client, db):
    """A client logged in as a superuser, as the researcher who edits studies in the admin."""
    client.force_login(make_staff(is_superuser=True))
    return client


def _setting_url(study: Study, key: str) -> str:
    return f"/admin/studies/setting/{Setting.objects.get(study=study, key=key).pk}/change/"


def _import_errors(data: dict) -> dict[str, list[str]]:
    with pytest.raises(StudyFileError) as info:
        validate_study_data(data)
    return info.value.errors


def test_codebook_tags_are_saved_as_the_import_stores_them(admin_client, demo_study):
    """Tags edited in the admin are normalized as the import normalizes them (stripped, lower case)."""
    url = _setting_url(demo_study, "doctor")
    fields = _form(admin_client, url)
    fields["annotation_tags"] = '["  Bedside  Manner ", "AGE"]'
    response = admin_client.post(url, fields)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Setting.objects.get(study=demo_study, key="doctor").annotation_tags == ["bedside manner", "age"]


@pytest.mark.parametrize(
    "tags",
    ['["age", "Age"]', '"age"', '["' + "x" * 61 + '"]'],
    ids=["repeat", "not-a-list", "too-long"],
)
def test_bad_codebook_tags_are_refused_with_the_import_message(admin_client, demo_study, tags):
    """Tags the study file would refuse are refused next to the field with the import's message,
    and nothing is saved."""
    import json

    url = _setting_url(demo_study, "doctor")
    before = Setting.objects.get(study=demo_study, key="doctor").annotation_tags
    fields = _form(admin_client, url)
    fields["annotation_tags"] = tags
    response = admin_client.post(url, fields)
    assert response.status_code == 200
    data = study_file_data(demo_study)
    data["annotation"]["settings"]["doctor"]["tags"] = json.loads(tags)
    expected = [m for path, msgs in _import_errors(data).items()
                if path.startswith("annotation.settings.doctor.tags") for m in msgs]
    assert expected and response.context["adminform"].form.errors["annotation_tags"] == expected
    assert Setting.objects.get(study=demo_study, key="doctor").annotation_tags == before


def test_the_definition_is_shown_read_only_with_the_way_to_change_it(admin_client, demo_study):
    """The study's page shows its definition (survey, conditions, texts) without inputs, and says
    how to change it: the study file, with its download link."""
    url = f"/admin/studies/study/{demo_study.pk}/change/"
    html = admin_client.get(url).content.decode()
    fields = _form(admin_client, url)
    for name in ("survey", "conditions", "consent_text", "holding_flags", "language", "slug"):
        assert name not in fields
    for name in ("status", "target_sample_size", "completion_code", "annotators_per_item"):
        assert name in fields
    assert "import_study FILE --replace" in html
    assert f'href="/researcher/{demo_study.slug}/study-file.yaml"' in html
    assert "Add study" not in html


def test_a_study_broken_elsewhere_can_still_be_paused(admin_client, demo_study):
    """An edit is refused only for what it breaks: a study whose stored survey is already broken
    can still be paused in the admin (launch_check lists the survey)."""
    Study.objects.filter(pk=demo_study.pk).update(survey={})
    url = f"/admin/studies/study/{demo_study.pk}/change/"
    fields = _form(admin_client, url)
    fields["status"] = "paused"
    response = admin_client.post(url, fields)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert Study.objects.get(pk=demo_study.pk).status == "paused"


def test_an_edit_breaking_a_rule_across_fields_is_refused_on_the_field_it_names(admin_client, demo_study):
    """An estimate above the maximum is refused where the import reports it (maximum_minutes)."""
    url = f"/admin/studies/study/{demo_study.pk}/change/"
    fields = _form(admin_client, url)
    fields["estimated_minutes"] = str(demo_study.maximum_minutes + 5)
    response = admin_client.post(url, fields)
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["maximum_minutes"] == ["Must be at least estimated_minutes."]
    assert Study.objects.get(pk=demo_study.pk).estimated_minutes == demo_study.estimated_minutes


def test_a_setting_is_not_deleted_in_the_admin(admin_client, demo_study):
    """Deleting one setting is refused with the way to do it (the study file), and the setting
    stays; deleting the whole study still works."""
    setting = Setting.objects.get(study=demo_study, key="farming")
    response = admin_client.post(f"/admin/studies/setting/{setting.pk}/delete/", {"post": "yes"}, follow=True)
    assert "--drop-missing" in response.content.decode()
    assert Setting.objects.filter(pk=setting.pk).exists()
    response = admin_client.post(f"/admin/studies/study/{demo_study.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not Study.objects.filter(pk=demo_study.pk).exists()
