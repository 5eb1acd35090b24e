"""The researcher's hand on stalled participants in the monitor: idle time, the idle filter, and
ending one or every filtered participant with a confirmation step; the place is free at once."""
from __future__ import annotations

import re
from datetime import timedelta

from django.test import Client
from django.utils import timezone

from spotlight_study.participation.models import Participant, ParticipantEnding
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.researcher.monitor import MonitorFilters, monitor_page
from spotlight_study.results.exports import export_rows
from spotlight_study.studies.selectors import study_cells

from ..conftest import Walker


def _arrive(study, n: int) -> list[Participant]:
    """``n`` participants arrive (each with their own browser) and consent."""
    people = []
    for _ in range(n):
        w = Walker(Client(), study.slug)
        w.enter()
        w.consent()
        people.append(Participant.objects.get(prolific_pid=w.pid))
    return people


def _stall(p: Participant, minutes: int) -> None:
    """Make ``p``'s last activity ``minutes`` ago (a participant who stopped there)."""
    Participant.objects.filter(pk=p.pk).update(updated_at=timezone.now() - timedelta(minutes=minutes))


def _pseudonym(study, p: Participant) -> str:
    return participant_pseudonym(study=study, prolific_pid=p.prolific_pid)


def test_a_stalled_participant_ended_from_the_monitor_frees_their_place_for_the_next_arrival(
    staff_client, demo_study
):
    """Every cell holds one participant; the stalled one is ended on the monitor, and the next arrival gets their cell."""
    n_cells = len(study_cells(demo_study))
    people = _arrive(demo_study, n_cells)
    assert sorted(p.cell_index for p in people) == list(range(n_cells))
    stalled = people[0]
    _stall(stalled, 50)
    pseudonym = _pseudonym(demo_study, stalled)

    monitor = staff_client.get(f"/researcher/{demo_study.slug}/monitor/?idle=30").content.decode()
    assert pseudonym in monitor and monitor.count(">End…</a>") == 1
    confirm = staff_client.get(f"/researcher/{demo_study.slug}/monitor/end/?participant={pseudonym}")
    html = confirm.content.decode()
    assert confirm.status_code == 200 and pseudonym in html and "This cannot be undone" in html
    assert Participant.objects.get(pk=stalled.pk).status == Participant.Status.IN_PROGRESS  # only asked

    done = staff_client.post(f"/researcher/{demo_study.slug}/monitor/end/",
                             {"participant": pseudonym, "reason": "No activity for 50 minutes."})
    assert done.status_code == 302
    stalled.refresh_from_db()
    assert stalled.status == Participant.Status.ENDED_BY_RESEARCHER and stalled.finished_at
    ending = ParticipantEnding.objects.get(participant=stalled)
    assert ending.reason == "No activity for 50 minutes." and ending.ended_by.is_staff
    assert ending.ended_via == "monitor" and ending.idle_seconds >= 50 * 60 and ending.step == "instructions"

    (newcomer,) = _arrive(demo_study, 1)
    assert newcomer.cell_index == stalled.cell_index


def test_the_monitor_shows_idle_time_and_filters_by_it(demo_study):
    """Idle time runs from the last activity; the filter keeps participants idle for more than N minutes."""
    quiet, busy = _arrive(demo_study, 2)
    _stall(quiet, 20)
    now = timezone.now()
    rows = {r.participant: r for r in monitor_page(study=demo_study, filters=MonitorFilters(), now=now).rows}
    assert 20 * 60 <= rows[_pseudonym(demo_study, quiet)].idle_seconds < 21 * 60
    assert rows[_pseudonym(demo_study, busy)].idle_seconds < 60
    idle = monitor_page(study=demo_study, filters=MonitorFilters(idle_minutes=10), now=now).rows
    assert [r.participant for r in idle] == [_pseudonym(demo_study, quiet)]


def test_every_filtered_participant_is_ended_after_confirmation(staff_client, demo_study):
    """"End every participant idle for more than N minutes" lists exactly them, and ends exactly them."""
    a, b, c = _arrive(demo_study, 3)
    _stall(a, 40)
    _stall(b, 35)
    url = f"/researcher/{demo_study.slug}/monitor/end/?idle=30&pilot=exclude"
    html = staff_client.get(url).content.decode()
    listed = re.findall(r'name="participant" value="([^"]+)"', html)
    assert sorted(listed) == sorted([_pseudonym(demo_study, a), _pseudonym(demo_study, b)])
    staff_client.post(f"/researcher/{demo_study.slug}/monitor/end/",
                      {"participant": listed, "reason": "Stalled at the instructions.", "query": "idle=30"})
    statuses = dict(Participant.objects.values_list("pk", "status"))
    assert statuses == {a.pk: "ended_by_researcher", b.pk: "ended_by_researcher", c.pk: "in_progress"}
    assert ParticipantEnding.objects.count() == 2


def test_ending_without_a_reason_changes_nothing(staff_client, demo_study):
    """A missing reason shows the confirmation again with the message (400); nobody is ended."""
    (p,) = _arrive(demo_study, 1)
    response = staff_client.post(f"/researcher/{demo_study.slug}/monitor/end/",
                                 {"participant": _pseudonym(demo_study, p), "reason": "  "})
    assert response.status_code == 400
    assert "Give a reason for ending" in response.content.decode()
    assert Participant.objects.get(pk=p.pk).status == Participant.Status.IN_PROGRESS
    assert not ParticipantEnding.objects.exists()


def test_an_ended_participant_is_ended_in_the_monitor_and_the_export(staff_client, demo_study):
    """The monitor says "Ended by the researcher" and the export's status column ended_by_researcher."""
    (p,) = _arrive(demo_study, 1)
    staff_client.post(f"/researcher/{demo_study.slug}/monitor/end/",
                      {"participant": _pseudonym(demo_study, p), "reason": "Stalled."})
    (row,) = monitor_page(study=demo_study, filters=MonitorFilters()).rows
    assert (row.status_label, row.step_seconds, row.idle_seconds) == ("Ended by the researcher", None, None)
    (person,) = export_rows(study=demo_study)["participants"]
    assert person["status"] == "ended_by_researcher"


def test_a_crafted_return_query_neither_breaks_nor_leaves_the_monitor(staff_client, demo_study):
    """The posted monitor query keeps only the monitor's own filters: a line break or another
    address in it gives the monitor, never an error."""
    (p,) = _arrive(demo_study, 1)
    response = staff_client.post(f"/researcher/{demo_study.slug}/monitor/end/", {
        "participant": _pseudonym(demo_study, p), "reason": "Stalled.",
        "query": "idle=30&next=https://evil.example/\r\nX-Injected: 1",
    })
    assert response.status_code == 302
    assert response["Location"] == f"/researcher/{demo_study.slug}/monitor/?idle=30"
