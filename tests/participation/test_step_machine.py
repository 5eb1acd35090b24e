"""The step machine: a step registered by a test works in the flow, the preview, the pilot, the
monitor, Back and Forward and the export through one spec, one template and one register call,
with no other file touched (docs/architecture.md, "A new page kind"); the steps' SQL is written
out where a grep finds it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django import forms
from django.db import connection
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from spotlight_study.participation import steps
from spotlight_study.participation.forms import StepForm
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.participation.steps import statements
from spotlight_study.researcher.monitor import MonitorFilters, monitor_page
from spotlight_study.results.exports import export_rows, participant_columns

from ..conftest import Walker

READY_TEMPLATE = """{% extends "participation/step_base.html" %}
{% block content %}
<h1>Ready check</h1>
<p>{{ ready_question }}</p>
<form method="{{ form_method }}" action="{{ form_action }}">
  {% if form_method == "post" %}{% csrf_token %}{% endif %}
  {% include "participation/_hidden_token.html" %}
  {% for e in form.ready.errors %}<p class="error">{{ e }}</p>{% endfor %}
  <input name="ready" value="{{ form.ready.value|default:"" }}">
  <button type="submit">Continue</button>
</form>
{% endblock %}
"""


class ReadyForm(StepForm):
    """The test step's form: how ready the participant feels, ``yes`` or ``somewhat``."""

    ready = forms.ChoiceField(choices=[("yes", "yes"), ("somewhat", "somewhat")])


@pytest.fixture
def ready_step():
    """Registers a ``ready_check`` step after the instructions (spec and template), and takes
    it out again; yields the list of ``(participant id, answer)`` its save service recorded."""
    saved: list[tuple[int, str]] = []

    def save(turn, *, ready):
        saved.append((turn.participant.pk, ready))
        steps.advance(turn.participant, [])

    def pilot(pt):
        pt.turn.now = pt.advance(pt.seconds["ready_check"])
        return {"ready": pt.rng.choice(["yes", "somewhat"])}

    def export(ids):
        return {pk: {"ready": answer} for pk, answer in saved if pk in ids}

    spec = steps.StepSpec(
        key="ready_check",
        template="participation/ready_check.html",
        form=ReadyForm,
        context=lambda turn, form: {"ready_question": "Do you feel ready for the tasks?"},
        values=lambda form: {"ready": form.cleaned_data["ready"]},
        save=save,
        preview=lambda page: (ReadyForm(), {"ready_question": "Do you feel ready for the tasks?"}),
        pilot=pilot,
        statements=(statements.LOCKED_READ, statements.PARTICIPANT_SAVE),
        label=lambda task_index, n_tasks: "ready check",
        place=lambda p: (0, "Your readiness is saved", "this is the ready check"),
        started_at=lambda row, answers: row["consented_at"],
        pilot_seconds=lambda profile, study, rng: rng.uniform(5, 10),
        export_columns=("ready",),
        export=export,
    )
    # The site's template settings with the step's template in memory, looked up first.
    (django_templates,) = settings.TEMPLATES
    options = {key: value for key, value in django_templates["OPTIONS"].items() if key != "loaders"}
    with_ready = {
        **django_templates,
        "APP_DIRS": False,
        "OPTIONS": {
            **options,
            "loaders": [
                ("django.template.loaders.locmem.Loader", {"participation/ready_check.html": READY_TEMPLATE}),
                "django.template.loaders.filesystem.Loader",
                "django.template.loaders.app_directories.Loader",
            ],
        },
    }
    steps.register(spec, after="instructions")
    try:
        with override_settings(TEMPLATES=[with_ready]):
            yield saved
    finally:
        steps.unregister("ready_check")


def test_a_registered_step_works_in_the_participant_flow(client, demo_study, ready_step):
    """The test step follows the instructions, keeps a refused form as a draft and leads to the training task."""
    w = Walker(client, demo_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    html = w.page().content.decode()
    assert "Ready check" in html and "Do you feel ready for the tasks?" in html
    assert w.post({"ready": "maybe"}).status_code == 302
    refused = w.page().content.decode()
    assert "Ready check" in refused and 'value="maybe"' in refused and 'class="error"' in refused
    assert ready_step == []
    ready_token = w.token()
    w.post({"ready": "yes"})
    p = Participant.objects.get(prolific_pid=w.pid)
    assert ready_step == [(p.pk, "yes")]
    assert p.step == "training" and p.draft is None
    assert "stars (more often in group 2)" in w.page().content.decode()
    # A second post of the step's page is stale and records nothing.
    assert w.post({"ready": "somewhat"}, token=ready_token).status_code == 302
    assert ready_step == [(p.pk, "yes")]


def test_a_registered_step_is_a_page_of_the_preview(staff_client, demo_study, ready_step):
    """The preview walks the test step between the instructions and the training task, recording nothing."""
    url = f"/researcher/{demo_study.slug}/preview/0/consent/"
    visited = []
    while url:
        html = staff_client.get(url).content.decode()
        visited.append(url.rstrip("/").rsplit("/", 1)[1])
        if visited[-1] == "ready_check":
            assert "Ready check" in html and "nothing is recorded" in html
        match = re.search(r'<form method="get" action="([^"]+)"', html)
        url = match.group(1) if match else None
    assert visited == [
        "consent", "instructions", "ready_check", "training", "task-1", "task-2", "survey", "done",
    ]
    assert ready_step == [] and not Participant.objects.exists()


def test_a_registered_step_is_taken_by_pilot_participants(demo_study, ready_step):
    """Pilot participants pass the test step through its spec's pilot hook and save, then finish the flow."""
    seed = 11
    print(f"pilot seed {seed}")
    report = pilot_run(study=demo_study, participants=4, seed=seed)
    pilots = list(Participant.objects.filter(study=demo_study, is_pilot=True))
    assert sorted(pk for pk, _ in ready_step) == sorted(p.pk for p in pilots)
    assert {answer for _, answer in ready_step} <= {"yes", "somewhat"}
    assert report.completed == sum(p.status == Participant.Status.COMPLETED for p in pilots) > 0
    assert TaskResponse.objects.filter(participant__in=pilots, position=0).count() == 4


def test_a_registered_step_is_in_the_monitor(client, demo_study, ready_step):
    """The monitor names the test step by its label and times it from the spec's start."""
    w = Walker(client, demo_study.slug)
    w.enter()
    w.consent()
    w.instructions()
    p = Participant.objects.get(prolific_pid=w.pid)
    assert p.step == "ready_check"
    now = p.consented_at + timezone.timedelta(seconds=95)
    (row,) = monitor_page(study=demo_study, filters=MonitorFilters(), now=now).rows
    assert (row.step, row.step_seconds) == ("ready check", 95)


def test_a_registered_step_has_its_place_for_back_and_forward(client, demo_study, ready_step):
    """The test step's page carries its own words and the next order; the pages after it move on by one."""
    w = Walker(client, demo_study.slug)
    w.enter()
    seen = []
    for submit in (w.consent, w.instructions, lambda: w.post({"ready": "yes"})):
        seen.append(_place(w.page().content.decode()))
        submit()
    seen.append(_place(w.page().content.decode()))  # the training task
    assert seen[2] == (2, "Your readiness is saved", "this is the ready check")
    assert [order for order, _, _ in seen] == [0, 1, 2, 3]


def test_a_registered_step_has_its_columns_in_the_export(client, demo_study, ready_step):
    """participants.csv gets the test step's own column after the fixed ones, filled from its export hook."""
    answered = Walker(client, demo_study.slug)
    answered.enter()
    answered.consent()
    answered.instructions()
    answered.page()  # the ready check's page, whose token the post carries
    answered.post({"ready": "somewhat"})
    rows = export_rows(study=demo_study)["participants"]
    columns = participant_columns(rows)
    assert "ready" in columns and columns.index("ready") > columns.index("pilot")
    assert [row["ready"] for row in rows] == ["somewhat"]


def _place(html: str) -> tuple[int, str, str]:
    m = re.search(r'<main data-place-order="(\d+)" data-place-saved="([^"]*)" data-place-here="([^"]*)"', html)
    assert m, "the step page carries its place on <main>"
    return int(m.group(1)), m.group(2), m.group(3)


def test_the_flow_without_the_test_step_is_the_declared_order(db):
    """Without a test's step the machine's order is consent, instructions, training, the reread
    detour, task, survey, done, with a place for a study file's page before the training, the
    main tasks, the survey and the end (issue 36 §2)."""
    assert steps.flow_order == [
        "consent", "instructions", "page_after_instr", "check_after_instr", "quiz_after_instr",
        "training", "reread", "page_between_tasks", "check_between_tasks", "quiz_between_tasks",
        "task", "page_before_survey", "check_before_survey", "quiz_before_survey", "survey",
        "page_end", "check_end", "quiz_end", "done",
    ]
    with pytest.raises(ValueError):
        steps.register(steps.StepSpec(key="x", template="", form=None, context=dict, save=None,
                                      preview=dict), after="no_such_step")
    assert "x" not in steps.flow_order


@pytest.mark.parametrize("name,sql", [
    (statements.ANSWER_SAVED, statements.ANSWER_SAVED_SQL),
    (statements.TASK_SERVED, statements.TASK_SERVED_SQL),
    (statements.TYPED_DRAFT_SAVED, statements.TYPED_DRAFT_SAVED_SQL),
])
def test_the_steps_sql_is_written_out_as_it_runs(db, name, sql):
    """The literal SQL in steps/statements.py is the SQL the compiled statement runs on this database."""
    assert statements.compiled_sql_of(name, connection) == sql


def test_every_step_names_statements_that_exist():
    """Each registered step's ``statements`` are names defined in steps/statements.py."""
    known = {statements.LOCKED_READ, statements.PARTICIPANT_SAVE, statements.TASK_SERVED,
             statements.ANSWER_SAVED, statements.SURVEY_INSERTED, statements.TYPED_DRAFT_SAVED,
             statements.CHECK_ATTEMPT_KEPT}
    for key in steps.flow_order:
        assert set(steps.spec.spec_named(key).statements) <= known, key


def test_the_documented_files_of_a_new_page_kind_are_at_most_four():
    """docs/architecture.md lists at most 4 files for a new page kind, each a file a built-in kind has."""
    doc = (Path(settings.BASE_DIR) / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## A new page kind", 1)[1].split("\n## ", 1)[0]
    files = re.findall(r"^\d+\. `([^`]+)`", section, flags=re.MULTILINE)
    assert 1 <= len(files) <= 4, files
    for name in files:
        built_in = Path(settings.BASE_DIR) / name.replace("<kind>", "consent")
        # The test file is the new kind's own; its folder is the one that exists.
        assert (built_in.parent if name.startswith("tests/") else built_in).exists(), name


def test_the_registry_refuses_a_step_it_does_not_know(db):
    """Participant.step is plain text: entering a key no spec registered is refused, and nothing is saved."""
    p = Participant(step="consent")
    with pytest.raises(ValueError, match="'no_such_step' is not a step of the flow"):
        steps.spec.enter(p, "no_such_step", [])
    assert p.step == "consent"
    assert steps.step_key_validate("survey") == "survey"
