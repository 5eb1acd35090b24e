"""State changes of the participant flow.

Every write locks the participant's row (``select_for_update``; on SQLite the IMMEDIATE
transaction mode serializes writers) and checks that the submitted page is the participant's
current step, so a double submit, a stale tab or the back button can never store a second answer.
The study's definition comes from its compiled plan (:mod:`spotlight_study.studies.plan`), never
from a query of its own.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Case, F, OuterRef, Subquery, Value, When
from django.utils import timezone
from django.utils.crypto import salted_hmac

from spotlight_study.studies.models import Study
from spotlight_study.studies.plan import SettingPlan, StudyPlan, study_plan, study_plan_of

from .errors import InvalidAnswer, StaleStep
from .models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.compiled_sql import (
    SENTINEL_INT,
    SENTINEL_STR,
    PreparedQuery,
    PreparedUpdate,
    PreparedUpsert,
    fields_save,
    rows_insert,
)
from .selectors import PAGE_DEFERRED, TaskPage, participant_conditions, task_page

# Shown after a double submit or a post from an old tab; the first submit's answer is kept.
STALE_MESSAGE = "That page was already submitted and its answer is saved. Here is where you are now."
# A consent form from an older page: the choice made there was not recorded (the earlier one was).
STALE_CONSENT_MESSAGE = "That consent page was out of date, so the choice on it was not recorded. Here is where you are now."
OTHER_PARTICIPANT_MESSAGE = (
    "That page belonged to another Prolific participant who opened the study earlier in this "
    "browser, so nothing from it was saved. This browser now takes part as the Prolific ID that "
    "entered the study last; here is where that participant is."
)


@dataclass(frozen=True)
class Telemetry:
    """Browser-reported evidence for one task page (all counts >= 0; ``hidden_ms`` in ms)."""

    paste_count: int = 0
    paste_chars: int = 0
    hidden_ms: int = 0
    blur_count: int = 0
    events: list = field(default_factory=list)


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


# --- the flow's writes: one locked read (participant_locked), one write with update_fields ----
# The ``*_save`` functions write to a participant the caller locked and whose posted token it
# checked; ``*_record`` / ``*_confirm`` / ``*_submit`` lock and check themselves (pilot, tests).


def _locked_queryset():
    # FOR UPDATE OF the participant only: the join (for the definition version) must not lock
    # the study row, which every participant of the study shares.
    current_position = Case(
        When(step=Participant.Step.TRAINING, then=Value(0)), default=F("task_index") + 1
    )
    return (
        Participant.objects.select_for_update(of=("self",))
        .defer(*PAGE_DEFERRED)
        .annotate(
            definition_version=F("study__definition_version"),
            current_position=current_position,
        )
        .annotate(
            # When the current task page was first served (None: not served, or not a task).
            served_at=Subquery(
                TaskResponse.objects.filter(
                    participant=OuterRef("pk"),
                    position=OuterRef("current_position"),
                    answered_at__isnull=True,
                ).values("served_at")[:1]
            )
        )
    )


@contextmanager
def participant_locked(*, participant_id: int, slug: str) -> Iterator[Participant | None]:
    """A transaction holding the row lock of participant ``participant_id`` of study ``slug``.

    Yields the participant (``None`` if there is no such participant), read in one query with
    ``definition_version`` (the study's current definition version, for
    :func:`spotlight_study.studies.plan.study_plan`) and ``served_at`` (when the current task
    page was first served, or ``None``). Writes made inside the block commit together at its
    end, or not at all if it raises.
    """
    with transaction.atomic():
        rows = _LOCKED_READ.fetch(participant_id=participant_id, slug=slug)
        yield rows[0] if rows else None


# Compiled once per process (compiled_sql): building this queryset costs more than running it.
_LOCKED_READ = PreparedQuery(
    lambda participant_id, slug: _locked_queryset().filter(pk=participant_id, study__slug=slug)[:1],
    participant_id=SENTINEL_INT,
    slug=SENTINEL_STR,
)


def _lock(participant_id: int, token: str) -> Participant:
    """Lock the participant row and check the submitted page is the current one.

    Raises ``Participant.DoesNotExist`` for an unknown id and ``StaleStep`` for another page.
    """
    participant = _locked_queryset().get(pk=participant_id)
    if participant.status != Participant.Status.IN_PROGRESS or step_token(participant) != token:
        raise StaleStep(STALE_MESSAGE)
    return participant


def consent_save(*, participant: Participant, agreed: bool, now: datetime | None = None) -> Participant:
    """Record the consent decision of a locked participant on the consent page.

    Declining ends the session (status ``no_consent``, the no-consent code).
    """
    now = now or timezone.now()
    p = participant
    if agreed:
        p.consented_at = now
        p.step = Participant.Step.INSTRUCTIONS
        fields = ["consented_at", "step", "draft", "updated_at"]
    else:
        p.status = Participant.Status.NO_CONSENT
        p.step = Participant.Step.DONE
        p.finished_at = now
        fields = ["status", "step", "finished_at", "draft", "updated_at"]
    p.draft = None
    fields_save(p, fields)
    return p


def consent_record(*, participant_id: int, token: str, agreed: bool) -> Participant:
    """Lock, check and :func:`consent_save`. Raises ``StaleStep`` if the consent page is not
    the current step."""
    with transaction.atomic():
        return consent_save(participant=_lock(participant_id, token), agreed=agreed)


def instructions_save(*, participant: Participant) -> Participant:
    """Move a locked participant from the instructions to the training task."""
    participant.step = Participant.Step.TRAINING
    participant.draft = None
    fields_save(participant, ["step", "draft", "updated_at"])
    return participant


def instructions_confirm(*, participant_id: int, token: str) -> Participant:
    """Lock, check and :func:`instructions_save`. Raises ``StaleStep`` if stale."""
    with transaction.atomic():
        return instructions_save(participant=_lock(participant_id, token))


def current_task(
    participant: Participant, study: Study | StudyPlan
) -> tuple[SettingPlan, str, int]:
    """The participant's current task as ``(setting, condition, position)``.

    Position 0 is the training task (always shown with its pattern box); main tasks are 1..k.
    Raises ``ValueError`` if the participant is not on a task step.
    """
    plan = study_plan_of(study)
    if participant.step == Participant.Step.TRAINING:
        return plan.training, "pattern", 0
    if participant.step == Participant.Step.TASK:
        task = participant.cell_plan[participant.task_index]
        return plan.setting(task["setting"]), task["condition"], participant.task_index + 1
    raise ValueError(f"Participant is on step {participant.step}, not a task.")


# The two writes of a task's response row, compiled once per process (compiled_sql). Both touch
# only an unanswered row, so neither a reload nor a second answer can overwrite the first.
_SERVED = PreparedUpsert(
    TaskResponse,
    conflict_fields=["participant", "position"],
    set_fields=["last_served_at"],
    increments=["serve_count"],
    where_null=["answered_at"],
    returning="serve_count",
)
_ANSWERED = PreparedUpdate(
    TaskResponse,
    set_fields=["answer", "answered_at", "time_on_task_ms", "paste_count", "paste_chars",
                "hidden_ms", "blur_count", "client_events"],
    where_fields=["participant", "position"],
    where_null=["answered_at"],
)


def task_serve(
    *,
    participant: Participant,
    study: Study | StudyPlan,
    now: datetime | None = None,
    page: TaskPage | None = None,
) -> bool:
    """Record that the current task page is being served; return whether it is the first time.

    The first serving creates the response row and fixes ``served_at`` (the start of time on
    task) and the shown order (``page``, the :func:`.selectors.task_page` the caller renders;
    built here if not given); later servings (refresh, second tab) only update
    ``last_served_at`` and ``serve_count`` of an unanswered row. One statement either way
    (``INSERT ... ON CONFLICT DO UPDATE``); of two tabs serving at the same instant one inserts
    and the other counts a second serving. Raises ``ValueError`` if the participant is not on a
    task step.
    """
    now = now or timezone.now()
    setting, condition, position = current_task(participant, study)
    if page is None:
        page = task_page(setting=setting, condition=condition, shuffle_seed=participant.shuffle_seed)
    response = TaskResponse(
        participant_id=participant.pk,
        setting_id=setting.pk,
        position=position,
        condition=condition,
        group1_order=page.group1_order,
        group2_order=page.group2_order,
        pattern_ids=[p.pk for p in page.patterns],
        served_at=now,
        last_served_at=now,
    )
    # Outside a transaction the statement needs no BEGIN and COMMIT; inside one, a savepoint
    # keeps a conflict on the other constraint (setting) from breaking the transaction.
    try:
        if transaction.get_connection().in_atomic_block:
            with transaction.atomic():
                serve_count = _SERVED.execute(response)
        else:
            serve_count = _SERVED.execute(response)
    except IntegrityError:  # a row for this setting at another position: nothing to record
        return False
    # None: the row exists and is answered (a stale tab); it is left as it is.
    return serve_count == 1


def instruction_check_passes(*, answer: str, keywords: list[str]) -> bool:
    """Whether ``answer`` contains any accepted keyword as the start of a word, ignoring case.

    ``"night"`` accepts "night", "nights" and "nighttime" but not "fortnight".
    """
    text = answer.lower()
    return any(re.search(rf"\b{re.escape(k.lower())}", text) for k in keywords if k.strip())


def answer_save(
    *,
    participant: Participant,
    plan: StudyPlan,
    answer: str,
    telemetry: Telemetry,
    now: datetime | None = None,
) -> Participant:
    """Save the answer of a locked participant's current task and move to the next step.

    Parameters
    ----------
    participant : Participant
        Locked by :func:`participant_locked` (which reads ``served_at``), on a task step.
    plan : StudyPlan
        The participant's study.
    answer : str
        The participant's text, already stripped; ``plan.min_answer_chars`` ..
        ``plan.max_answer_chars`` characters.
    telemetry : Telemetry
        Browser-reported evidence for this page.

    Returns
    -------
    Participant
        With its new step. A failed instruction check under the ``end`` policy ends the session
        (status ``failed_check``).

    Raises
    ------
    InvalidAnswer
        If the answer is empty or its length is out of bounds (nothing is written).
    StaleStep
        If the task's answer is already saved (nothing is written).
    ValueError
        If the participant belongs to another study.

    Notes
    -----
    ``time_on_task_ms`` = ``answered_at - served_at`` on the server clock, in ms. The response
    row is updated only while unanswered, so a second answer can never overwrite the first.
    """
    now = now or timezone.now()
    p = participant
    if p.study_id != plan.pk:
        raise ValueError("The participant belongs to another study.")
    if not answer or not plan.min_answer_chars <= len(answer) <= plan.max_answer_chars:
        raise InvalidAnswer(
            f"Please write an answer of {plan.min_answer_chars} to "
            f"{plan.max_answer_chars} characters."
        )
    setting, condition, position = current_task(p, plan)
    served_at = getattr(p, "served_at", None)
    if served_at is None:
        # Posted without the page having been served (e.g. a crafted request): time starts now.
        task_serve(participant=p, study=plan, now=now)
        served_at = now
    saved = _ANSWERED.execute(
        values={
            "answer": answer,
            "answered_at": now,
            "time_on_task_ms": max(0, int((now - served_at).total_seconds() * 1000)),
            "paste_count": telemetry.paste_count,
            "paste_chars": telemetry.paste_chars,
            "hidden_ms": telemetry.hidden_ms,
            "blur_count": telemetry.blur_count,
            "client_events": telemetry.events,
        },
        where={"participant": p.pk, "position": position},
    )
    if not saved:
        raise StaleStep(STALE_MESSAGE)
    fields = ["step", "task_index", "draft", "updated_at"]
    if p.step == Participant.Step.TRAINING:
        p.instruction_check_passed = instruction_check_passes(
            answer=answer, keywords=list(setting.check_keywords)
        )
        fields.append("instruction_check_passed")
        if not p.instruction_check_passed and plan.failed_check_policy == Study.FailedCheckPolicy.END:
            p.status = Participant.Status.FAILED_CHECK
            p.step = Participant.Step.DONE
            p.finished_at = now
            fields += ["status", "finished_at"]
        else:
            p.step = Participant.Step.TASK
            p.task_index = 0
    elif p.task_index + 1 < len(p.cell_plan):
        p.task_index += 1
    else:
        p.step = Participant.Step.SURVEY
    p.draft = None
    fields_save(p, fields)
    return p


def answer_submit(
    *,
    study: Study | StudyPlan,
    participant_id: int,
    token: str,
    answer: str,
    telemetry: Telemetry,
    now: datetime | None = None,
) -> Participant:
    """Lock, check the page ``token`` and :func:`answer_save` (same returns and errors).

    Raises ``StaleStep`` if the page is not the current step (the answer is not stored).
    """
    with transaction.atomic():
        p = _lock(participant_id, token)
        return answer_save(
            participant=p, plan=study_plan_of(study), answer=answer, telemetry=telemetry, now=now
        )


def survey_save(
    *,
    participant: Participant,
    plan: StudyPlan,
    responses: dict[tuple[str, str], int],
    comment: str,
    now: datetime | None = None,
) -> Participant:
    """Save the survey of a locked participant and complete it (status ``completed``).

    Parameters
    ----------
    responses : dict
        ``{(condition or "background", item_key): response}`` with responses 1..5, one for every
        item the participant was asked.
    comment : str
        The free comment, possibly empty.

    Raises
    ------
    InvalidAnswer
        If an item is missing or a response is out of range (nothing is written).
    """
    now = now or timezone.now()
    p = participant
    if set(responses) != survey_item_keys(p, plan):
        raise InvalidAnswer("Please answer every question.")
    if any(not (1 <= int(v) <= 5) for v in responses.values()):
        raise InvalidAnswer("Every answer must be on the 1-5 scale.")
    rows_insert([
        SurveyAnswer(participant=p, condition=c, item=i, response=int(v))
        for (c, i), v in sorted(responses.items())
    ])
    p.comment = comment
    p.status = Participant.Status.COMPLETED
    p.step = Participant.Step.DONE
    p.finished_at = now
    p.draft = None
    fields_save(p, ["comment", "status", "step", "finished_at", "draft", "updated_at"])
    return p


def survey_submit(
    *,
    participant_id: int,
    token: str,
    responses: dict[tuple[str, str], int],
    comment: str,
    now: datetime | None = None,
) -> Participant:
    """Lock, check the page ``token`` and :func:`survey_save` (same parameters and errors).

    Raises ``StaleStep`` if the survey is not the current step.
    """
    with transaction.atomic():
        p = _lock(participant_id, token)
        return survey_save(
            participant=p,
            plan=study_plan(study_id=p.study_id, version=p.definition_version),
            responses=responses,
            comment=comment,
            now=now,
        )


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
    - failed check or no consent: unchanged (they hold no place).

    ``finished_at`` is set if empty. Returns whether the status changed. Raises ``ValueError``
    for another status and ``Participant.DoesNotExist`` for an unknown id.
    """
    ended = (
        Participant.Status.RETURNED,
        Participant.Status.TIMED_OUT,
        Participant.Status.REJECTED,
    )
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
