"""Writes of messages to participants: send one through Prolific's messages API and record it.

Recipients are named by pseudonym (the export's ``p_...``), or chosen by a filter on their
status here. Their Prolific IDs are looked up only to send; the record (:class:`~..models.Message`)
and the log hold pseudonyms and counts only. A message is committed as ``sent`` before the
request, and the request is never retried, so a message is delivered at most once.
"""
from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from spotlight_study.participation.models import Participant

from .. import selectors
from ..client import ProlificClient
from ..errors import ProlificError, ProlificServiceError
from ..messages import message_text
from ..models import Message
from .study import client_or_default, linked_prolific_study

logger = logging.getLogger(__name__)

#: Filters a message can go to: ``{key: (label, participant statuses)}``.
MESSAGE_FILTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "in_progress": ("Participants in progress", (Participant.Status.IN_PROGRESS,)),
    "completed": ("Participants who completed", (Participant.Status.COMPLETED,)),
    "failed_check": ("Participants who failed the instruction check", (Participant.Status.FAILED_CHECK,)),
    "all": ("All participants", tuple(Participant.Status.values)),
}


def message_recipients(*, study, pseudonym: str = "", status_filter: str = "") -> dict[str, Participant]:
    """``{pseudonym: participant}`` of one pseudonym or of a filter of :data:`MESSAGE_FILTERS`
    (real participants only). Raises :class:`~..errors.ProlificServiceError` for an unknown
    pseudonym or filter, or when both or neither are given."""
    if bool(pseudonym.strip()) == bool(status_filter):
        raise ProlificServiceError("Choose one participant (pseudonym) or one group of participants.")
    people = selectors.participant_by_pseudonym(study=study)
    if pseudonym.strip():
        p = people.get(pseudonym.strip())
        if p is None:
            raise ProlificServiceError("No participant of this study has that pseudonym.")
        return {pseudonym.strip(): p}
    if status_filter not in MESSAGE_FILTERS:
        raise ProlificServiceError("Unknown group of participants.")
    wanted = set(MESSAGE_FILTERS[status_filter][1])
    chosen = set(
        Participant.objects.filter(study=study, is_pilot=False, status__in=wanted).values_list("pk", flat=True)
    )
    return {k: p for k, p in people.items() if p.pk in chosen}


def message_send(
    *, prolific_study_id: int, template: str, pseudonym: str = "", status_filter: str = "",
    custom_text: str = "", sent_by=None, client: ProlificClient | None = None,
) -> Message:
    """Send a message (a template or ``custom_text``) to one participant or a filter's.

    Returns the recorded :class:`~..models.Message` (``done`` or ``failed``). Raises
    :class:`~..errors.ProlificServiceError` for bad input (nothing is recorded or sent) and
    :class:`~..errors.NotLinked` if the study is not on Prolific.
    """
    ps = linked_prolific_study(prolific_study_id)
    try:
        body = message_text(template=template, study_title=ps.study.title, custom_text=custom_text)
    except ValueError as exc:
        raise ProlificServiceError(str(exc)) from None
    recipients = message_recipients(study=ps.study, pseudonym=pseudonym, status_filter=status_filter)
    if not recipients:
        raise ProlificServiceError("No participant in that group: nothing was sent.")
    with transaction.atomic():
        message = Message.objects.create(
            prolific_study=ps, recipients=sorted(recipients), template=template, body=body,
            sent_by=sent_by, sent_at=timezone.now(),
        )
    try:
        with client_or_default(client, study_id=ps.study_id) as c:
            c.message_send(study_id=ps.prolific_id, body=body,
                           participant_ids=[p.prolific_pid for p in recipients.values()])
    except ProlificError as exc:
        message.outcome, message.error = Message.Outcome.FAILED, str(exc)[:1000]
    else:
        message.outcome = Message.Outcome.DONE
    message.save(update_fields=["outcome", "error"])
    logger.info("Study %s: message %s (%s) to %d participant(s): %s.", ps.study.slug, message.pk,
                template, len(recipients), message.outcome)
    return message
