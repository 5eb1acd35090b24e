"""The step machine: a step registered by a test works in the flow, the preview and the pilot
through one spec and one template; the steps' SQL is written out where a grep finds it."""
from __future__ import annotations

import re

import pytest
from django import forms
from django.db import connection
from django.conf import settings
from django.test import override_settings

from spotlight_study.participation import steps
from spotlight_study.participation.forms import StepForm
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.participation.steps import statements

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
        return {"ready": pt.rng.choice(["yes", "somewhat"])}

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


def test_the_flow_without_the_test_step_is_the_declared_order(db):
    """Without a test's step the machine's order is consent, instructions, training, the reread
    detour, task, survey, done."""
    assert steps.flow_order == ["consent", "instructions", "training", "reread", "task", "survey", "done"]
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
