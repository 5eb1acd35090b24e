"""Unsafe study values (shared completion codes, a short abandonment timeout, broken constraints)
are refused by the study file, the model and the admin, each with a plain message on its field."""
from __future__ import annotations

import pytest
import yaml
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from spotlight_study.participation.models import Participant
from spotlight_study.studies.models import Study
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.schema import validate_study_data

from ..conftest import make_staff, Walker
from .test_freeze import _consent, _form


def _errors(data) -> dict[str, list[str]]:
    with pytest.raises(StudyFileError) as info:
        validate_study_data(data)
    return info.value.errors


def test_file_with_shared_completion_code_is_invalid_at_its_path(demo_data):
    """A no-consent code equal to the completed code is an error at completion_codes.no_consent."""
    demo_data["completion_codes"]["no_consent"] = demo_data["completion_codes"]["completed"]
    errors = _errors(demo_data)
    assert list(errors) == ["completion_codes.no_consent"]
    assert "completion_codes.completed" in errors["completion_codes.no_consent"][0]


def test_file_with_timeout_below_maximum_is_invalid(demo_data):
    """An abandonment timeout shorter than maximum_minutes is an error at its field."""
    demo_data["abandonment_timeout_minutes"] = demo_data["maximum_minutes"] - 1
    errors = _errors(demo_data)
    assert list(errors) == ["abandonment_timeout_minutes"]
    assert f"at least maximum_minutes ({demo_data['maximum_minutes']})" in errors[
        "abandonment_timeout_minutes"
    ][0]


def test_new_rules_are_reported_with_every_other_error(demo_data):
    """Shared codes and a short timeout come in one report with a field error elsewhere."""
    codes = demo_data["completion_codes"]
    codes["failed_instruction_check"] = codes["completed"]
    demo_data["abandonment_timeout_minutes"] = 5
    demo_data["settings"][0]["group1"] = []
    errors = _errors(demo_data)
    assert {
        "completion_codes.failed_instruction_check",
        "abandonment_timeout_minutes",
        "settings[0].group1",
    } <= set(errors)


@pytest.mark.django_db
def test_import_study_refuses_unsafe_file_and_creates_nothing(tmp_path, demo_data):
    """import_study refuses a file that launch_check would call no-go, and creates no study."""
    demo_data["completion_codes"]["no_consent"] = demo_data["completion_codes"]["completed"]
    demo_data["abandonment_timeout_minutes"] = 5
    path = tmp_path / "unsafe.yaml"
    path.write_text(yaml.safe_dump(demo_data, allow_unicode=True))
    with pytest.raises(CommandError) as info:
        call_command("import_study", str(path))
    assert "completion_codes.no_consent" in str(info.value)
    assert "abandonment_timeout_minutes" in str(info.value)
    assert not Study.objects.exists()


@pytest.mark.parametrize(
    "changes,field,words",
    [
        ({"no_consent_code": "SAME"}, "no_consent_code", "Must differ from the completion code"),
        ({"abandonment_timeout_minutes": 5}, "abandonment_timeout_minutes",
         "at least the maximum minutes (30)"),
        ({"maximum_minutes": 3, "abandonment_timeout_minutes": 45}, "maximum_minutes",
         "at least the estimated minutes"),
        ({"annotators_per_item": 0}, "annotators_per_item", "At least 1 annotator"),
    ],
    ids=["codes", "timeout", "maximum", "annotators"],
)
def test_full_clean_ties_each_rule_to_its_field(demo_study, changes, field, words):
    """Study.full_clean refuses each unsafe value with a plain message on its own field."""
    demo_study.completion_code = "SAME"
    demo_study.maximum_minutes = 30
    for name, value in changes.items():
        setattr(demo_study, name, value)
    with pytest.raises(ValidationError) as info:
        demo_study.full_clean()
    errors = info.value.message_dict
    assert list(errors) == [field]
    assert words in errors[field][0]
    assert "Constraint" not in " ".join(errors[field])


@pytest.fixture
def admin_client(client, db):
    """A client logged in as a superuser, as the researcher who edits studies in the admin."""
    client.force_login(make_staff(is_superuser=True))
    return client


def _import_message(study: Study, path: tuple, value) -> list[str]:
    """What import_study says of the study's own file with ``value`` at ``path``."""
    from spotlight_study.studies.export import study_file_data

    data = study_file_data(study)
    where = data
    for part in path[:-1]:
        where = where[part]
    where[path[-1]] = value
    errors = _errors(data)
    return errors[".".join(path)]


@pytest.mark.parametrize(
    "changes,field,path",
    [
        ({"no_consent_code": "SAME", "completion_code": "SAME"}, "no_consent_code",
         ("completion_codes", "no_consent")),
        ({"abandonment_timeout_minutes": "5", "maximum_minutes": "30"},
         "abandonment_timeout_minutes", ("abandonment_timeout_minutes",)),
        ({"maximum_minutes": "3", "abandonment_timeout_minutes": "45"}, "maximum_minutes",
         ("maximum_minutes",)),
        ({"annotators_per_item": "0"}, "annotators_per_item", ("annotation", "annotators_per_item")),
    ],
    ids=["codes", "timeout", "maximum", "annotators"],
)
def test_admin_refuses_unsafe_values_in_plain_words(admin_client, demo_study, changes, field, path):
    """The admin change form refuses each unsafe value next to its field with the study file
    import's own message (issue 35: one validation path), never naming a constraint."""
    url = f"/admin/studies/study/{demo_study.pk}/change/"
    fields = _form(admin_client, url)
    fields.update(changes)
    response = admin_client.post(url, fields)
    assert response.status_code == 200
    form = response.context["adminform"].form
    # The import's message for the same values in the study's file (the other changes made too).
    edited = Study.objects.get(pk=demo_study.pk)
    for name, value in changes.items():
        if name != field:
            setattr(edited, name, int(value) if value.isdigit() else value)
    raw = changes[field]
    expected = _import_message(edited, path, int(raw) if raw.isdigit() else raw)
    assert form.errors[field] == expected
    html = response.content.decode()
    assert "is violated" not in html and "study_max_minutes_gte_estimate" not in html
    before = Study.objects.get(pk=demo_study.pk)
    assert (before.no_consent_code, before.abandonment_timeout_minutes, before.maximum_minutes,
            before.annotators_per_item) == (
        demo_study.no_consent_code, demo_study.abandonment_timeout_minutes,
        demo_study.maximum_minutes, demo_study.annotators_per_item)


def test_constraints_carry_plain_messages(demo_study):
    """A constraint checked without clean() still says what is wrong in plain words."""
    demo_study.maximum_minutes = 3
    with pytest.raises(ValidationError) as info:
        demo_study.validate_constraints()
    assert info.value.messages == ["Maximum minutes must be at least the estimated minutes."]
    demo_study.maximum_minutes = 45
    demo_study.annotators_per_item = 0
    with pytest.raises(ValidationError) as info:
        demo_study.validate_constraints()
    assert info.value.messages == ["Annotators per item must be at least 1."]


def test_deleting_a_frozen_study_in_the_admin_says_why(client, admin_client, demo_study):
    """Deleting a frozen study redirects to it with the freeze and why its data must be kept."""
    _consent(client, demo_study.slug)
    client.force_login(make_staff(is_superuser=True))
    response = client.get(f"/admin/studies/study/{demo_study.pk}/delete/", follow=True)
    assert response.redirect_chain[-1][0] == f"/admin/studies/study/{demo_study.pk}/change/"
    html = response.content.decode()
    assert "cannot be deleted" in html and "1 real participant has consented" in html
    assert "must be kept" in html
    assert "does not have the role or permission" not in html
    response = client.post(f"/admin/studies/study/{demo_study.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and Study.objects.filter(pk=demo_study.pk).exists()


@pytest.mark.parametrize("how", ["delete view", "bulk action"])
def test_deleting_an_unfrozen_study_in_the_admin_still_works(admin_client, demo_study, how):
    """A study no real participant has consented to can still be deleted in the admin."""
    if how == "delete view":
        response = admin_client.post(f"/admin/studies/study/{demo_study.pk}/delete/", {"post": "yes"})
    else:
        response = admin_client.post(
            "/admin/studies/study/",
            {"action": "delete_selected", "_selected_action": [demo_study.pk], "post": "yes"},
        )
    assert response.status_code == 302 and not Study.objects.filter(pk=demo_study.pk).exists()


def test_replace_says_how_many_pilot_participants_and_arrivals_it_removed(
    client, demo_study, tmp_path, demo_data, capsys
):
    """import_study --replace prints how many pilot participants and unconsented arrivals went."""
    for _ in range(2):
        _consent(client, demo_study.slug, pilot=True)
    Walker(client, demo_study.slug).enter()  # arrived, never consented
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(demo_data, allow_unicode=True))
    call_command("import_study", str(path), "--replace")
    out = capsys.readouterr().out
    assert "2 pilot participant(s) and 1 arrival(s) who never consented" in out
    assert not Participant.objects.filter(study=demo_study).exists()


def test_bulk_delete_of_a_frozen_study_says_why(client, demo_study):
    """The changelist's "delete selected" action refuses a frozen study with the reason."""
    _consent(client, demo_study.slug)
    client.force_login(make_staff(is_superuser=True))
    response = client.post(
        "/admin/studies/study/",
        {"action": "delete_selected", "_selected_action": [demo_study.pk]},
        follow=True,
    )
    html = response.content.decode()
    assert "cannot be deleted" in html and "must be kept" in html
    assert "permission to delete" not in html
    assert Study.objects.filter(pk=demo_study.pk).exists()
