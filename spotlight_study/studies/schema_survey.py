"""The survey items of a study file, with their types (docs/study-file.md, "Survey item types").

An item of ``survey.condition_items`` (asked once per condition the participant saw) or
``survey.background_items`` (asked once) is ``{key, text}`` and, optionally, ``type`` with the
keys that type needs:

- no ``type`` (or ``scale``): today's 5-point item, on the survey's ``likert_scale``
  (condition items) or ``frequency_scale`` (background items);
- ``likert``: ``labels``, 2 to 11 of them, one per point, lowest first, in the researcher's words;
- ``choice`` and ``multi_choice``: ``options``;
- ``number``: ``min`` and ``max`` (inclusive), and optionally ``test`` (``mann_whitney``, the
  default, or ``welch_t``): the test the analysis compares the conditions with;
- ``text``: free text, exported, never tested.

Optional keys are left out of the cleaned data when the file leaves them out, so a study file
of today's keys is stored, exported and hashed exactly as before.
"""
from __future__ import annotations

import unicodedata

from rest_framework import serializers

#: The item types; ``scale`` is the default (an item without ``type``).
SURVEY_ITEM_TYPES = ("scale", "likert", "choice", "multi_choice", "number", "text")
DEFAULT_ITEM_TYPE = "scale"
#: Points of a ``likert`` item.
LIKERT_LABELS_MIN, LIKERT_LABELS_MAX = 2, 11
#: Options of a ``choice`` or ``multi_choice`` item.
OPTIONS_MAX = 30
#: Tests a ``number`` item may name (analysis/survey_measures.py); the first is the default.
NUMBER_TESTS = ("mann_whitney", "welch_t")
#: Longest free-text answer to a ``text`` item, in characters.
TEXT_ANSWER_MAX_CHARS = 2000
#: Separator of the chosen options of a ``multi_choice`` item in ``survey.csv``; options may not
#: contain it.
MULTI_CHOICE_SEPARATOR = ";"

# Which optional keys belong to which types (anything else is refused, naming the key).
_KEYS_OF_TYPE = {
    "scale": set(),
    "likert": {"labels"},
    "choice": {"options"},
    "multi_choice": {"options"},
    "number": {"min", "max", "test"},
    "text": set(),
}
_TYPED_KEYS = ("labels", "options", "min", "max", "test")


def item_type(item) -> str:
    """The type of a survey item of the cleaned study file (``scale`` when it names none)."""
    return item.get("type") or DEFAULT_ITEM_TYPE


def option_canonical(value: str) -> str:
    """An option or label in the form it is compared in: Unicode NFC, inner whitespace
    collapsed, case folded (so ``Länge`` and ``länge`` are one option)."""
    return " ".join(unicodedata.normalize("NFC", value).split()).casefold()


def _distinct(values: list[str], what: str) -> None:
    seen: dict[str, str] = {}
    for value in values:
        canonical = option_canonical(value)
        if canonical in seen:
            raise serializers.ValidationError(f"{what} repeat: `{seen[canonical]}` and `{value}`.")
        seen[canonical] = value


class _Words(serializers.ListField):
    """A list of the researcher's words (labels or options): NFC, outer whitespace stripped."""

    child = serializers.CharField(max_length=200, trim_whitespace=True)

    def to_internal_value(self, data):
        return [unicodedata.normalize("NFC", v) for v in super().to_internal_value(data)]


class SurveyItemSerializer(serializers.Serializer):
    """A survey item: ``key`` (a slug used in the export), the ``text`` shown, and optionally its
    ``type`` with that type's keys (module docstring).

    Raises a validation error naming the key for an unknown type, a key that belongs to
    another type, a missing or empty ``labels``/``options``, ``labels`` outside 2..11, repeated
    labels or options (compared with :func:`option_canonical`), a ``multi_choice`` option
    containing ``;``, or ``min`` greater than ``max``.
    """

    key = serializers.SlugField(max_length=50)
    text = serializers.CharField(max_length=500)
    type = serializers.ChoiceField(
        choices=SURVEY_ITEM_TYPES, required=False,
        error_messages={"invalid_choice": "`{input}` is not a survey item type: use one of "
                        + ", ".join(SURVEY_ITEM_TYPES) + " (docs/study-file.md)."},
    )
    labels = _Words(required=False, allow_empty=True)
    options = _Words(required=False, allow_empty=True, max_length=OPTIONS_MAX)
    min = serializers.FloatField(required=False)
    max = serializers.FloatField(required=False)
    test = serializers.ChoiceField(choices=NUMBER_TESTS, required=False)

    def validate(self, attrs: dict) -> dict:
        kind = item_type(attrs)
        errors: dict[str, str] = {}
        for name in _TYPED_KEYS:
            if name in attrs and name not in _KEYS_OF_TYPE[kind]:
                owners = [t for t, keys in _KEYS_OF_TYPE.items() if name in keys]
                errors[name] = f"Only {' and '.join(owners)} items have `{name}`; this item is {kind}."
        for name in sorted(_KEYS_OF_TYPE[kind] - {"test"}):
            if name not in attrs:
                errors[name] = f"A {kind} item needs `{name}`."
        if kind == "likert" and "labels" in attrs:
            n = len(attrs["labels"])
            if not LIKERT_LABELS_MIN <= n <= LIKERT_LABELS_MAX:
                errors["labels"] = (f"A likert item needs {LIKERT_LABELS_MIN} to {LIKERT_LABELS_MAX} "
                                    f"labels, one per point; this one has {n}.")
        if kind in ("choice", "multi_choice") and "options" in attrs:
            least = 2 if kind == "choice" else 1
            if len(attrs["options"]) < least:
                errors["options"] = (f"A {kind} item needs at least {least} option(s); "
                                     f"this one has {len(attrs['options'])}.")
            elif kind == "multi_choice" and any(MULTI_CHOICE_SEPARATOR in o for o in attrs["options"]):
                errors["options"] = (f"An option of a multi_choice item cannot contain "
                                     f"`{MULTI_CHOICE_SEPARATOR}`: it separates the chosen options "
                                     "in the export.")
        for name in ("labels", "options"):
            if name in attrs and name not in errors:
                try:
                    _distinct(attrs[name], name.capitalize())
                except serializers.ValidationError as exc:
                    errors[name] = exc.detail[0]
        if kind == "number" and {"min", "max"} <= attrs.keys() and attrs["min"] > attrs["max"]:
            errors["min"] = f"`min` ({attrs['min']:g}) is greater than `max` ({attrs['max']:g})."
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


def typed_items(survey) -> list[dict]:
    """The items of a cleaned survey definition that name a type other than ``scale``, each
    ``{"key", "text", "type", "where": "condition" | "background", ...its type's keys}``."""
    out = []
    for where, field in (("condition", "condition_items"), ("background", "background_items")):
        for item in survey.get(field, ()) or ():
            if item_type(item) != DEFAULT_ITEM_TYPE:
                out.append({**dict(item), "type": item_type(item), "where": where})
    return out
