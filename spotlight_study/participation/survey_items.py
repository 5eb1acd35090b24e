"""The survey's items with types on the participant side: their form fields, the check of the
answers before they are saved, the values a typed draft may hold, and the pilot's answers.

The types and their keys are the study file's (:mod:`spotlight_study.studies.schema_survey`);
an item without a type is today's 5-point item and never comes here, so the reference survey
is asked, checked and stored as before.

Field names follow :class:`~.forms.SurveyForm`: ``c__<condition>__<item>`` and ``b__<item>``;
a ``multi_choice`` item has one checkbox field per option, ``<name>__o<n>`` (n = 1.. in option
order), so that every field holds one value (drafts keep one value per field).
"""
from __future__ import annotations

import math
import random

from django import forms
from django.utils.formats import number_format
from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy

from spotlight_study.studies.schema_survey import (
    DEFAULT_ITEM_TYPE,
    TEXT_ANSWER_MAX_CHARS,
    item_type,
)

from .errors import InvalidAnswer

#: Longest text a number field's draft may hold.
NUMBER_DRAFT_MAX_CHARS = 40


def option_field_name(name: str, n: int) -> str:
    """The checkbox field of the ``n``-th option (1-based) of the multi_choice item ``name``."""
    return f"{name}__o{n}"


class _NumberField(forms.FloatField):
    """A number in ``[min, max]``; a decimal comma is read as a point (``3,5`` is 3.5), as
    German, Spanish and French participants write it when the browser sends the text as typed."""

    def to_python(self, value):
        if isinstance(value, str):
            value = value.strip().replace(",", ".")
        number = super().to_python(value)
        if number is not None and not math.isfinite(number):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return number


def _plain_number(value: float) -> str:
    """``value`` as the page's language writes it, without ``,0`` for a whole number."""
    return number_format(int(value) if float(value).is_integer() else value)


def _bounds_text(low: float, high: float) -> str:
    return gettext("Please enter a number from %(min)s to %(max)s.") % {
        "min": _plain_number(low), "max": _plain_number(high)}


# Lazy: the fields are built once and shared, and the message is rendered in the language of
# the page that shows it.
_bounds_message = lazy(_bounds_text, str)


def question_fields(item, name: str) -> dict[str, forms.Field]:
    """The form field(s) of the typed survey ``item`` asked as ``name`` (``{field name: field}``).

    ``likert`` and ``choice``: one ``ChoiceField`` (values ``"1"``.. in label/option order);
    ``multi_choice``: one optional ``BooleanField`` per option (:func:`option_field_name`);
    ``number``: a number in ``[min, max]``; ``text``: an optional text of at most
    :data:`~spotlight_study.studies.schema_survey.TEXT_ANSWER_MAX_CHARS` characters. The fields
    are shared between forms (``forms._survey_questions``): nothing may change them after this.
    """
    kind = item_type(item)
    if kind in ("likert", "choice"):
        words = item["labels"] if kind == "likert" else item["options"]
        return {name: forms.ChoiceField(
            label=item["text"], choices=[(str(i + 1), w) for i, w in enumerate(words)],
            widget=forms.RadioSelect,
            error_messages={"required": gettext_lazy("Please choose one option.")},
        )}
    if kind == "multi_choice":
        return {option_field_name(name, i + 1): forms.BooleanField(label=option, required=False)
                for i, option in enumerate(item["options"])}
    if kind == "number":
        bounds = _bounds_message(item["min"], item["max"])
        return {name: _NumberField(
            label=item["text"], min_value=item["min"], max_value=item["max"],
            error_messages={"required": gettext_lazy("Please enter a number."),
                            "invalid": gettext_lazy("Please enter a number."),
                            "min_value": bounds, "max_value": bounds},
        )}
    if kind == "text":
        return {name: forms.CharField(label=item["text"], required=False,
                                      max_length=TEXT_ANSWER_MAX_CHARS, strip=True)}
    raise ValueError(f"Not a typed survey item: {kind}")


def question_kind(item) -> str:
    """How the survey template writes the question: ``radio``, ``checkbox``, ``number`` or
    ``text``."""
    return {"likert": "radio", "choice": "radio", "multi_choice": "checkbox", "number": "number",
            "text": "text", DEFAULT_ITEM_TYPE: "radio"}[item_type(item)]


def cleaned_answer(item, name: str, cleaned: dict):
    """The answer to ``item`` (asked as ``name``) from a valid form's ``cleaned_data``: the
    point (int) for a scale or likert item, the option index (int, 1-based) for choice, the
    list of checked option indices for multi_choice, a float for number, a str for text."""
    kind = item_type(item)
    if kind == "multi_choice":
        return [i + 1 for i in range(len(item["options"]))
                if cleaned.get(option_field_name(name, i + 1))]
    value = cleaned.get(name)
    if kind in (DEFAULT_ITEM_TYPE, "likert", "choice"):
        return int(value)
    if kind == "number":
        return float(value)
    return value or ""


def answer_row(item, value) -> dict:
    """``{"response", "value"}`` of a :class:`~.models.SurveyAnswer` for the answer ``value``
    to ``item`` (as :func:`cleaned_answer` gives it).

    Raises
    ------
    InvalidAnswer
        If the value does not fit the item (a point or option outside it, a number outside
        ``[min, max]`` or not finite, a text too long), so that nothing is saved.
    """
    kind = item_type(item)
    invalid = InvalidAnswer(gettext("Please answer every question."))
    if kind == DEFAULT_ITEM_TYPE:
        if not 1 <= int(value) <= 5:
            raise InvalidAnswer(gettext("Every answer must be on the 1-5 scale."))
        return {"response": int(value), "value": None}
    if kind == "likert":
        points = len(item["labels"])
        if not isinstance(value, int) or not 1 <= value <= points:
            raise invalid
        return {"response": value, "value": None}
    if kind == "choice":
        if not isinstance(value, int) or not 1 <= value <= len(item["options"]):
            raise invalid
        return {"response": None, "value": item["options"][value - 1]}
    if kind == "multi_choice":
        n = len(item["options"])
        if not isinstance(value, list) or any(not isinstance(i, int) or not 1 <= i <= n for i in value):
            raise invalid
        return {"response": None, "value": [item["options"][i - 1] for i in sorted(set(value))]}
    if kind == "number":
        if not isinstance(value, (int, float)) or not math.isfinite(value) or not (
                item["min"] <= value <= item["max"]):
            raise invalid
        return {"response": None, "value": value}
    if not isinstance(value, str) or len(value) > TEXT_ANSWER_MAX_CHARS:
        raise invalid
    return {"response": None, "value": value}


class _FreeText:
    """The values a typed draft of a number or text field may hold: any text up to a length."""

    def __init__(self, max_chars: int):
        self.max_chars = max_chars

    def __contains__(self, value) -> bool:
        return isinstance(value, str) and len(value.replace("\r\n", "\n")) <= self.max_chars


def draft_values(item, name: str):
    """``{field name: the values its typed draft may hold}`` for the typed ``item`` asked as
    ``name`` (a set of choice values, or any text up to a length for number and text)."""
    kind = item_type(item)
    if kind in ("likert", "choice"):
        words = item["labels"] if kind == "likert" else item["options"]
        return {name: frozenset(str(i + 1) for i in range(len(words)))}
    if kind == "multi_choice":
        # A checked box sends "on" (a browser's default for a checkbox without a value).
        return {option_field_name(name, i + 1): frozenset({"on"}) for i in range(len(item["options"]))}
    return {name: _FreeText(NUMBER_DRAFT_MAX_CHARS if kind == "number" else TEXT_ANSWER_MAX_CHARS)}


def pilot_answer(item, rng: random.Random, *, shift: int = 0):
    """A plausible answer to the typed ``item`` for a simulated pilot participant, drawn with
    ``rng``; ``shift`` (0 or 1) leans scale answers up and choices towards the first option,
    as the pilot does for the conditions with a pattern box."""
    kind = item_type(item)
    if kind == "likert":
        points = len(item["labels"])
        return min(points, max(1, rng.randint(1, points) + shift))
    if kind == "choice":
        n = len(item["options"])
        return 1 if shift and rng.random() < 0.5 else rng.randint(1, n)
    if kind == "multi_choice":
        return [i + 1 for i in range(len(item["options"])) if rng.random() < 0.5]
    if kind == "number":
        low, high = item["min"], item["max"]
        return min(high, max(low, round(rng.uniform(low, high), 1)))
    return ""


def answer_rows(survey, responses: dict[tuple[str, str], object]) -> dict[tuple[str, str], dict]:
    """``{(condition or "background", item key): {"response", "value"}}`` of the survey's
    answers ``responses`` (keys as :func:`~.services.survey_item_keys` gives them).

    Raises
    ------
    InvalidAnswer
        If an answer names an item the survey does not have or does not fit its item
        (:func:`answer_row`); nothing is saved then.
    """
    items = {("c", i["key"]): i for i in survey.get("condition_items", ())}
    items.update({("b", i["key"]): i for i in survey.get("background_items", ())})
    out = {}
    for (condition, key), value in responses.items():
        item = items.get(("b" if condition == "background" else "c", key))
        if item is None:
            raise InvalidAnswer(gettext("Please answer every question."))
        out[(condition, key)] = answer_row(item, value)
    return out


def draft_choices(survey, conditions) -> dict[str, object]:
    """``{field name: the values its typed draft may hold}`` for every question of ``survey``
    over ``conditions``: a 5-point item's scale values, or a typed item's :func:`draft_values`."""
    scales = {"c": frozenset(str(i + 1) for i in range(len(survey.get("likert_scale", ())))),
              "b": frozenset(str(i + 1) for i in range(len(survey.get("frequency_scale", ()))))}
    asked = [(f"c__{c}__{item['key']}", item, "c") for c in conditions
             for item in survey.get("condition_items", ())]
    asked += [(f"b__{item['key']}", item, "b") for item in survey.get("background_items", ())]
    out: dict[str, object] = {}
    for name, item, where in asked:
        if item_type(item) == DEFAULT_ITEM_TYPE:
            out[name] = scales[where]
        else:
            out.update(draft_values(item, name))
    return out
