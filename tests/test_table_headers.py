"""No table header cell of any template is empty: screen readers announce a header when they
move into its column or row, and an empty one names nothing (axe-core's ``empty-table-header``,
found on the annotation overview's kappa matrices, the stimulus set page's mining jobs and the
study team page). A column of buttons is headed "Actions"; a matrix's corner names its rows."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: ``<th>`` with attributes or none, and nothing but whitespace or template comments inside.
EMPTY_HEADER = re.compile(r"<th\b[^>]*>(?:\s|\{#.*?#\})*</th>", re.S)


def _templates() -> list[Path]:
    return sorted(p for root in ("templates", "spotlight_study") for p in (REPO / root).rglob("*.html"))


def test_the_pattern_finds_empty_headers_and_only_those():
    assert EMPTY_HEADER.search("<tr><th></th><th>A</th></tr>")
    assert EMPTY_HEADER.search('<th scope="col">  </th>')
    assert EMPTY_HEADER.search("<th>{# nothing #}</th>")
    assert not EMPTY_HEADER.search("<th>{{ name }}</th><thead></thead>")


def test_no_template_has_an_empty_table_header():
    templates = _templates()
    assert len(templates) > 50, "the templates were not found"
    empty = [
        f"{path.relative_to(REPO)}:{text[:match.start()].count(chr(10)) + 1}"
        for path in templates
        for text in [path.read_text(encoding="utf-8")]
        for match in EMPTY_HEADER.finditer(text)
    ]
    assert not empty, "empty <th> (give it a name, e.g. 'Actions'): " + ", ".join(empty)
