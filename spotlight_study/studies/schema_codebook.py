"""Validation of the study file's ``annotation.codebook``, with DRF serializers so that errors
name the path (``annotation.codebook.fields[1].options``).

The codebook's meaning (types, matching of options, the default) is in :mod:`.codebook`; this
module only checks a file's codebook and returns it in stored form (options in canonical
spelling, defaults filled in).
"""
from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .codebook import (
    APPLIES_TO,
    FIELD_TYPES,
    OPTION_TYPES,
    SUCCESS_VALUES,
    TAGS_KEY,
    option_canonical,
    option_key,
    option_match,
)

#: Most fields in one codebook, and most options in one field.
MAX_FIELDS = 40
MAX_OPTIONS = 200


class CodebookFieldSerializer(serializers.Serializer):
    """One codebook field: ``key``, ``label``, ``help``, ``type``, its ``options`` or
    ``min``/``max``, ``required`` and ``applies_to``."""

    key = serializers.RegexField(
        r"^[a-z][a-z0-9_]{0,39}$", max_length=40,
        error_messages={"invalid": "Use lower-case letters, digits and _, starting with a letter."},
    )
    label = serializers.CharField(max_length=200)
    help = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")
    type = serializers.ChoiceField(
        choices=FIELD_TYPES,
        error_messages={"invalid_choice": "`{input}` is not a field type; use one of "
                        + ", ".join(FIELD_TYPES) + "."},
    )
    options = serializers.ListField(
        child=serializers.CharField(max_length=60), required=False, max_length=MAX_OPTIONS
    )
    min = serializers.FloatField(required=False)
    max = serializers.FloatField(required=False)
    required = serializers.BooleanField(required=False, default=True)
    applies_to = serializers.ChoiceField(choices=APPLIES_TO, required=False, default="both")

    def validate(self, attrs: dict) -> dict:
        kind = attrs["type"]
        options = [option_canonical(o) for o in attrs.get("options", [])]
        if kind in OPTION_TYPES:
            if not options:
                raise serializers.ValidationError({"options": f"A {kind} field needs options."})
            keys = [option_key(o) for o in options]
            dupes = sorted({o for o, k in zip(options, keys) if keys.count(k) > 1})
            if dupes:
                raise serializers.ValidationError(
                    {"options": f"Options repeat (case and accents aside): {', '.join(dupes)}."}
                )
        elif "options" in attrs:
            raise serializers.ValidationError({"options": f"A {kind} field has no options."})
        if kind == "number":
            for bound in ("min", "max"):
                if bound not in attrs:
                    raise serializers.ValidationError({bound: "A number field needs min and max."})
            if attrs["min"] >= attrs["max"]:
                raise serializers.ValidationError({"max": "Must be greater than min."})
        elif "min" in attrs or "max" in attrs:
            raise serializers.ValidationError({"min": f"Only a number field has min and max."})
        out = {"key": attrs["key"], "label": attrs["label"], "help": attrs["help"], "type": kind}
        if kind in OPTION_TYPES:
            out["options"] = options
        if kind == "number":
            out["min"], out["max"] = _plain_number(attrs["min"]), _plain_number(attrs["max"])
        return {**out, "required": attrs["required"], "applies_to": attrs["applies_to"]}


def _plain_number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


class CodebookSerializer(serializers.Serializer):
    """``annotation.codebook``: ``fields``, the ``outcome`` field and an optional ``success``
    mapping of the outcome's options to success or failure (for the proportion test)."""

    fields = CodebookFieldSerializer(many=True, min_length=1, max_length=MAX_FIELDS)
    outcome = serializers.CharField(max_length=40)
    success = serializers.DictField(
        child=serializers.ChoiceField(choices=SUCCESS_VALUES), required=False
    )

    def validate(self, attrs: dict) -> dict:
        fields = [dict(f) for f in attrs["fields"]]
        keys = [f["key"] for f in fields]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise serializers.ValidationError({"fields": f"Keys repeat: {', '.join(dupes)}."})
        outcome = next((f for f in fields if f["key"] == attrs["outcome"]), None)
        if outcome is None:
            raise serializers.ValidationError(
                {"outcome": f"`{attrs['outcome']}` names no field; fields: {', '.join(keys)}."}
            )
        if "success" in attrs and outcome["type"] not in ("choice", "ordinal"):
            raise serializers.ValidationError(
                {"success": f"Only a choice or ordinal outcome is mapped to success; "
                 f"`{outcome['key']}` is {outcome['type']}."}
            )
        if outcome["type"] in ("note", "multi_choice"):
            raise serializers.ValidationError(
                {"outcome": f"A {outcome['type']} field cannot be the outcome; choose a yes_no, "
                 "choice, ordinal or number field."}
            )
        out: dict[str, Any] = {"fields": fields, "outcome": attrs["outcome"]}
        if "success" in attrs:
            out["success"] = _success_clean(outcome, dict(attrs["success"]))
        return out


def _success_clean(outcome: dict, mapping: dict[str, str]) -> dict[str, str]:
    """The ``success`` mapping with options in canonical spelling; every option mapped once."""
    clean: dict[str, str] = {}
    for name, verdict in mapping.items():
        match = option_match(outcome["options"], name)
        if match is None:
            raise serializers.ValidationError(
                {"success": f"`{name}` is not an option of `{outcome['key']}`."}
            )
        clean[match] = verdict
    missing = [o for o in outcome["options"] if o not in clean]
    if missing:
        raise serializers.ValidationError(
            {"success": f"Map every option to success or failure; missing: {', '.join(missing)}."}
        )
    if "success" not in clean.values():
        raise serializers.ValidationError({"success": "Map at least one option to success."})
    return {o: clean[o] for o in outcome["options"]}


def codebook_file_errors(annotation: dict) -> dict[str, str]:
    """Errors, by path, of a validated ``annotation`` section's codebook against its settings.

    A setting's ``tags`` add options to the codebook's multi_choice field ``tags``, or to its
    only multi_choice field; with neither, they have nowhere to go.
    """
    codebook = annotation.get("codebook")
    tagged = [k for k, v in (annotation.get("settings") or {}).items() if v.get("tags")]
    if not codebook or not tagged or tags_field_key(codebook) is not None:
        return {}
    return {
        "annotation.codebook.fields": (
            "A setting's tags add options to a multi_choice field: name one `tags`, or keep one "
            f"multi_choice field (settings with tags: {', '.join(tagged)})."
        )
    }


def tags_field_key(codebook: dict | None) -> str | None:
    """The key of the field a setting's ``tags`` extend: ``tags`` (the default codebook's, or a
    declared multi_choice field so named), else a declared codebook's only multi_choice field."""
    if not codebook:
        return TAGS_KEY
    multi = [f["key"] for f in codebook["fields"] if f["type"] == "multi_choice"]
    if TAGS_KEY in multi:
        return TAGS_KEY
    return multi[0] if len(multi) == 1 else None
