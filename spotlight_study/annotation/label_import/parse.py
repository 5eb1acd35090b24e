"""Step 1 of the label import: CSV text to a header and raw rows, with errors by line.

Line numbers are those of the file: the header is line 1, and a row starts on the line where
its first value starts (a quoted value may span lines).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from spotlight_study.csvsafe import unneutralize_if_marked

from ..errors import LabelImportError

IMPORT_REQUIRED = ("item", "identified", "surface_difference", "no_difference", "exclusion")
IMPORT_OPTIONAL = ("tags", "exclusion_note", "annotator")
#: Columns of an unedited ``final_labels.csv`` that say nothing about the label: read and ignored,
#: so the export can be imported as it is (its rows without a final label are skipped).
EXPORT_ONLY = (
    "participant", "setting", "kind", "condition", "status", "other_difference", "source",
    "decided_at", "machine_model", "machine_fields", "is_pilot",
)
_TRUE = {"1", "true", "yes", "y"}
_FALSE = {"0", "false", "no", "n"}


@dataclass(frozen=True)
class RawRow:
    """One data row: its first ``line`` and ``values`` by (stripped) column name, as text."""

    line: int
    values: dict[str, str]


def parse_bool(value: str) -> bool | None:
    """``True`` for 1/true/yes/y, ``False`` for 0/false/no/n (any case, spaces ignored), else
    ``None``."""
    v = value.strip().lower()
    return True if v in _TRUE else False if v in _FALSE else None


def csv_parse(
    text: str, *, annotator_name: str | None, columns: tuple[tuple[str, ...], tuple[str, ...]] | None = None
) -> tuple[list[RawRow], list[tuple[int, str]]]:
    """Split the CSV ``text`` (a leading BOM is ignored) into raw rows.

    Cells copied from a formula-safe export lose their ``'`` mark
    (:func:`~spotlight_study.csvsafe.unneutralize_if_marked`), so an item id written as ``'-Z4A``
    is found as ``-Z4A``.

    Returns ``(rows, errors)``: the rows that have no more values than columns, and
    ``(line, message)`` for rows that do and for broken CSV (reading stops there).

    Raises
    ------
    LabelImportError
        At once, for what makes every row meaningless: a NUL character (PostgreSQL cannot store
        it; refused on every database alike), a missing or unknown column, or no ``annotator``
        column and no ``annotator_name``.

    ``columns`` is ``(required, optional)`` under a study's declared codebook
    (:func:`~.codebook_columns.import_columns`); by default the fixed label schema's. Rows of an
    unedited ``final_labels.csv`` whose ``status`` is not ``final`` carry no label and are
    skipped.
    """
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise LabelImportError([(line, "a NUL character (byte 0x00) is not text; remove it")])
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    required, optional = columns or (IMPORT_REQUIRED, IMPORT_OPTIONAL)
    _header_check([h.strip() for h in (reader.fieldnames or [])], annotator_name=annotator_name,
                  required=required, optional=(*optional, *EXPORT_ONLY))
    rows: list[RawRow] = []
    errors: list[tuple[int, str]] = []
    while True:
        line = reader.line_num + 1  # where the row starts (a quoted value may span lines)
        try:
            raw = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            errors.append((line, f"not valid CSV: {exc}"))
            break
        if None in raw:
            errors.append((line, "more values than columns"))
            continue
        # A row copied from one of our formula-safe exports keeps its ' marks; undo them.
        values = {(k or "").strip(): unneutralize_if_marked(v or "") for k, v in raw.items()}
        if values.get("status", "final").strip() not in ("final", ""):
            continue  # a final_labels.csv row of an item without a final label
        rows.append(RawRow(line, values))
    return rows, errors


def _header_check(header: list[str], *, annotator_name: str | None, required: tuple[str, ...],
                  optional: tuple[str, ...]) -> None:
    """Raise :class:`LabelImportError` (line 1) for missing or unknown columns, or when no
    annotator is named by a column or ``annotator_name``."""
    missing = [c for c in required if c not in header]
    if missing:
        raise LabelImportError([(1, f"missing column(s): {', '.join(missing)}")])
    unknown_cols = [c for c in header if c not in required + optional]
    if unknown_cols:
        raise LabelImportError([(1, f"unknown column(s): {', '.join(unknown_cols)}")])
    if "annotator" not in header and not annotator_name:
        raise LabelImportError([(1, "no 'annotator' column: name the annotator with --annotator")])
