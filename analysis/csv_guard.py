"""CSV cells that a spreadsheet will not run as formulas (CSV or "formula" injection).

A cell whose text begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return may be taken
as a formula by Excel, LibreOffice or Google Sheets (``=HYPERLINK(...)`` in an answer becomes a
live link). As the OWASP "CSV Injection" page recommends, such a cell gets a single quote in
front, which spreadsheets show as plain text.

The rule, exactly (readers such as ``analysis/`` undo it):

- only text cells (``str``) change; numbers, booleans and empty cells never do, so numeric
  columns (negative numbers included) are written as before; the header row never changes;
- a text cell that begins with one of :data:`TRIGGERS` gets one ``'`` in front;
- :data:`TRIGGERS` includes the single quote itself, so every text cell that begins with ``'``
  in a safe export was prefixed, and :func:`unneutralize` gives back the original exactly.

The raw text, where it matters, is in the JSONL copy (``export_results --jsonl``).

Pure Python (no Django), so that both sides use this one rule: the platform's exports
(``spotlight_study.csvsafe`` re-exports it) and ``analysis/`` itself, which undoes it when it
reads an export (``inputs.py``) and applies it to the ``tables/*.csv`` it writes
(:func:`neutralize_frame`).

References: OWASP Foundation, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection
"""
from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is only needed by the caller of neutralize_frame
    import pandas as pd

#: First characters that make a spreadsheet evaluate a cell, plus the quote that marks it.
TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "'")


def neutralize(value: Any) -> Any:
    """``value`` with a ``'`` in front if it is text beginning with one of :data:`TRIGGERS`.

    Anything that is not a ``str`` (int, float, bool, None) is returned unchanged.
    """
    if isinstance(value, str) and value.startswith(TRIGGERS):
        return "'" + value
    return value


def unneutralize(value: str) -> str:
    """Undo :func:`neutralize` on a text cell read back from a safe export.

    Removes exactly one leading ``'``. Apply it to the raw cell text, before any stripping.
    """
    return value[1:] if value.startswith("'") else value


def unneutralize_if_marked(value: str) -> str:
    """Undo :func:`neutralize` only where the cell shows its mark: a ``'`` followed by one of
    :data:`TRIGGERS`.

    For files that may come from a safe export or be typed by hand (the label import): an exported
    ``'-Z4AM`` gives ``-Z4AM`` and ``''quoted`` gives ``'quoted``, while a hand-typed ``'hello``,
    which :func:`neutralize` never writes, stays as it is.
    """
    if value.startswith("'") and value[1:].startswith(TRIGGERS):
        return value[1:]
    return value


class SafeDictWriter(csv.DictWriter):
    """:class:`csv.DictWriter` whose data rows are passed through :func:`neutralize`.

    Same arguments and behaviour as ``csv.DictWriter``; ``writeheader`` writes the field names
    unchanged.
    """

    def writeheader(self):
        """Write the field names as they are (they are fixed identifiers, never neutralized)."""
        return self.writer.writerow(self.fieldnames)

    def writerow(self, rowdict: Mapping[str, Any]):
        """Write one row (a mapping of field name to value), its text cells neutralized."""
        return super().writerow({k: neutralize(v) for k, v in rowdict.items()})

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]):
        """Write many rows, each as :meth:`writerow` does."""
        for row in rowdicts:
            self.writerow(row)


def neutralize_frame(frame: "pd.DataFrame") -> "pd.DataFrame":
    """A copy of ``frame`` whose text cells are passed through :func:`neutralize`.

    Only ``str`` cells change (numbers, booleans and missing values never do); the column
    names are left as they are. For a table about to be written with ``DataFrame.to_csv``.
    """
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        # Object and pandas' string dtypes alike; numeric columns hold no str and are left as is.
        if any(isinstance(value, str) for value in values):
            out[column] = values.map(neutralize)
    return out
