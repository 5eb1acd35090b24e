"""The Markdown and HTML reports render, state each test in words and carry their figures."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import pytest

from analysis import run_analysis

from .conftest import simulate_export


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.links, self.scripts = [], [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.imgs.append(attrs)
        elif tag == "a":
            self.links.append(attrs.get("href"))
        elif tag == "script":
            self.scripts += 1


@pytest.fixture(scope="module")
def report_run(tmp_path_factory):
    """One analysis of the simulated export; returns (out_dir, results)."""
    root = tmp_path_factory.mktemp("report")
    out = root / "out"
    return out, run_analysis(simulate_export(root / "export"), out)


def test_markdown_links_existing_figures(report_run):
    """report.md links every figure (SVG shown, PNG linked) by a relative path that exists."""
    out, _ = report_run
    text = (out / "report.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)]+)\)", text)
    for name in ("identification_rate", "likert", "background"):
        assert f"figures/{name}.svg" in targets and f"figures/{name}.png" in targets
    assert all((out / t).is_file() for t in targets)


def test_markdown_states_tests_exclusions_and_hash(report_run):
    """Each test is named with alternative, statistic, p and n; exclusions by reason; the SHA-256."""
    out, results = report_run
    text = (out / "report.md").read_text(encoding="utf-8")
    assert results["input_sha256"] in text
    assert "Two-proportion z-test (normal approximation, pooled variance), one-sided, alternative: the rate " \
           "with the pattern is larger" in text
    doctor = results["identification"]["doctor"]
    assert f"z = {doctor['z']:.2f}" in text
    assert f"n = {doctor['n_pattern']} with and {doctor['n_no_pattern']} without" in text
    assert "Mann-Whitney U test, one-sided, alternative: answers for the setting with the pattern are lower: " \
           f"U = {results['likert']['effort']['U']:.1f}, p = " in text
    assert "Wilcoxon signed-rank test on 36 pairs" in text
    assert "| failed instruction check | 2 |" in text
    assert "| copy-pasted answers | 1 |" in text
    assert "4 were excluded and 36 are analysed" in text


def test_html_embeds_the_figures_and_is_self_contained(report_run):
    """report.html embeds each PNG as a data URI identical to the file and links the SVGs; no scripts."""
    out, results = report_run
    page = (out / "report.html").read_text(encoding="utf-8")
    parser = _Collector()
    parser.feed(page)
    assert len(parser.imgs) == 3 and parser.scripts == 0
    embedded = {base64.b64decode(img["src"].split(",", 1)[1]) for img in parser.imgs}
    files = {(out / "figures" / f"{n}.png").read_bytes() for n in ("identification_rate", "likert", "background")}
    assert embedded == files
    assert all(img["alt"] for img in parser.imgs)
    svg_links = [link for link in parser.links if link.endswith(".svg")]
    assert len(svg_links) == 3 and all((out / link).is_file() for link in svg_links)
    assert results["input_sha256"] in page
    assert "failed instruction check" in page


def test_data_values_are_escaped_in_both_reports(tmp_path):
    """A setting or reason containing markup or a pipe cannot inject HTML or break a Markdown table."""
    export = simulate_export(tmp_path / "export", n_participants=16)
    path = export / "responses.csv"
    text = path.read_text(encoding="utf-8")
    text = text.replace("farming", "<b>farm|ing</b>").replace("failed instruction check", "<script>alert(1)</script>")
    path.write_text(text, encoding="utf-8")
    run_analysis(export, tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>farm" not in page and "&lt;b&gt;farm|ing&lt;/b&gt;" in page
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    table_rows = [line for line in md.splitlines() if line.startswith("| ") and "farm" in line]
    assert table_rows
    for line in table_rows:
        unescaped_pipes = len(re.findall(r"(?<!\\)\|", line))
        header = next(h for h in md.split("\n\n") if line in h).splitlines()[0]
        assert unescaped_pipes == header.count("|"), line
    assert "<script>" not in md
    assert "\\<b\\>farm\\|ing\\</b\\>" in md  # each special character escaped exactly once
