"""Importing study files: validation that names the bad field, and what the import creates."""
import json

import pytest
from django.core.management import CommandError, call_command

from spotlight_study.studies.models import Setting, Study, TokenPattern
from spotlight_study.studies.errors import StudyFileError, StudyImportError
from spotlight_study.studies.schema import parse_study_file, validate_study_data
from spotlight_study.studies.services import study_import

from ..conftest import DEMO_FILE, Walker


@pytest.mark.django_db
def test_demo_file_imports_live_with_reference_design(capsys):
    """import_study on the demo file leaves a live study with the reference design."""
    call_command("import_study", str(DEMO_FILE))
    study = Study.objects.get(slug="spotlight-replication")
    assert study.status == Study.Status.LIVE
    assert study.conditions == ["no_pattern", "pattern"]
    training = study.settings.get(kind=Setting.Kind.TRAINING)
    assert training.key == "angler" and training.check_keywords
    main = list(study.settings.filter(kind=Setting.Kind.MAIN).order_by("position"))
    assert [s.key for s in main] == ["doctor", "farming"]
    for s in [training, *main]:
        assert len(s.group1_texts) == 10 and len(s.group2_texts) == 10
    doctor_pattern = TokenPattern.objects.get(setting__key="doctor", is_distractor=False)
    assert doctor_pattern.label == "her (more often in group 2)"
    farming_pattern = TokenPattern.objects.get(setting__key="farming", is_distractor=False)
    assert farming_pattern.label == "maize, beans (more often in group 1)"


def _errors(data) -> dict:
    with pytest.raises(StudyFileError) as info:
        validate_study_data(data)
    return info.value.errors


def test_empty_group_is_named_by_path(demo_data):
    """An empty text group is reported at its path, e.g. settings[1].group2."""
    demo_data["settings"][1]["group2"] = []
    errors = _errors(demo_data)
    assert list(errors) == ["settings[1].group2"]


def test_unknown_condition_is_named(demo_data):
    """An unknown condition value is reported under conditions."""
    demo_data["conditions"] = ["no_pattern", "highlight"]
    errors = _errors(demo_data)
    assert "conditions[1]" in errors and "highlight" in " ".join(errors["conditions[1]"])


def test_bad_pattern_group_and_unknown_field_are_named(demo_data):
    """A pattern group other than 1/2 and an unknown top-level key are both named."""
    demo_data["settings"][0]["patterns"][0]["group"] = 3
    errors = _errors(demo_data)
    assert "settings[0].patterns[0].group" in errors
    demo_data["settings"][0]["patterns"][0]["group"] = 2
    demo_data["colour"] = "blue"
    assert _errors(demo_data) == {"colour": ["Unknown field."]}
    demo_data["settings"][0]["patterns"][0]["group"] = 3
    assert set(_errors(demo_data)) == {"colour", "settings[0].patterns[0].group"}


def test_cross_field_rules(demo_data):
    """Max minutes below the estimate, a missing survey intro and distractors are checked."""
    demo_data["maximum_minutes"] = 5
    demo_data["conditions"] = ["no_pattern", "pattern", "pattern_with_distractors"]
    demo_data["settings"][0]["distractor_patterns"] = []
    del demo_data["survey"]["condition_intros"]["pattern_with_distractors"]
    errors = _errors(demo_data)
    assert "maximum_minutes" in errors
    assert "settings[0].distractor_patterns" in errors
    assert "pattern_with_distractors" in " ".join(errors["survey.condition_intros"])


def test_missing_required_field_is_named(demo_data):
    """A missing required field (completion code) is named."""
    del demo_data["completion_codes"]["no_consent"]
    assert "completion_codes.no_consent" in _errors(demo_data)


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("bad.yaml", "slug: [unclosed", "Not valid YAML"),
        ("bad.json", "{", "Not valid JSON"),
        ("list.yaml", "- a\n- b\n", "must be a mapping"),
    ],
)
def test_broken_files_give_clear_messages(tmp_path, name, content, message):
    """Unparseable files raise StudyFileError with a readable message."""
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(StudyFileError) as info:
        parse_study_file(path)
    assert message in str(info.value)


def test_non_utf8_file_is_refused(tmp_path):
    """A file that is not UTF-8 is refused with a message, not a traceback."""
    path = tmp_path / "latin1.yaml"
    path.write_bytes("title: caf\xe9".encode("latin-1"))
    with pytest.raises(StudyFileError, match="Not UTF-8"):
        parse_study_file(path)


@pytest.mark.django_db
def test_command_reports_bad_field_and_changes_nothing(tmp_path, demo_data):
    """import_study on a bad JSON file fails naming the field and creates no study."""
    demo_data["settings"][0]["group1"] = [""]
    path = tmp_path / "study.json"
    path.write_text(json.dumps(demo_data))
    with pytest.raises(CommandError) as info:
        call_command("import_study", str(path))
    assert "settings[0].group1[0]" in str(info.value)
    assert not Study.objects.exists()


@pytest.mark.django_db
def test_reimport_needs_replace_and_is_refused_once_a_participant_consented(client, demo_data):
    """A second import needs --replace; an arrival without consent does not block it, a consent does."""
    first = study_import(data=demo_data)
    with pytest.raises(StudyImportError, match="--replace"):
        study_import(data=demo_data)
    demo_data["title"] = "Renamed"
    assert study_import(data=demo_data, replace=True).title == "Renamed"
    walker = Walker(client, demo_data["slug"])
    walker.enter()
    demo_data["title"] = "Renamed again"
    replaced = study_import(data=demo_data, replace=True)
    assert replaced.pk == first.pk and not replaced.participants.exists()
    walker = Walker(client, demo_data["slug"])
    walker.enter()
    walker.consent()
    demo_data["title"] = "Too late"
    with pytest.raises(StudyImportError, match="frozen.*--as-slug"):
        study_import(data=demo_data, replace=True)
    assert Study.objects.get().title == "Renamed again"
