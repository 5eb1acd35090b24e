"""The machine coder may see the writing-process flags as evidence for ``exclusion`` only, with
the blinded allow-list and never the condition; its agreement on ``exclusion`` is reported as a
label of its own (machine_agreement)."""
from __future__ import annotations

import io
import json
import re
import secrets

import pytest
from django.core.management import call_command

from spotlight_study.annotation.label_import.importer import labels_import
from spotlight_study.annotation.machine_agreement import machine_agreement
from spotlight_study.annotation.models import Item, MachineLabel
from spotlight_study.annotation.services.queue import items_sync
from spotlight_study.participation.models import TaskResponse

from tests.openai_server import FakeCoder

from .conftest import complete_participants, make_user

pytestmark = pytest.mark.django_db

CONDITION_CANARY = "canarycondition_q7"
EVIDENCE_LINE = re.compile(r"WRITING-PROCESS EVIDENCE \(for the exclusion field only; evidence, not proof\): (.*)\n")


@pytest.fixture
def coder(settings):
    key = f"sk-test-{secrets.token_hex(16)}"
    server = FakeCoder(key).start()
    settings.OPENAI_BASE_URL = server.url
    settings.OPENAI_API_KEY = key
    settings.OPENAI_MAX_RETRIES = 0
    settings.STIMULI_JOB_RUNNER = "manual"
    yield server
    server.stop()


@pytest.fixture
def fast_study(demo_study):
    """7 participants; the main answers of the first 3 were typed at 12,000 characters a minute,
    and every answer's condition holds a canary."""
    walkers = complete_participants(demo_study.slug, 7)
    fast = [w.pid for w in walkers[:3]]
    TaskResponse.objects.filter(participant__prolific_pid__in=fast, position__gt=0).update(
        typed_chars=200, typing_ms=1_000, insertions=200
    )
    TaskResponse.objects.update(condition=CONDITION_CANARY)
    items_sync(study=demo_study)
    return demo_study, set(fast)


def _prompts(coder) -> list[str]:
    return [b["messages"][-1]["content"] for b in coder.bodies]


def test_flags_go_with_the_exclusion_field_only_and_never_the_condition(coder, fast_study):
    study, _fast = fast_study
    call_command("llm_annotate", study.slug, "--model", "gpt-test", "--sync", "--label", "identified", stdout=io.StringIO())
    assert coder.bodies and not any(EVIDENCE_LINE.search(p) for p in _prompts(coder))
    coder.bodies.clear()
    call_command("llm_annotate", study.slug, "--model", "gpt-other", "--sync", stdout=io.StringIO())
    prompts = _prompts(coder)
    assert len(prompts) == 21
    assert CONDITION_CANARY not in json.dumps(coder.bodies)
    evidence = [set(EVIDENCE_LINE.search(p).group(1).split(", ")) for p in prompts]
    assert sum("typed_implausibly_fast" in e for e in evidence) == 6
    # Only flag keys of the allow-list, never their numbers (no typing time, no characters).
    assert "12000" not in json.dumps(coder.bodies) and "typing_ms" not in json.dumps(coder.bodies)
    excluded = MachineLabel.objects.filter(exclusion="ai_generated", model="gpt-other")
    assert {m.item.response.participant.prolific_pid for m in excluded.select_related("item__response__participant")} == _fast


def test_agreement_on_exclusion_is_reported_as_its_own_label(coder, fast_study):
    """Two annotators mark the fast answers ``ai_generated`` (one of them misses one); the
    machine, given the flags, agrees with the final labels on all 21."""
    study, fast = fast_study
    items = list(Item.objects.filter(study=study).select_related("response__participant").order_by("pk"))
    truth = ["ai_generated" if it.response.participant.prolific_pid in fast and it.response.position > 0 else "none" for it in items]
    make_user("ann1", "annotators"), make_user("ann2", "annotators")
    missed = truth.index("ai_generated")
    lines = ["item,annotator,identified,surface_difference,no_difference,exclusion"]
    for name in ("ann1", "ann2"):
        lines += [
            f"{it.public_id},{name},1,0,0,{'none' if name == 'ann2' and i == missed else t}"
            for i, (it, t) in enumerate(zip(items, truth, strict=True))
        ]
    labels_import(study=study, text="\n".join(lines) + "\n")
    call_command("llm_annotate", study.slug, "--model", "gpt-test", "--sync", stdout=io.StringIO())
    rows, decisions = machine_agreement(study=study, seed=3, n_resamples=200)
    exclusion = {(r.comparison, r.rater_b): r for r in rows if r.field == "exclusion"}
    assert exclusion, "no exclusion rows"
    vs_humans = [r for (c, _b), r in exclusion.items() if c == "machine_vs_human"]
    assert len(vs_humans) == 2
    kappas = sorted(round(r.ci.kappa.value, 3) for r in vs_humans)
    assert kappas[-1] == 1.0 and kappas[0] < 1.0
    assert any(d.field == "exclusion" for d in decisions)
