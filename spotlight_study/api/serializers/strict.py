"""Input serializers that read a request exactly as the published schema describes it.

DRF is lenient where the schema is not: it ignores a field it does not know (a researcher's
``"temprature": 0.2`` would leave the job at its default temperature without a word), and it
converts JSON values of another type (``true`` to ``1.0``, ``"5"`` to ``5``). The schema says
``additionalProperties: false`` (``api/schema.py``) and names each field's type, so
:class:`StrictInputSerializer` refuses both with a 400 naming the fields. Form and multipart
bodies (the study-file upload) carry only strings, so only unknown fields are refused there.

DRF also counts a text's ``max_length`` after trimming its white space, while the schema's
``maxLength`` counts the text as sent: a title of 200 characters after a leading space would
pass here and break the schema. :func:`too_long_problem` counts the text as sent.
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


def too_long_problem(field: serializers.Field, value: Any) -> str | None:
    """Why the text ``value`` is longer than ``field``'s ``max_length`` counted in characters
    (code points) as sent, before DRF trims its white space; None if it is not, or if either
    is not a text."""
    limit = getattr(field, "max_length", None)
    if not isinstance(field, serializers.CharField) or limit is None or not isinstance(value, str):
        return None
    if len(value) > limit:
        return f"Ensure this field has no more than {limit} characters."
    return None


def raw_length_errors(fields: Mapping[str, serializers.Field], data: Mapping) -> dict[str, list[str]]:
    """:func:`too_long_problem` for each field of ``fields`` that ``data`` (a decoded JSON object
    or a form's or query string's ``QueryDict``, of which the last value counts, as in DRF) holds."""
    errors = {}
    for name in set(fields) & set(data):
        problem = too_long_problem(fields[name], data.get(name))
        if problem:
            errors[name] = [problem]
    return errors


class StrictInputSerializer(serializers.Serializer):
    """A serializer of a request body that refuses (400) fields it does not have, texts longer
    than their limit as sent and, in a JSON body, values of the wrong JSON type; otherwise DRF's
    validation."""

    def to_internal_value(self, data):
        """DRF's ``to_internal_value`` after the checks above (``ValidationError`` by field)."""
        if isinstance(data, Mapping):
            writable = {name: field for name, field in self.fields.items() if not field.read_only}
            errors = {name: [UNKNOWN] for name in data if name not in writable}
            errors.update(raw_length_errors(writable, data))
            if not hasattr(data, "getlist"):  # a JSON object, not a form's QueryDict
                for name in set(writable) & set(data):
                    problem = json_type_problem(writable[name], data[name])
                    if problem:
                        errors[name] = [problem]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)
