"""Erasure of one participant on request, and the purge of raw Prolific IDs after a study closes.

Where a Prolific ID (PID) lives, and what each service does there:

=====================================  ===========================  ==========================
row                                    :func:`participant_erase`    :func:`identifiers_purge`
=====================================  ===========================  ==========================
participant (PID, answers' owner)      deleted                      PID -> pseudonym
task responses, client telemetry,      deleted (with the
survey answers, earlier instruction-   participant)                 kept
check attempts
annotation items, annotations and      deleted (with the answer
their revisions, assignments, final    they label)                  kept
labels
Prolific submission rows               deleted                      PID -> pseudonym
review decisions (evidence by          deleted (with the            kept (hold no PID)
pseudonym)                             submission)
stored webhook events (payload)        deleted                      PID -> pseudonym in text
demographics (by pseudonym)            deleted                      kept (hold no PID)
bonus payments (recipient, CSV sent)   PID, submission ids and      PID -> pseudonym
                                       pseudonym -> ``erased``;
                                       amounts kept
admin log entries of deleted rows      deleted                      (hold no PID)
=====================================  ===========================  ==========================

A participant has no server session to delete: the browser holds only a signed cookie with the
participant's row id (``participation/binding.py``), which points at nothing once the row is
deleted, and a draft (text typed but not submitted) is stored on the participant row itself:
erasure deletes it with the row, the purge clears it.

Each call writes one :class:`~.models.PrivacyAction` that holds neither the PID nor the
pseudonym. Both run in one transaction under the study's row lock, which arrivals also take, so
no participant is assigned while the counts change.
"""
from __future__ import annotations

import getpass
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast

from spotlight_study.annotation.models import (
    Annotation,
    AnnotationRevision,
    Assignment,
    FinalLabel,
    Item,
)
from spotlight_study.audit.services import audit_record
from spotlight_study.identifiers import PSEUDONYM_RE
from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.prolific.models import (
    BonusPayment,
    Demographics,
    ProlificStudy,
    Submission,
    WebhookEvent,
)
from spotlight_study.studies.models import Study

from .errors import PrivacyError
from .models import PrivacyAction

#: What replaces an erased participant's identifiers in bonus payment records.
ERASED = "erased"


@dataclass(frozen=True)
class ErasureResult:
    """What :func:`participant_erase` did.

    ``action`` is the stored audit entry. ``pseudonym`` is the erased participant's export
    pseudonym, returned (never stored) so that the operator can remove them from exports made
    before the erasure. ``other_studies`` counts other studies with a participant of this PID
    (erasure is per study).
    """

    action: PrivacyAction
    pseudonym: str
    other_studies: int


def _operator(performed_by: str) -> str:
    if performed_by:
        return performed_by[:150]
    try:
        return getpass.getuser()[:150]
    except (KeyError, OSError):  # no user name (e.g. a container without /etc/passwd entry)
        return ""


def _replace_text(value: Any, mapping: dict[str, str]) -> Any:
    """``value`` (JSON data) with every occurrence of each ``mapping`` key in its strings (and
    object keys) replaced by the key's value."""
    if isinstance(value, str):
        for old, new in mapping.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_replace_text(v, mapping) for v in value]
    if isinstance(value, dict):
        return {_replace_text(k, mapping): _replace_text(v, mapping) for k, v in value.items()}
    return value


def _payload_mentions(events: QuerySet[WebhookEvent], needles: Iterable[str]) -> set[int]:
    """The pks of the events whose payload, as JSON text, contains any of ``needles``.

    Asked in chunks of 100, so the OR of the conditions stays within SQLite's expression depth.
    """
    needles = sorted(set(needles))
    with_text = events.annotate(payload_text=Cast("payload", TextField()))
    pks: set[int] = set()
    for start in range(0, len(needles), 100):
        condition = Q()
        for needle in needles[start : start + 100]:
            condition |= Q(payload_text__contains=needle)
        pks |= set(with_text.filter(condition).values_list("pk", flat=True))
    return pks


def _study_events(*, study: Study, submission_ids: set[str], pids: set[str]) -> QuerySet:
    """Webhook events of ``study``: about one of its submissions, or naming one of its PIDs in
    the payload, except events about a submission of another study."""
    others = Submission.objects.exclude(prolific_study__study=study).values("submission_id")
    pks = _payload_mentions(WebhookEvent.objects.exclude(resource_id__in=others), pids)
    if submission_ids:
        pks |= set(
            WebhookEvent.objects.filter(resource_id__in=submission_ids).values_list("pk", flat=True)
        )
    return WebhookEvent.objects.filter(pk__in=pks)


def _redact_bonus_payments(prolific_study: ProlificStudy | None, mapping: dict[str, str]) -> int:
    """Replace identifiers in the study's bonus payments; returns how many rows changed."""
    if prolific_study is None or not mapping:
        return 0
    changed = 0
    for payment in BonusPayment.objects.filter(prolific_study=prolific_study):
        items = _replace_text(payment.items, mapping)
        csv_bonuses = _replace_text(payment.csv_bonuses, mapping)
        setup_response = _replace_text(payment.setup_response, mapping)
        if (items, csv_bonuses, setup_response) != (
            payment.items,
            payment.csv_bonuses,
            payment.setup_response,
        ):
            BonusPayment.objects.filter(pk=payment.pk).update(
                items=items, csv_bonuses=csv_bonuses, setup_response=setup_response
            )
            changed += 1
    return changed


def _delete_log_entries(model, pks: Iterable[int]) -> int:
    pks = [str(pk) for pk in pks]
    if not pks:
        return 0
    ct = ContentType.objects.get_for_model(model)
    deleted, _ = LogEntry.objects.filter(content_type=ct, object_id__in=pks).delete()
    return deleted


def _check_note(note: str, secrets: Iterable[str]) -> str:
    if any(s and s in note for s in secrets):
        raise PrivacyError("The note contains the Prolific ID; the audit entry must not hold it.")
    return note[:500]


def participant_erase(
    *, study: Study, prolific_pid: str, performed_by: str = "", note: str = ""
) -> ErasureResult:
    """Remove every row of ``study`` that holds or derives from the participant ``prolific_pid``.

    See the module docstring for the rows. The participant's place in their cell is freed: the
    cell counts (:func:`~spotlight_study.participation.selectors.cell_counts`) count only
    participants whose data are held, so while the study is live the next arrival may take the
    place. The other participants' stored ``assignment_counts`` stay as they were: they record
    what the assignment saw at the time. The audit entry keeps the erased participant's cell,
    status and pilot flag, so that the flow of participants can still be reported.

    Raises
    ------
    PrivacyError
        If nothing of ``study`` holds ``prolific_pid`` (nothing is changed), or if ``note``
        contains it.
    """
    pid = prolific_pid.strip()
    if not pid:
        raise PrivacyError("Give the participant's Prolific ID.")
    note = _check_note(note, [pid])
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        held = _held_by(study=study, pid=pid)
        if held.participant is None and not held.submissions.exists() and not held.events.exists():
            raise PrivacyError(
                f"Nothing in study '{study.slug}' holds this Prolific ID; nothing was erased."
            )
        pseudonym = participant_pseudonym(study=study, prolific_pid=pid)
        mapping = {pid: ERASED, pseudonym: ERASED, **{s: ERASED for s in held.submission_ids}}
        rows = _erase_prolific_rows(held, mapping)
        rows["demographics"] = _delete_demographics(held, pseudonym)
        other_studies = (
            Participant.objects.filter(prolific_pid=pid).exclude(study=study).count()
        )
        action = PrivacyAction(
            study=study,
            kind=PrivacyAction.Kind.ERASE,
            performed_by=_operator(performed_by),
            note=note,
        )
        if held.participant is not None:
            _erase_participant(held.participant, study=study, action=action, rows=rows)
        action.rows = rows
        action.save()
        # No pseudonym or id in the trail: it must not point back at the erased participant.
        audit_record(
            action="privacy.erase", study=study,
            summary=f"A participant's data were erased (by {action.performed_by or 'an operator'}).",
            detail={"privacy_action_id": action.pk, "performed_by": action.performed_by, "rows": rows},
        )
    return ErasureResult(action=action, pseudonym=pseudonym, other_studies=other_studies)


@dataclass(frozen=True)
class _Holdings:
    """What of one study holds one Prolific ID: its participant (if any), the study's Prolific
    link, the submission rows of the PID or the participant, their ids (with the participant's
    Prolific session id) and the stored webhook events that name any of them."""

    participant: Participant | None
    prolific_study: ProlificStudy | None
    submissions: QuerySet
    submission_ids: set[str]
    events: QuerySet


def _held_by(*, study: Study, pid: str) -> _Holdings:
    """The rows of ``study`` that hold ``pid`` or derive from its participant (read only)."""
    participant = Participant.objects.filter(study=study, prolific_pid=pid).first()
    prolific_study = ProlificStudy.objects.filter(study=study).first()
    submissions = Submission.objects.none()
    if prolific_study is not None:
        mine = Q(prolific_pid=pid)
        if participant is not None:
            mine |= Q(participant=participant)
        submissions = Submission.objects.filter(Q(prolific_study=prolific_study) & mine)
    submission_ids = set(submissions.values_list("submission_id", flat=True))
    if participant is not None and participant.prolific_session_id:
        submission_ids.add(participant.prolific_session_id)
    events = _study_events(study=study, submission_ids=submission_ids, pids={pid})
    return _Holdings(participant, prolific_study, submissions, submission_ids, events)


def _erase_prolific_rows(held: _Holdings, mapping: dict[str, str]) -> dict[str, int]:
    """Redact the bonus payments by ``mapping`` and delete the submissions, webhook events and
    their admin log entries; returns the audit row counts of these steps."""
    rows: dict[str, int] = {}
    rows["bonus_payments_redacted"] = _redact_bonus_payments(held.prolific_study, mapping)
    rows["admin_log_entries"] = _delete_log_entries(
        WebhookEvent, held.events.values_list("pk", flat=True)
    ) + _delete_log_entries(Submission, held.submissions.values_list("pk", flat=True))
    rows["webhook_events"], _ = held.events.delete()
    rows["prolific_submissions"] = held.submissions.delete()[1].get(Submission._meta.label, 0)
    return rows


def _delete_demographics(held: _Holdings, pseudonym: str) -> int:
    """Delete the stored demographic export rows of the participant (by pseudonym or by one of
    their submission ids); returns how many went."""
    if held.prolific_study is None:
        return 0
    mine = Q(pseudonym=pseudonym) | Q(submission_id__in=held.submission_ids)
    deleted, _ = Demographics.objects.filter(Q(prolific_study=held.prolific_study) & mine).delete()
    return deleted


def _erase_participant(
    participant: Participant, *, study: Study, action: PrivacyAction, rows: dict[str, int]
) -> None:
    """Delete ``participant`` with everything made from their answers.

    Adds the counts of what goes to ``rows`` (counted before the cascade deletes it) and keeps
    the participant's cell, status and pilot flag on ``action`` (not saved here).
    """
    items = Item.objects.filter(response__participant=participant)
    rows.update(
        participants=1,
        task_responses=participant.responses.count(),
        survey_answers=participant.survey_answers.count(),
        annotation_items=items.count(),
        annotations=Annotation.objects.filter(item__in=items).count(),
        annotation_revisions=AnnotationRevision.objects.filter(
            annotation__item__in=items
        ).count(),
        annotation_assignments=Assignment.objects.filter(item__in=items).count(),
        final_labels=FinalLabel.objects.filter(item__in=items).count(),
    )
    rows["admin_log_entries"] += _delete_log_entries(Participant, [participant.pk])
    action.cell_index = participant.cell_index
    action.participant_status = participant.status
    action.was_pilot = participant.is_pilot
    participant.delete()


def identifiers_purge(
    *, study: Study, performed_by: str = "", note: str = "", even_if_open: bool = False
) -> PrivacyAction:
    """Replace the raw Prolific IDs of ``study`` by their export pseudonyms; keep all data.

    Changes the participants' ``prolific_pid``, the submission rows' ``prolific_pid``, the text
    of the study's stored webhook payloads and of its bonus payments, and clears every
    participant's draft (text typed but never submitted, ``Participant.draft``). Exports are unchanged
    afterwards (:func:`~spotlight_study.participation.selectors.participant_pseudonym` returns a
    pseudonym as it is). Running it again changes only rows added since (e.g. by a late sync).

    After a purge, a returning participant can no longer be recognized by their PID (they would
    be assigned afresh), the Prolific sync cannot match submissions to participants by PID, and
    a bonus can no longer be sent to a PID: so purge after the study has closed and its
    submissions have been reviewed and paid.

    Raises
    ------
    PrivacyError
        If the study is not closed and ``even_if_open`` is false (nothing is changed).
    """
    if study.status != Study.Status.CLOSED and not even_if_open:
        raise PrivacyError(
            f"Study '{study.slug}' is {study.status}; purge identifiers only after it has closed "
            "(a returning participant could not be recognized any more)."
        )
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        prolific_study = ProlificStudy.objects.filter(study=study).first()
        mapping: dict[str, str] = {}
        participants = [
            p
            for p in Participant.objects.filter(study=study).only("id", "prolific_pid")
            if not PSEUDONYM_RE.fullmatch(p.prolific_pid)
        ]
        for p in participants:
            mapping[p.prolific_pid] = participant_pseudonym(study=study, prolific_pid=p.prolific_pid)
            p.prolific_pid = mapping[p.prolific_pid]
        Participant.objects.bulk_update(participants, ["prolific_pid"], batch_size=500)
        # Typed or refused drafts are text the participant never submitted (it may even name
        # them): nothing to keep once the study is over.
        Participant.objects.filter(study=study, draft__isnull=False).update(draft=None)
        submissions = []
        if prolific_study is not None:
            for sub in Submission.objects.filter(prolific_study=prolific_study).exclude(prolific_pid=""):
                if PSEUDONYM_RE.fullmatch(sub.prolific_pid):
                    continue
                pseudonym = participant_pseudonym(study=study, prolific_pid=sub.prolific_pid)
                mapping.setdefault(sub.prolific_pid, pseudonym)
                sub.prolific_pid = pseudonym
                submissions.append(sub)
        Submission.objects.bulk_update(submissions, ["prolific_pid"], batch_size=500)
        submission_ids = set(
            Submission.objects.filter(prolific_study=prolific_study).values_list("submission_id", flat=True)
        ) if prolific_study is not None else set()
        submission_ids |= set(
            Participant.objects.filter(study=study).values_list("prolific_session_id", flat=True)
        )
        changed_events = 0
        for event in _study_events(study=study, submission_ids=submission_ids, pids=set(mapping)):
            payload = _replace_text(event.payload, mapping)
            if json.dumps(payload, sort_keys=True) != json.dumps(event.payload, sort_keys=True):
                WebhookEvent.objects.filter(pk=event.pk).update(payload=payload)
                changed_events += 1
        rows = {
            "participants": len(participants),
            "prolific_submissions": len(submissions),
            "webhook_events": changed_events,
            "bonus_payments": _redact_bonus_payments(prolific_study, mapping),
        }
        purge = PrivacyAction.objects.create(
            study=study,
            kind=PrivacyAction.Kind.PURGE,
            rows=rows,
            performed_by=_operator(performed_by),
            note=_check_note(note, mapping),
        )
        audit_record(
            action="privacy.purge", study=study,
            summary=f"The study's Prolific IDs were replaced by pseudonyms (by {purge.performed_by or 'an operator'}).",
            detail={"privacy_action_id": purge.pk, "performed_by": purge.performed_by, "rows": rows},
        )
        return purge
