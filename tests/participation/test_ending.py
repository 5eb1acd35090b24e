"""Ending stalled participants (participation/ending.py and ``manage.py end_participants``): who
is ended, what is kept, what a participant who comes back sees, and refusals that change nothing."""
from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from spotlight_study.participation.ending import participants_end, participants_in_progress
from spotlight_study.participation.errors import EndingRefused
from spotlight_study.participation.models import Participant, ParticipantEnding
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.participation.services import participant_prolific_status_set
from spotlight_study.researcher.top_up import cell_needs
from spotlight_study.studies.services import study_import

from ..conftest import Walker


def _arrive(slug: str, n: int) -> list[tuple[Walker, Participant]]:
    out = []
    for _ in range(n):
        w = Walker(Client(), slug)
        w.enter()
        w.consent()
        out.append((w, Participant.objects.get(prolific_pid=w.pid)))
    return out


def _stall(p: Participant, minutes: int) -> None:
    Participant.objects.filter(pk=p.pk).update(updated_at=timezone.now() - timedelta(minutes=minutes))


def _pseudonym(study, p) -> str:
    return participant_pseudonym(study=study, prolific_pid=p.prolific_pid)


def test_the_command_ends_the_idle_participants_and_a_dry_run_changes_nothing(demo_study):
    """--idle-minutes ends exactly the participants idle for longer; --dry-run only lists them."""
    (_, quiet), (_, busy) = _arrive(demo_study.slug, 2)
    _stall(quiet, 45)
    out = StringIO()
    call_command("end_participants", demo_study.slug, "--idle-minutes", "30", "--reason", "Stalled.",
                 "--dry-run", stdout=out)
    assert f"Would end 1 participant(s) of {demo_study.slug}: {_pseudonym(demo_study, quiet)}." in out.getvalue()
    assert not Participant.objects.filter(status=Participant.Status.ENDED_BY_RESEARCHER).exists()
    assert not ParticipantEnding.objects.exists()
    call_command("end_participants", demo_study.slug, "--idle-minutes", "30", "--reason", "Stalled.",
                 stdout=StringIO())
    statuses = dict(Participant.objects.values_list("pk", "status"))
    assert statuses == {quiet.pk: "ended_by_researcher", busy.pk: "in_progress"}
    ending = ParticipantEnding.objects.get()
    assert (ending.participant_id, ending.ended_by, ending.ended_via, ending.reason) == (
        quiet.pk, None, "command", "Stalled.")


def test_the_command_ends_one_participant_by_pseudonym_and_refuses_an_unknown_one(demo_study):
    """--participant ends that participant; an unknown pseudonym or an empty reason is an error and changes nothing."""
    (_, p), (_, other) = _arrive(demo_study.slug, 2)
    with pytest.raises(CommandError, match="No participant of this study has the pseudonym"):
        call_command("end_participants", demo_study.slug, "--participant", "p_0000000000000000",
                     "--reason", "x")
    with pytest.raises(CommandError, match="Give a reason"):
        call_command("end_participants", demo_study.slug, "--participant", _pseudonym(demo_study, p),
                     "--reason", " ")
    assert not ParticipantEnding.objects.exists()
    call_command("end_participants", demo_study.slug, "--participant", _pseudonym(demo_study, p),
                 "--reason", "Asked us by message to be let go.", stdout=StringIO())
    assert Participant.objects.get(pk=p.pk).status == Participant.Status.ENDED_BY_RESEARCHER
    assert Participant.objects.get(pk=other.pk).status == Participant.Status.IN_PROGRESS


def test_a_participant_who_finished_meanwhile_is_skipped_not_ended(demo_study):
    """Ending someone no longer in progress changes nothing for them and says why."""
    (_, p), = _arrive(demo_study.slug, 1)
    Participant.objects.filter(pk=p.pk).update(status=Participant.Status.COMPLETED)
    report = participants_end(study=demo_study, pseudonyms=[_pseudonym(demo_study, p)], reason="Stalled.")
    assert report.ended == () and report.skipped[0][1].startswith("no longer in progress")
    assert Participant.objects.get(pk=p.pk).status == Participant.Status.COMPLETED
    with pytest.raises(EndingRefused):
        participants_end(study=demo_study, pseudonyms=[], reason="Stalled.")


@pytest.mark.parametrize("language, words", [
    ("en", "Please return this submission on Prolific"),
    ("de", "Bitte geben Sie diese Teilnahme auf Prolific zurück"),
    ("es", "Por favor, devuelva esta participación en Prolific"),
    ("fr", "Veuillez rendre cette participation sur Prolific"),
])
def test_an_ended_participant_who_comes_back_is_told_to_return_the_submission(db, demo_data, language, words):
    """The step page of an ended participant is the ended page, in the study's language, asking for a return on Prolific."""
    study = study_import(data={**demo_data, "language": language})
    (w, p), = _arrive(study.slug, 1)
    participants_end(study=study, pseudonyms=[_pseudonym(study, p)], reason="Stalled.")
    html = w.page().content.decode()
    assert words in html
    assert 'name="token"' not in html  # nothing to submit any more
    assert w.post({}, token="consent:0:x").status_code in (302, 403, 409)
    assert Participant.objects.get(pk=p.pk).status == Participant.Status.ENDED_BY_RESEARCHER


def test_ended_participants_hold_no_place_and_count_as_ended_in_the_top_up(demo_study):
    """The top-up counts a participant ended by the researcher as ended, not pending."""
    (_, p), = _arrive(demo_study.slug, 1)
    before = {c.cell: c for c in cell_needs(demo_study)}
    assert before[p.cell_index].pending == 1
    participants_end(study=demo_study, pseudonyms=[_pseudonym(demo_study, p)], reason="Stalled.")
    after = {c.cell: c for c in cell_needs(demo_study)}
    assert (after[p.cell_index].pending, after[p.cell_index].ended) == (0, 1)
    assert participants_in_progress(study=demo_study) == []


def test_a_prolific_status_does_not_undo_the_researchers_ending(demo_study):
    """A later RETURNED from Prolific (sync or webhook) leaves ended_by_researcher and the decision as they are."""
    (_, p), = _arrive(demo_study.slug, 1)
    participants_end(study=demo_study, pseudonyms=[_pseudonym(demo_study, p)], reason="Stalled.")
    for replace_ended in (False, True):
        changed = participant_prolific_status_set(
            participant_id=p.pk, status=Participant.Status.RETURNED, replace_ended=replace_ended
        )
        assert changed is False
    assert Participant.objects.get(pk=p.pk).status == Participant.Status.ENDED_BY_RESEARCHER
    assert ParticipantEnding.objects.filter(participant=p).exists()
    assert set(Participant.Status.PROLIFIC_ENDED) < set(Participant.Status.ENDED)
    assert "ended_by_researcher" in Participant.Status.ENDED
