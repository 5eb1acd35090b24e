"""Validation of study files (YAML or JSON), with DRF serializers so that errors name the field.

The file format is documented in docs/study-file.md; ``fixtures/spotlight-replication.yaml`` is
a complete example.
"""
from __future__ import annotations

import difflib
import io
import json
from pathlib import Path
from typing import Any

import yaml
from rest_framework import serializers

from .content import pattern_problems
from .file_limits import FileLimitError, data_check, file_size_check, json_int, yaml_load_checked
from .errors import StudyFileError
from .languages import DEFAULT_LANGUAGE, language_known
from .models import Condition, Study
from .quality_flags import default_holding_flags, known_flag_keys
from .rules import abandonment_timeout_too_short, completion_code_clashes
from .codebook import normalize_tag  # noqa: F401 (re-exported: its old home)
from .schema_codebook import CodebookSerializer, codebook_file_errors
from .schema_provenance import ProvenanceSerializer, provenance_errors
from .schema_survey import SurveyItemSerializer  # noqa: F401 (re-exported: items with types)
from .pages import PagesField
from .visible_text import visible_title_check

LIKERT_POINTS = 5


class _TextList(serializers.ListField):
    child = serializers.CharField(max_length=2000, trim_whitespace=True)


class PatternSerializer(serializers.Serializer):
    """``{"tokens": ["maize", "beans"], "group": 1}``.

    Every token must occur in the setting's texts and the pattern must be more frequent in
    ``group`` there (:mod:`spotlight_study.studies.content`), unless the file says
    ``unchecked: true`` with an ``unchecked_reason`` (e.g. a deliberately false hint).
    """

    tokens = serializers.ListField(
        child=serializers.CharField(max_length=100), min_length=1, max_length=20
    )
    group = serializers.ChoiceField(choices=[1, 2])
    unchecked = serializers.BooleanField(required=False, default=False)
    unchecked_reason = serializers.CharField(
        max_length=500, required=False, allow_blank=True, default=""
    )

    def validate(self, attrs: dict) -> dict:
        if attrs["unchecked"] and not attrs["unchecked_reason"].strip():
            raise serializers.ValidationError(
                {"unchecked_reason": "Say why this pattern is exempt from the content checks."}
            )
        if attrs["unchecked_reason"] and not attrs["unchecked"]:
            raise serializers.ValidationError(
                {"unchecked": "Set `unchecked: true` too, or drop unchecked_reason."}
            )
        return attrs


class SettingSerializer(serializers.Serializer):
    """One setting: two groups of texts, its patterns, the target difference and, for a setting
    built on the Stimuli pages, its ``provenance`` (:mod:`.schema_provenance`)."""

    key = serializers.SlugField(max_length=50)
    title = serializers.CharField(max_length=200)
    group1 = _TextList(min_length=1, max_length=100)
    group2 = _TextList(min_length=1, max_length=100)
    patterns = PatternSerializer(many=True, required=False, default=list)
    distractor_patterns = PatternSerializer(many=True, required=False, default=list)
    target_description = serializers.CharField(required=False, allow_blank=True, default="")
    provenance = ProvenanceSerializer(allow_null=True, default=None)

    def validate(self, attrs: dict) -> dict:
        errors = provenance_errors(attrs)
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class TrainingSettingSerializer(SettingSerializer):
    """The training setting, which also carries the instruction-check keywords (and has no
    ``provenance``: the Stimuli pages build main settings only)."""

    provenance = None

    check_keywords = serializers.ListField(
        child=serializers.CharField(max_length=50), min_length=1
    )

    def validate_patterns(self, value: list) -> list:
        if not value:
            raise serializers.ValidationError(
                "The training setting needs at least one pattern: it introduces the pattern box."
            )
        return value


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
    # Blank is its default (a study without background items needs no intro), so an exported
    # file with "" must import back (issue 35: the builder published what export then refused).
    background_intro = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)
    background_items = SurveyItemSerializer(many=True, required=False, default=list)
    comment_prompt = serializers.CharField(max_length=500)

    def validate_condition_intros(self, value: dict) -> dict:
        unknown = {
            key: [_unknown_message(key, Condition.values, what="condition")]
            for key in value
            if key not in Condition.values
        }
        if unknown:
            raise serializers.ValidationError(unknown)
        return value

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
    codebook = CodebookSerializer(required=False)  # absent: today's schema (studies/codebook.py)


class AnswerFlagsSerializer(serializers.Serializer):
    """The optional ``answer_flags`` section: thresholds of the writing-process flags.

    The defaults are ``FlagThresholds`` of spotlight_study/participation/flags.py (a test keeps
    them equal; this app may not import that one). Shares are of the answer's characters (0-1),
    the similarity is rapidfuzz's ``fuzz.ratio`` (0-100; at least 70, the lowest one recorded).
    """

    typed_chars_per_minute_max = serializers.IntegerField(min_value=100, max_value=100_000, default=1500)
    inserted_without_typing_share = serializers.FloatField(min_value=0.01, max_value=1, default=0.3)
    copied_from_shown_texts_share = serializers.FloatField(min_value=0.05, max_value=1, default=0.5)
    near_duplicate_similarity = serializers.IntegerField(min_value=70, max_value=100, default=90)
    away_before_paste_seconds = serializers.IntegerField(min_value=1, max_value=3600, default=3)


#: Slugs that name platform pages under /researcher/ and so cannot name a study.
RESERVED_SLUGS = frozenset({"team", "new"})


class StudyFileSerializer(serializers.Serializer):
    """The whole study file."""

    slug = serializers.SlugField(max_length=80)
    title = serializers.CharField(max_length=200, validators=[visible_title_check])
    status = serializers.ChoiceField(choices=Study.Status.values, default=Study.Status.DRAFT)
    # The participant pages' language (studies/languages.py): a code Django knows, e.g. de.
    language = serializers.CharField(max_length=12, required=False, default=DEFAULT_LANGUAGE)
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
    # true: arrivals after the target is reached see "this study is full" (participation).
    stop_at_target = serializers.BooleanField(required=False, default=False)
    min_answer_chars = serializers.IntegerField(min_value=1, max_value=5000, default=1)
    max_answer_chars = serializers.IntegerField(min_value=10, max_value=5000, default=5000)
    short_time_flag_seconds = serializers.IntegerField(min_value=0, max_value=3600, default=20)
    answer_flags = AnswerFlagsSerializer(required=False)
    failed_check_policy = serializers.ChoiceField(
        choices=Study.FailedCheckPolicy.values,
        default=Study.FailedCheckPolicy.CONTINUE_AND_FLAG,
    )
    # 2: a failed first check shows the instructions again, then the training task once more.
    instruction_check_attempts = serializers.ChoiceField(
        choices=[1, 2], default=1,
        error_messages={"invalid_choice": "`{input}` is not allowed: use 1 (one attempt) or 2 (the "
                        "instructions again after a failed first attempt)."},
    )
    # Flag keys of participation.flags (registered in studies.quality_flags); [] holds none.
    holding_flags = serializers.ListField(
        child=serializers.CharField(max_length=40), required=False, default=default_holding_flags,
        max_length=40,
    )
    conditions = serializers.ListField(
        child=serializers.ChoiceField(choices=Condition.values), min_length=1
    )
    training = TrainingSettingSerializer()
    settings = SettingSerializer(many=True, min_length=1, max_length=12)
    survey = SurveySerializer()
    annotation = AnnotationSerializer(required=False)
    pages = PagesField()  # pages inserted into the flow (studies/pages.py)

    def validate_slug(self, value: str) -> str:
        # /researcher/team/ is the team page, routed before /researcher/<slug>/.
        if value in RESERVED_SLUGS:
            raise serializers.ValidationError(
                f"`{value}` is reserved for a page of the platform; choose another slug."
            )
        return value

    def validate_language(self, value: str) -> str:
        code = value.strip().lower().replace("_", "-")
        if not language_known(code):
            raise serializers.ValidationError(
                f"Unknown language code `{value}`: use a code such as en, de, es, fr, ar or he "
                "(docs/study-file.md)."
            )
        return code

    def validate_holding_flags(self, value: list[str]) -> list[str]:
        known = known_flag_keys()
        unknown = [v for v in value if v not in known]
        if unknown:
            raise serializers.ValidationError(
                f"Unknown flag(s): {', '.join(unknown)}. The flags are: {', '.join(known)}."
            )
        if len(set(value)) != len(value):
            raise serializers.ValidationError("Flags must not repeat.")
        return value

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

    def to_internal_value(self, data: Any) -> dict:
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            # DRF runs validate() only when every field is valid. Run the cross-field rules on
            # the fields that are valid, so their errors come in the same report.
            if not isinstance(exc.detail, dict) or not isinstance(data, dict):
                raise
            valid = {}
            for name, field in self.fields.items():
                if name in exc.detail:
                    continue
                try:
                    valid[name] = field.run_validation(field.get_value(data))
                except (serializers.ValidationError, serializers.SkipField):
                    continue
            for path, message in self._cross_field_errors(valid).items():
                exc.detail.setdefault(path, [message])
            raise

    def validate(self, attrs: dict) -> dict:
        errors = self._cross_field_errors(attrs)
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    @staticmethod
    def _cross_field_errors(attrs: dict) -> dict[str, str]:
        """Rules across fields, by path; a rule whose fields are missing (invalid) is skipped."""
        errors: dict[str, str] = {}
        if {"maximum_minutes", "estimated_minutes"} <= attrs.keys():
            if attrs["maximum_minutes"] < attrs["estimated_minutes"]:
                errors["maximum_minutes"] = "Must be at least estimated_minutes."
        if {"maximum_minutes", "abandonment_timeout_minutes"} <= attrs.keys():
            if abandonment_timeout_too_short(
                timeout_minutes=attrs["abandonment_timeout_minutes"],
                maximum_minutes=attrs["maximum_minutes"],
            ):
                errors["abandonment_timeout_minutes"] = (
                    f"Must be at least maximum_minutes ({attrs['maximum_minutes']}): a participant "
                    "still within Prolific's time limit would otherwise lose their place and the "
                    "cell would be filled twice."
                )
        codes = attrs.get("completion_codes")
        if codes is not None:
            for name, earlier in completion_code_clashes(dict(codes)).items():
                errors[f"completion_codes.{name}"] = (
                    f"Must differ from completion_codes.{earlier}: Prolific tells outcomes apart "
                    "only by their completion code."
                )
        if {"min_answer_chars", "max_answer_chars"} <= attrs.keys():
            if attrs["min_answer_chars"] > attrs["max_answer_chars"]:
                errors["min_answer_chars"] = "Must be at most max_answer_chars."
        settings = attrs.get("settings")
        training = attrs.get("training")
        if training is not None and settings is not None:
            if training["key"] in {s["key"] for s in settings}:
                errors["training.key"] = "Must differ from every main setting key."
        conditions = attrs.get("conditions")
        if conditions is not None and settings is not None:
            for i, setting in enumerate(settings):
                if set(conditions) & {"pattern", "pattern_with_distractors"} and not setting["patterns"]:
                    errors[f"settings[{i}].patterns"] = (
                        "This setting needs at least one pattern: a pattern condition is in use."
                    )
                if "pattern_with_distractors" in conditions and not setting["distractor_patterns"]:
                    errors[f"settings[{i}].distractor_patterns"] = (
                        "Needed because the pattern_with_distractors condition is in use."
                    )
        if training is not None and settings is not None:
            known_keys = {training["key"]} | {s["key"] for s in settings}
            for key in (attrs.get("annotation") or {}).get("settings", {}):
                if key not in known_keys:
                    errors[f"annotation.settings.{key}"] = "No setting has this key."
        errors.update(codebook_file_errors(attrs.get("annotation") or {}))
        if conditions is not None and attrs.get("survey") is not None:
            missing = [c for c in conditions if c not in attrs["survey"]["condition_intros"]]
            if missing:
                errors["survey.condition_intros"] = f"Missing an intro for: {', '.join(missing)}."
        return errors


def _unknown_message(key: Any, known: Any, *, what: str = "field") -> str:
    """ "Unknown field." with the closest known name as a suggestion, if one is close."""
    close = difflib.get_close_matches(str(key), [str(k) for k in known], n=1, cutoff=0.6)
    hint = f" Did you mean `{close[0]}`?" if close else ""
    return f"Unknown {what}.{hint}"


def _join(prefix: str, key: Any) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def _unknown_key_errors(field: serializers.Field, value: Any, path: str = "") -> dict[str, list[str]]:
    """Keys of ``value`` that ``field`` does not define, at every level, by path.

    Walks the raw data alongside the serializer tree (nested serializers, lists of them and
    dicts of them). It is separate from DRF's validation, which ignores unknown keys and stops
    at the first level with an error, so typos are reported together with every other error.
    Values of the wrong type are left to DRF's own messages.
    """
    out: dict[str, list[str]] = {}
    if isinstance(field, (serializers.ListSerializer, serializers.ListField)):
        if isinstance(value, list):
            for i, item in enumerate(value):
                out.update(_unknown_key_errors(field.child, item, f"{path}[{i}]"))
    elif isinstance(field, serializers.DictField):
        if isinstance(value, dict):
            for key, item in value.items():
                out.update(_unknown_key_errors(field.child, item, _join(path, key)))
    elif hasattr(field, "variant_for"):
        # A field whose value picks its serializer (a page's ``kind``, studies/pages.py).
        variant = field.variant_for(value)
        if variant is not None:
            out.update(_unknown_key_errors(variant, value, path))
    elif isinstance(field, serializers.Serializer) and isinstance(value, dict):
        known = field.fields
        for key, item in value.items():
            name = _join(path, key)
            if key in known:
                out.update(_unknown_key_errors(known[key], item, name))
            else:
                out[name] = [_unknown_message(key, known)]
    return out


def _raw_texts(value: Any) -> list[str]:
    return [t.strip() for t in value if isinstance(t, str)] if isinstance(value, list) else []


def _content_errors(data: dict[str, Any]) -> dict[str, list[str]]:
    """Pattern tokens missing from their setting's texts, and false group claims, by path.

    Runs on the raw data, so it reports even when other fields are invalid; a pattern or a
    setting too malformed to check is skipped (DRF names what is wrong with it). Patterns marked
    ``unchecked: true`` are exempt.
    """
    out: dict[str, list[str]] = {}
    settings = [("training", data.get("training"))]
    if isinstance(data.get("settings"), list):
        settings += [(f"settings[{i}]", s) for i, s in enumerate(data["settings"])]
    for path, setting in settings:
        if not isinstance(setting, dict):
            continue
        group1, group2 = _raw_texts(setting.get("group1")), _raw_texts(setting.get("group2"))
        if not group1 or not group2:
            continue
        for kind in ("patterns", "distractor_patterns"):
            patterns = setting.get(kind)
            if not isinstance(patterns, list):
                continue
            for j, pattern in enumerate(patterns):
                if not isinstance(pattern, dict):
                    continue
                unchecked = pattern.get("unchecked")
                # DRF's spelling of true ("yes", "1", ...); a bad value is left to its message.
                if isinstance(unchecked, (bool, int, str)) and unchecked in serializers.BooleanField.TRUE_VALUES:
                    continue
                tokens = pattern.get("tokens")
                group = str(pattern.get("group"))
                if not isinstance(tokens, list) or not tokens or group not in ("1", "2"):
                    continue
                if not all(isinstance(t, str) and t.strip() for t in tokens):
                    continue
                problems = pattern_problems(
                    tokens=[t.strip() for t in tokens],
                    group=int(group),
                    group1_texts=group1,
                    group2_texts=group2,
                )
                if problems:
                    out[f"{path}.{kind}[{j}]"] = problems
    return out


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


_LIMITS = "(see the size limits in docs/study-file.md)."


class DuplicateKey(ValueError):
    """A key given twice in one mapping of a study file (YAML and JSON would keep the last)."""


class _StrictYamlLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader, refusing a key repeated within one mapping.

    YAML 1.2 says mapping keys are unique, but PyYAML silently keeps the last value, so
    ``estimated_minutes: 15`` followed by ``estimated_minutes: 50`` would import 50 unnoticed.
    """

    def construct_mapping(self, node, deep=False):
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)):
                continue  # unhashable keys are refused by PyYAML itself
            if key in seen:
                raise DuplicateKey(
                    f"the key `{key}` is given twice in one mapping "
                    f"({key_node.start_mark.name}, line {key_node.start_mark.line + 1})"
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _json_object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` hook: a JSON object, refusing a key given twice (:class:`DuplicateKey`)."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKey(f"the key `{key}` is given twice in one object")
        data[key] = value
    return data


def parse_study_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML (``.yaml``/``.yml``) or JSON file into a dict.

    Raises
    ------
    StudyFileError
        If the file is missing, unreadable, not UTF-8, empty, not valid YAML/JSON, repeats a key
        within one mapping, or is not a mapping.
    """
    path = Path(path)
    try:
        file_size_check(path.stat().st_size)
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StudyFileError({"(file)": [f"No such file: {path}"]}) from None
    except UnicodeDecodeError as exc:
        raise StudyFileError({"(file)": [f"Not UTF-8 text: {exc}"]}) from None
    except OSError as exc:
        raise StudyFileError({"(file)": [f"Cannot read {path}: {exc.strerror}"]}) from None
    except FileLimitError as exc:
        raise StudyFileError({"(file)": [f"{path.name}: {exc} {_LIMITS}"]}) from None
    if not text.strip():
        raise StudyFileError({"(file)": [f"The file is empty: {path}"]})
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text, object_pairs_hook=_json_object_without_duplicates, parse_int=json_int)
            data_check(data)
        else:
            stream = io.StringIO(text)
            stream.name = path.name  # YAML's messages then name the file, not "<unicode string>"
            data = yaml_load_checked(stream, _StrictYamlLoader)
    except (json.JSONDecodeError, yaml.YAMLError, DuplicateKey) as exc:
        raise StudyFileError({"(file)": [f"Not valid {path.suffix.lstrip('.').upper()}: {exc}"]}) from None
    except RecursionError:
        raise StudyFileError({"(file)": [f"{path.name}: values are nested too deeply {_LIMITS}"]}) from None
    except FileLimitError as exc:
        raise StudyFileError({"(file)": [f"{path.name}: {exc} {_LIMITS}"]}) from None
    if not isinstance(data, dict):
        raise StudyFileError({"(file)": ["The top level must be a mapping of fields."]})
    return data


def validate_study_data(data: dict[str, Any]) -> dict[str, Any]:
    """Validate a parsed study file and return its cleaned data.

    Every problem is reported at once: field errors, unknown keys at any level (with a
    suggestion, "Did you mean `target_description`?") and the pattern content checks. The
    cross-field rules of :class:`StudyFileSerializer` run once the fields themselves are valid.

    Raises
    ------
    StudyFileError
        With every bad field named by its path, e.g. ``settings[1].group2``.
    """
    try:
        data_check(data)
    except FileLimitError as exc:
        raise StudyFileError({"(file)": [f"{exc} {_LIMITS}"]}) from None
    serializer = StudyFileSerializer(data=data)
    errors: dict[str, list[str]] = {}
    if not serializer.is_valid():
        errors = _flatten(serializer.errors)
    for extra in (_unknown_key_errors(StudyFileSerializer(), data), _content_errors(data)):
        for path, msgs in extra.items():
            errors.setdefault(path, []).extend(m for m in msgs if m not in errors.get(path, []))
    if errors:
        raise StudyFileError(errors)
    return serializer.validated_data
