"""Accepting the machine coder's labels as final: explicit, audited, reversible, never over a human."""

from __future__ import annotations

import csv
import io
import secrets

import pytest
from django.core.management import CommandError, call_command

from spotlight_study.annotation.errors import MachineAcceptanceError
from spotlight_study.annotation.exports import export_csv_text, final_label_rows
from spotlight_study.annotation.machine_agreement import machine_agreement
from spotlight_study.annotation.machine_coding import (
    machine_coding_job_create,
    machine_coding_run_now,
)
from spotlight_study.annotation.models import FinalLabel, Item, MachineAcceptance, MachineLabel
from spotlight_study.annotation.overview import agreement_report
from spotlight_study.annotation.selectors import adjudication_queue, machine_accepted_fields
from spotlight_study.annotation.services.adjudication import adjudication_save
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.machine_acceptance import (
    machine_labels_accept,
    machine_labels_revoke,
)
from spotlight_study.annotation.services.queue import assignment_next, assignment_skip
from spotlight_study.results.exports import export_rows

from tests.openai_server import FakeCoder

from .conftest import label, make_user


@pytest.fixture
def coder(settings):
    """The fake coding server on 127.0.0.1, with the app pointed at it (jobs run by hand)."""
    key = f"sk-test-{secrets.token_hex(16)}"
    server = FakeCoder(key).start()
    settings.OPENAI_BASE_URL = server.url
    settings.OPENAI_API_KEY = key
    settings.OPENAI_MAX_RETRIES = 0
    settings.OPENAI_TIMEOUT_SECONDS = 60  # a hang guard: a retry after a timeout would change the counts
    settings.STIMULI_JOB_RUNNER = "manual"
    yield server
    server.stop()


def _code(study, model: str = "gpt-test", **kwargs) -> None:
    job = machine_coding_job_create(study=study, model=model, **kwargs)
    machine_coding_run_now(job_id=job.pk)


@pytest.fixture
def researcher(db):
    """A staff researcher."""
    return make_user("res", staff=True)


def _label_one_item_twice(study, annotators, **fields) -> Item:
    """The first two annotators label the same item (k = 2): agreeing unless told otherwise.

    The second annotator skips (does not label) the other items the queue offers first, in its
    random order, so that no annotator runs out of items for a later call.
    """
    first = assignment_next(study=study, annotator=annotators[0])
    label_save(study=study, annotator=annotators[0], public_id=first.public_id, label=label())
    while True:
        item = assignment_next(study=study, annotator=annotators[1])
        if item.pk == first.pk:
            label_save(
                study=study, annotator=annotators[1], public_id=item.public_id, label=label(**fields)
            )
            return item
        assignment_skip(study=study, annotator=annotators[1], public_id=item.public_id)


def test_refuses_without_machine_labels(demo_study, answered, researcher):
    """No machine labels at all: a clear refusal naming llm_annotate, nothing written."""
    with pytest.raises(MachineAcceptanceError, match="run manage.py llm_annotate first") as exc:
        machine_labels_accept(study=demo_study, model="gpt-test", fields=["identified"])
    assert exc.value.code == "machine_labels_not_found" and exc.value.http_status == 404
    assert not FinalLabel.objects.exists() and not MachineAcceptance.objects.exists()


def test_refuses_unknown_model_and_field(coder, demo_study, answered):
    """An unknown model names the models with labels; an unknown field names the valid ones."""
    _code(demo_study)
    with pytest.raises(MachineAcceptanceError, match="with labels in this study: gpt-test"):
        machine_labels_accept(study=demo_study, model="gpt-other", fields=["identified"])
    with pytest.raises(MachineAcceptanceError, match="Unknown label field.*colour.*identified"):
        machine_labels_accept(study=demo_study, model="gpt-test", fields=["colour"])
    with pytest.raises(MachineAcceptanceError, match="at least one label field"):
        machine_labels_accept(study=demo_study, model="gpt-test", fields=[])
    assert not FinalLabel.objects.exists() and not MachineAcceptance.objects.exists()


def test_accept_fills_items_without_a_human_final_label_only(
    coder, demo_study, answered, annotators, researcher
):
    """Machine values become final where no human decided; the human final label is untouched;
    the acceptance is logged with who, when, model, field and count."""
    agreed = _label_one_item_twice(demo_study, annotators, identified=True)
    human = FinalLabel.objects.get(item=agreed)
    assert human.source == FinalLabel.Source.AGREEMENT
    _code(demo_study)
    MachineLabel.objects.filter(item=agreed).update(identified=False)  # disagrees with the humans
    report = machine_labels_accept(
        study=demo_study, model="llm:gpt-test", fields=["identified"], user=researcher
    )
    assert report.model == "gpt-test" and report.human_final == 1
    assert report.items == {"identified": 5}
    human.refresh_from_db()
    assert (human.source, human.identified) == (FinalLabel.Source.AGREEMENT, True)
    machine = FinalLabel.objects.filter(source=FinalLabel.Source.MACHINE).select_related("item")
    assert machine.count() == 5
    for final in machine:
        ml = MachineLabel.objects.get(item=final.item, model="gpt-test")
        assert final.identified is ml.identified
        assert (final.machine_model, final.machine_fields) == ("gpt-test", ["identified"])
        assert final.surface_difference is None and final.tags is None and final.exclusion is None
    (entry,) = MachineAcceptance.objects.all()
    assert (entry.action, entry.model, entry.field, entry.items) == ("accept", "gpt-test", "identified", 5)
    assert entry.user == researcher and entry.actor == "res" and entry.at is not None
    assert machine_accepted_fields(study=demo_study) == {"identified": "gpt-test"}


def test_exports_show_the_machine_source(coder, demo_study, answered):
    """final_labels.csv and responses.csv say which labels came from the machine coder."""
    _code(demo_study)
    machine_labels_accept(
        study=demo_study, model="gpt-test", fields=["identified", "tags", "no_difference"]
    )
    rows = list(csv.DictReader(io.StringIO(export_csv_text(study=demo_study, name="final_labels"))))
    assert len(rows) == 6
    for row in rows:
        assert (row["status"], row["source"], row["machine_model"]) == (
            "final", "machine", "llm:gpt-test"
        )
        assert row["machine_fields"] == "identified;no_difference;tags"
        assert row["identified"] in ("0", "1") and row["surface_difference"] == ""
        assert row["exclusion"] == ""
    responses = export_rows(study=demo_study)["responses"]
    assert responses and {r["label_source"] for r in responses} == {"machine:llm:gpt-test"}
    assert all(r["identified"] in (0, 1) and r["other_difference"] == 0 for r in responses)


def test_machine_final_is_never_the_reference_of_agreement(
    coder, demo_study, answered, annotators
):
    """Kappa against "final" uses human final labels only, so the machine never meets itself."""
    _label_one_item_twice(demo_study, annotators)
    _code(demo_study)
    machine_labels_accept(study=demo_study, model="gpt-test", fields=["identified"])
    rows, _ = machine_agreement(study=demo_study, n_resamples=200)
    (vs_final,) = [
        r for r in rows if r.comparison == "machine_vs_final" and r.field == "identified"
    ]
    assert vs_final.result.n_items == 1  # the one human final label
    vs = [r for r in agreement_report(study=demo_study) if r.comparison == "vs_final"]
    assert vs and all(r.result.n_items <= 1 for r in vs)


def test_humans_replace_the_machine_label_later(
    coder, demo_study, answered, annotators, adjudicator
):
    """Agreeing humans replace a machine final label; disagreeing ones keep it until an
    adjudicator decides, and the item stays in the adjudication queue."""
    _code(demo_study)
    machine_labels_accept(study=demo_study, model="gpt-test", fields=["identified"])
    agreed = _label_one_item_twice(demo_study, annotators)
    final = FinalLabel.objects.get(item=agreed)
    assert (final.source, final.machine_model, final.machine_fields) == ("agreement", "", [])
    assert final.surface_difference is False
    disputed = _label_one_item_twice(demo_study, annotators[1:], identified=False)
    assert FinalLabel.objects.get(item=disputed).source == FinalLabel.Source.MACHINE
    assert disputed.public_id in adjudication_queue(study=demo_study, adjudicator=adjudicator)
    adjudication_save(
        study=demo_study, adjudicator=adjudicator, public_id=disputed.public_id, label=label()
    )
    final = FinalLabel.objects.get(item=disputed)
    assert (final.source, final.identified, final.machine_fields) == ("adjudication", True, [])
    rows = {r["item"]: r for r in final_label_rows(study=demo_study)}
    assert rows[disputed.public_id]["source"] == "adjudication"
    assert rows[disputed.public_id].get("machine_model", "") == ""


def test_revoke_undoes_the_acceptance_and_keeps_the_log(coder, demo_study, answered, annotators):
    """Revoking removes the accepted fields (deleting emptied machine final labels), leaves
    human final labels alone, and adds a revoke entry to the log."""
    agreed = _label_one_item_twice(demo_study, annotators)
    _code(demo_study)
    machine_labels_accept(study=demo_study, model="gpt-test", fields=["identified", "exclusion"])
    report = machine_labels_revoke(study=demo_study, model="gpt-test", fields=["exclusion"])
    assert report.items == {"exclusion": 5}
    assert set(
        FinalLabel.objects.filter(source="machine").values_list("exclusion", flat=True)
    ) == {None}
    machine_labels_revoke(study=demo_study, model="gpt-test", fields=["identified"])
    assert list(FinalLabel.objects.values_list("item", flat=True)) == [agreed.pk]
    assert list(MachineAcceptance.objects.values_list("action", "field")) == [
        ("accept", "identified"), ("accept", "exclusion"),
        ("revoke", "exclusion"), ("revoke", "identified"),
    ]
    assert machine_accepted_fields(study=demo_study) == {}
    with pytest.raises(MachineAcceptanceError, match="not accepted for identified"):
        machine_labels_revoke(study=demo_study, model="gpt-test", fields=["identified"])


def test_one_model_at_a_time(coder, demo_study, answered):
    """A second model cannot be accepted while another one is; after a revoke it can."""
    _code(demo_study)
    _code(demo_study, model="gpt-two")
    machine_labels_accept(study=demo_study, model="gpt-test", fields=["identified"])
    with pytest.raises(MachineAcceptanceError, match=r"identified \(llm:gpt-test\).*Revoke"):
        machine_labels_accept(study=demo_study, model="gpt-two", fields=["tags"])
    machine_labels_revoke(study=demo_study, model="gpt-test", fields=["identified"])
    machine_labels_accept(study=demo_study, model="gpt-two", fields=["tags"])
    assert set(FinalLabel.objects.values_list("machine_model", flat=True)) == {"gpt-two"}


def test_only_missing_machine_labels_are_refused(coder, demo_study, answered):
    """A model whose every label is missing has nothing to accept."""
    _code(demo_study)
    MachineLabel.objects.update(status=MachineLabel.Status.MISSING, identified=None)
    with pytest.raises(MachineAcceptanceError, match="is missing"):
        machine_labels_accept(study=demo_study, model="gpt-test", fields=["identified"])


def test_command_accepts_revokes_and_shows_the_log(coder, demo_study, answered, researcher):
    """``manage.py llm_accept`` reports the counts, refuses clearly, and logs every run."""
    with pytest.raises(CommandError, match="no machine labels of model 'gpt-test'"):
        call_command("llm_accept", demo_study.slug, "--model", "gpt-test", "--label", "identified")
    _code(demo_study)
    out = io.StringIO()
    call_command(
        "llm_accept", demo_study.slug, "--model", "gpt-test", "--label", "identified",
        "--label", "tags", "--by", "res", stdout=out,
    )
    text = out.getvalue()
    assert "Accepted llm:gpt-test for identified, tags" in text
    assert "identified: 6 item(s) given the machine value" in text
    assert "0 item(s) with a human final label left unchanged" in text
    with pytest.raises(CommandError, match="--by: there is no user named 'nobody'"):
        call_command(
            "llm_accept", demo_study.slug, "--model", "gpt-test", "--label", "tags",
            "--by", "nobody",
        )
    with pytest.raises(CommandError, match="--model is required"):
        call_command("llm_accept", demo_study.slug, "--label", "tags")
    out = io.StringIO()
    call_command(
        "llm_accept", demo_study.slug, "--model", "gpt-test", "--label", "tags", "--revoke",
        stdout=out,
    )
    assert "Revoked llm:gpt-test for tags" in out.getvalue()
    out = io.StringIO()
    call_command("llm_accept", demo_study.slug, "--log", stdout=out)
    log = out.getvalue().splitlines()
    assert len(log) == 3 and "accept llm:gpt-test identified by res: 6 item(s)" in log[0]
    assert "revoke llm:gpt-test tags" in log[2]


def test_overview_button_is_staff_only_and_needs_confirmation(coder, demo_study, answered, client):
    """The overview's form: staff only, POST only, nothing changes without the confirmation."""
    _code(demo_study)
    url = f"/annotate/{demo_study.slug}/overview/machine-accept/"
    data = {"model": "gpt-test", "fields": ["identified"], "action": "accept"}
    client.force_login(make_user("member", "researchers"))  # a researcher, but not staff
    assert client.post(url, {**data, "confirm": "on"}).status_code == 403
    page = client.get(f"/annotate/{demo_study.slug}/overview/").content.decode()
    assert "machine-accept-form" not in page and "No machine labels are accepted" in page
    client.force_login(make_user("boss", staff=True))
    assert client.get(url).status_code == 405
    response = client.post(url, data, follow=True)
    assert "Nothing was changed. confirm: Tick the box to confirm." in response.content.decode()
    assert not FinalLabel.objects.exists()
    response = client.post(url, {**data, "confirm": "on"}, follow=True)
    page = response.content.decode()
    assert "Accepted llm:gpt-test as final labels for identified: 6 item(s)" in page
    assert "machine-accept-form" in page and "<li>identified: llm:gpt-test</li>" in page
    (entry,) = MachineAcceptance.objects.all()
    assert entry.user.username == "boss"
    response = client.post(url, {**data, "model": "gpt-other", "confirm": "on"}, follow=True)
    assert "Nothing was changed" in response.content.decode()  # not a model choice
    response = client.post(
        url, {**data, "fields": ["tags"], "action": "revoke", "confirm": "on"}, follow=True
    )
    assert "llm:gpt-test is not accepted for tags" in response.content.decode()
    assert FinalLabel.objects.filter(source="machine").count() == 6
