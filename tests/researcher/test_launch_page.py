"""The launch check and analysis sections of the researcher study page."""
from __future__ import annotations

import re

import pytest

from spotlight_study.researcher.launch import LaunchReport, GO, NO_GO, UNCHECKED, WARNING
from spotlight_study.researcher.models import AnalysisRun
from spotlight_study.researcher.templatetags.launch_text import code_spans


def _launch_section(html: str) -> str:
    return re.search(r'<h2 id="launch">.*?</table>', html, re.S).group(0)


def _row(section: str, check: str) -> str:
    return re.search(rf"<tr class=\"launch-[^\"]+\"><td>{check}</td>.*?</tr>", section, re.S).group(0)


def test_study_page_marks_the_url_unchecked_and_never_says_plain_go(staff_client, demo_study):
    """Without ?launch=full the study URL is "not checked here" and the verdict names it."""
    html = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    section = _launch_section(html)
    row = _row(section, "Study URL")
    assert "<strong>not checked here</strong>" in row and "?launch=full" in row
    assert f"<code>manage.py launch_check {demo_study.slug}</code>" in row
    heading = re.search(r'<h2 id="launch">(.*?)</h2>', section).group(1)
    assert heading != "Before you launch: go"
    assert heading in ("Before you launch: no-go", "Before you launch: go, except unchecked: Study URL")


def test_verdict_with_unchecked_item():
    """A report with no no-go but an unchecked item says "go, except unchecked: …"."""
    report = LaunchReport(subject="s")
    report.add("Pilot", GO, "ok")
    report.add("Webhook secret", WARNING, "not set")
    assert report.verdict == GO
    report.add("Study URL", UNCHECKED, "not fetched")
    assert report.verdict == "go, except unchecked: Study URL"
    report.add("Annotators", NO_GO, "too few")
    assert report.verdict == NO_GO and report.unchecked == ["Study URL"]


def test_full_check_on_the_page_fetches_the_url(staff_client, demo_study, settings):
    """With ?launch=full the study URL is fetched, so it is go or no-go, never unchecked."""
    settings.PROLIFIC_STUDY_BASE_URL = "http://127.0.0.1:9"  # nothing listens there
    html = staff_client.get(f"/researcher/{demo_study.slug}/", {"launch": "full"}).content.decode()
    row = _row(_launch_section(html), "Study URL")
    assert "<strong>no-go</strong>" in row and "not checked here" not in row


def test_backticks_become_code_and_markup_is_escaped():
    """Backtick spans render as <code>; any markup in the detail is escaped first."""
    assert code_spans("run `manage.py pilot x` now") == "run <code>manage.py pilot x</code> now"
    assert code_spans("`<b>x</b>` & <i>") == "<code>&lt;b&gt;x&lt;/b&gt;</code> &amp; &lt;i&gt;"
    assert code_spans("one ` only") == "one ` only"


def test_launch_details_on_the_page_show_no_backticks(staff_client, demo_study):
    """The launch check's details on the study page show commands as code, not backticks."""
    section = _launch_section(staff_client.get(f"/researcher/{demo_study.slug}/").content.decode())
    assert "`" not in section
    assert f"<code>manage.py pilot {demo_study.slug} --participants 10</code>" in section


def test_report_link_only_when_a_report_exists(staff_client, demo_study):
    """The study page links the latest analysis report only once a run has succeeded."""
    url = f"/researcher/{demo_study.slug}/"
    html = staff_client.get(url).content.decode()
    assert "Latest analysis report" not in html and "No analysis report yet" in html
    run = AnalysisRun.objects.create(study=demo_study, origin=AnalysisRun.Origin.COMMAND_LINE,
                                     status="failed", total=3)
    html = staff_client.get(url).content.decode()
    assert "Latest analysis report" not in html and "No analysis report yet" in html
    AnalysisRun.objects.filter(pk=run.pk).update(status="succeeded", done=3)
    html = staff_client.get(url).content.decode()
    assert "Latest analysis report" in html and "No analysis report yet" not in html
