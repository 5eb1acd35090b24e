"""The ``info`` pages a study file inserts into the flow (``pages:``, issue 36 §2): validation,
export of the study file, their places in the flow, the server's minimum time, double submit and
stale tabs, the preview, the pilot and the monitor."""
from __future__ import annotations

import re

import pytest
from django.utils import timezone

from spotlight_study.participation.models import Participant
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.researcher.monitor import MonitorFilters, monitor_page
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.schema import validate_study_data
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import

from ..conftest import Walker

PAGES = [
    {"kind": "info", "at": "after_instructions", "title": "A short note", "text": "Read this first."},
    {"kind": "info", "at": "between_tasks", "title": "A break", "text": "Rest a moment.", "min_seconds": 30},
    {"kind": "info", "at": "before_survey", "title": "Almost done", "text": "Now a few questions."},
    {"kind": "info", "at": "end", "title": "Debrief", "text": "The study was about patterns."},
]


@pytest.fixture
def paged_study(db, demo_data):
    """The demo study with an info page at every place (a 30 s break between the tasks)."""
    study_import(data={**demo_data, "pages": PAGES, "slug": "paged-demo"})
    return study_get_with_settings(slug="paged-demo")


def _errors(data: dict) -> dict:
    with pytest.raises(StudyFileError) as exc:
        validate_study_data(data)
    return exc.value.errors


def test_pages_are_validated_with_a_clear_message_per_entry(demo_data):
    """A bad place, an unknown kind, an unknown key and two pages at one place are each named."""
    errors = _errors({**demo_data, "pages": [
        {"kind": "info", "at": "middle", "title": "t", "text": "x"},
        {"kind": "attention_quiz", "at": "end", "title": "t", "text": "x"},
        {"kind": "info", "at": "end", "title": "t", "text": "x", "min_secs": 3},
    ]})
    text = repr(errors)
    assert "`middle` is not a place" in text
    assert "Unknown page kind `attention_quiz`" in text
    assert "min_secs" in text and "min_seconds" in text  # the unknown key, with a suggestion
    errors = _errors({**demo_data, "pages": [PAGES[3], {**PAGES[3], "title": "Again"}]})
    assert "more than one is at: end" in repr(errors)
    assert "min_seconds" in repr(_errors({**demo_data, "pages": [{**PAGES[0], "min_seconds": -1}]}))


def test_a_study_without_pages_exports_as_before_and_with_pages_round_trips(demo_study, paged_study):
    """export_study leaves out an empty pages list and writes declared pages back as imported."""
    assert "pages" not in study_file_data(demo_study)
    exported = study_file_data(paged_study)
    assert exported["pages"] == [{"min_seconds": 0, **p} for p in PAGES[:1]] + [
        PAGES[1], {"min_seconds": 0, **PAGES[2]}, {"min_seconds": 0, **PAGES[3]}
    ]
    assert validate_study_data(exported)["pages"] == exported["pages"]


def _title(w: Walker) -> str:
    return re.search(r"<h1>([^<]*)</h1>", w.page().content.decode()).group(1)


def _pass_info(w: Walker) -> None:
    w.page()
    w.post({})


def test_the_pages_stand_at_their_places_and_the_break_waits_by_server_time(client, paged_study):
    """Each page comes at its place; the break refuses a continue before 30 s of server time without a write."""
    w = Walker(client, paged_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    assert _title(w) == "A short note"
    _pass_info(w)
    w.answer("The first group fishes by day, the second at night.")
    p = Participant.objects.get(prolific_pid=w.pid)
    assert p.step == "page_between_tasks"
    assert _title(w) == "A break" and "You can continue in 30 seconds." in w.last_page.content.decode()
    early = w.post({})
    p.refresh_from_db()
    assert p.step == "page_between_tasks"
    assert "a little longer" in client.get(early["Location"]).content.decode()
    # Thirty seconds on: the page was entered 30 s ago by the server's time stamp.
    Participant.objects.filter(pk=p.pk).update(updated_at=timezone.now() - timezone.timedelta(seconds=31))
    token = w.token()
    w.post({}, token=token)
    p.refresh_from_db()
    assert (p.step, p.task_index) == ("task", 0)
    # A second post of the break (double submit, a stale tab) changes nothing.
    w.post({}, token=token)
    p.refresh_from_db()
    assert (p.step, p.task_index) == ("task", 0)
    w.answer("Group 2 describes the doctor as a woman more often.")
    w.answer("Group 1 grows maize and beans, group 2 wheat.")
    assert _title(w) == "Almost done"
    _pass_info(w)
    # The closing page follows: the survey is not called the last step, and its button continues.
    survey = w.page().content.decode()
    assert "Last step" not in survey and "Finish and return to Prolific" not in survey
    w.survey()
    assert _title(w) == "Debrief"
    _pass_info(w)
    p.refresh_from_db()
    assert (p.step, p.status) == ("done", Participant.Status.COMPLETED)


def test_a_study_without_pages_passes_their_places_by(client, demo_study):
    """Without pages the participant goes from the instructions straight to the example task."""
    w = Walker(client, demo_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    assert Participant.objects.get(prolific_pid=w.pid).step == "training"


def test_the_pages_have_their_places_for_back_and_forward(client, paged_study):
    """The note after the instructions has the next order and its own words; the example task comes after it."""
    w = Walker(client, paged_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    html = w.page().content.decode()
    m = re.search(r'<main data-place-order="(\d+)" data-place-saved="([^"]*)" data-place-here="([^"]*)"', html)
    assert (int(m.group(1)), m.group(3)) == (2, "this is the page “A short note”")
    _pass_info(w)
    html = w.page().content.decode()
    assert re.search(r'<main data-place-order="(\d+)"', html).group(1) == "3"


def test_the_preview_shows_each_page_in_every_cell(staff_client, paged_study):
    """The preview of each cell walks the four pages at their places and records nothing."""
    from spotlight_study.studies.selectors import study_cells

    for index, _cell in enumerate(study_cells(paged_study)):
        url = f"/researcher/{paged_study.slug}/preview/{index}/consent/"
        visited = []
        while url:
            html = staff_client.get(url).content.decode()
            visited.append(url.rstrip("/").rsplit("/", 1)[1])
            if visited[-1] == "survey":  # a page follows it: Continue, not Finish
                assert "Finish and return to Prolific" not in html
            if visited[-1] == "page_end":
                assert "Debrief" in html and "The study was about patterns." in html
            match = re.search(r'<form method="get" action="([^"]+)"', html)
            url = match.group(1) if match else None
        assert visited == [
            "consent", "instructions", "page_after_instr", "training", "page_between_tasks",
            "task-1", "task-2", "page_before_survey", "survey", "page_end", "done",
        ]
    assert not Participant.objects.exists()


def test_pilot_participants_take_the_pages(paged_study):
    """Pilot participants pass every page and finish; a study without pages keeps its pilot numbers."""
    seed = 7
    print(f"pilot seed {seed}")
    report = pilot_run(study=paged_study, participants=3, seed=seed)
    pilots = list(Participant.objects.filter(study=paged_study, is_pilot=True))
    assert report.completed == sum(p.status == Participant.Status.COMPLETED for p in pilots) > 0
    assert all(p.step in ("done",) for p in pilots if p.status == Participant.Status.COMPLETED)


def test_the_monitor_names_the_page_and_times_it(client, paged_study):
    """The monitor labels a participant on a page by its place and times it from entering it."""
    w = Walker(client, paged_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    p = Participant.objects.get(prolific_pid=w.pid)
    (row,) = monitor_page(study=paged_study, filters=MonitorFilters(),
                          now=p.updated_at + timezone.timedelta(seconds=12)).rows
    assert (row.step, row.step_seconds) == ("page (after_instructions)", 12)


@pytest.mark.parametrize("code,wait,here", [
    ("de", "Sie können in 30 Sekunden weitermachen.", "dies ist die Seite „Pause“"),
    ("es", "Podrá continuar en 30 segundos.", "esta es la página «Pause»"),
    ("fr", "Vous pourrez continuer dans 30 secondes.", "ceci est la page « Pause »"),
])
def test_the_page_speaks_the_study_language(db, client, demo_data, code, wait, here):
    """An info page's own words (the wait, its place for Back) are in the study's language; its title is the researcher's."""
    page = {"kind": "info", "at": "after_instructions", "title": "Pause", "text": "Text.", "min_seconds": 30}
    study_import(data={**demo_data, "language": code, "pages": [page]})
    w = Walker(client, demo_data["slug"])
    w.enter()
    w.consent()
    w.instructions()
    html = w.page().content.decode()
    assert "<h1>Pause</h1>" in html and wait in html and f'data-place-here="{here}"' in html
