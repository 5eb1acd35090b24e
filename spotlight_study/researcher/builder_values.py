"""The study builder's reading of typed values: text boxes with ``\n`` line breaks, lists
typed one a line or comma-separated, numbers that stay text when they are none (for the
validation to name), a group's texts typed, pasted or uploaded."""
from __future__ import annotations

import csv
import io
import json
from typing import Any

from django import forms

TEXT_SEPARATOR = "---"


class Text(forms.CharField):
    """A text field whose line breaks are ``\n``: browsers send a text box's as ``\r\n``."""

    def to_python(self, value):
        """The text with ``\r\n`` and ``\r`` line breaks as ``\n``."""
        value = super().to_python(value)
        return value.replace("\r\n", "\n").replace("\r", "\n") if isinstance(value, str) else value


def lines(text: str) -> list[str]:
    """The non-empty lines of ``text``, stripped."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def words(text: str) -> list[str]:
    """The comma-separated words of ``text``, stripped, empty ones dropped."""
    return [w.strip() for w in (text or "").split(",") if w.strip()]


def number_or_text(text: str, *, integer: bool = True) -> Any:
    """``text`` as an int (or float), the text itself when it is not one (the validation then
    names it), ``None`` when empty (the key is left out)."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        return int(text) if integer else float(text)
    except ValueError:
        if not integer:
            return text
        try:
            value = float(text)
        except ValueError:
            return text
        return int(value) if value.is_integer() else text


def texts_from(text: str, fmt: str) -> list[str]:
    """A group's texts from its box: one text a line (``fmt == "lines"``), or texts separated by
    a line holding only ``---`` (any other ``fmt``), so a text may have line breaks."""
    if fmt == "lines":
        return lines(text)
    out, current = [], []
    for line in (text or "").splitlines():
        if line.strip() == TEXT_SEPARATOR:
            out.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    out.append("\n".join(current).strip())
    return [t for t in out if t]


def texts_box(texts: list, fmt: str) -> str:
    """The box's text of a group's texts (the inverse of :func:`texts_from`)."""
    texts = [str(t) for t in texts or []]
    if fmt == "lines":
        return "\n".join(texts)
    return f"\n{TEXT_SEPARATOR}\n".join(texts)


def texts_format(*groups: list) -> str:
    """``"lines"`` unless a text has a line break (then ``"blocks"``)."""
    return "blocks" if any("\n" in str(t) for g in groups for t in g or []) else "lines"


def uploaded_texts(upload) -> list[str]:
    """The texts of an uploaded file: a JSON list of strings, a CSV's ``text`` column (else its
    first column), or a text file's lines. Raises ``ValueError`` with a message for a file that
    is none of these."""
    raw = upload.read(2_000_000 + 1)
    if len(raw) > 2_000_000:
        raise ValueError("The file is larger than 2 MB.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError("The file is not UTF-8 text.") from None
    if "\x00" in text:
        raise ValueError("The file holds a NUL character: it is not a text file.")
    name = (upload.name or "").lower()
    if name.endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"Not valid JSON: {exc}") from None
        if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
            raise ValueError("A JSON file of texts must be a list of strings.")
        return [t.strip() for t in data if t.strip()]
    if name.endswith(".csv"):
        rows = list(csv.reader(io.StringIO(text)))
        if not rows:
            return []
        column = rows[0].index("text") if "text" in rows[0] else 0
        body = rows[1:] if "text" in rows[0] else rows
        return [r[column].strip() for r in body if len(r) > column and r[column].strip()]
    return lines(text)
