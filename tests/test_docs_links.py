"""The documentation holds together: every relative link resolves and the README stays short.

Checked on README.md, docs/*.md and bench/README.md: each relative Markdown link (``[text](path)``
or ``![alt](path)``) names a file or folder that exists, and each ``#anchor`` (on its own or
after a ``.md`` path) names a heading of that page under GitHub's slug rule (lowercase, spaces to
hyphens, punctuation dropped, ``-1``, ``-2`` ... for repeated headings). Links and headings
inside fenced code blocks and inline code are not links, so they are skipped.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README_MAX_LINES = 250

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"`+[^`]*`+")
# [text](target) or ![alt](target); the target ends at whitespace or the closing parenthesis.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto: ...


def doc_files() -> list[Path]:
    """The Markdown pages whose links are checked: README.md, docs/*.md, bench/README.md."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "bench" / "README.md"]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The (1-based line number, line) pairs of ``text`` outside fenced code blocks."""
    lines, in_fence = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            lines.append((number, line))
    return lines


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading's text: links reduced to their text, lowercase,
    every character that is not a letter, digit, space, hyphen or underscore dropped, spaces
    turned into hyphens. (Repeated headings get suffixes; see ``anchors``.)"""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of the Markdown file ``path``, with GitHub's ``-N`` suffixes for
    the second, third ... heading of the same slug."""
    seen: dict[str, int] = {}
    result = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def broken_links(path: Path) -> list[str]:
    """Each relative link of ``path`` that does not resolve, as ``file:line: target (why)``."""
    problems = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for match in LINK.finditer(INLINE_CODE.sub("", line)):
            target = match.group(1)
            if EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(REPO)}:{number}: {target}"
            if not resolved.exists():
                problems.append(f"{where} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                problems.append(f"{where} (no heading #{anchor} in {resolved.name})")
    return problems


def test_github_slug_rule():
    """Headings turn into the anchors GitHub gives them, punctuation and code marks dropped."""
    assert github_slug("7. Erasure and retention") == "7-erasure-and-retention"
    assert github_slug("`results.json`") == "resultsjson"
    assert github_slug("Simulation-based power") == "simulation-based-power"
    assert github_slug("Prolific and the REST API") == "prolific-and-the-rest-api"
    assert github_slug("3. A Procfile platform (Heroku-style, Dokku)") == "3-a-procfile-platform-heroku-style-dokku"
    assert github_slug("`manage.py mine_patterns`") == "managepy-mine_patterns"


def test_checker_finds_a_broken_file_and_anchor(tmp_path, monkeypatch):
    """A link to a missing file and one to a missing heading are both reported; good ones are not."""
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    (tmp_path / "other.md").write_text("# Other\n\n## Same\n\n## Same\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#same-1) [ok](#page) [gone](missing.md) [bad](other.md#nope)\n"
        "`[code](missing.md)` [web](https://example.org/x)\n```\n[fenced](missing.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "page.md:3: missing.md (no such file)",
        "page.md:3: other.md#nope (no heading #nope in other.md)",
    ]


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(path):
    """Every relative link of the page points to an existing file and, with #anchor, heading."""
    problems = broken_links(path)
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_readme_is_a_short_quickstart():
    """README.md is at most 250 lines; the reference material lives under docs/."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}); move reference material to docs/"
    )
