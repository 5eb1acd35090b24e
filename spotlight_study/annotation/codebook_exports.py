"""Export columns of a study's declared codebook: one column per field, and for a multi_choice
field its joined column plus one 0/1 column per option (``<key>:<option>``).

Under the default codebook these functions give nothing, so the exports keep today's columns
(``identified``, ``surface_difference``, ``no_difference``, ``tags``) byte for byte.
"""
from __future__ import annotations

from typing import Any

from spotlight_study.studies import codebook as cb
from spotlight_study.studies.models import Study

from .codebook_labels import is_declared, setting_options

#: Between a multi_choice field's key and an option in the name of its 0/1 column.
OPTION_SEPARATOR = ":"


def option_column(key: str, option: str) -> str:
    """The 0/1 column of one option of a multi_choice field, e.g. ``tags:Länge``."""
    return f"{key}{OPTION_SEPARATOR}{option}"


def export_fields(study: Study) -> list[dict]:
    """The declared codebook's fields with every option any setting adds (``[]`` under the
    default codebook), in codebook order."""
    if not is_declared(study):
        return []
    extra: dict[str, list[str]] = {}
    for setting in study.settings.order_by("position", "pk"):
        for key, options in setting_options(study, setting).items():
            extra[key] = [*extra.get(key, []), *[o for o in options if o not in extra.get(key, [])]]
    return [
        {**f, "options": cb.field_options(f, extra)} if f["type"] in cb.OPTION_TYPES else dict(f)
        for f in study.annotation_codebook["fields"]
    ]


def codebook_columns(fields: list[dict]) -> list[str]:
    """The export columns of ``fields`` (:func:`export_fields`), in order."""
    out: list[str] = []
    for f in fields:
        out.append(f["key"])
        if f["type"] == "multi_choice":
            out += [option_column(f["key"], o) for o in f["options"]]
    return out


def cell(field: dict, value: Any) -> Any:
    """A value as a CSV cell: yes/no as 1/0, options joined by ``;``, nothing as empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, list):
        return ";".join(value)
    return value


def codebook_cells(fields: list[dict], label) -> dict[str, Any]:
    """The codebook columns of one label (final label or annotation); all empty for ``None``."""
    if label is None:
        return {c: "" for c in codebook_columns(fields)}
    stored = {**(label.values or {}), **(getattr(label, "notes", None) or {})}
    out: dict[str, Any] = {}
    for f in fields:
        value = stored.get(f["key"])
        out[f["key"]] = cell(f, value)
        if f["type"] == "multi_choice":
            chosen = set(value or [])
            out.update({option_column(f["key"], o): int(o in chosen) for o in f["options"]})
    return out


def outcome_success(study: Study, label) -> Any:
    """The ``identified`` cell under a declared codebook: 1/0 when the outcome is yes/no or
    mapped to success (``codebook.success``), else empty; empty without a value."""
    book = study.annotation_codebook
    outcome = cb.field_by_key(book, book["outcome"])
    value = None if label is None else (label.values or {}).get(book["outcome"])
    if value is None or (outcome["type"] != "yes_no" and not book.get("success")):
        return ""
    return int(bool(cb.success_of(book, value)))


def column_meanings(fields: list[dict]) -> dict[str, str]:
    """What each codebook column means, for the README of the researcher's download."""
    out: dict[str, str] = {}
    for f in fields:
        kind = {"multi_choice": "options chosen, ;-separated", "yes_no": "1 yes, 0 no",
                "number": f"a number from {f.get('min')} to {f.get('max')}",
                "note": "free text"}.get(f["type"], "the option chosen: " + ", ".join(f.get("options", [])))
        out[f["key"]] = f"final label, codebook field \"{f['label']}\" ({f['type']}): {kind}"
        for o in f.get("options", []) if f["type"] == "multi_choice" else []:
            out[option_column(f["key"], o)] = f"1 if the final label chose \"{o}\" in \"{f['label']}\", else 0"
    return out
