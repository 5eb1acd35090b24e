"""The live monitor: rows per participant, filters, auto-refresh fragment, access and speed."""
from __future__ import annotations

import re
import secrets
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.html import escape

from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.prolific.models import ProlificStudy, Submission
from spotlight_study.researcher import monitor as monitor_module
from spotlight_study.researcher.monitor import MonitorFilters, monitor_page
from spotlight_study.studies.models import Setting
from spotlight_study.studies.selectors import study_cells, study_get_with_settings

from ..annotation.conftest import make_user
from ..conftest import REPO, Walker


def _url(study, suffix: str = "") -> str:
    return f"/researcher/{study.slug}/monitor/{suffix}"


def _rows(html: str) -> list[str]:
    """The data rows of the monitor's tbody (the "no participant" row excluded)."""
    body = re.search(r'<tbody id="monitor-rows".*?</tbody>', html, re.S)
    return re.findall(r'<tr class="status-[^"]*">.*?</tr>', body.group(0), re.S) if body else []


def _bulk_participants(study, n: int, *, pilot: bool = False) -> list[Participant]:
    """``n`` participants who answered every main setting (rows written directly, fast)."""
    mains = [s for s in study.settings.all() if s.kind == Setting.Kind.MAIN]
    now = timezone.now()
    people = Participant.objects.bulk_create(
        Participant(
            study=study,
            prolific_pid=secrets.token_hex(12),
            prolific_study_id=secrets.token_hex(12),
            prolific_session_id=secrets.token_hex(12),
            cell_index=i % 2,
            cell_plan=[{"setting": s.key, "condition": "pattern"} for s in mains],
            assignment_counts={},
            assignment_seed=i,
            shuffle_seed=i,
            step="survey",
            task_index=len(mains) - 1,
            consented_at=now,
            instruction_check_passed=i % 3 != 0,
            is_pilot=pilot,
        )
        for i in range(n)
    )
    TaskResponse.objects.bulk_create(
        TaskResponse(
            participant=p,
            setting=s,
            position=k,
            condition="pattern",
            group1_order=[],
            group2_order=[],
            served_at=now - timedelta(seconds=60),
            last_served_at=now - timedelta(seconds=60),
            answer=f"answer {p.pk} {k}" if p.pk % 4 else "same text",
            answered_at=now,
            time_on_task_ms=60_000 if p.pk % 5 else 3_000,
            paste_count=p.pk % 7 == 0,
        )
        for p in people
        for k, s in enumerate(mains, start=1)
    )
    return people


@pytest.fixture
def researcher_client(client, db):
    """A client logged in as a member of the ``researchers`` group (not staff)."""
    client.force_login(make_user("researcher-monitor", "researchers"))
    return client


def test_monitor_is_for_researchers_only(demo_study, researcher_client):
    """Anonymous visitors go to the login page and annotators get 403; researchers get in."""
    annotator = Client()
    annotator.force_login(make_user("annotator-monitor", "annotators"))
    for url in (_url(demo_study), _url(demo_study, "rows/")):
        response = Client().get(url)
        assert response.status_code == 302 and "login" in response["Location"]
        assert annotator.get(url).status_code == 403
        assert researcher_client.get(url).status_code == 200


def test_rows_show_pseudonym_cell_step_flags_and_status(staff_client, demo_study):
    """Each participant is one row with pseudonym (never the PID), cell, step, flags, status."""
    done = Walker(Client(), demo_study.slug)
    done.complete(training="fishing")  # fails the instruction check, continues (policy)
    at_task = Walker(Client(), demo_study.slug)
    at_task.enter()
    at_task.consent()
    at_task.instructions()
    at_task.answer("The first group fishes by day, the second at night.")
    at_task.page()
    at_consent = Walker(Client(), demo_study.slug)
    at_consent.enter()
    html = staff_client.get(_url(demo_study)).content.decode()
    rows = _rows(html)
    assert len(rows) == 3
    for w in (done, at_task, at_consent):
        assert w.pid not in html
    by_pid = {
        w.pid: next(r for r in rows if participant_pseudonym(study=demo_study, prolific_pid=w.pid) in r)
        for w in (done, at_task, at_consent)
    }
    assert "<td>done</td>" in by_pid[done.pid] and "Completed" in by_pid[done.pid]
    assert "failed instruction check" in by_pid[done.pid]
    assert "<td>task 1 of 2</td>" in by_pid[at_task.pid] and "In progress" in by_pid[at_task.pid]
    assert "<td>consent</td>" in by_pid[at_consent.pid]
    assert "failed instruction check" not in by_pid[at_task.pid]
    # Newest first.
    assert rows[0] == by_pid[at_consent.pid]
    p = Participant.objects.get(prolific_pid=at_task.pid)
    label = study_cells(demo_study)[p.cell_index].label
    assert f'<td title="{escape(label)}">{p.cell_index}</td>' in by_pid[at_task.pid]


def test_step_time_and_time_so_far_follow_the_recorded_instants(demo_study):
    """Time on step runs from the serving of the current task page, time so far from arrival."""
    w = Walker(Client(), demo_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    w.answer("The first group fishes by day, the second at night.")
    w.page()  # task 1 served
    p = Participant.objects.get(prolific_pid=w.pid)
    start = timezone.now().replace(microsecond=0) - timedelta(hours=1)
    Participant.objects.filter(pk=p.pk).update(started_at=start)
    TaskResponse.objects.filter(participant=p, position=1).update(served_at=start + timedelta(minutes=10))
    study = study_get_with_settings(slug=demo_study.slug)
    now = start + timedelta(minutes=12, seconds=5)
    row = monitor_page(study=study, filters=MonitorFilters(), now=now).rows[0]
    assert (row.step, row.step_seconds, row.total_seconds) == ("task 1 of 2", 125, 725)
    assert (row.step_time, row.total_time) == ("2 min 05 s", "12 min 05 s")
    # Once done, the step has no running time and the total stops at the end.
    Participant.objects.filter(pk=p.pk).update(
        status=Participant.Status.COMPLETED,
        step="done",
        finished_at=start + timedelta(minutes=20),
    )
    row = monitor_page(study=study, filters=MonitorFilters(), now=now + timedelta(hours=5)).rows[0]
    assert (row.step, row.step_seconds, row.total_seconds) == ("done", None, 1200)


def test_flags_match_the_export(staff_client, demo_study):
    """The monitor's flags per participant are those of responses.csv (one definition)."""
    from spotlight_study.results.exports import export_rows

    _bulk_participants(demo_study, 12)
    exported: dict[str, set] = {}
    for r in export_rows(study=demo_study)["responses"]:
        exported.setdefault(r["participant"], set()).update(f for f in r["flags"].split(";") if f)
    study = study_get_with_settings(slug=demo_study.slug)
    rows = monitor_page(study=study, filters=MonitorFilters()).rows
    from spotlight_study.participation.flags import FLAG_LABELS

    labels_to_key = {v: k for k, v in FLAG_LABELS.items()}
    shown = {r.participant: {labels_to_key[label] for label, _n in r.flags} for r in rows}
    assert len(shown) == 12 and any(shown.values())
    assert shown == {p: exported.get(p, set()) for p in shown}


def test_filters_by_status_flag_and_pilot(staff_client, demo_study):
    """status and flag filters narrow the rows; pilots are shown only when asked for."""
    Walker(Client(), demo_study.slug).complete()
    Walker(Client(), demo_study.slug).complete(training="fishing")
    Walker(Client(), demo_study.slug).enter()
    pilot_run(study=demo_study, participants=3)

    def count(**params):
        response = staff_client.get(_url(demo_study), params)
        assert response.status_code == 200
        return len(_rows(response.content.decode()))

    assert count() == 3
    assert count(status="completed") == 2
    assert count(status="in_progress") == 1
    assert count(flag="failed_instruction_check") == 1
    assert count(flag="none") + count(flag="any") == 3
    assert count(pilot="only") == 3
    assert count(pilot="include") == 6
    assert "(pilot)" in staff_client.get(_url(demo_study), {"pilot": "only"}).content.decode()
    assert "(pilot)" not in staff_client.get(_url(demo_study)).content.decode()


@pytest.mark.parametrize(
    "params, word",
    [
        ({"status": "bogus"}, "status"),
        ({"flag": "<b>x</b>"}, "flag"),
        ({"pilot": "maybe"}, "pilot"),
        ({"page": "0"}, "page"),
        ({"page": "abc"}, "page"),
    ],
)
def test_bad_filter_values_give_a_message(staff_client, demo_study, params, word):
    """A bad GET value gives a 400 page naming the parameter (escaped), for page and rows."""
    Walker(Client(), demo_study.slug).enter()
    for url in (_url(demo_study), _url(demo_study, "rows/")):
        response = staff_client.get(url, params)
        html = response.content.decode()
        assert response.status_code == 400
        assert "These filters cannot be used" in html and f"{word}:" in html
        assert "<b>x</b>" not in html
        assert not _rows(html)


def test_rows_fragment_is_the_pages_tbody(staff_client, demo_study):
    """The rows URL returns only the tbody, with the same rows as the page and the same filters."""
    Walker(Client(), demo_study.slug).complete()
    Walker(Client(), demo_study.slug).enter()
    page = staff_client.get(_url(demo_study), {"status": "completed"}).content.decode()
    refresh_url = re.search(r'data-refresh-url="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert refresh_url.startswith(_url(demo_study, "rows/")) and "status=completed" in refresh_url
    fragment = staff_client.get(refresh_url)
    body = fragment.content.decode()
    assert fragment.status_code == 200 and fragment["Cache-Control"] == "no-store"
    assert body.lstrip().startswith('<tbody id="monitor-rows"') and "<html" not in body
    assert _rows(body) == _rows(page) and len(_rows(body)) == 1
    assert 'data-summary="1 participant.' in body


def test_page_uses_a_static_script_and_no_inline_script(staff_client, demo_study):
    """The refresh is a static JS file (CSP allows no inline script) that pauses when hidden."""
    html = staff_client.get(_url(demo_study)).content.decode()
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all('src="' in attrs and not body.strip() for attrs, body in scripts)
    assert any("js/monitor.js" in attrs for attrs, _ in scripts)
    js = (REPO / "static" / "js" / "monitor.js").read_text()
    assert "visibilitychange" in js and "monitor-rows" in js


def test_prolific_status_comes_from_the_latest_submission(staff_client, demo_study):
    """The Prolific status column shows the latest known submission status of the participant."""
    w = Walker(Client(), demo_study.slug)
    w.enter()
    p = Participant.objects.get(prolific_pid=w.pid)
    link = ProlificStudy.objects.create(study=demo_study, prolific_id="a" * 24)
    now = timezone.now()
    for i, status in enumerate(["ACTIVE", "AWAITING REVIEW"]):
        Submission.objects.create(
            prolific_study=link, submission_id=f"s{i}", prolific_pid=w.pid, participant=p,
            status=status, status_at=now + timedelta(seconds=i),
        )
    row = _rows(staff_client.get(_url(demo_study)).content.decode())[0]
    assert "<td>AWAITING REVIEW</td>" in row


def test_pages_of_200_rows(staff_client, demo_study, monkeypatch):
    """Rows are paginated; the last page holds the rest and a page past the end shows the last."""
    monkeypatch.setattr(monitor_module, "PAGE_SIZE", 5)
    _bulk_participants(demo_study, 12)
    assert len(_rows(staff_client.get(_url(demo_study)).content.decode())) == 5
    last = staff_client.get(_url(demo_study), {"page": "3"}).content.decode()
    assert len(_rows(last)) == 2 and "Page 3 of 3" in last
    assert len(_rows(staff_client.get(_url(demo_study), {"page": "99"}).content.decode())) == 2


def test_query_count_does_not_grow_with_participants(staff_client, demo_study):
    """The page and the rows fragment issue as many queries for 100 participants as for 10."""
    counts = {}
    for total in (10, 100):
        _bulk_participants(demo_study, total - Participant.objects.count())
        counts[total] = []
        for url in (_url(demo_study), _url(demo_study, "rows/")):
            with CaptureQueriesContext(connection) as ctx:
                response = staff_client.get(url, {"pilot": "include"})
            assert response.status_code == 200
            assert len(_rows(response.content.decode())) == total
            counts[total].append(len(ctx.captured_queries))
    assert counts[10] == counts[100]
    assert max(counts[100]) <= 15


def test_study_page_links_the_monitor(staff_client, demo_study):
    """The researcher study page links the live monitor."""
    html = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    assert f'href="{_url(demo_study)}"' in html


def test_page_past_the_end_says_so_and_shows_the_last_page(staff_client, demo_study):
    """?page=999 shows the last page's rows and says the page asked for is past the end."""
    Walker(Client(), demo_study.slug).enter()
    Walker(Client(), demo_study.slug).complete()
    for url in (_url(demo_study), _url(demo_study, "rows/")):
        response = staff_client.get(url, {"page": "999"})
        html = response.content.decode()
        assert response.status_code == 200 and len(_rows(html)) == 2
        assert "Page 999 is past the end: showing the last page, 1 of 1." in html


@pytest.mark.parametrize("name, values", [("status", ["completed", "returned"]), ("page", ["1", "2"])])
def test_repeated_filter_parameter_is_refused(staff_client, demo_study, name, values):
    """A filter given twice (?status=completed&status=returned) is a 400 naming the parameter."""
    Walker(Client(), demo_study.slug).complete()
    for url in (_url(demo_study), _url(demo_study, "rows/")):
        response = staff_client.get(url, {name: values})
        html = response.content.decode()
        assert response.status_code == 400
        assert f"{name}: Given 2 times ({', '.join(values)}); give one value." in html
        assert not _rows(html)
