"""The annotation codebook: its field types, the default codebook and the cleaning of one label.

Pure Python (no Django), so that the study-file schema, the annotation app and the exports share
one reading of a codebook. A codebook is plain data, as stored in ``Study.annotation_codebook``::

    {"fields": [{"key": "erkannt", "label": "Unterschied erkannt", "help": "",
                 "type": "ordinal", "options": ["nein", "teilweise", "ja"],
                 "required": True, "applies_to": "both"}, ...],
     "outcome": "erkannt",
     "success": {"ja": "success", "teilweise": "failure", "nein": "failure"}}

An empty mapping stands for :data:`DEFAULT_CODEBOOK`, today's fixed label schema (identified,
surface difference, no difference, tags), whose values live in the label's own columns; a
declared codebook's values live in the label's ``values`` mapping. The exclusion and its note
are platform fields of every label, never codebook fields.

Option matching ignores case and Unicode form: :func:`option_key` is NFC, then
``str.casefold`` (so ``ß`` matches ``SS`` and ``Ä`` matches ``ä``), inner whitespace collapsed.
Options are stored in their canonical spelling: the one the study file gives, NFC-normalized.
"""
from __future__ import annotations

import math
import unicodedata
from typing import Any

#: The field types a codebook may use, with what a value is.
FIELD_TYPES = ("yes_no", "choice", "multi_choice", "ordinal", "number", "note")
#: Types that carry an option list.
OPTION_TYPES = ("choice", "multi_choice", "ordinal")
#: Where a field is asked: on training items, main items, or both.
APPLIES_TO = ("training", "main", "both")
#: The two outcomes of a ``success`` mapping.
SUCCESS_VALUES = ("success", "failure")
#: Longest free-text note (characters), as the exclusion note.
NOTE_MAX_CHARS = 1000
#: The multi_choice field a setting's ``tags`` add options to, when the codebook has it.
TAGS_KEY = "tags"

#: Today's fixed label schema as a codebook; a study file without ``annotation.codebook`` gets it.
DEFAULT_CODEBOOK: dict[str, Any] = {
    "fields": [
        {"key": "identified", "label": "Identified the target difference", "help": "",
         "type": "yes_no", "required": True, "applies_to": "both"},
        {"key": "surface_difference", "label": "Named the surface difference", "help": "",
         "type": "yes_no", "required": True, "applies_to": "both"},
        {"key": "no_difference", "label": "Claims there is no difference", "help": "",
         "type": "yes_no", "required": True, "applies_to": "both"},
        {"key": "tags", "label": "Other differences reported", "help": "",
         "type": "multi_choice", "options": [], "required": False, "applies_to": "both"},
    ],
    "outcome": "identified",
}


def option_canonical(value: str) -> str:
    """An option as stored: NFC-normalized, stripped, inner whitespace collapsed (case kept)."""
    return " ".join(unicodedata.normalize("NFC", value).split())


def normalize_tag(value: str) -> str:
    """A setting's tag in canonical form: NFC, stripped, lower case, inner whitespace collapsed.

    Tags of the study file's settings and those annotators add are stored so; matching a sent
    tag still goes through :func:`option_key`, which also folds ``ß`` and the like.
    """
    return " ".join(unicodedata.normalize("NFC", value).split()).lower()


def option_key(value: str) -> str:
    """The matching key of an option: NFC, casefolded, NFC again, whitespace collapsed.

    ``option_key("Erwähnt Geschlecht") == option_key("ERWA\\u0308HNT  geschlecht")``. The second
    NFC is needed because casefolding can leave a decomposed sequence (Unicode standard,
    section 3.13, "Default Caseless Matching").
    """
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFC", value).casefold())
    return " ".join(folded.split())


def option_match(options: list[str], value: str) -> str | None:
    """The canonical option ``value`` names (ignoring case and Unicode form), or ``None``."""
    wanted = option_key(value)
    return next((o for o in options if option_key(o) == wanted), None)


def is_default(codebook: dict | None) -> bool:
    """Whether ``codebook`` (as stored) is the default one: empty or missing."""
    return not codebook


def resolved(codebook: dict | None) -> dict[str, Any]:
    """The codebook in force: the stored one, or :data:`DEFAULT_CODEBOOK` when none is declared."""
    return DEFAULT_CODEBOOK if is_default(codebook) else codebook


def field_by_key(codebook: dict | None, key: str) -> dict | None:
    """The field named ``key`` of the codebook in force, or ``None``."""
    return next((f for f in resolved(codebook)["fields"] if f["key"] == key), None)


def compared_fields(codebook: dict | None) -> list[dict]:
    """The fields compared between annotators: every field except ``note`` fields."""
    return [f for f in resolved(codebook)["fields"] if f["type"] != "note"]


def applies(field: dict, kind: str) -> bool:
    """Whether ``field`` is asked on an item of the setting kind ``kind`` (training or main)."""
    return field.get("applies_to", "both") in ("both", kind)


def field_options(field: dict, setting_options: dict[str, list[str]] | None = None) -> list[str]:
    """A field's options, then the options a setting adds to it (``setting_options[key]``)."""
    base = list(field.get("options") or [])
    extra = (setting_options or {}).get(field["key"], [])
    return base + [o for o in extra if option_match(base, o) is None]


class LabelValueError(ValueError):
    """A label's values break the codebook; ``errors`` maps each bad field key to a message."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


_TRUE = {"1", "true", "yes", "y", "ja", "j"}
_FALSE = {"0", "false", "no", "n", "nein"}


def _yes_no(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().casefold() in _TRUE | _FALSE:
        return value.strip().casefold() in _TRUE
    raise ValueError("Must be yes or no (true/false).")


def _one_option(options: list[str], value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"Must be one of: {', '.join(options)}.")
    match = option_match(options, value)
    if match is None:
        raise ValueError(f"'{value}' is not an option; use one of: {', '.join(options)}.")
    return match


def _many_options(options: list[str], value: Any) -> list[str]:
    if isinstance(value, str):
        value = [v for v in value.split(";") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("Must be a list of options.")
    chosen = {_one_option(options, v) for v in value if v.strip()}
    return [o for o in options if o in chosen]


def _number(field: dict, value: Any) -> float | int:
    if isinstance(value, bool):
        raise ValueError("Must be a number.")
    if isinstance(value, str):
        try:
            value = float(value.strip().replace(",", "."))
        except ValueError:
            raise ValueError("Must be a number.") from None
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError("Must be a number.")
    low, high = field.get("min"), field.get("max")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"Must be between {low} and {high}.")
    return int(value) if float(value).is_integer() else float(value)


def _note(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("Must be text.")
    text = value.strip()
    if len(text) > NOTE_MAX_CHARS:
        raise ValueError(f"At most {NOTE_MAX_CHARS} characters.")
    return text


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == []


def value_clean(field: dict, value: Any, options: list[str]) -> Any:
    """One field's value in stored form; raises ``ValueError`` with a message for the annotator.

    yes_no → ``bool``; choice and ordinal → the canonical option; multi_choice → the chosen
    options in codebook order; number → ``int`` or ``float`` within min..max; note → stripped text.
    """
    kind = field["type"]
    if kind == "yes_no":
        return _yes_no(value)
    if kind in ("choice", "ordinal"):
        return _one_option(options, value)
    if kind == "multi_choice":
        return _many_options(options, value)
    if kind == "number":
        return _number(field, value)
    return _note(value)


def values_clean(
    codebook: dict,
    values: Any,
    *,
    kind: str = "main",
    setting_options: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """A declared codebook's label values, checked and in stored form.

    Parameters
    ----------
    codebook : dict
        A declared (non-default) codebook.
    values : dict
        ``{field key: value}`` as sent (JSON values or CSV text).
    kind : str
        The item's setting kind, ``training`` or ``main``: fields that do not apply to it must
        be absent.
    setting_options : dict, optional
        Options the item's setting adds to its multi_choice fields, by field key.

    Returns
    -------
    dict
        ``{key: value}`` for every field that applies and has a value, in codebook order.

    Raises
    ------
    LabelValueError
        Naming each bad field: unknown key, missing required value, a value outside the options
        or range, or a field that does not apply to this kind of item. Nothing is returned.
    """
    if not isinstance(values, dict):
        raise LabelValueError({"values": "Must be a mapping of field keys to values."})
    errors: dict[str, str] = {}
    fields = {f["key"]: f for f in codebook["fields"]}
    for key in values:
        if key not in fields:
            errors[str(key)] = f"Not a field of the codebook; fields: {', '.join(fields)}."
    clean: dict[str, Any] = {}
    for key, field in fields.items():
        value = values.get(key)
        if not applies(field, kind):
            if not _empty(value):
                errors[key] = f"Not asked on {kind} items."
            continue
        if _empty(value):
            if field.get("required", True):
                errors[key] = "This field is required."
            elif field["type"] == "multi_choice":
                clean[key] = []
            continue
        try:
            clean[key] = value_clean(field, value, field_options(field, setting_options))
        except ValueError as exc:
            errors[key] = str(exc)
    if errors:
        raise LabelValueError(errors)
    return clean


def success_of(codebook: dict, value: Any) -> bool | None:
    """Whether an outcome value counts as success under the codebook's ``success`` mapping
    (``None`` for a missing value); without a mapping the value itself must be yes/no."""
    if value is None:
        return None
    mapping = codebook.get("success") or {}
    if mapping:
        return mapping.get(value) == "success"
    return bool(value)
