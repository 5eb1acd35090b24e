"""Input serializers that read a request exactly as the published schema describes it.

DRF is lenient where the schema is not: it ignores a field it does not know (a researcher's
``"temprature": 0.2`` would leave the job at its default temperature without a word), and it
converts JSON values of another type (``true`` to ``1.0``, ``"5"`` to ``5``). The schema says
``additionalProperties: false`` (``api/schema.py``) and names each field's type, so
:class:`StrictInputSerializer` refuses both with a 400 naming the fields. Form and multipart
bodies (the study-file upload) carry only strings, so only unknown fields are refused there.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

UNKNOWN = "Not a field of this request."


def _expected_json_type(field: serializers.Field) -> tuple[tuple[type, ...], str] | None:
    """The JSON types ``field`` reads, as (Python types, a word for the message); None if any."""
    if isinstance(field, serializers.BooleanField):
        return (bool,), "true or false"
    if isinstance(field, serializers.IntegerField):
        return (int,), "a whole number"
    if isinstance(field, (serializers.FloatField, serializers.DecimalField)):
        return (int, float), "a number"
    if isinstance(field, (serializers.CharField, serializers.ChoiceField)):
        return (str,), "a string"
    if isinstance(field, (serializers.DictField, serializers.Serializer)):
        return (dict,), "an object"
    if isinstance(field, serializers.ListField):
        return (list,), "a list"
    return None


def json_type_problem(field: serializers.Field, value: Any) -> str | None:
    """Why ``value`` (decoded JSON) is not of the type ``field`` reads, or None if it is.

    ``null`` is left to DRF (``allow_null``). ``true``/``false`` are never numbers here,
    although Python's ``bool`` is a kind of ``int``.
    """
    expected = _expected_json_type(field)
    if value is None or expected is None:
        return None
    types, word = expected
    if isinstance(value, bool) and bool not in types:
        return f"Expected {word}, not true or false."
    if not isinstance(value, types):
        return f"Expected {word}."
    return None


class StrictInputSerializer(serializers.Serializer):
    """A serializer of a request body that refuses (400) fields it does not have and, in a JSON
    body, values of the wrong JSON type; otherwise DRF's validation."""

    def to_internal_value(self, data):
        """DRF's ``to_internal_value`` after the two checks above (``ValidationError`` by field)."""
        if isinstance(data, Mapping):
            writable = {name for name, field in self.fields.items() if not field.read_only}
            errors = {name: [UNKNOWN] for name in data if name not in writable}
            if not hasattr(data, "getlist"):  # a JSON object, not a form's QueryDict
                for name in writable & set(data):
                    problem = json_type_problem(self.fields[name], data[name])
                    if problem:
                        errors[name] = [problem]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)
