"""What the participant flow's steps share: page tokens, the stale-page messages, telemetry,
the instruction check and the survey's items; and Prolific's end of a submission.

The steps' own writes are their specs' save services (:mod:`.steps`). Every one runs on a
participant whose row the caller locked (``select_for_update``; on SQLite the IMMEDIATE
transaction mode serializes writers) and whose posted page token it checked, so a double
submit, a stale tab or the back button can never store a second answer. The study's definition
comes from its compiled plan (:mod:`spotlight_study.studies.plan`), never from a query of its
own.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext_lazy

from spotlight_study.studies.plan import StudyPlan, study_plan_of

from .models import Participant
from .selectors import participant_conditions

# The messages are shown in the study's language (lazy: translated where they are shown).
# Shown after a double submit or a post from an old tab; the first submit's answer is kept.
STALE_MESSAGE = gettext_lazy(
    "That page was already submitted and its answer is saved. Here is where you are now."
)
# A consent form from an older page: the choice made there was not recorded (the earlier one was).
STALE_CONSENT_MESSAGE = gettext_lazy(
    "That consent page was out of date, so the choice on it was not recorded. Here is where you "
    "are now."
)
OTHER_PARTICIPANT_MESSAGE = gettext_lazy(
    "That page belonged to another Prolific participant who opened the study earlier in this "
    "browser, so nothing from it was saved. This browser now takes part as the Prolific ID that "
    "entered the study last; here is where that participant is."
)


@dataclass(frozen=True)
class Telemetry:
    """Browser-reported evidence for one task page (all counts >= 0; times in ms).

    The writing process (``typed_chars`` .. ``away_before_paste_ms``) is described on
    :class:`~.models.TaskResponse`; :func:`.forms.parse_telemetry` clamps every value.
    """

    paste_count: int = 0
    paste_chars: int = 0
    hidden_ms: int = 0
    blur_count: int = 0
    events: list = field(default_factory=list)
    typed_chars: int = 0
    dropped_chars: int = 0
    replaced_chars: int = 0
    insertions: int = 0
    deletions: int = 0
    typing_ms: int = 0
    largest_insert_chars: int = 0
    away_before_paste_ms: int = 0


def _participant_tag(participant_id: int) -> str:
    # Keyed with SECRET_KEY, so a page's token names its participant without showing the row id.
    return salted_hmac("participation.step_token", str(participant_id)).hexdigest()[:10]


def step_token(participant: Participant) -> str:
    """The token that identifies the participant's current page, e.g. ``task:1:3f9c0a12be``.

    ``<step>:<task_index>:<tag>``, where the tag is an HMAC of the participant (10 hex digits).
    Each form carries it back, so a POST from any other page is recognized as stale, and a page
    of another participant who used the same browser earlier can never be saved as this one's
    (their tokens differ even on the same step).
    """
    return step_token_of(participant_id=participant.pk, step=participant.step, task_index=participant.task_index)


def step_token_of(*, participant_id: int, step: str, task_index: int) -> str:
    """The token of participant ``participant_id``'s page at ``step`` and ``task_index``, as
    :func:`step_token` writes it (a typed draft checks its token with it, without a read)."""
    return f"{step}:{task_index}:{_participant_tag(participant_id)}"


def token_of_other_participant(participant: Participant, token: str) -> bool:
    """Whether ``token`` is a well-formed step token of a participant other than ``participant``.

    True when this browser showed the page to someone else before the session was bound to
    ``participant`` (two Prolific IDs entered in one browser); such a post is not saved.
    """
    parts = token.split(":")
    return len(parts) == 3 and parts[2] != _participant_tag(participant.pk)


def instruction_check_passes(*, answer: str, keywords: list[str]) -> bool:
    """Whether ``answer`` contains any accepted keyword as the start of a word, ignoring case.

    ``"night"`` accepts "night", "nights" and "nighttime" but not "fortnight".
    """
    text = answer.lower()
    return any(re.search(rf"\b{re.escape(k.lower())}", text) for k in keywords if k.strip())


def survey_item_keys(
    participant: Participant, plan: StudyPlan | None = None
) -> set[tuple[str, str]]:
    """The ``(condition, item)`` pairs the participant must answer in the survey.

    The survey comes from ``plan``, or else from the plan of ``participant.study``.
    """
    survey = (plan or study_plan_of(participant.study)).survey
    keys = {
        (c, item["key"]) for c in participant_conditions(participant) for item in survey["condition_items"]
    }
    keys |= {("background", item["key"]) for item in survey.get("background_items", ())}
    return keys


def participant_prolific_status_set(
    *, participant_id: int, status: str, now: datetime | None = None, replace_ended: bool = False
) -> bool:
    """Record that Prolific returned, timed out or rejected the participant's submission.

    Used by the Prolific sync and webhook (``spotlight_study.prolific``). The status never moves
    backwards and never loses information:

    - in progress or completed -> ``returned``, ``timed_out`` or ``rejected``: the place in the
      cell is freed (see :func:`selectors.holding_filter`), and the researcher page and the
      export show the new status, since all three read it from this row. A completed
      participant's answers are kept (Prolific does not count the submission, so the place is
      filled again; whether to analyse those answers is the researcher's choice);
    - returned, timed out or rejected -> another of the three, only with ``replace_ended``: the
      participant follows their submission, whose later status by Prolific's own time won (one
      truth, docs/prolific.md); without it, unchanged;
    - failed check, no consent or ended by the researcher: unchanged (they hold no place; the
      researcher's decision is kept with its reason).

    ``finished_at`` is set if empty. Returns whether the status changed. Raises ``ValueError``
    for another status and ``Participant.DoesNotExist`` for an unknown id.
    """
    ended = Participant.Status.PROLIFIC_ENDED
    if status not in ended:
        raise ValueError(f"Prolific can only end a participant as {', '.join(ended)}, not {status}.")
    now = now or timezone.now()
    with transaction.atomic():
        p = Participant.objects.select_for_update().get(pk=participant_id)
        movable = (Participant.Status.IN_PROGRESS, Participant.Status.COMPLETED)
        if p.status == status or p.status not in (movable + ended if replace_ended else movable):
            return False
        p.status = status
        p.finished_at = p.finished_at or now
        p.save(update_fields=["status", "finished_at", "updated_at"])
    return True
