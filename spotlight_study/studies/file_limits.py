"""Size limits of a study file, checked before anything expands it (pure: no Django).

A study file is a few kilobytes of settings, texts and token patterns. Without limits a hostile
or broken file could cost minutes and gigabytes before any field is validated: a "billion
laughs" YAML file (aliases of aliases of lists, 47 s and 3.2 GB before a ``MemoryError``),
nesting deeper than Python's stack (``RecursionError``), a 100,000-digit integer (``ValueError``
from Python's conversion limit) or a 10 MB text. The limits:

==========================  =========  =====================================================
limit                       value      counted
==========================  =========  =====================================================
:data:`MAX_FILE_BYTES`      512 KiB    the file's size, checked before it is read (28 x the demo file)
:data:`MAX_DEPTH`           32         levels of mappings and lists (the demo file uses 5)
:data:`MAX_VALUES`          100,000    values after YAML aliases are expanded
:data:`MAX_EXPANDED_CHARS`  4,000,000  characters of text after aliases are expanded
:data:`MAX_TEXT_CHARS`      20,000     characters of any one text (a prompt, a consent text)
:data:`MAX_INT_DIGITS`      30         digits of an integer
==========================  =========  =====================================================

Each check walks the file once, without recursion, and raises :class:`FileLimitError` with a
message naming the problem (and the YAML line where there is one).
"""
from __future__ import annotations

import io
import re
from typing import Any

import yaml

MAX_FILE_BYTES = 512 * 1024
MAX_DEPTH = 32
MAX_VALUES = 100_000
MAX_EXPANDED_CHARS = 4_000_000
MAX_TEXT_CHARS = 20_000
MAX_INT_DIGITS = 30

_YAML_INT = "tag:yaml.org,2002:int"


class FileLimitError(ValueError):
    """A study file over one of the limits above; ``str()`` says which."""


def file_size_check(n_bytes: int) -> None:
    """Raise :class:`FileLimitError` if a file of ``n_bytes`` is over :data:`MAX_FILE_BYTES`."""
    if n_bytes > MAX_FILE_BYTES:
        raise FileLimitError(
            f"the file is {n_bytes:,} bytes; a study file may have at most {MAX_FILE_BYTES:,}"
        )


def _text_check(length: int, where: str) -> None:
    if length > MAX_TEXT_CHARS:
        raise FileLimitError(
            f"a text{where} has {length:,} characters; at most {MAX_TEXT_CHARS:,} are allowed"
        )


def _digits_check(digits: int, where: str) -> None:
    if digits > MAX_INT_DIGITS:
        raise FileLimitError(
            f"an integer{where} has {digits:,} digits; at most {MAX_INT_DIGITS} are allowed"
        )


def _line(node: yaml.Node) -> str:
    return f" (line {node.start_mark.line + 1})"


def yaml_node_check(root: yaml.Node) -> None:
    """Check a composed YAML document (before any Python value is built from it).

    Aliases make the node graph a DAG (or a cycle): each node's expanded size and depth is
    computed once (memoized by identity), so the check is linear in the file, however far the
    aliases would expand. Raises :class:`FileLimitError` for a recursive alias, nesting over
    :data:`MAX_DEPTH`, more than :data:`MAX_VALUES` values or :data:`MAX_EXPANDED_CHARS`
    characters once expanded, a text over :data:`MAX_TEXT_CHARS` or an integer over
    :data:`MAX_INT_DIGITS` digits.
    """
    done: dict[int, tuple[int, int, int]] = {}  # id -> (values, chars, depth), expanded
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in done:
            continue
        if isinstance(node, yaml.ScalarNode):
            value = node.value
            if node.tag == _YAML_INT:
                _digits_check(sum(c.isdigit() for c in value), _line(node))
            _text_check(len(value), _line(node))
            done[key] = (1, len(value), 0)
            continue
        children = (
            [n for pair in node.value for n in pair]
            if isinstance(node, yaml.MappingNode)
            else list(node.value)
        )
        if not children_done:
            if key in on_path:
                raise FileLimitError(f"an alias refers to the value that contains it{_line(node)}")
            on_path.add(key)
            stack.append((node, True))
            for child in children:
                if id(child) in on_path:
                    raise FileLimitError(
                        f"an alias refers to the value that contains it{_line(child)}"
                    )
                if id(child) not in done:
                    stack.append((child, False))
            if len(on_path) > MAX_DEPTH:
                raise FileLimitError(f"values are nested more than {MAX_DEPTH} levels deep{_line(node)}")
            continue
        on_path.discard(key)
        values, chars, depth = 1, 0, 0
        for child in children:
            c_values, c_chars, c_depth = done[id(child)]
            values += c_values
            chars += c_chars
            depth = max(depth, c_depth)
        depth += 1
        if depth > MAX_DEPTH:
            raise FileLimitError(f"values are nested more than {MAX_DEPTH} levels deep{_line(node)}")
        if values > MAX_VALUES:
            raise FileLimitError(
                f"the aliases expand to more than {MAX_VALUES:,} values{_line(node)}"
            )
        if chars > MAX_EXPANDED_CHARS:
            raise FileLimitError(
                f"the aliases expand to more than {MAX_EXPANDED_CHARS:,} characters of text"
                f"{_line(node)}"
            )
        done[key] = (values, chars, depth)


def json_int(text: str) -> int:
    """``json.loads``'s ``parse_int``: refuses an integer of over :data:`MAX_INT_DIGITS` digits
    before Python converts it (:class:`FileLimitError`)."""
    _digits_check(len(text.lstrip("-")), "")
    return int(text)


def data_check(data: Any) -> None:
    """Check parsed study data (JSON, or an API body): depth, value count, text length and
    integer size as above. Iterative; raises :class:`FileLimitError`."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    values = 0
    while stack:
        value, depth = stack.pop()
        values += 1
        if values > MAX_VALUES:
            raise FileLimitError(f"the file has more than {MAX_VALUES:,} values")
        if isinstance(value, str):
            _text_check(len(value), "")
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int):
            # bit_length, not str(): converting a huge integer to text is what is slow.
            if value.bit_length() > MAX_INT_DIGITS * 3.33:
                _digits_check(MAX_INT_DIGITS + 1, "")
        elif isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise FileLimitError(f"values are nested more than {MAX_DEPTH} levels deep")
            items = list(value.keys()) + list(value.values()) if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)


_YAML_SPECIAL = re.compile(r"[\[\]{}'\"#\\\n]")


def yaml_flow_depth_check(text: str) -> None:
    """Raise :class:`FileLimitError` if YAML flow collections (``[`` and ``{`` outside quotes
    and comments) nest more than :data:`MAX_DEPTH` deep.

    A linear scan before PyYAML's scanner, which slows down quadratically with flow nesting
    (10,000 levels of ``[`` took over a second before failing with ``RecursionError``). A
    bracket inside an unquoted text counts too, so such a file is refused only if over 32
    brackets are left open at once.
    """
    depth, quote, comment, line = 0, "", False, 1
    escaped_at = -1
    for match in _YAML_SPECIAL.finditer(text):
        char, at = match.group(), match.start()
        if char == "\n":
            line += 1
            comment = False
            continue
        if comment:
            continue
        if quote == '"':
            if char == "\\":
                escaped_at = at + 1 if escaped_at != at else -1
            elif char == '"' and escaped_at != at:
                quote = ""
            continue
        if quote == "'":
            if char == "'":
                quote = ""  # a doubled '' reopens at once on the next quote
            continue
        if char in "'\"":
            quote = char
        elif char == "#" and (at == 0 or text[at - 1] in " \t\n"):
            comment = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise FileLimitError(f"values are nested more than {MAX_DEPTH} levels deep (line {line})")
        elif char in "]}":
            depth = max(0, depth - 1)


def yaml_load_checked(stream: io.StringIO, loader_class: type[yaml.SafeLoader]) -> Any:
    """``yaml.load(stream, loader_class)`` after :func:`yaml_flow_depth_check`, with
    :func:`yaml_node_check` between composing the document and building its values, so that
    nothing is expanded before it is checked.

    Raises :class:`FileLimitError` (also for nesting deeper than the composer's recursion can
    follow) or PyYAML's ``YAMLError``.
    """
    yaml_flow_depth_check(stream.getvalue())
    loader = loader_class(stream)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise FileLimitError(f"values are nested more than {MAX_DEPTH} levels deep") from None
        if node is None:
            return None
        yaml_node_check(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()
