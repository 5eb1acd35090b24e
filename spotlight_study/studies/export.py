"""A study as its study file: the inverse of ``import_study`` (``manage.py export_study``).

:func:`study_file_data` gives the mapping that :func:`~.schema.validate_study_data` reads and
:func:`~.services.study_import` turns back into the same study: every field of the schema,
settings built on the Stimuli pages included, with their patterns and ``provenance``. What the
file cannot carry is what makes a study row itself: its id, its pseudonym salt (secret), its
Prolific link, its participants and annotators.

The fields come from the schema's serializers (:mod:`.schema`): each level is built by walking
``Serializer.fields`` and looking the field up in a table of rules, and a field with no rule
raises :class:`ExportRuleMissing`. A field added to the schema therefore cannot be left out of
the export silently; the round-trip test (``tests/studies/test_export.py``) fails first.
"""
from __future__ import annotations

import copy
import json
from typing import Any, Callable

import yaml
from rest_framework import serializers

from .errors import StudyFileError
from .models import Setting, Study, TokenPattern
from .schema import (
    AnnotationSerializer,
    AnswerFlagsSerializer,
    AnnotationSettingSerializer,
    CompletionCodesSerializer,
    PatternSerializer,
    SettingSerializer,
    StudyFileSerializer,
    SurveySerializer,
    TrainingSettingSerializer,
    validate_study_data,
)

Rules = dict[str, Callable[[], Any]]


class ExportRuleMissing(LookupError):
    """A schema field has no rule in the export: the export would leave it out (a bug)."""


def _by_schema(serializer: serializers.Serializer, rules: Rules, *, omit: Callable[[str, Any], bool] | None = None) -> dict[str, Any]:
    """``{field: rules[field]()}`` for the fields of ``serializer``, in the schema's order.

    ``omit(name, value)`` may leave out a value the import fills in by itself (a default).
    Rules for fields the serializer lacks are ignored (the training setting shares the rules of
    main settings). Raises :class:`ExportRuleMissing` naming every field without a rule.
    """
    missing = [name for name in serializer.fields if name not in rules]
    if missing:
        raise ExportRuleMissing(
            f"{type(serializer).__name__}: no export rule for {', '.join(missing)}; add one in "
            "spotlight_study/studies/export.py."
        )
    out = {}
    for name in serializer.fields:
        try:
            value = rules[name]()
        except (TypeError, ValueError):
            # A stored value of the wrong type (a row edited outside the import, e.g. a list
            # field holding null): written as null, so that the validation of the file names
            # its path ("This field may not be null.") instead of the export failing.
            value = None
        if omit is None or not omit(name, value):
            out[name] = value
    return out


def _stored(field: serializers.Field, value: Any) -> Any:
    """A value stored as the schema's cleaned data (``Study.survey``, ``Setting.provenance``),
    copied field by field in the schema's order; a key the schema does not know is dropped.
    A value of another shape than the field's (a row edited outside the import) is written as
    it is, for the validation to name it."""
    if value is None:
        return None
    if isinstance(field, serializers.ListSerializer) and isinstance(value, list):
        return [_stored(field.child, item) for item in value]
    if isinstance(field, serializers.Serializer) and isinstance(value, dict):
        out = {}
        for name, child in field.fields.items():
            if name in value:
                out[name] = _stored(child, value[name])
            elif child.default is not serializers.empty:
                out[name] = copy.deepcopy(child.get_default())
        return out
    return copy.deepcopy(value)


def _copy(value: Any) -> Any:
    """A copy of a stored JSON value, as stored: a list stays a list, and anything else (a row
    edited outside the import) is written as it is, for the validation to name."""
    return list(value) if isinstance(value, list) else copy.deepcopy(value)


def _pattern(pattern: TokenPattern) -> dict[str, Any]:
    unchecked = bool(pattern.unchecked_reason)
    rules: Rules = {
        "tokens": lambda: _copy(pattern.tokens),
        "group": lambda: pattern.group,
        "unchecked": lambda: unchecked,
        "unchecked_reason": lambda: pattern.unchecked_reason,
    }
    # A checked pattern is written as the hand-written files write it: tokens and group.
    return _by_schema(
        PatternSerializer(), rules, omit=lambda name, _: not unchecked and name.startswith("unchecked")
    )


def _setting(setting: Setting, serializer: SettingSerializer) -> dict[str, Any]:
    patterns = sorted(setting.patterns.all(), key=lambda p: (p.position, p.pk))
    rules: Rules = {
        "key": lambda: setting.key,
        "title": lambda: setting.title,
        "group1": lambda: _copy(setting.group1_texts),
        "group2": lambda: _copy(setting.group2_texts),
        "patterns": lambda: [_pattern(p) for p in patterns if not p.is_distractor],
        "distractor_patterns": lambda: [_pattern(p) for p in patterns if p.is_distractor],
        "target_description": lambda: setting.target_description,
        "check_keywords": lambda: _copy(setting.check_keywords),
        "provenance": lambda: _stored(serializer.fields["provenance"], setting.provenance),
    }
    return _by_schema(serializer, rules, omit=lambda name, value: name == "provenance" and value is None)


def _annotation(study: Study, settings: list[Setting]) -> dict[str, Any]:
    def per_setting(setting: Setting) -> dict[str, Any]:
        return _by_schema(
            AnnotationSettingSerializer(),
            {
                "tags": lambda: _copy(setting.annotation_tags),
                "surface_difference": lambda: setting.surface_difference,
            },
        )

    return _by_schema(
        AnnotationSerializer(),
        {
            "annotators_per_item": lambda: study.annotators_per_item,
            "reservation_minutes": lambda: study.annotation_reservation_minutes,
            "settings": lambda: {s.key: per_setting(s) for s in settings},
            "codebook": lambda: study.annotation_codebook,
        },
        # No codebook in the file is the default one: written back as it came, absent.
        omit=lambda name, value: name == "codebook" and not value,
    )


def study_file_data(study: Study) -> dict[str, Any]:
    """The study file of ``study`` as a mapping, fields in the schema's order.

    Main settings come in definition order (position), so the counterbalancing cells of the
    copy are the same. Optional values the import would fill in are written anyway, except a
    pattern's ``unchecked``/``unchecked_reason`` when it is checked and a ``provenance`` the
    setting does not have.

    Raises
    ------
    ValueError
        If the study has no training setting.
    ExportRuleMissing
        If a schema field has no export rule (a bug of this module).
    """
    settings = sorted(study.settings.all(), key=lambda s: (s.position, s.pk))
    training = next((s for s in settings if s.kind == Setting.Kind.TRAINING), None)
    if training is None:
        raise ValueError(f"Study '{study.slug}' has no training setting; a study file needs one.")
    mains = [s for s in settings if s.kind == Setting.Kind.MAIN]
    schema = StudyFileSerializer()
    rules: Rules = {
        "slug": lambda: study.slug,
        "title": lambda: study.title,
        "status": lambda: study.status,
        "language": lambda: study.language,
        "consent_text": lambda: study.consent_text,
        "instructions_text": lambda: study.instructions_text,
        "example_answer": lambda: study.example_answer,
        "pattern_intro_text": lambda: study.pattern_intro_text,
        "task_prompt": lambda: study.task_prompt,
        "completion_codes": lambda: _by_schema(
            CompletionCodesSerializer(),
            {
                "completed": lambda: study.completion_code,
                "failed_instruction_check": lambda: study.failed_check_code,
                "no_consent": lambda: study.no_consent_code,
            },
        ),
        "estimated_minutes": lambda: study.estimated_minutes,
        "maximum_minutes": lambda: study.maximum_minutes,
        "abandonment_timeout_minutes": lambda: study.abandonment_timeout_minutes,
        "target_sample_size": lambda: study.target_sample_size,
        "stop_at_target": lambda: study.stop_at_target,
        "min_answer_chars": lambda: study.min_answer_chars,
        "max_answer_chars": lambda: study.max_answer_chars,
        "short_time_flag_seconds": lambda: study.short_time_flag_seconds,
        # Stored as set; the defaults fill what a study file left out.
        "answer_flags": lambda: _stored(AnswerFlagsSerializer(), study.answer_flag_thresholds or {}),
        "failed_check_policy": lambda: study.failed_check_policy,
        "instruction_check_attempts": lambda: study.instruction_check_attempts,
        "holding_flags": lambda: _copy(study.holding_flags),
        "conditions": lambda: _copy(study.conditions),
        "training": lambda: _setting(training, TrainingSettingSerializer()),
        "settings": lambda: [_setting(s, SettingSerializer()) for s in mains],
        "survey": lambda: _stored(SurveySerializer(), study.survey),
        "annotation": lambda: _annotation(study, [training, *mains]),
        "pages": lambda: [dict(page) for page in study.pages or ()],
    }
    # A study without inserted pages exports as before (no empty ``pages: []``).
    return _by_schema(schema, rules, omit=lambda name, value: name == "pages" and not value)


class _Dumper(yaml.SafeDumper):
    """PyYAML's SafeDumper writing texts with line breaks as ``|`` blocks, as people write them."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML falls back to a quoted style when a block cannot hold the text exactly.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class _Texts(list):
    """A setting's group of texts: always one text a line, however short."""


def _represent_texts(dumper: yaml.SafeDumper, value: list) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", list(value), flow_style=False)


def _represent_list(dumper: yaml.SafeDumper, value: list) -> yaml.SequenceNode:
    # Short lists of words (tokens, tags, conditions, scales) on one line, as in the demo file.
    short = all(isinstance(v, (str, int)) and "\n" not in str(v) and len(str(v)) <= 40 for v in value)
    flow = bool(value) and short and sum(len(str(v)) + 2 for v in value) <= 90
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(_Texts, _represent_texts)


def _with_texts_marked(setting: dict[str, Any]) -> dict[str, Any]:
    return {k: _Texts(v) if k in ("group1", "group2") else v for k, v in setting.items()}


def study_file_text(data: dict[str, Any], *, fmt: str = "yaml") -> str:
    """``data`` (from :func:`study_file_data`) as the text of a ``.yaml`` or ``.json`` file.

    YAML (the default) opens with a comment naming the study and the way to import it; JSON is
    indented by 2. Both end with a newline and read back to ``data`` exactly. Raises
    ``ValueError`` for another ``fmt``.
    """
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt != "yaml":
        raise ValueError(f"Unknown study file format '{fmt}': use yaml or json.")
    header = (
        f"# Study file of '{data['slug']}', written by manage.py export_study.\n"
        "# Import it with: manage.py import_study FILE [--replace | --as-slug NEW-SLUG]\n"
    )
    data = {
        **data,
        "training": _with_texts_marked(data["training"]),
        "settings": [_with_texts_marked(s) for s in data["settings"]],
    }
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return header + body


def study_file_problems(data: dict[str, Any]) -> dict[str, list[str]]:
    """What ``import_study`` would refuse in ``data``, by path (empty when it imports).

    A stored study can hold what a file may not (a browser-built pattern whose group claim fails
    on the sampled texts, an admin edit), and the export writes the study as it is; this says so
    before anyone relies on the file.
    """
    try:
        validate_study_data(copy.deepcopy(data))
    except StudyFileError as exc:
        return exc.errors
    return {}
