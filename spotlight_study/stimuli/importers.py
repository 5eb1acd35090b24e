"""Reading LLM outputs from files (no database access).

Accepted formats (``docs/stimuli.md`` has examples):

- ``json``: a list of strings; or ``{"prompt_1": {"prompt": str, "outputs": [str, ...]}}`` (the
  prompt becomes the group's label). As one file holding both groups: the same mapping with
  exactly two prompts (first = group 1), or ``{"instances1": [[token, ...]], "instances2": ...}``
  (outputs stored as whitespace-split tokens, as in the Spotlight farming data; each output is
  rebuilt by joining its tokens with single spaces, so line breaks of the original are lost).
- ``jsonl``: one JSON object per line with a ``text`` field (another field name can be chosen);
  blank lines are skipped.
- ``csv``: a header row and a chosen column (default ``text``).
- ``text``: one output per line; blank lines are skipped.

One file can hold both groups: JSONL and CSV through a group column whose values name the group
(``1``/``2`` by default), JSON through the two shapes above.

Every problem raises :class:`OutputImportError` with a message for the researcher, before
anything is stored: an empty group, a value that is not text (or an empty text), bytes that are
not UTF-8, a NUL character (byte 0x00 or JSON ``\\u0000``) or a lone surrogate escape (JSON
``\\ud800``), which no database stores the same way, a file over the size or line limit (checked
before the file is decoded), more outputs than the line limit, a missing column
or field, malformed or too deeply nested JSON.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import PurePath

from .errors import OutputImportError

FORMATS = ("auto", "json", "jsonl", "csv", "text")
#: The longest CSV field the csv module reads (its default `field_size_limit`, 128 KiB); a longer
#: one is refused naming its line. No output is near it (answers are capped far lower).
CSV_FIELD_MAX_BYTES = csv.field_size_limit()
_EXTENSIONS = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".txt": "text",
    ".text": "text",
}


@dataclass(frozen=True)
class ImportOptions:
    """How to read the files.

    ``format`` is one of :data:`FORMATS` (``auto`` picks it from the file name). ``column`` is the
    CSV column or JSONL field with the text. ``group_column`` (CSV, JSONL) names the column or
    field holding the group when one file holds both groups, with ``group1_value`` and
    ``group2_value`` as its values. ``max_bytes`` is the size limit per file; ``max_lines`` the
    limit of lines per file (counted before the file is decoded) and of outputs per file.
    """

    format: str = "auto"
    column: str = "text"
    group_column: str = ""
    group1_value: str = "1"
    group2_value: str = "2"
    max_bytes: int = 20 * 1024 * 1024
    max_lines: int = 200_000


@dataclass
class ImportedGroups:
    """The two groups read from the files, with labels (e.g. prompts) and a short source note."""

    group1: list[str]
    group2: list[str]
    group1_label: str = ""
    group2_label: str = ""
    detail: str = field(default="")


def _mb(n_bytes: int) -> str:
    return f"{n_bytes / (1024 * 1024):.1f} MB"


def check_size(*, name: str, size: int, max_bytes: int) -> None:
    """Raise :class:`OutputImportError` if ``size`` (bytes) is over ``max_bytes``."""
    if size > max_bytes:
        raise OutputImportError(
            f"{name} is {_mb(size)}; the limit is {_mb(max_bytes)} per file "
            "(setting STIMULI_MAX_UPLOAD_BYTES)."
        )


def line_count(data: bytes) -> int:
    """Lines of ``data``: its newlines, plus one for a last line without a newline (C speed:
    about 10 ms for 10 MB)."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def check_lines(*, name: str, lines: int, max_lines: int) -> None:
    """Raise :class:`OutputImportError` if ``lines`` (of a file, or outputs read from it) is over
    ``max_lines``."""
    if lines > max_lines:
        raise OutputImportError(
            f"{name} has {lines:,} lines or records; the limit is {max_lines:,} per file "
            "(setting STIMULI_MAX_UPLOAD_LINES). Nothing was imported."
        )


def check_file(*, name: str, data: bytes, options: "ImportOptions") -> None:
    """The checks made before a file is parsed: its size and its line count
    (:class:`OutputImportError` naming the limit and its setting)."""
    check_size(name=name, size=len(data), max_bytes=options.max_bytes)
    check_lines(name=name, lines=line_count(data), max_lines=options.max_lines)


def decode(data: bytes, *, name: str) -> str:
    """The file as text (UTF-8, with or without a byte-order mark).

    Raises :class:`OutputImportError` naming the first undecodable byte and its offset.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise OutputImportError(
            f"{name} is not UTF-8 text: the byte 0x{bad} at position {exc.start} cannot be "
            "decoded. Save the file as UTF-8 and try again."
        ) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise OutputImportError(
            f"{name} holds a NUL character (byte 0x00) at character {nul}; it is not text. "
            "Remove it and try again."
        )
    return text


def detect_format(name: str, chosen: str) -> str:
    """The format to read ``name`` with: ``chosen`` unless it is ``auto``, else by extension."""
    if chosen not in FORMATS:
        raise OutputImportError(f"Unknown format '{chosen}'; choose one of {', '.join(FORMATS)}.")
    if chosen != "auto":
        return chosen
    suffix = PurePath(name).suffix.lower()
    if suffix not in _EXTENSIONS:
        raise OutputImportError(
            f"Cannot tell the format of {name} from its name; choose json, jsonl, csv or text."
        )
    return _EXTENSIONS[suffix]


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _storable(value: str, *, where: str) -> str:
    """``value`` unless it holds NUL or a lone surrogate (from JSON escapes); else an error."""
    if "\x00" in value:
        raise OutputImportError(f"{where}: the text holds a NUL character (\\u0000).")
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        raise OutputImportError(
            f"{where}: the text holds a lone surrogate escape (\\ud800-\\udfff), which is not text."
        )
    return value


def _label(value: object, *, where: str) -> str:
    """A group label (prompt): ``value`` if it is text (checked as :func:`_storable`), else ``""``."""
    return _storable(value, where=where) if isinstance(value, str) else ""


def _text(value: object, *, where: str) -> str:
    """``value`` if it is a non-blank, storable string; else a clear error naming ``where``."""
    if not isinstance(value, str):
        shown = json.dumps(value)[:40] if not isinstance(value, (dict, list)) else ""
        raise OutputImportError(
            f"{where}: expected text, found {_type_name(value)}{f' ({shown})' if shown else ''}."
        )
    if not value.strip():
        raise OutputImportError(f"{where}: the text is empty.")
    return _storable(value, where=where)


def _load_json(text: str, *, name: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise OutputImportError(
            f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})."
        ) from None
    except (RecursionError, ValueError) as exc:
        # RecursionError: nesting deeper than Python's stack; ValueError: e.g. an integer with
        # more digits than Python converts.
        raise OutputImportError(f"{name} cannot be read as JSON ({type(exc).__name__}).") from None


def _prompt_entry(entry: object, *, where: str) -> tuple[list[str], str]:
    if not isinstance(entry, dict) or "outputs" not in entry:
        raise OutputImportError(f'{where}: expected {{"prompt": ..., "outputs": [...]}}.')
    outputs = entry["outputs"]
    if not isinstance(outputs, list):
        raise OutputImportError(f"{where}.outputs: expected a list, found {_type_name(outputs)}.")
    label = _label(entry.get("prompt", ""), where=f"{where}.prompt")
    return [_text(v, where=f"{where}.outputs[{i}]") for i, v in enumerate(outputs)], label


def _json_group(data: object, *, name: str) -> tuple[list[str], str]:
    if isinstance(data, list):
        return [_text(v, where=f"{name}, item {i}") for i, v in enumerate(data)], ""
    if isinstance(data, dict):
        if "instances1" in data or "instances2" in data:
            raise OutputImportError(
                f"{name} holds both groups (instances1 and instances2); import it as one file."
            )
        if len(data) != 1:
            raise OutputImportError(
                f"{name} holds {len(data)} prompts; a file for one group must hold one "
                "(a file with exactly two prompts can be imported as one file with both groups)."
            )
        key, entry = next(iter(data.items()))
        return _prompt_entry(entry, where=f"{name}, {key}")
    raise OutputImportError(
        f'{name}: expected a list of texts or {{"prompt_1": {{"prompt": ..., "outputs": [...]}}}}, '
        f"found {_type_name(data)}."
    )


def _json_both(data: object, *, name: str) -> ImportedGroups:
    if isinstance(data, dict) and "instances1" in data and "instances2" in data:
        groups = []
        for key in ("instances1", "instances2"):
            instances = data[key]
            if not isinstance(instances, list):
                raise OutputImportError(f"{name}, {key}: expected a list of token lists.")
            texts = []
            for i, tokens in enumerate(instances):
                where = f"{name}, {key}[{i}]"
                if not isinstance(tokens, list):
                    raise OutputImportError(f"{where}: expected a list of tokens, found {_type_name(tokens)}.")
                for j, tok in enumerate(tokens):
                    _text(tok, where=f"{where}[{j}]")
                texts.append(_text(" ".join(tokens), where=where))
            groups.append(texts)
        labels = [_label(data.get(k), where=f"{name}, {k}") for k in ("prompt1", "prompt2")]
        return ImportedGroups(groups[0], groups[1], labels[0], labels[1])
    if isinstance(data, dict) and len(data) == 2:
        (k1, e1), (k2, e2) = data.items()
        g1, l1 = _prompt_entry(e1, where=f"{name}, {k1}")
        g2, l2 = _prompt_entry(e2, where=f"{name}, {k2}")
        return ImportedGroups(g1, g2, l1, l2)
    raise OutputImportError(
        f"{name} does not hold two groups: expected two prompts "
        '({"prompt_1": {...}, "prompt_2": {...}}) or instances1 and instances2; or give a second '
        "file for group 2."
    )


def _jsonl_rows(text: str, *, name: str, field_name: str, group_field: str) -> list[tuple[str, str]]:
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise OutputImportError(f"{name}, line {lineno} is not valid JSON ({exc.msg}).") from None
        except (RecursionError, ValueError) as exc:
            raise OutputImportError(
                f"{name}, line {lineno} cannot be read as JSON ({type(exc).__name__})."
            ) from None
        if not isinstance(obj, dict):
            raise OutputImportError(f"{name}, line {lineno}: expected an object, found {_type_name(obj)}.")
        if field_name not in obj:
            raise OutputImportError(f"{name}, line {lineno} has no '{field_name}' field.")
        value = _text(obj[field_name], where=f"{name}, line {lineno}, field '{field_name}'")
        group = ""
        if group_field:
            if group_field not in obj:
                raise OutputImportError(f"{name}, line {lineno} has no '{group_field}' field.")
            group = str(obj[group_field])
        rows.append((value, group))
    return rows


def _csv_rows(text: str, *, name: str, column: str, group_column: str) -> list[tuple[str, str]]:
    """``(text, group)`` per CSV row; a field over :data:`CSV_FIELD_MAX_BYTES` (the csv
    module's limit), or any other CSV error, is refused naming the line its row starts on."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    started = 1  # the line the record being read starts on

    def refuse(exc: csv.Error) -> OutputImportError:
        if "field larger than field limit" in str(exc):
            return OutputImportError(
                f"{name}, line {started}: a field is over {CSV_FIELD_MAX_BYTES // 1024} KiB "
                "(the limit of one CSV field); nothing was imported."
            )
        return OutputImportError(f"{name}, line {started} is not valid CSV ({exc}).")

    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise refuse(exc) from None
    for needed in [column] + ([group_column] if group_column else []):
        if needed not in header:
            shown = ", ".join(header) if header else "none"
            raise OutputImportError(f"{name} has no column '{needed}' (columns: {shown}).")
    rows = []
    while True:
        started = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise refuse(exc) from None
        rowno = started
        value = row.get(column)
        if value is None:
            raise OutputImportError(f"{name}, line {rowno} has no value in column '{column}'.")
        value = _text(value, where=f"{name}, line {rowno}, column '{column}'")
        rows.append((value, (row.get(group_column) or "").strip() if group_column else ""))
    return rows


def _split_by_group(rows: list[tuple[str, str]], *, name: str, options: ImportOptions) -> ImportedGroups:
    g1, g2 = [], []
    for i, (value, group) in enumerate(rows):
        if group == options.group1_value:
            g1.append(value)
        elif group == options.group2_value:
            g2.append(value)
        else:
            raise OutputImportError(
                f"{name}, record {i + 1}: group '{group}' is neither '{options.group1_value}' "
                f"nor '{options.group2_value}'."
            )
    return ImportedGroups(g1, g2)


def _rows(text: str, *, name: str, fmt: str, options: ImportOptions, with_group: bool):
    group_column = options.group_column if with_group else ""
    if fmt == "jsonl":
        return _jsonl_rows(text, name=name, field_name=options.column, group_field=group_column)
    return _csv_rows(text, name=name, column=options.column, group_column=group_column)


def read_group(*, name: str, data: bytes, options: ImportOptions) -> tuple[list[str], str]:
    """Read the outputs of one group from one file.

    Parameters
    ----------
    name : str
        The file name (used to pick the format and in messages).
    data : bytes
        The file contents.
    options : ImportOptions

    Returns
    -------
    (list of str, str)
        The outputs in file order, and a label (the prompt, when the file has one, else ``""``).

    Raises
    ------
    OutputImportError
        On any problem listed in the module docstring.
    """
    check_file(name=name, data=data, options=options)
    fmt = detect_format(name, options.format)
    text = decode(data, name=name)
    if fmt == "json":
        outputs, label = _json_group(_load_json(text, name=name), name=name)
    elif fmt == "text":
        outputs, label = [line for line in text.splitlines() if line.strip()], ""
    else:
        outputs = [value for value, _ in _rows(text, name=name, fmt=fmt, options=options, with_group=False)]
        label = ""
    # A one-line JSON file can hold many texts: the outputs count against the same limit.
    check_lines(name=name, lines=len(outputs), max_lines=options.max_lines)
    return outputs, label


def read_both_groups(*, name: str, data: bytes, options: ImportOptions) -> ImportedGroups:
    """Read both groups from one file (JSON shapes with two groups, or a group column).

    Raises :class:`OutputImportError` as :func:`read_group` does, and if the file cannot hold two
    groups (plain text; CSV or JSONL without ``options.group_column``).
    """
    check_file(name=name, data=data, options=options)
    fmt = detect_format(name, options.format)
    text = decode(data, name=name)
    if fmt == "text":
        raise OutputImportError(
            f"{name} is plain text, which holds one group; give a second file for group 2."
        )
    if fmt == "json":
        groups = _json_both(_load_json(text, name=name), name=name)
        check_lines(name=name, lines=len(groups.group1) + len(groups.group2), max_lines=options.max_lines)
        return groups
    if not options.group_column:
        raise OutputImportError(
            f"{name} holds one group unless a group column is named; give the group column or a "
            "second file for group 2."
        )
    return _split_by_group(
        _rows(text, name=name, fmt=fmt, options=options, with_group=True), name=name, options=options
    )


def read_outputs(
    *,
    file1: tuple[str, bytes],
    file2: tuple[str, bytes] | None,
    options: ImportOptions,
) -> ImportedGroups:
    """Read two groups: from two files (group 1, group 2) or from one file holding both.

    Parameters
    ----------
    file1, file2 : (name, bytes)
        ``file2`` is ``None`` when ``file1`` holds both groups.
    options : ImportOptions

    Returns
    -------
    ImportedGroups

    Raises
    ------
    OutputImportError
        On any problem, including an empty group ("Group 2 has no outputs").
    """
    if file2 is None:
        groups = read_both_groups(name=file1[0], data=file1[1], options=options)
        groups.detail = f"{file1[0]} (both groups)"
    else:
        g1, l1 = read_group(name=file1[0], data=file1[1], options=options)
        g2, l2 = read_group(name=file2[0], data=file2[1], options=options)
        groups = ImportedGroups(g1, g2, l1, l2, detail=f"{file1[0]} | {file2[0]}")
    for number, texts in ((1, groups.group1), (2, groups.group2)):
        if not texts:
            raise OutputImportError(f"Group {number} has no outputs; nothing was imported.")
    return groups
