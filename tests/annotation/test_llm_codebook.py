"""The machine coder under a study's own (German) codebook: its prompt and schema come from the
codebook, still blind to the condition; its replies are checked by the label API's validator;
its labels are compared with the annotators per field. Real requests to the suite's fake
OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import io
import json
import secrets

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from sklearn.metrics import cohen_kappa_score

from spotlight_study.annotation.errors import MachineAcceptanceError
from spotlight_study.annotation.machine_agreement import machine_agreement
from spotlight_study.annotation.machine_coding import machine_coding_job_create, machine_coding_run_now
from spotlight_study.annotation.models import Item, MachineCodingJob, MachineLabel
from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.machine_acceptance import machine_labels_accept
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.stimuli.models import JobStatus
from spotlight_study.studies.models import TokenPattern
from spotlight_study.studies.services import study_import

from tests.openai_server import FakeCoder

from ..codebooks import german_data
from .conftest import complete_participants, make_user
from .test_llm_coder import WOMAN


@pytest.fixture
def coder(settings):
    """The fake coding server on 127.0.0.1, the app pointed at it; jobs run by hand."""
    key = f"sk-test-{secrets.token_hex(16)}"
    server = FakeCoder(key).start()
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = server.url, key
    settings.OPENAI_MAX_RETRIES, settings.OPENAI_TIMEOUT_SECONDS = 0, 60
    settings.STIMULI_JOB_RUNNER = "manual"
    yield server
    server.stop()


@pytest.fixture
def german_study(db, demo_data):
    """The German study (ordinal erkannt, multi_choice tags with umlauts, a note) and two
    participants' six answers; one participant's condition and PID are canaries."""
    study = study_import(data=german_data(demo_data))
    walkers = complete_participants(study.slug, 2)
    p = Participant.objects.get(prolific_pid=walkers[0].pid)
    p.prolific_pid = "canarypidq7z3x9w2v"
    p.save()
    TaskResponse.objects.filter(participant=p).update(condition="canarycondition_x41r")
    for pattern in TokenPattern.objects.filter(setting__study=study):
        pattern.tokens = ["canarypatterntok_z8"]
        pattern.save()
    return study


def _run(study, **kwargs) -> MachineCodingJob:
    job = machine_coding_job_create(study=study, model="gpt-test", dispatch=False, **kwargs)
    machine_coding_run_now(job_id=job.pk)
    job.refresh_from_db()
    return job


def test_prompt_and_schema_come_from_the_codebook_and_stay_blind(german_study, coder):
    """Each request asks erkannt (its three options, lowest first), the tags (with umlauts) and
    the exclusion, in the researcher's words; never the note, the condition, PID or pattern.
    The labels are stored in ``values`` in canonical spelling, the default columns empty."""
    job = _run(german_study)
    assert (job.status, job.done, job.total) == (JobStatus.SUCCEEDED, 6, 6)
    assert job.fields == ["erkannt", "tags", "exclusion"]
    assert len(coder.bodies) == 6
    for body in coder.bodies:
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["required"] == ["erkannt", "tags", "exclusion"]
        assert schema["properties"]["erkannt"] == {"type": "string", "enum": ["nein", "teilweise", "ja"]}
        assert schema["properties"]["tags"]["items"]["enum"] == ["Erwähnt Geschlecht", "Länge", "Straße"]
        prompt = body["messages"][-1]["content"]
        for words in ("Unterschied erkannt", "Hat die Antwort den Zielunterschied benannt?",
                      "nein | teilweise | ja", "Weitere Unterschiede", "Erwähnt Geschlecht | Länge | Straße"):
            assert words in prompt, words
        assert "notiz" not in prompt and "CODEBOOK TAGS" not in prompt
    sent = json.dumps(coder.bodies, ensure_ascii=False)
    for canary in ("canarypidq7z3x9w2v", "canarycondition_x41r", "canarypatterntok_z8", "no_pattern"):
        assert canary not in sent, canary
    for m in MachineLabel.objects.select_related("item__response"):
        assert m.status == MachineLabel.Status.LABELLED
        assert m.values == {"erkannt": "ja" if m.item.response.answer == WOMAN else "nein", "tags": []}
        assert (m.identified, m.tags, m.exclusion) == (None, None, "none")


def test_a_reply_outside_the_codebook_is_invalid_and_other_spellings_are_stored_canonical(german_study, coder):
    """An option the codebook lacks is an invalid reply naming the field (asked again, then a
    missing label); ``JA`` and ``erwähnt GESCHLECHT`` are matched as the label API matches them."""
    bad = json.dumps({"erkannt": "vielleicht", "tags": [], "exclusion": "none"})
    odd = json.dumps({"erkannt": "JA", "tags": ["erwähnt GESCHLECHT", "STRASSE"], "exclusion": "none"})
    coder.script = [bad, bad, odd]
    _run(german_study)
    first, second = MachineLabel.objects.order_by("item__pk")[:2]
    assert first.status == MachineLabel.Status.MISSING and first.values is None
    assert "not valid under the codebook: erkannt: 'vielleicht' is not an option" in first.missing_reason
    assert second.status == MachineLabel.Status.LABELLED
    assert second.values == {"erkannt": "ja", "tags": ["Erwähnt Geschlecht", "Straße"]}
    missing_required = json.dumps({"erkannt": None, "tags": [], "exclusion": "none"})
    MachineLabel.objects.all().delete()
    coder.script = [missing_required, missing_required]
    _run(german_study)
    assert "erkannt: This field is required." in MachineLabel.objects.order_by("item__pk")[0].missing_reason


def test_fields_are_the_codebooks_and_unknown_ones_are_refused(german_study, coder):
    """--label erkannt asks that field only; a default-codebook field is refused naming the
    choices, and nothing is created."""
    _run(german_study, fields=["erkannt"])
    assert coder.bodies[0]["response_format"]["json_schema"]["schema"]["required"] == ["erkannt"]
    assert MachineLabel.objects.filter(values__has_key="tags").count() == 0
    MachineLabel.objects.all().delete()
    MachineCodingJob.objects.all().delete()
    with pytest.raises(ValidationError, match="Choose from erkannt, tags, exclusion"):
        machine_coding_job_create(study=german_study, model="m", fields=["identified"], dispatch=False)
    with pytest.raises(CommandError, match="Unknown label field"):
        call_command("llm_annotate", german_study.slug, "--model", "m", "--label", "notiz", stdout=io.StringIO())
    assert not MachineCodingJob.objects.exists()


def test_agreement_with_the_annotators_per_codebook_field_and_no_acceptance(german_study, coder):
    """The machine is compared per single-value field (erkannt, exclusion) with each annotator
    and the final labels, with sklearn's kappa; accepting its labels is refused, nothing changed."""
    annotators = [make_user(f"de{i}", "annotators") for i in range(2)]
    for n, user in enumerate(annotators):
        while (item := assignment_next(study=german_study, annotator=user)) is not None:
            hit = item.response.answer == WOMAN
            # The second annotator says "teilweise" where the first says "ja".
            value = ("ja" if n == 0 else "teilweise") if hit else "nein"
            label_save(study=german_study, annotator=user, public_id=item.public_id, label=LabelInput(
                identified=False, surface_difference=False, no_difference=False,
                values={"erkannt": value, "tags": []}))
    _run(german_study)
    rows, decisions = machine_agreement(study=german_study)
    assert {d.field for d in decisions} == {"erkannt", "exclusion"}
    items = list(Item.objects.filter(study=german_study, is_pilot=False).order_by("pk"))
    machine = {m.item_id: m.values["erkannt"] for m in MachineLabel.objects.all()}
    for n, user in enumerate(annotators):
        row = next(r for r in rows if r.field == "erkannt" and r.comparison == "machine_vs_human"
                   and r.rater_b.endswith(str(n + 1)))
        human = [a.values["erkannt"] for it in items for a in it.annotations.filter(annotator=user)]
        expected = cohen_kappa_score([machine[it.pk] for it in items], human)
        assert row.ci.n_items == len(items) and row.ci.kappa.value == pytest.approx(expected)
    with pytest.raises(MachineAcceptanceError, match="declares its own codebook"):
        machine_labels_accept(study=german_study, model="gpt-test", fields=["erkannt"])
