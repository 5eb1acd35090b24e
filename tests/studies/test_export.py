"""export_study: a study file that import_study reads back into the same study, every field of
the schema included, settings built on the Stimuli pages with their provenance."""
from __future__ import annotations

import importlib
import json

import pytest
import yaml
from django.apps import apps as django_apps
from django.core.management import CommandError, call_command
from rest_framework import serializers

from spotlight_study.stimuli.models import MiningJob, SettingSource, StimulusSet
from spotlight_study.studies import schema_provenance
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import (
    ExportRuleMissing,
    _by_schema,
    study_file_data,
    study_file_problems,
    study_file_text,
)
from spotlight_study.studies.models import Setting, Study, TokenPattern
from spotlight_study.studies.schema import (
    CompletionCodesSerializer,
    StudyFileSerializer,
    parse_study_file,
    validate_study_data,
)
from spotlight_study.studies.selectors import study_cells, study_get_with_settings

from ..processes import run_python

# Fields that make a row itself rather than its definition: a copy has its own.
STUDY_OWN = {"id", "slug", "pseudonym_salt", "definition_version", "created_at", "updated_at"}
SETTING_OWN = {"id", "study", "created_at", "updated_at"}
PATTERN_OWN = {"id", "setting"}


def schema_paths(field: serializers.Field, path: str = "") -> set[str]:
    """Every field of the schema below ``field`` as a path: ``settings[].patterns[].group``,
    ``annotation.settings{}.tags`` (``[]`` any item, ``{}`` any key)."""
    if isinstance(field, (serializers.ListSerializer, serializers.ListField)):
        return schema_paths(field.child, f"{path}[]")
    if isinstance(field, serializers.DictField):
        return schema_paths(field.child, f"{path}{{}}")
    out: set[str] = set()
    if isinstance(field, serializers.Serializer):
        for name, child in field.fields.items():
            here = f"{path}.{name}" if path else name
            out |= {here} | schema_paths(child, here)
    return out


def present_paths(field: serializers.Field, value, path: str = "") -> set[str]:
    """The paths of :func:`schema_paths` that ``value`` (file data) has somewhere."""
    if isinstance(field, (serializers.ListSerializer, serializers.ListField)) and isinstance(value, list):
        return set().union(*(present_paths(field.child, v, f"{path}[]") for v in value))
    if isinstance(field, serializers.DictField) and isinstance(value, dict):
        return set().union(*(present_paths(field.child, v, f"{path}{{}}") for v in value.values()))
    out: set[str] = set()
    if isinstance(field, serializers.Serializer) and isinstance(value, dict):
        for name, child in field.fields.items():
            if name in value:
                here = f"{path}.{name}" if path else name
                out |= {here} | present_paths(child, value[name], here)
    return out


def rows(study: Study) -> dict:
    """The study's definition rows, field by field (every concrete field but the row's own)."""
    study = Study.objects.get(pk=study.pk)

    def fields(obj, own):
        return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields if f.name not in own}

    settings = {s.key: fields(s, SETTING_OWN) for s in Setting.objects.filter(study=study)}
    patterns = {
        (p.setting.key, p.position): fields(p, PATTERN_OWN)
        for p in TokenPattern.objects.filter(setting__study=study).select_related("setting")
    }
    return {"study": fields(study, STUDY_OWN), "settings": settings, "patterns": patterns}


def export(slug: str, tmp_path, name: str) -> tuple[str, dict]:
    path = tmp_path / name
    call_command("export_study", slug, "--out", str(path))
    return path.read_text(encoding="utf-8"), parse_study_file(path)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_round_trip_keeps_every_schema_field_and_every_row(built_study, tmp_path, suffix, capsys):
    """export -> import under a new slug -> export: equal files, equal rows, every schema field written."""
    # The study file's pages (issue 36 §2), set here: a page in the flow would change the walks
    # of the other tests that use the full study.
    Study.objects.filter(slug="full-study").update(pages=[
        {"kind": "info", "at": "end", "title": "Debrief", "text": "What the study was about.", "min_seconds": 5},
    ])
    text1, data1 = export("full-study", tmp_path, f"one{suffix}")
    call_command("import_study", str(tmp_path / f"one{suffix}"), "--as-slug", "full-study-v2")
    text2, data2 = export("full-study-v2", tmp_path, f"two{suffix}")

    assert data2 == {**data1, "slug": "full-study-v2"}
    assert text2 == study_file_text(data2, fmt=suffix.lstrip("."))
    assert text1 == study_file_text(data1, fmt=suffix.lstrip("."))

    original, copy = rows(built_study), rows(Study.objects.get(slug="full-study-v2"))
    assert copy == original
    assert original["settings"]["pronouns"]["provenance"]["seed"] == 123
    assert len(original["settings"]) == 5 and len(original["patterns"]) == 15

    expected = schema_paths(StudyFileSerializer())
    missing = expected - present_paths(StudyFileSerializer(), data1)
    assert not missing, f"schema fields the export does not write: {sorted(missing)}"
    print(f"round trip over {len(expected)} schema fields")


def test_the_field_check_finds_a_field_left_out(built_study):
    """The round-trip check reports a schema field missing from the data (here: one left out)."""
    data = study_file_data(built_study)
    for setting in data["settings"]:
        setting.pop("provenance", None)
    missing = schema_paths(StudyFileSerializer()) - present_paths(StudyFileSerializer(), data)
    assert "settings[].provenance.mining.params" in missing
    assert "settings[].provenance" in missing and "settings[].title" not in missing


def test_a_schema_field_without_an_export_rule_is_an_error():
    """A field added to a schema serializer without a rule in the export raises, naming it."""

    class CodesWithOneMore(CompletionCodesSerializer):
        screened_out = serializers.CharField()

    rules = {"completed": lambda: "A", "failed_instruction_check": lambda: "B", "no_consent": lambda: "C"}
    assert _by_schema(CompletionCodesSerializer(), rules) == {
        "completed": "A", "failed_instruction_check": "B", "no_consent": "C",
    }
    with pytest.raises(ExportRuleMissing, match="CodesWithOneMore: no export rule for screened_out"):
        _by_schema(CodesWithOneMore(), rules)


def test_built_settings_carry_their_provenance(built_study):
    """A setting built on the Stimuli pages exports its stimulus set, generation, mining, patterns and sample."""
    data = study_file_data(built_study)
    by_key = {s["key"]: s for s in data["settings"]}
    assert [s["key"] for s in data["settings"]] == ["doctor", "farming", "pronouns", "pronouns-hand"]
    assert "provenance" not in by_key["doctor"] and "provenance" not in data["training"]
    generated = by_key["pronouns"]["provenance"]
    assert generated["stimulus_set"]["source"] == "generated"
    assert generated["generation"]["model"] == "llama3" and generated["generation"]["seed"] == 42
    assert generated["mining"]["method"] == "premise" and generated["selection"] == "random"
    assert generated["target_pattern"]["clauses"] == [["She"]]
    assert [p["clauses"] for p in generated["distractor_patterns"]] == [[["He"]]]
    assert len(generated["group1_outputs"]) == 8 and generated["max_chars"] == 200
    assert by_key["pronouns"]["group1"][0] == by_key["pronouns"]["group1"][0].strip()
    hand = by_key["pronouns-hand"]["provenance"]
    assert hand["generation"] is None and hand["seed"] is None and hand["selection"] == "hand"
    assert (hand["group1_outputs"], hand["group2_outputs"]) == ([3, 1], [5, 2])
    assert by_key["pronouns-hand"]["group1"] == ["He treats patient 3. He smiles.", "He treats patient 1. He smiles."]
    assert data["annotation"]["settings"]["pronouns"] == {"tags": ["specialty"], "surface_difference": "He or she."}
    assert study_file_problems(data) == {}


def test_export_command_writes_yaml_to_stdout_and_json_to_a_json_file(built_study, tmp_path, capsys):
    """Without --out the YAML goes to standard output (messages to stderr); .json gives JSON."""
    call_command("export_study", "full-study")
    out = capsys.readouterr()
    assert out.out.startswith("# Study file of 'full-study'")
    assert yaml.safe_load(out.out) == study_file_data(built_study)
    path = tmp_path / "study.json"
    call_command("export_study", "full-study", "--out", str(path))
    assert json.loads(path.read_text()) == study_file_data(built_study)
    assert "2 built on the Stimuli pages" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["no-such-study"], "No study with slug 'no-such-study'. Studies: full-study."),
        (["full-study", "--out", "study.txt"], "--out must end in .yaml, .yml or .json"),
        (["full-study", "--out", "missing-dir/study.yaml"], "the folder"),
        (["full-study", "--out", "taken.yaml"], "Cannot write taken.yaml"),
    ],
    ids=["unknown slug", "bad suffix", "missing folder", "a folder in the way"],
)
def test_export_command_bad_input_says_why_and_writes_nothing(built_study, tmp_path, monkeypatch, args, message):
    """A wrong slug, suffix or folder, or a folder where the file should go, is a clear error and writes no file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken.yaml").mkdir()
    with pytest.raises(CommandError) as info:
        call_command("export_study", *args)
    assert message in str(info.value)
    assert [p.name for p in tmp_path.iterdir()] == ["taken.yaml"]
    assert list((tmp_path / "taken.yaml").iterdir()) == []


def test_export_warns_when_the_stored_study_would_not_import(built_study, tmp_path, capsys):
    """A stored pattern the file rules refuse is still written, with a warning naming its path."""
    TokenPattern.objects.filter(setting__key="pronouns", is_distractor=False).update(group=1)
    path = tmp_path / "study.yaml"
    call_command("export_study", "full-study", "--out", str(path))
    err = capsys.readouterr().err
    assert "import_study would refuse this file" in err and "settings[2].patterns" in err
    assert path.exists()


def test_provenance_is_validated_and_named_by_path(built_study):
    """A provenance that no longer matches its setting, or is malformed, is refused by path."""
    data = study_file_data(built_study)
    pronouns = data["settings"][2]
    pronouns["group1"].pop()
    pronouns["patterns"] = [{"tokens": ["He"], "group": 1}]
    pronouns["provenance"]["mining"]["params"]["top_k"] = "many"
    data["settings"][3]["provenance"]["seed"] = 7
    data["settings"][3]["provenance"]["colour"] = "blue"
    with pytest.raises(StudyFileError) as info:
        validate_study_data(data)
    errors = info.value.errors
    assert "settings[2].provenance.mining.params.top_k" in errors
    assert "settings[3].provenance.seed" in errors
    assert "Unknown field" in " ".join(errors["settings[3].provenance.colour"])
    data = study_file_data(built_study)
    data["settings"][2]["group1"].pop()
    data["settings"][2]["patterns"] = [{"tokens": ["He"], "group": 1}]
    with pytest.raises(StudyFileError) as info:
        validate_study_data(data)
    errors = info.value.errors
    assert "provenance.target_pattern" in " ".join(errors["settings[2].patterns"])
    assert "Names 8 outputs but group1 has 7 texts" in " ".join(errors["settings[2].provenance.group1_outputs"])


def test_provenance_choices_are_the_stimuli_models_choices():
    """The schema's provenance choices repeat the stimuli app's, which the studies app cannot import."""
    assert schema_provenance.SOURCES == tuple(StimulusSet.Source.values)
    assert schema_provenance.METHODS == tuple(MiningJob.Method.values)
    assert schema_provenance.SELECTIONS == tuple(SettingSource.Selection.values)


def test_backfill_migration_fills_the_provenance_of_older_built_settings(built_study):
    """Settings built before Setting.provenance existed get it from their SettingSource, as a new build would."""
    before = dict(Setting.objects.filter(provenance__isnull=False).values_list("key", "provenance"))
    assert set(before) == {"pronouns", "pronouns-hand"}
    Setting.objects.update(provenance=None)
    migration = importlib.import_module("spotlight_study.stimuli.migrations.0002_setting_provenance_backfill")
    migration.fill(django_apps, None)
    after = dict(Setting.objects.filter(provenance__isnull=False).values_list("key", "provenance"))
    assert after == before


def test_simulate_reads_an_exported_file(built_study, tmp_path):
    """python -m analysis simulate --study takes an exported file and uses the platform's cells."""
    path = tmp_path / "exported.yaml"
    call_command("export_study", "full-study", "--out", str(path))
    proc = run_python("-m", "analysis", "simulate", "--study", str(path), "--p-control", "0.3",
                      "--p-treatment", "0.6", "--runs", "50", "--seed", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    design = json.loads(proc.stdout)["design"]
    study = study_get_with_settings(slug="full-study")
    assert design["n_cells"] == len(study_cells(study)) == 12
    assert design["settings"] == ["doctor", "farming", "pronouns", "pronouns-hand"]


TRICKY = {
    "title": "yes",
    "consent_text": "Line one  \n\n  indented\twith a tab\n- looks like a list\n# looks like a comment\n"
    "key: value 'single' \"double\" ünïcødé ✓ \\ backslash\r\nafter a CRLF",
    "example_answer": "null",
    "pattern_intro_text": "123",
    "instructions_text": "~",
    "task_prompt": "{not: a mapping}, [nor a list] & *no alias* !no-tag %",
}


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_texts_yaml_would_misread_come_back_exactly(demo_data, db, tmp_path, suffix):
    """Texts that look like YAML values, comments, lists or keys, with tabs and odd spacing, survive the round trip."""
    demo_data.update(TRICKY)
    demo_data["settings"][0]["target_description"] = "- dash: and colon"
    demo_data["annotation"]["settings"]["doctor"]["tags"] = ["on", "1.5", "no"]
    demo_data["survey"]["comment_prompt"] = "'quoted'  twice  spaced"
    from spotlight_study.studies.services import study_import

    study = study_import(data=demo_data)
    path = tmp_path / f"tricky{suffix}"
    call_command("export_study", study.slug, "--out", str(path))
    call_command("import_study", str(path), "--as-slug", "tricky-copy")
    copy = Study.objects.get(slug="tricky-copy")
    assert rows(copy) == rows(study)
    for name, value in TRICKY.items():
        assert getattr(copy, name) == value.strip()
    assert copy.settings.get(key="doctor").annotation_tags == ["on", "1.5", "no"]
    assert copy.survey["comment_prompt"] == "'quoted'  twice  spaced"


def test_a_study_without_a_background_intro_exports_a_file_that_imports_back(db, demo_data):
    """A field left out takes its default ("" for ``survey.background_intro``); the exported file
    then carries that default and must import back, and the stored definition is not a no-go.
    Found in a browser try-out: the builder published such a study, then ``launch_check`` and
    ``import_study`` of its downloaded file refused ``background_intro: ''``."""
    from spotlight_study.studies.definition_check import stored_definition_problems
    from spotlight_study.studies.services import study_import

    demo_data["survey"].pop("background_intro", None)
    study_import(data=demo_data)
    study = study_get_with_settings(slug=demo_data["slug"])
    assert stored_definition_problems(study) == {}
    exported = study_file_data(study)
    assert exported["survey"]["background_intro"] == ""
    validate_study_data(exported)
