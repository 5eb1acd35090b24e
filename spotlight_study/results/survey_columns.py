"""The survey's answers in the export, by item type (docs/export.md, "Survey items with types").

``survey.csv`` keeps one row per participant x condition x item; its ``response`` cell is the
point chosen for a scale or ``likert`` item (as before), and for the other types the answer as
the participant gave it: the option as the researcher wrote it (``choice``), the options
checked joined by ``;`` (``multi_choice``), the number (``number``) or the text (``text``).
The wide file (``participants_wide.csv``) has one column per item and condition, and for a
``multi_choice`` item one more 0/1 column per option. ``survey_items.json`` beside the CSV
files gives the analysis each item's type, words and test (:func:`survey_items_document`).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from spotlight_study.studies.models import Study
from spotlight_study.studies.schema_survey import (
    DEFAULT_ITEM_TYPE,
    MULTI_CHOICE_SEPARATOR,
    item_type,
)

#: The file the export writes beside ``survey.csv`` (read by ``analysis/survey_measures.py``).
SURVEY_ITEMS_FILE = "survey_items.json"
#: Format of :data:`SURVEY_ITEMS_FILE`; the analysis refuses any other.
SURVEY_ITEMS_FORMAT = "spotlight-survey-items/1"


def survey_response(response, value) -> object:
    """The ``response`` cell of one survey answer: the stored point, else its ``value`` as text
    (options joined by ``;``; a whole number without ``.0``)."""
    if response is not None:
        return response
    if isinstance(value, list):
        return MULTI_CHOICE_SEPARATOR.join(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return "" if value is None else value


def _where_items(survey: Mapping) -> list[tuple[str, Mapping]]:
    return ([("condition", i) for i in survey.get("condition_items", ())]
            + [("background", i) for i in survey.get("background_items", ())])


def option_columns(survey: Mapping) -> dict[str, list[str]]:
    """``{item key: its options}`` of the ``multi_choice`` items of ``survey``."""
    return {i["key"]: list(i["options"]) for _, i in _where_items(survey)
            if item_type(i) == "multi_choice"}


def option_column(column: str, option: str) -> str:
    """The 0/1 column of one option beside the wide file's item column ``column``."""
    return f"{column}.{option}"


def wide_option_cells(column: str, joined, options: list[str]) -> dict[str, object]:
    """The 0/1 cells of every option of a multi_choice answer (``joined`` as in ``survey.csv``;
    empty cells when the answer is missing)."""
    if joined in ("", None):
        return {option_column(column, o): "" for o in options}
    chosen = set(str(joined).split(MULTI_CHOICE_SEPARATOR))
    return {option_column(column, o): int(o in chosen) for o in options}


def survey_items_document(survey: Mapping) -> dict:
    """The survey's items as the analysis needs them: for each item ``key``, ``text`` (the
    researcher's words), ``where`` (``condition`` or ``background``), ``type`` and that type's
    ``labels``/``options``/``min``/``max``/``test``; and both 5-point scales.

    A plain JSON object with ``format`` :data:`SURVEY_ITEMS_FORMAT`.
    """
    items = []
    for where, item in _where_items(survey):
        entry = {"key": item["key"], "text": item["text"], "where": where, "type": item_type(item)}
        for name in ("labels", "options", "min", "max", "test"):
            if name in item:
                entry[name] = list(item[name]) if isinstance(item[name], (list, tuple)) else item[name]
        if entry["type"] == "number":
            entry.setdefault("test", "mann_whitney")
        items.append(entry)
    return {"format": SURVEY_ITEMS_FORMAT,
            "likert_scale": list(survey.get("likert_scale", ())),
            "frequency_scale": list(survey.get("frequency_scale", ())),
            "items": items}


def survey_items_write(*, study: Study, out_dir: str | Path) -> Path:
    """Write :data:`SURVEY_ITEMS_FILE` (UTF-8, sorted keys, 2-space indent) of ``study`` into
    ``out_dir`` and return its path; raises ``OSError`` if it cannot be written."""
    path = Path(out_dir) / SURVEY_ITEMS_FILE
    text = json.dumps(survey_items_document(study.survey or {}), ensure_ascii=False, indent=2)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def has_typed_items(survey: Mapping) -> bool:
    """Whether any item of ``survey`` names a type other than the default scale."""
    return any(item_type(i) != DEFAULT_ITEM_TYPE for _, i in _where_items(survey))
