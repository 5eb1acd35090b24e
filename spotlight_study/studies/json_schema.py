"""The study file's JSON Schema (draft 2020-12), generated from its validation.

:func:`study_file_json_schema` walks the DRF serializers of :mod:`.schema` (and
:mod:`.schema_provenance`) — their fields, which are required, choices, lengths and bounds,
nested serializers, lists and mappings — and writes each as JSON Schema, so the schema is never
written by hand a second time. Every mapping of the file refuses keys it does not define
(``additionalProperties: false``), as the import does. Each serializer class becomes one entry of
``$defs``, named after the class.

What a JSON Schema cannot say stays with the import alone: the content checks of token patterns
(their tokens occur in the texts, the group claim holds), the rules across fields (maximum
minutes at least the estimate, distinct completion codes, distinct setting keys, a survey intro
per condition, patterns where a condition shows them, annotation settings that exist), the
reserved slug, a language code Django knows, a key given twice, and the size limits. A few
rules of the serializers' ``validate_<field>`` methods can be said, and :data:`REFINEMENTS` adds
them, from the same constants the methods use. The schema is in turn stricter in one way: where
the file wants text it wants a JSON string (the import also reads a number as text, e.g. a
completion code written ``12345`` in YAML; quote it for an editor).

The schema is served at ``/schema/study-file.json`` (:mod:`.views`) and committed as
``docs/study-file.schema.json`` (``manage.py study_file_schema --out docs/study-file.schema.json``;
a test fails when the committed copy is stale).

References: JSON Schema 2020-12 (https://json-schema.org/draft/2020-12/json-schema-core and
json-schema-validation); DRF's field arguments (https://www.django-rest-framework.org/api-guide/fields/).
"""
from __future__ import annotations

import json
from typing import Any, Callable

from rest_framework import serializers

from .models import Condition
from .quality_flags import known_flag_keys
from .schema import StudyFileSerializer
from .schema_provenance import _Number

DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: Where the platform serves the schema (a path of this server; docs/study-file.md).
SCHEMA_PATH = "/schema/study-file.json"

# DRF's SlugField: letters, digits, hyphens and underscores (its default, ASCII only).
_SLUG_PATTERN = r"^[-a-zA-Z0-9_]+$"

#: Rules of ``validate_<field>`` methods a JSON Schema can state, by (serializer, field); each
#: built from the constant the method checks against. Merged into the field's schema.
REFINEMENTS: dict[tuple[str, str], Callable[[], dict[str, Any]]] = {
    # StudyFileSerializer.validate_conditions: no repeats.
    ("StudyFileSerializer", "conditions"): lambda: {"uniqueItems": True},
    # StudyFileSerializer.validate_holding_flags: known flags, no repeats.
    ("StudyFileSerializer", "holding_flags"): lambda: {
        "uniqueItems": True, "items": {"type": "string", "enum": list(known_flag_keys())},
    },
    # SurveySerializer.validate_condition_intros: a key per known condition.
    ("SurveySerializer", "condition_intros"): lambda: {"propertyNames": {"enum": list(Condition.values)}},
}


def _nullable(schema: dict[str, Any], field: serializers.Field) -> dict[str, Any]:
    if not getattr(field, "allow_null", False):
        return schema
    if "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _bounds(field: serializers.Field, lower: str, upper: str) -> dict[str, Any]:
    out = {}
    for attr, key in (("min_value", lower), ("max_value", upper)):
        value = getattr(field, attr, None)
        if value is not None:
            out[key] = value
    return out


def _lengths(field: Any, lower: str, upper: str) -> dict[str, Any]:
    out = {}
    for attr, key in (("min_length", lower), ("max_length", upper)):
        value = getattr(field, attr, None)
        if value is not None:
            out[key] = value
    return out


def _default(field: serializers.Field) -> dict[str, Any]:
    default = field.default
    if default is serializers.empty:
        return {}
    value = default() if callable(default) else default
    try:
        json.dumps(value)
    except TypeError:
        return {}
    return {"default": value}


class _Walker:
    """One walk of the serializer tree; ``defs`` collects a schema per serializer class."""

    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    def serializer(self, serializer: serializers.Serializer) -> dict[str, Any]:
        """``{"$ref": "#/$defs/<Class>"}``, the class's schema added to ``defs`` once."""
        name = type(serializer).__name__
        if name not in self.defs:
            self.defs[name] = {}  # a placeholder: a recursive schema would stop here
            properties, required = {}, []
            for field_name, field in serializer.fields.items():
                schema = self.field(field)
                refine = REFINEMENTS.get((name, field_name))
                if refine is not None:
                    schema = {**schema, **refine()}
                properties[field_name] = schema
                if field.required:
                    required.append(field_name)
            entry: dict[str, Any] = {"type": "object"}
            doc = (type(serializer).__doc__ or "").strip()
            if doc:
                entry["description"] = " ".join(doc.split("\n\n")[0].split())
            entry["properties"] = properties
            if required:
                entry["required"] = required
            entry["additionalProperties"] = False
            self.defs[name] = entry
        return {"$ref": f"#/$defs/{name}"}

    def field(self, field: serializers.Field) -> dict[str, Any]:
        """The schema of one field, with its default and ``null`` where the field allows them."""
        if isinstance(field, serializers.ListSerializer):
            schema = {"type": "array", "items": self.field(field.child),
                      **_lengths(field, "minItems", "maxItems")}
        elif isinstance(field, serializers.Serializer):
            schema = self.serializer(field)
        elif hasattr(field, "variants"):
            # A value whose ``kind`` picks its serializer (a page, studies/pages.py).
            schema = {"oneOf": [self.serializer(cls()) for cls in field.variants.values()]}
        elif isinstance(field, serializers.ListField):
            schema = {"type": "array", "items": self.field(field.child),
                      **_lengths(field, "minItems", "maxItems")}
        elif isinstance(field, serializers.DictField):
            schema = {"type": "object", "additionalProperties": self.field(field.child)}
        elif isinstance(field, serializers.ChoiceField):
            schema = {"enum": list(field.choices)}
        elif isinstance(field, serializers.BooleanField):
            schema = {"type": "boolean"}
        elif isinstance(field, serializers.IntegerField):
            schema = {"type": "integer", **_bounds(field, "minimum", "maximum")}
        elif isinstance(field, serializers.FloatField):
            schema = {"type": "number", **_bounds(field, "minimum", "maximum")}
        elif isinstance(field, serializers.CharField):
            schema = {"type": "string"}
            if not field.allow_blank:
                schema["minLength"] = 1
            if field.max_length is not None:
                schema["maxLength"] = field.max_length
            if isinstance(field, serializers.SlugField):
                schema["pattern"] = _SLUG_PATTERN
        elif isinstance(field, _Number):
            schema = {"type": "number"}
        else:
            raise TypeError(
                f"No JSON Schema rule for {type(field).__name__} ({field.field_name}); add one in "
                "spotlight_study/studies/json_schema.py."
            )
        schema = _nullable(schema, field)
        if field.parent is not None and not isinstance(field.parent, (serializers.ListSerializer,
                                                                      serializers.ListField,
                                                                      serializers.DictField)):
            schema = {**schema, **_default(field)}
        return schema


def study_file_json_schema() -> dict[str, Any]:
    """The study file's JSON Schema (draft 2020-12) as a dict, built from :mod:`.schema`.

    Deterministic: the same code gives the same schema, keys in the serializers' order.
    Raises ``TypeError`` for a serializer field type without a rule here (add one).
    """
    walker = _Walker()
    root = walker.serializer(StudyFileSerializer())
    top = walker.defs.pop("StudyFileSerializer")
    assert root == {"$ref": "#/$defs/StudyFileSerializer"}
    return {
        "$schema": DIALECT,
        "title": "Spotlight study file",
        "description": (
            "A study of the Spotlight platform, as `manage.py import_study` reads it (YAML or "
            "JSON). Generated from the import's validation (spotlight_study/studies/schema.py) by "
            "`manage.py study_file_schema`; the import also checks what a JSON Schema cannot "
            "(docs/study-file.md)."
        ),
        **{k: v for k, v in top.items() if k != "description"},
        "$defs": walker.defs,
    }


def study_file_json_schema_text() -> str:
    """:func:`study_file_json_schema` as the text of ``docs/study-file.schema.json``: indented by
    2, non-ASCII kept, one newline at the end."""
    return json.dumps(study_file_json_schema(), indent=2, ensure_ascii=False) + "\n"
