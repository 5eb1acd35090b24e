"""Validation of study files (YAML or JSON), with DRF serializers so that errors name the field.

The file format is documented in ``docs/study-file.md``; ``fixtures/spotlight-replication.yaml`` is
a complete example.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from rest_framework import serializers

from .models import Condition, Study

LIKERT_POINTS = 5


class StudyFileError(Exception):
    """A study file that cannot be imported. ``errors`` maps a field path to its messages."""

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        lines = [f"{path}: {' '.join(msgs)}" for path, msgs in sorted(errors.items())]
        super().__init__("Invalid study file:\n  " + "\n  ".join(lines))


class _TextList(serializers.ListField):
    child = serializers.CharField(max_length=2000, trim_whitespace=True)


class PatternSerializer(serializers.Serializer):
    """``{"tokens": ["maize", "beans"], "group": 1}``."""

    tokens = serializers.ListField(
        child=serializers.CharField(max_length=100), min_length=1, max_length=20
    )
    group = serializers.ChoiceField(choices=[1, 2])


class SettingSerializer(serializers.Serializer):
    """One setting: two groups of texts, its patterns and the target difference."""

    key = serializers.SlugField(max_length=50)
    title = serializers.CharField(max_length=200)
    group1 = _TextList(min_length=1, max_length=100)
    group2 = _TextList(min_length=1, max_length=100)
    patterns = PatternSerializer(many=True, required=False, default=list)
    distractor_patterns = PatternSerializer(many=True, required=False, default=list)
    target_description = serializers.CharField(required=False, allow_blank=True, default="")


class TrainingSettingSerializer(SettingSerializer):
    """The training setting, which also carries the instruction-check keywords."""

    check_keywords = serializers.ListField(
        child=serializers.CharField(max_length=50), min_length=1
    )

    def validate_patterns(self, value: list) -> list:
        if not value:
            raise serializers.ValidationError(
                "The training setting needs at least one pattern: it introduces the pattern box."
            )
        return value


class SurveyItemSerializer(serializers.Serializer):
    """A survey item: ``key`` (a slug used in the export) and the statement shown."""

    key = serializers.SlugField(max_length=50)
    text = serializers.CharField(max_length=500)


class SurveySerializer(serializers.Serializer):
    """Per-condition Likert items, background frequency items and a free comment."""

    likert_scale = serializers.ListField(
        child=serializers.CharField(max_length=60),
        min_length=LIKERT_POINTS,
        max_length=LIKERT_POINTS,
    )
    condition_items = SurveyItemSerializer(many=True, min_length=1)
    condition_intros = serializers.DictField(child=serializers.CharField(max_length=500))
    frequency_scale = serializers.ListField(
        child=serializers.CharField(max_length=60),
        min_length=LIKERT_POINTS,
        max_length=LIKERT_POINTS,
    )
    background_intro = serializers.CharField(max_length=500, required=False, default="")
    background_items = SurveyItemSerializer(many=True, required=False, default=list)
    comment_prompt = serializers.CharField(max_length=500)

    def validate(self, attrs: dict) -> dict:
        keys = [i["key"] for i in attrs["condition_items"]] + [
            i["key"] for i in attrs["background_items"]
        ]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise serializers.ValidationError(f"Survey item keys repeat: {', '.join(dupes)}.")
        return attrs


class CompletionCodesSerializer(serializers.Serializer):
    """Prolific completion codes."""

    completed = serializers.CharField(max_length=40)
    failed_instruction_check = serializers.CharField(max_length=40)
    no_consent = serializers.CharField(max_length=40)


def normalize_tag(value: str) -> str:
    """A codebook tag in canonical form: stripped, lower case, inner whitespace collapsed."""
    return " ".join(value.split()).lower()


class AnnotationSettingSerializer(serializers.Serializer):
    """Annotation schema of one setting: its codebook of tags and its surface difference."""

    tags = serializers.ListField(
        child=serializers.CharField(max_length=60), required=False, default=list, max_length=200
    )
    surface_difference = serializers.CharField(
        max_length=500, required=False, allow_blank=True, default=""
    )

    def validate_tags(self, value: list[str]) -> list[str]:
        tags = [normalize_tag(t) for t in value]
        dupes = sorted({t for t in tags if tags.count(t) > 1})
        if dupes:
            raise serializers.ValidationError(f"Tags repeat: {', '.join(dupes)}.")
        return tags


class AnnotationSerializer(serializers.Serializer):
    """The optional ``annotation`` section: k, the reservation timeout and per-setting schemas.

    Missing fields take their defaults (2 annotators per item, 30-minute reservations, no tags).
    """

    annotators_per_item = serializers.IntegerField(min_value=1, max_value=20, default=2)
    reservation_minutes = serializers.IntegerField(min_value=1, max_value=1440, default=30)
    settings = serializers.DictField(
        child=AnnotationSettingSerializer(), required=False, default=dict
    )


class StudyFileSerializer(serializers.Serializer):
    """The whole study file."""

    slug = serializers.SlugField(max_length=80)
    title = serializers.CharField(max_length=200)
    status = serializers.ChoiceField(choices=Study.Status.values, default=Study.Status.DRAFT)
    consent_text = serializers.CharField()
    instructions_text = serializers.CharField()
    example_answer = serializers.CharField()
    pattern_intro_text = serializers.CharField()
    task_prompt = serializers.CharField(required=False)
    completion_codes = CompletionCodesSerializer()
    estimated_minutes = serializers.IntegerField(min_value=1, max_value=600)
    maximum_minutes = serializers.IntegerField(min_value=1, max_value=1440)
    abandonment_timeout_minutes = serializers.IntegerField(min_value=1, max_value=1440)
    target_sample_size = serializers.IntegerField(min_value=1, max_value=100000)
    max_answer_chars = serializers.IntegerField(min_value=10, max_value=5000, default=5000)
    short_time_flag_seconds = serializers.IntegerField(min_value=0, max_value=3600, default=20)
    failed_check_policy = serializers.ChoiceField(
        choices=Study.FailedCheckPolicy.values,
        default=Study.FailedCheckPolicy.CONTINUE_AND_FLAG,
    )
    conditions = serializers.ListField(
        child=serializers.ChoiceField(choices=Condition.values), min_length=1
    )
    training = TrainingSettingSerializer()
    settings = SettingSerializer(many=True, min_length=1, max_length=12)
    survey = SurveySerializer()
    annotation = AnnotationSerializer(required=False)

    def validate_conditions(self, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise serializers.ValidationError("Conditions must not repeat.")
        return value

    def validate_settings(self, value: list[dict]) -> list[dict]:
        keys = [s["key"] for s in value]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise serializers.ValidationError(f"Setting keys repeat: {', '.join(dupes)}.")
        return value

    def validate(self, attrs: dict) -> dict:
        errors: dict[str, str] = {}
        if attrs["maximum_minutes"] < attrs["estimated_minutes"]:
            errors["maximum_minutes"] = "Must be at least estimated_minutes."
        if attrs["training"]["key"] in {s["key"] for s in attrs["settings"]}:
            errors["training.key"] = "Must differ from every main setting key."
        conditions = attrs["conditions"]
        for i, setting in enumerate(attrs["settings"]):
            if set(conditions) & {"pattern", "pattern_with_distractors"} and not setting["patterns"]:
                errors[f"settings[{i}].patterns"] = (
                    "This setting needs at least one pattern: a pattern condition is in use."
                )
            if "pattern_with_distractors" in conditions and not setting["distractor_patterns"]:
                errors[f"settings[{i}].distractor_patterns"] = (
                    "Needed because the pattern_with_distractors condition is in use."
                )
        known_keys = {attrs["training"]["key"]} | {s["key"] for s in attrs["settings"]}
        for key in (attrs.get("annotation") or {}).get("settings", {}):
            if key not in known_keys:
                errors[f"annotation.settings.{key}"] = "No setting has this key."
        missing = [c for c in conditions if c not in attrs["survey"]["condition_intros"]]
        if missing:
            errors["survey.condition_intros"] = f"Missing an intro for: {', '.join(missing)}."
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


def _flatten(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error structure as ``{"settings[1].group1": ["..."]}``."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key == "non_field_errors":
                name = prefix
            elif isinstance(key, int) or str(key).isdigit():
                name = f"{prefix}[{key}]"
            else:
                name = f"{prefix}.{key}" if prefix else str(key)
            for path, msgs in _flatten(value, name).items():
                out.setdefault(path, []).extend(msgs)
    elif isinstance(detail, list):
        if all(isinstance(d, str) for d in detail):
            out.setdefault(prefix or "(file)", []).extend(str(d) for d in detail)
        else:
            for i, value in enumerate(detail):
                if value:
                    for path, msgs in _flatten(value, f"{prefix}[{i}]").items():
                        out.setdefault(path, []).extend(msgs)
    else:
        out.setdefault(prefix or "(file)", []).append(str(detail))
    return out


def parse_study_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML (``.yaml``/``.yml``) or JSON file into a dict.

    Raises
    ------
    StudyFileError
        If the file is missing, unreadable, not UTF-8, not valid YAML/JSON, or not a mapping.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StudyFileError({"(file)": [f"No such file: {path}"]}) from None
    except UnicodeDecodeError as exc:
        raise StudyFileError({"(file)": [f"Not UTF-8 text: {exc}"]}) from None
    except OSError as exc:
        raise StudyFileError({"(file)": [f"Cannot read {path}: {exc.strerror}"]}) from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            data = yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise StudyFileError({"(file)": [f"Not valid {path.suffix.lstrip('.').upper()}: {exc}"]}) from None
    if not isinstance(data, dict):
        raise StudyFileError({"(file)": ["The top level must be a mapping of fields."]})
    return data


def validate_study_data(data: dict[str, Any]) -> dict[str, Any]:
    """Validate a parsed study file and return its cleaned data.

    Raises
    ------
    StudyFileError
        With every bad field named by its path, e.g. ``settings[1].group2``.
    """
    serializer = StudyFileSerializer(data=data)
    if not serializer.is_valid():
        raise StudyFileError(_flatten(serializer.errors))
    unknown = sorted(set(data) - set(StudyFileSerializer().fields))
    if unknown:
        raise StudyFileError({name: ["Unknown field."] for name in unknown})
    return serializer.validated_data
