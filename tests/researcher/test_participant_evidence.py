"""The per-participant page: each answer's writing-process evidence and its flags, as the
export computes them; linked from the monitor; never the condition; 404 for a stranger."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.results.exports import export_rows

from ..conftest import Walker

pytestmark = pytest.mark.django_db

FAST = json.dumps({"typed_chars": 200, "typing_ms": 2_000, "insertions": 200, "largest_insert_chars": 1})


def _url(study, pseudonym: str) -> str:
    return f"/researcher/{study.slug}/participants/{pseudonym}/"


def test_the_page_shows_the_evidence_and_the_export_flags(staff_client, demo_study):
    w = Walker(Client(), demo_study.slug)
    w.enter(); w.consent(); w.instructions()
    w.answer("The first group fishes by day, the second at night.")
    w.answer("Group 2 describes the doctor as a woman more often.", events=FAST)
    p = Participant.objects.get(prolific_pid=w.pid)
    pseudonym = participant_pseudonym(study=demo_study, prolific_pid=p.prolific_pid)
    html = staff_client.get(_url(demo_study, pseudonym)).content.decode()
    assert "typed implausibly fast" in html
    assert "6000 characters a minute" in html
    assert "A flag is evidence, not a verdict" in html
    # The flags are the export's.
    (row,) = export_rows(study=demo_study)["responses"]
    assert "typed_implausibly_fast" in row["flags"].split(";")
    # No condition on the page, neither its value nor its name.
    condition = p.cell_plan[0]["condition"]
    assert f">{condition}<" not in html and "Condition" not in html
    # The monitor links to it.
    monitor = staff_client.get(f"/researcher/{demo_study.slug}/monitor/").content.decode()
    assert _url(demo_study, pseudonym) in monitor


@pytest.mark.parametrize("pseudonym", ["p_0000000000000000", "not-a-pseudonym", "p_" + "g" * 16])
def test_an_unknown_pseudonym_is_a_404(staff_client, demo_study, pseudonym):
    Walker(Client(), demo_study.slug).complete()
    assert staff_client.get(_url(demo_study, pseudonym)).status_code == 404


def test_the_page_needs_a_researcher(client, demo_study):
    response = client.get(_url(demo_study, "p_0000000000000000"))
    assert response.status_code in (302, 403)
