"""Erasure on request and the purge of Prolific IDs: the PID ends up nowhere in the database."""
from __future__ import annotations

import secrets

import pytest
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from spotlight_study.annotation.models import Annotation, FinalLabel, Item
from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.participation.selectors import cell_counts, participant_pseudonym
from spotlight_study.privacy.models import PrivacyAction
from spotlight_study.prolific.models import BonusPayment, ProlificStudy, Submission, WebhookEvent
from spotlight_study.prolific.services import bonuses, submissions, webhook

from ..annotation.conftest import make_user
from ..conftest import Walker, new_id
from ..security.dbdump import database_text, tables_holding
from ..security.flow import complete


def _event(pid: str, submission_id: str, status: str = "AWAITING REVIEW"):
    webhook.webhook_event_receive(
        event_id=secrets.token_hex(8),
        event_type="submission.status.change",
        payload={"resource_id": submission_id, "participant_id": pid, "status": status,
                 "note": f"participant {pid} finished"},
        sent_at=timezone.now(),
    )


@pytest.fixture
def world(demo_study, settings):
    """A linked study with three completed participants, their webhooks, labels and a bonus.

    ``target`` and ``other`` have submissions (through signed-webhook-like events); ``third`` has
    none, so their bonus goes to the raw PID.
    """
    ps = ProlificStudy.objects.create(study=demo_study, prolific_id=new_id(), reward_minor_units=200)
    walkers = {}
    for name in ("target", "other", "third"):
        w = Walker(Client(), demo_study.slug)
        complete(w, answers=(f"{name}: the doctor is a woman more often.", f"{name}: maize vs wheat."),
                 comment=f"comment of {name}")
        walkers[name] = w
    people = {n: Participant.objects.get(prolific_pid=w.pid) for n, w in walkers.items()}
    assert all(p.status == Participant.Status.COMPLETED for p in people.values())
    for name in ("target", "other"):
        _event(people[name].prolific_pid, people[name].prolific_session_id)
    demo_study.annotators_per_item = 1
    demo_study.save()
    annotator = make_user("ann-privacy", "annotators")
    while (item := assignment_next(study=demo_study, annotator=annotator)) is not None:
        label_save(
            study=demo_study, annotator=annotator, public_id=item.public_id,
            label=LabelInput(identified=True, surface_difference=False, no_difference=False),
        )
    csv_text = "\n".join(f"{p.prolific_pid},1.25" for p in people.values())
    bonuses.bonus_payment_draft(prolific_study_id=ps.pk, csv_text=csv_text)
    return {"study": demo_study, "ps": ps, "walkers": walkers, "people": people}


def _counts(participant) -> dict:
    items = Item.objects.filter(response__participant=participant)
    return {
        "responses": TaskResponse.objects.filter(participant=participant).count(),
        "survey": SurveyAnswer.objects.filter(participant=participant).count(),
        "items": items.count(),
        "annotations": Annotation.objects.filter(item__in=items).count(),
        "finals": FinalLabel.objects.filter(item__in=items).count(),
    }


@pytest.mark.django_db
def test_erase_participant_leaves_the_pid_nowhere_and_keeps_the_others(world):
    """After erase_participant the PID, its pseudonym and SESSION_ID are in no table; others stay."""
    study, target, other = world["study"], world["people"]["target"], world["people"]["other"]
    pid, session_id = target.prolific_pid, target.prolific_session_id
    pseudonym = participant_pseudonym(study=study, prolific_pid=pid)
    before = _counts(target)
    assert before == {"responses": 3, "survey": 10, "items": 3, "annotations": 3, "finals": 3}
    assert {"participation_participant", "prolific_submission", "prolific_webhookevent"} <= (
        tables_holding(pid)
    )
    assert "prolific_bonuspayment" in tables_holding(session_id)  # the bonus recipient
    other_before = _counts(other)
    # Participants have no database session (participation/binding.py): a refused form's text
    # is kept on their row (Participant.draft), which the erasure deletes.
    assert not Session.objects.exists()
    counts_before = cell_counts(study=study, n_cells=4)

    call_command("erase_participant", study.slug, "--pid", pid, "--note", "ticket 42")

    assert tables_holding(pid) == set()
    assert tables_holding(pseudonym) == set()
    assert tables_holding(session_id) == set()
    # What derives from them is gone too: their answers (also as annotation items) and comment.
    assert tables_holding("target: ") == set() and tables_holding("comment of target") == set()
    assert Item.objects.count() == 6 and FinalLabel.objects.count() == 6
    assert not Session.objects.exists()
    assert not Participant.objects.filter(pk=target.pk).exists()
    assert not TaskResponse.objects.filter(participant_id=target.pk).exists()
    assert _counts(other) == other_before
    assert Submission.objects.filter(prolific_pid=other.prolific_pid).count() == 1
    assert WebhookEvent.objects.filter(resource_id=other.prolific_session_id).count() == 1
    payment = BonusPayment.objects.get()
    assert sum(i["amount_minor"] for i in payment.items) == 375  # amounts kept, recipient redacted
    assert [i["recipient"] for i in payment.items].count("erased") == 1
    counts_after = cell_counts(study=study, n_cells=4)
    assert counts_after[target.cell_index] == counts_before[target.cell_index] - 1
    action = PrivacyAction.objects.get()
    assert action.kind == "erase" and action.cell_index == target.cell_index
    assert action.participant_status == "completed" and action.note == "ticket 42"
    assert action.rows["task_responses"] == 3 and action.rows["survey_answers"] == 10
    assert action.rows["annotation_items"] == 3 and action.rows["prolific_submissions"] == 1
    assert action.rows["webhook_events"] == 1 and action.rows["bonus_payments_redacted"] == 1


@pytest.mark.django_db
def test_erasing_twice_or_an_unknown_pid_says_so_and_changes_nothing(world):
    """A PID the study does not hold gives a clear error; nothing is changed or audited."""
    pid = world["people"]["target"].prolific_pid
    call_command("erase_participant", world["study"].slug, "--pid", pid)
    before = database_text()
    with pytest.raises(CommandError, match="Nothing in study .* holds this Prolific ID"):
        call_command("erase_participant", world["study"].slug, "--pid", pid)
    assert database_text() == before and PrivacyAction.objects.count() == 1


@pytest.mark.django_db
def test_a_note_holding_the_pid_is_refused(world):
    """The audit note may not carry the PID: refused, nothing erased."""
    pid = world["people"]["target"].prolific_pid
    with pytest.raises(CommandError, match="note contains the Prolific ID"):
        call_command("erase_participant", world["study"].slug, "--pid", pid, "--note", f"req {pid}")
    assert Participant.objects.filter(prolific_pid=pid).exists()
    assert not PrivacyAction.objects.exists()


@pytest.mark.django_db
def test_erasure_of_a_pid_known_only_from_prolific_removes_its_records(world):
    """A PID with a submission and webhook event but no participant row is erased too."""
    pid, submission_id = new_id(), new_id()
    _event(pid, submission_id, status="RETURNED")
    submissions.submission_status_apply(
        prolific_study=world["ps"], submission_id=submission_id, prolific_pid=pid,
        status="RETURNED", observed_at=timezone.now(),
    )
    assert tables_holding(pid)
    call_command("erase_participant", world["study"].slug, "--pid", pid)
    assert tables_holding(pid) == set()
    action = PrivacyAction.objects.get()
    assert action.cell_index is None and action.rows["prolific_submissions"] == 1


@pytest.mark.django_db
def test_purge_identifiers_replaces_every_raw_pid_and_keeps_the_exports(world, tmp_path):
    """After purge_identifiers no raw PID is stored; data and exports are unchanged."""
    study, people = world["study"], world["people"]
    pids = {n: p.prolific_pid for n, p in people.items()}
    pseudonyms = {n: participant_pseudonym(study=study, prolific_pid=pid) for n, pid in pids.items()}
    call_command("export_results", study.slug, "--out", str(tmp_path / "before"))
    call_command("export_annotations", study.slug, "--out", str(tmp_path / "before"))
    study.status = study.Status.CLOSED
    study.save()

    call_command("purge_identifiers", study.slug)

    for name, pid in pids.items():
        assert tables_holding(pid) == set(), name
        assert Participant.objects.get(pk=people[name].pk).prolific_pid == pseudonyms[name]
    assert Submission.objects.get(submission_id=people["target"].prolific_session_id).prolific_pid == pseudonyms["target"]
    payload = WebhookEvent.objects.get(resource_id=people["other"].prolific_session_id).payload
    assert payload["participant_id"] == pseudonyms["other"]
    assert payload["note"] == f"participant {pseudonyms['other']} finished"
    bonus = BonusPayment.objects.get()
    assert pseudonyms["third"] in bonus.csv_bonuses  # the one bonus that went to a raw PID
    assert TaskResponse.objects.count() == 9 and SurveyAnswer.objects.count() == 30
    call_command("export_results", study.slug, "--out", str(tmp_path / "after"))
    call_command("export_annotations", study.slug, "--out", str(tmp_path / "after"))
    for name in ("responses", "survey", "participants", "final_labels"):
        assert (tmp_path / "after" / f"{name}.csv").read_text() == (
            tmp_path / "before" / f"{name}.csv"
        ).read_text(), name
    action = PrivacyAction.objects.get()
    assert action.kind == "purge" and action.rows["participants"] == 3
    assert action.rows["prolific_submissions"] == 2 and action.rows["webhook_events"] == 2

    call_command("purge_identifiers", study.slug)  # again: nothing left to change
    assert PrivacyAction.objects.last().rows == {
        "participants": 0, "prolific_submissions": 0, "webhook_events": 0, "bonus_payments": 0,
    }


@pytest.mark.django_db
def test_purge_is_refused_while_the_study_is_open(world):
    """purge_identifiers on a live study is refused and changes nothing."""
    before = database_text()
    with pytest.raises(CommandError, match="purge identifiers only after it has closed"):
        call_command("purge_identifiers", world["study"].slug)
    assert database_text() == before


def _typing_participant(study, text: str) -> Participant:
    """A participant on main task 1 whose typed draft (draft.js's POST) holds ``text``."""
    w = Walker(Client(), study.slug)
    w.enter()
    w.consent()
    w.instructions()
    w.answer("The first group fishes by day, the second at night.")
    w.page()
    r = w.client.post(f"/s/{study.slug}/draft/", {"token": w.token(), w.answer_field(): text})
    assert r.status_code == 204
    return Participant.objects.get(prolific_pid=w.pid)


@pytest.mark.django_db
def test_erasure_removes_a_typed_draft(world):
    """A participant's typed draft is gone after their erasure: its text is in no table."""
    study = world["study"]
    p = _typing_participant(study, "DRAFT-ONLY-TEXT of the erased participant")
    other = _typing_participant(study, "DRAFT-ONLY-TEXT of another participant")
    assert tables_holding("DRAFT-ONLY-TEXT of the erased") == {"participation_participant"}

    call_command("erase_participant", study.slug, "--pid", p.prolific_pid)

    assert tables_holding("DRAFT-ONLY-TEXT of the erased") == set()
    other.refresh_from_db()
    assert other.draft["data"] == {"answer_1": "DRAFT-ONLY-TEXT of another participant"}


@pytest.mark.django_db
def test_purge_identifiers_clears_every_draft(world):
    """purge_identifiers clears typed and refused drafts; the saved answers stay."""
    study = world["study"]
    typing = _typing_participant(study, "DRAFT-ONLY-TEXT typed")
    refused = _typing_participant(study, "DRAFT-ONLY-TEXT to be replaced")
    w = Walker(Client(), study.slug, pid=refused.prolific_pid)
    w.enter()
    w.page()
    w.post({w.answer_field(): "x" * 5001, "client_events": ""})  # refused: kept as a draft
    refused.refresh_from_db()
    assert refused.draft and "typed" not in refused.draft
    answers = TaskResponse.objects.filter(answered_at__isnull=False).count()
    study.status = study.Status.CLOSED
    study.save()

    call_command("purge_identifiers", study.slug)

    assert not Participant.objects.filter(study=study, draft__isnull=False).exists()
    assert tables_holding("DRAFT-ONLY-TEXT") == set() and tables_holding("x" * 5001) == set()
    assert TaskResponse.objects.filter(answered_at__isnull=False).count() == answers
    typing.refresh_from_db()
    assert typing.step == "task" and typing.status == Participant.Status.IN_PROGRESS
