"""The machine coder under a study's declared codebook: its questions, its JSON schema and the
check of its reply, built from the item's codebook fields.

No database access, as :mod:`.llm`. The fields are those the annotator page asks on the item
(:func:`~.codebook_labels.item_fields`: the study file's fields that apply to the item's kind,
the setting's own options added), built from the study definition only: nothing of the
participant, the condition or the pattern box reaches them. ``note`` fields are free text that
no one compares, so the machine is never asked for them.

A reply's values are checked by :func:`spotlight_study.studies.codebook.values_clean`, the one
validator the label API, the annotator page and ``import_labels`` use: an option outside the
codebook, a number out of range or a missing required value makes the reply invalid (retried
once, then a missing label), and options are stored in their canonical spelling.
"""

from __future__ import annotations

from typing import Any

from spotlight_study.studies import codebook as cb

from .errors import InvalidReply

__all__ = ["asked_fields", "codebook_block", "field_question", "property_schema", "values_check"]

_TYPE_WORDS = {
    "yes_no": "true or false",
    "choice": "exactly one of the options",
    "ordinal": "exactly one of the options, which are ordered from lowest to highest",
    "multi_choice": "a list of any of the options, possibly empty",
    "number": "a number",
}


def asked_fields(item_fields: list[dict], requested: tuple[str, ...]) -> tuple[dict, ...]:
    """The codebook fields the machine is asked on one item: ``item_fields`` (as the annotator
    page gets them) that are compared (not ``note``) and among ``requested`` keys, in codebook
    order."""
    return tuple(f for f in item_fields if f["type"] != "note" and f["key"] in requested)


def property_schema(field: dict) -> dict:
    """One field's property in the strict JSON schema of the reply.

    yes_no: boolean; choice and ordinal: a string from the options; multi_choice: an array of
    options (an empty option list allows only ``[]``); number: a number within ``min``/``max``.
    A field that is not required may also be ``null`` (strict structured outputs require every
    property, so an optional one is made nullable instead).
    """
    kind = field["type"]
    optional = not field.get("required", True)
    options = list(field.get("options") or [])
    if kind == "yes_no":
        prop: dict[str, Any] = {"type": "boolean"}
    elif kind in ("choice", "ordinal"):
        prop = {"type": "string", "enum": options}
    elif kind == "multi_choice":
        prop = {"type": "array", "items": {"type": "string", "enum": options}}
        if not options:
            prop = {"type": "array", "items": {"type": "string"}, "maxItems": 0}
        return prop  # an empty list is its "nothing", never null
    else:
        prop = {"type": "number"}
        if field.get("min") is not None:
            prop["minimum"] = field["min"]
        if field.get("max") is not None:
            prop["maximum"] = field["max"]
    if optional:
        prop["type"] = [prop["type"], "null"]
        if "enum" in prop:
            prop["enum"] = [*prop["enum"], None]
    return prop


def field_question(field: dict) -> str:
    """One line of the prompt's questions: key, the researcher's label and help, what to give."""
    text = f"- {field['key']}: {field['label']}"
    if field.get("help"):
        text += f" ({field['help']})"
    text += f". Give {_TYPE_WORDS[field['type']]}"
    if field["type"] in cb.OPTION_TYPES:
        text += ": " + (" | ".join(field.get("options") or []) or "(none)")
    if field["type"] == "number" and (field.get("min") is not None or field.get("max") is not None):
        text += f" from {field.get('min')} to {field.get('max')}"
    if not field.get("required", True) and field["type"] != "multi_choice":
        text += "; null if it does not apply"
    return text + "."


def codebook_block(fields: tuple[dict, ...]) -> str:
    """The prompt's codebook section: each field's question, in codebook order."""
    return "CODEBOOK FIELDS:\n" + ("\n".join(field_question(f) for f in fields) or "(none)")


def values_check(data: dict, fields: tuple[dict, ...]) -> dict:
    """The codebook values of a parsed reply, checked and in stored form.

    Parameters
    ----------
    data : dict
        The reply's JSON object (``exclusion``, when asked, is checked by :mod:`.llm`).
    fields : tuple of dict
        :func:`asked_fields` of the item.

    Returns
    -------
    dict
        ``{key: value}`` for every field with a value, in codebook order; an unticked
        multi_choice field is ``[]``.

    Raises
    ------
    InvalidReply
        Naming each field the codebook refuses (an option it lacks, a number out of range, a
        required value missing), with the validator's message.
    """
    # The item's fields already hold the setting's options and apply to its kind.
    book = {"fields": [{**f, "applies_to": "both"} for f in fields]}
    sent = {f["key"]: data.get(f["key"]) for f in fields}
    try:
        return cb.values_clean(book, sent)
    except cb.LabelValueError as exc:
        raise InvalidReply(
            "not valid under the codebook: " + "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
        ) from None
