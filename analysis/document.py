"""A tiny document model for the report, rendered to Markdown and to self-contained HTML.

The report (:mod:`analysis.report`) builds one list of blocks; :func:`to_markdown` and
:func:`to_html` render it, so both formats always say the same thing. Values that come from the
data (setting names, items, exclusion reasons) are :class:`Data` and escaped for each format.
"""

from __future__ import annotations

import base64
import html
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["Bullets", "Code", "Data", "Figure", "Heading", "Para", "Table", "fmt_ci", "fmt_num",
           "fmt_p", "fmt_pct", "to_html", "to_markdown"]


class Data(str):
    """Text taken from the data: escaped in Markdown as well as in HTML."""


class Code(str):
    """Inline code (hashes, commands)."""


class Heading:
    """A heading of ``level`` 1 to 3."""

    def __init__(self, level: int, text: str):
        self.level, self.text = level, text


class Para:
    """A paragraph of inline parts (str, :class:`Data`, :class:`Code`)."""

    def __init__(self, *parts: str):
        self.parts = parts


class Bullets:
    """A bullet list; each item is a sequence of inline parts."""

    def __init__(self, items: Sequence[Sequence[str]]):
        self.items = items


class Table:
    """A table of header cells and rows; a cell is a part or a sequence of parts."""

    def __init__(self, headers: Sequence[str], rows: Sequence[Sequence[str]]):
        self.headers, self.rows = headers, rows


class Figure:
    """A figure written by :func:`analysis.figures.write_figures`, by name, with a caption."""

    def __init__(self, name: str, caption: str):
        self.name, self.caption = name, caption


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _md_inline(parts: Sequence[str], *, in_table: bool = False) -> str:
    out = []
    for part in parts:
        if isinstance(part, Data):
            out.append(_MD_SPECIAL.sub(r"\\\1", part))  # escapes "|" too
            continue
        if isinstance(part, Code):
            part = f"`{part.replace('`', '')}`"
        # A pipe ends a table cell even inside backticks unless escaped (GFM).
        out.append(part.replace("|", "\\|") if in_table else part)
    return "".join(out)


def _html_inline(parts: Sequence[str]) -> str:
    return "".join(
        f"<code>{html.escape(p)}</code>" if isinstance(p, Code) else html.escape(p) for p in parts
    )


def _as_parts(cell) -> Sequence[str]:
    return cell if isinstance(cell, (list, tuple)) else (cell,)


# --------------------------------------------------------------------------
# numbers in words
# --------------------------------------------------------------------------
def fmt_p(p) -> str:
    """A p-value with 3 decimals, 4 below 0.01, scientific below 0.001; ``undefined`` for None."""
    if p is None:
        return "undefined"
    if p >= 0.01:
        return f"{p:.3f}"
    if p >= 0.001:
        return f"{p:.4f}"
    return f"{p:.1e}"


def fmt_num(x, digits: int = 2) -> str:
    """``x`` with ``digits`` decimals, ``undefined`` for None."""
    return "undefined" if x is None else f"{x:.{digits}f}"


def fmt_pct(x) -> str:
    """A share in [0, 1] as a percentage with one decimal, ``undefined`` for None."""
    return "undefined" if x is None else f"{100 * x:.1f}%"


def fmt_ci(ci) -> str:
    """An interval of shares as ``lo% to hi%``."""
    return f"{fmt_pct(ci[0])} to {fmt_pct(ci[1])}"




# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------
def _relative(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def to_markdown(blocks: Sequence, figures: Mapping[str, Mapping[str, Path]], base_dir: str | Path) -> str:
    """GitHub-flavoured Markdown of ``blocks``; figures linked relative to ``base_dir`` (SVG shown,
    PNG linked); data text backslash-escaped."""
    base = Path(base_dir)
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            lines += ["#" * block.level + " " + block.text, ""]
        elif isinstance(block, Para):
            lines += [_md_inline(block.parts), ""]
        elif isinstance(block, Bullets):
            lines += [f"- {_md_inline(item)}" for item in block.items] + [""]
        elif isinstance(block, Table):
            cell = lambda c: _md_inline(_as_parts(c), in_table=True)
            lines.append("| " + " | ".join(cell(h) for h in block.headers) + " |")
            lines.append("|" + "|".join("---" for _ in block.headers) + "|")
            lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        elif isinstance(block, Figure):
            paths = figures[block.name]
            lines += [f"![{block.caption}]({_relative(paths['svg'], base)})", "",
                      f"*{block.caption}* ([PNG]({_relative(paths['png'], base)}))", ""]
    return "\n".join(lines).rstrip() + "\n"


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f3f3f3; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9rem; color: #555; }
code { font-size: 0.85rem; word-break: break-all; }
"""



def to_html(blocks: Sequence, figures: Mapping[str, Mapping[str, Path]], base_dir: str | Path) -> str:
    """One self-contained HTML5 page of ``blocks``: every text escaped, each figure's PNG embedded
    as a base64 ``data:`` URI with a link to its SVG relative to ``base_dir``.

    Raises ``OSError`` if a PNG cannot be read.
    """
    base = Path(base_dir)
    body: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Para):
            body.append(f"<p>{_html_inline(block.parts)}</p>")
        elif isinstance(block, Bullets):
            body.append("<ul>" + "".join(f"<li>{_html_inline(i)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{_html_inline(_as_parts(h))}</th>" for h in block.headers)
            rows = "".join("<tr>" + "".join(f"<td>{_html_inline(_as_parts(c))}</td>" for c in row) + "</tr>"
                           for row in block.rows)
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif isinstance(block, Figure):
            paths = figures[block.name]
            data = base64.b64encode(Path(paths["png"]).read_bytes()).decode("ascii")
            caption = html.escape(block.caption)
            svg = html.escape(_relative(paths["svg"], base))
            body.append(
                f'<figure id="fig-{block.name}"><img src="data:image/png;base64,{data}" alt="{caption}">'
                f'<figcaption>{caption} (<a href="{svg}">SVG</a>)</figcaption></figure>'
            )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>Study analysis report</title>\n<style>" + _CSS + "</style>\n</head>\n<body>\n"
        + "\n".join(body) + "\n</body>\n</html>\n"
    )
