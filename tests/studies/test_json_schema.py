"""The study file's published JSON Schema: generated from the import's validation, committed and
served, and in agreement with the import both ways (issue 35 §3)."""
from __future__ import annotations

import copy
import json

import jsonschema
import pytest
import yaml

from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.json_schema import SCHEMA_PATH, study_file_json_schema, study_file_json_schema_text
from spotlight_study.studies.schema import validate_study_data

from ..conftest import REPO
from .test_strict_file import CATALOGUE, _banana, _typo_k, _typo_target, _typo_top_level, _wrong_group

COMMITTED = REPO / "docs" / "study-file.schema.json"
#: Every study file the repository holds: the demo and the test fixtures.
STUDY_FILES = sorted([*REPO.glob("fixtures/*.yaml"), *REPO.glob("tests/**/fixtures/*.yaml")])


def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(study_file_json_schema())


def _schema_refuses(data: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(data)]


def _import_refuses(data: dict) -> dict[str, list[str]]:
    try:
        validate_study_data(copy.deepcopy(data))
    except StudyFileError as exc:
        return exc.errors
    return {}


def test_the_committed_schema_is_the_schema_of_the_code():
    """docs/study-file.schema.json is what `manage.py study_file_schema` writes now; regenerate it
    with `manage.py study_file_schema --out docs/study-file.schema.json` when this fails."""
    assert COMMITTED.read_text(encoding="utf-8") == study_file_json_schema_text(), (
        "stale: run `.venv/bin/python manage.py study_file_schema --out docs/study-file.schema.json`"
    )


def test_the_schema_is_a_valid_draft_2020_12_schema_refusing_unknown_keys():
    """The schema passes jsonschema's metaschema check, and every object of the file refuses keys
    it does not define (additionalProperties: false), as the import does."""
    schema = study_file_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    objects = [schema, *schema["$defs"].values()]
    assert all(o["additionalProperties"] is False for o in objects)
    assert set(schema["required"]) >= {"slug", "title", "consent_text", "completion_codes", "settings", "survey"}
    assert schema["properties"]["settings"] == {"type": "array", "items": {"$ref": "#/$defs/SettingSerializer"},
                                                "minItems": 1, "maxItems": 12}


@pytest.mark.parametrize("path", STUDY_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_study_file_of_the_repository_passes_both(path):
    """Each study file in fixtures/ and tests/**/fixtures/ passes the schema and the import."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert _schema_refuses(data) == []
    assert _import_refuses(data) == {}


def test_a_file_with_every_optional_field_and_provenance_passes_both(built_study):
    """The export of a study using every field, settings built on the Stimuli pages with their
    provenance included, passes the schema and the import."""
    data = json.loads(json.dumps(study_file_data(built_study)))
    assert data["settings"][-1]["provenance"]["mining"]["method"] == "premise"
    assert _schema_refuses(data) == []
    assert _import_refuses(data) == {}


def _set(path: str, value):
    """A change putting ``value`` at ``path`` (keys and list indices separated by dots)."""

    def change(data):
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        for part in parents:
            data = data[part]
        data[last] = value

    return change


def _drop(path: str):
    def change(data):
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        for part in parents:
            data = data[part]
        del data[last]

    return change


def _add_key(where: str):
    return _set(f"{where}.colour" if where else "colour", "blue")


# Refusal cases of tests/studies (test_import, test_strict_file, test_i18n's language and the
# survey's scales) that a JSON Schema can state.
EXPRESSIBLE = {
    # test_strict_file's catalogue of typos, and unknown keys at every level
    "typo k": _typo_k,
    "typo target_description": _typo_target,
    "typo top level": _typo_top_level,
    "unknown key top": _add_key(""),
    "unknown key codes": _add_key("completion_codes"),
    "unknown key training": _add_key("training"),
    "unknown key distractor": _add_key("settings.1.distractor_patterns.0"),
    "unknown key survey": _add_key("survey"),
    "unknown key survey item": _add_key("survey.condition_items.0"),
    "unknown key codebook": _add_key("annotation.settings.doctor"),
    "unknown condition intro": lambda d: d["survey"]["condition_intros"].update(patern="x"),
    # test_import
    "empty group": _set("settings.1.group2", []),
    "empty text": _set("settings.0.group1.0", ""),
    "unknown condition": _set("conditions", ["no_pattern", "highlight"]),
    "pattern group 3": _set("settings.0.patterns.0.group", 3),
    "missing completion code": _drop("completion_codes.no_consent"),
    "missing required title": _drop("title"),
    # field rules
    "slug not a slug": _set("slug", "my study!"),
    "check attempts 3": _set("instruction_check_attempts", 3),
    "likert scale of 4": _set("survey.likert_scale", ["a", "b", "c", "d"]),
    "no survey item": _set("survey.condition_items", []),
    "conditions repeat": _set("conditions", ["pattern", "pattern"]),
    "unknown holding flag": _set("holding_flags", ["bogus"]),
    "holding flags repeat": _set("holding_flags", ["pasted", "pasted"]),
    "k of 0": _set("annotation.annotators_per_item", 0),
    "tag too long": _set("annotation.settings.doctor.tags", ["x" * 61]),
    "too many settings": lambda d: d["settings"].extend(copy.deepcopy(d["settings"][0]) for _ in range(11)),
    "no tokens": _set("settings.0.patterns.0.tokens", []),
    "training without keywords": _set("training.check_keywords", []),
    "answer flag share above 1": _set("answer_flags", {"inserted_without_typing_share": 1.5}),
    "status unknown": _set("status", "running"),
    "policy unknown": _set("failed_check_policy", "shrug"),
    "text not a string": _set("consent_text", ["a"]),
}

# Refusals only the import can make: content checks, rules across fields, registries.
IMPORT_ONLY = {
    "token absent (content check)": _banana,
    "false group claim (content check)": _wrong_group,
    "maximum below estimate (across fields)": _set("maximum_minutes", 5),
    "shared completion codes (across fields)": lambda d: d["completion_codes"].update(
        no_consent=d["completion_codes"]["completed"]),
    "repeated setting keys (across fields)": _set("settings.1.key", "doctor"),
    "reserved slug": _set("slug", "team"),
    "unknown language": _set("language", "xx-nope"),
}


@pytest.mark.parametrize("change", EXPRESSIBLE.values(), ids=EXPRESSIBLE.keys())
def test_every_expressible_refusal_is_refused_by_both(demo_data, change):
    """A refusal case the JSON Schema can state is refused by the schema and by the import."""
    change(demo_data)
    assert _schema_refuses(demo_data), "the JSON Schema accepts it"
    assert _import_refuses(demo_data), "the import accepts it"


@pytest.mark.parametrize("change", IMPORT_ONLY.values(), ids=IMPORT_ONLY.keys())
def test_what_the_schema_cannot_state_is_left_to_the_import(demo_data, change):
    """A content check, a rule across fields or a registry lookup is refused by the import; the
    schema, which cannot state it, lets it pass (json_schema.py lists them)."""
    change(demo_data)
    assert _import_refuses(demo_data)
    assert _schema_refuses(demo_data) == []


def test_the_typo_catalogue_is_covered():
    """Every typo of test_strict_file's catalogue is a case here, as expressible or import-only."""
    typos = {typo for typo, _path, _message in CATALOGUE}
    assert typos <= set(EXPRESSIBLE.values()) | set(IMPORT_ONLY.values())


def test_the_schema_is_served_public_and_cacheable(client, db):
    """GET /schema/study-file.json answers the committed schema to anyone, cacheable for an hour."""
    response = client.get(SCHEMA_PATH)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/schema+json"
    assert "public" in response["Cache-Control"] and "max-age=3600" in response["Cache-Control"]
    assert response.content.decode("utf-8") == COMMITTED.read_text(encoding="utf-8")


def test_the_command_checks_a_stale_copy(tmp_path):
    """`study_file_schema --check FILE` fails on a stale copy and passes on a fresh one."""
    from django.core.management import CommandError, call_command

    stale = tmp_path / "schema.json"
    stale.write_text("{}\n", encoding="utf-8")
    with pytest.raises(CommandError, match="stale"):
        call_command("study_file_schema", "--check", str(stale))
    call_command("study_file_schema", "--out", str(stale))
    call_command("study_file_schema", "--check", str(stale))
