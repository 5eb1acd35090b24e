"""State changes of the participant flow.

Every write locks the participant's row (``select_for_update``; on SQLite the IMMEDIATE
transaction mode serializes writers) and checks that the submitted page is the participant's
current step, so a double submit, a stale tab or the back button can never store a second answer.
"""
from __future__ import annotations

import random
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from spotlight_study.studies.models import Setting, Study
from spotlight_study.studies.selectors import (
    setting_for_key,
    study_cells,
    training_setting,
)

from .arrival import expected_study_ids
from .models import Participant, SurveyAnswer, TaskResponse
from .selectors import cell_counts, participant_conditions, task_page

PROLIFIC_ID_RE = re.compile(r"^[0-9a-f]{24}$")
# Shown after a double submit or a post from an old tab; the first submit's answer is kept.
STALE_MESSAGE = "That page was already submitted and its answer is saved. Here is where you are now."
OTHER_PARTICIPANT_MESSAGE = (
    "That page belonged to another Prolific participant who opened the study earlier in this "
    "browser, so nothing from it was saved. This browser now takes part as the Prolific ID that "
    "entered the study last; here is where that participant is."
)


class ParticipationError(Exception):
    """Base class of the participant flow's errors; ``str()`` is safe to show a participant."""


class StudyNotOpen(ParticipationError):
    """The study does not accept new participants (draft, paused or closed)."""


class ArrivalRefused(ParticipationError):
    """An arrival whose Prolific IDs contradict what is known; nothing is created.

    ``title`` is a short heading for the participant's page; ``str()`` explains what to do.
    """

    title = "This study link cannot be used"


class WrongStudy(ArrivalRefused):
    """``STUDY_ID`` is not the Prolific study this study is linked to."""

    title = "This link belongs to another Prolific study"


class SessionInUse(ArrivalRefused):
    """``SESSION_ID`` was already used by another participant of this study."""

    title = "This Prolific session was already used"


class StaleStep(ParticipationError):
    """The submitted page is not the participant's current step (double submit, old tab)."""


class InvalidAnswer(ParticipationError):
    """An answer that is empty or too long."""


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
    return f"{participant.step}:{participant.task_index}:{_participant_tag(participant.pk)}"


def token_of_other_participant(participant: Participant, token: str) -> bool:
    """Whether ``token`` is a well-formed step token of a participant other than ``participant``.

    True when this browser showed the page to someone else before the session was bound to
    ``participant`` (two Prolific IDs entered in one browser); such a post is not saved.
    """
    parts = token.split(":")
    return len(parts) == 3 and parts[2] != _participant_tag(participant.pk)


def assignment_create(
    *,
    study: Study,
    prolific_pid: str,
    prolific_study_id: str,
    prolific_session_id: str,
    now: datetime | None = None,
) -> Participant:
    """Assign an arriving participant to the least-filled cell, or resume an existing one.

    Parameters
    ----------
    study : Study
        With settings prefetched (``studies.selectors.study_get_with_settings``).
    prolific_pid, prolific_study_id, prolific_session_id : str
        Prolific's URL parameters, 24 lowercase hex characters each.

    Returns
    -------
    Participant
        The new participant, or the existing one with this PID (a PID takes part once).

    Raises
    ------
    ValueError
        If an ID is malformed (views validate first; this is a guard).
    WrongStudy
        If the study is linked to a Prolific study (:func:`arrival.expected_study_ids`) and
        ``prolific_study_id`` is not its id; checked for resumes too.
    SessionInUse
        If another PID of this study already arrived with ``prolific_session_id``.
    StudyNotOpen
        If the study is not live and the PID has not taken part yet.

    Nothing is created when an error is raised.

    Notes
    -----
    The study row is locked (``select_for_update``) for the duration, so concurrent arrivals
    are assigned one after the other and each sees the counts left by the previous one. Cell
    counts follow :func:`selectors.holding_filter`. Ties are broken with ``random.Random(seed)``
    over the sorted tied cells; the seed, the counts and the cell are stored for audit.
    """
    for name, value in (
        ("PROLIFIC_PID", prolific_pid),
        ("STUDY_ID", prolific_study_id),
        ("SESSION_ID", prolific_session_id),
    ):
        if not PROLIFIC_ID_RE.match(value or ""):
            raise ValueError(f"{name} is not 24 lowercase hex characters.")
    expected = expected_study_ids(study=study)
    if expected and prolific_study_id not in expected:
        raise WrongStudy(
            "The link that opened this page names a different Prolific study (its STUDY_ID does "
            "not match this study). Please open the study from its own page on Prolific."
        )
    cells = study_cells(study)
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        existing = Participant.objects.filter(study=locked, prolific_pid=prolific_pid).first()
        if existing is not None:
            return existing
        # The study row lock serializes arrivals, so two PIDs cannot both pass this check.
        if Participant.objects.filter(study=locked, prolific_session_id=prolific_session_id).exists():
            raise SessionInUse(
                "The Prolific session in this link (its SESSION_ID) was already used by another "
                "participant. Please open the study from your own Prolific account."
            )
        if locked.status != Study.Status.LIVE:
            raise StudyNotOpen(
                "This study is not accepting participants at the moment."
            )
        counts = cell_counts(study=locked, n_cells=len(cells), now=now)
        seed = secrets.randbits(62)
        least = min(counts.values())
        tied = sorted(i for i, n in counts.items() if n == least)
        chosen = cells[random.Random(seed).choice(tied)]
        return Participant.objects.create(
            study=locked,
            prolific_pid=prolific_pid,
            prolific_study_id=prolific_study_id,
            prolific_session_id=prolific_session_id,
            cell_index=chosen.index,
            cell_plan=[{"setting": t.setting, "condition": t.condition} for t in chosen.tasks],
            assignment_counts={str(k): v for k, v in counts.items()},
            assignment_seed=seed,
            shuffle_seed=secrets.randbits(62),
        )


def _lock(participant_id: int, token: str) -> Participant:
    """Lock the participant row and check the submitted page is the current one."""
    participant = Participant.objects.select_for_update().select_related("study").get(
        pk=participant_id
    )
    if participant.status != Participant.Status.IN_PROGRESS or step_token(participant) != token:
        raise StaleStep(STALE_MESSAGE)
    return participant


def consent_record(*, participant_id: int, token: str, agreed: bool) -> Participant:
    """Record the consent decision. Declining ends the session with the no-consent code.

    Raises ``StaleStep`` if the consent page is not the current step.
    """
    now = timezone.now()
    with transaction.atomic():
        p = _lock(participant_id, token)
        if agreed:
            p.consented_at = now
            p.step = Participant.Step.INSTRUCTIONS
        else:
            p.status = Participant.Status.NO_CONSENT
            p.step = Participant.Step.DONE
            p.finished_at = now
        p.save(update_fields=["consented_at", "step", "status", "finished_at", "updated_at"])
    return p


def instructions_confirm(*, participant_id: int, token: str) -> Participant:
    """Move from the instructions to the training task. Raises ``StaleStep`` if stale."""
    with transaction.atomic():
        p = _lock(participant_id, token)
        p.step = Participant.Step.TRAINING
        p.save(update_fields=["step", "updated_at"])
    return p


def current_task(participant: Participant, study: Study) -> tuple[Setting, str, int]:
    """The participant's current task as ``(setting, condition, position)``.

    Position 0 is the training task (always shown with its pattern box); main tasks are 1..k.
    Raises ``ValueError`` if the participant is not on a task step.
    """
    if participant.step == Participant.Step.TRAINING:
        return training_setting(study), "pattern", 0
    if participant.step == Participant.Step.TASK:
        task = participant.cell_plan[participant.task_index]
        return setting_for_key(study, task["setting"]), task["condition"], participant.task_index + 1
    raise ValueError(f"Participant is on step {participant.step}, not a task.")


def task_serve(*, participant: Participant, study: Study, now: datetime | None = None) -> TaskResponse:
    """Record that the current task page is being served; return its response row.

    The first serving fixes ``served_at`` (the start of time on task); later servings (refresh,
    second tab) only update ``last_served_at`` and ``serve_count``. Raises ``ValueError`` if the
    participant is not on a task step.
    """
    now = now or timezone.now()
    setting, condition, position = current_task(participant, study)
    page = task_page(setting=setting, condition=condition, shuffle_seed=participant.shuffle_seed)
    try:
        with transaction.atomic():
            response, created = TaskResponse.objects.get_or_create(
                participant=participant,
                position=position,
                defaults={
                    "setting": setting,
                    "condition": condition,
                    "group1_order": page.group1_order,
                    "group2_order": page.group2_order,
                    "pattern_ids": [p.pk for p in page.patterns],
                    "served_at": now,
                    "last_served_at": now,
                },
            )
    except IntegrityError:  # two tabs served at the same instant
        response, created = TaskResponse.objects.get(participant=participant, position=position), False
    if not created and response.answered_at is None:
        TaskResponse.objects.filter(pk=response.pk).update(
            last_served_at=now, serve_count=response.serve_count + 1
        )
    return response


def instruction_check_passes(*, answer: str, keywords: list[str]) -> bool:
    """Whether ``answer`` contains any accepted keyword as the start of a word, ignoring case.

    ``"night"`` accepts "night", "nights" and "nighttime" but not "fortnight".
    """
    text = answer.lower()
    return any(re.search(rf"\b{re.escape(k.lower())}", text) for k in keywords if k.strip())


def answer_submit(
    *,
    study: Study,
    participant_id: int,
    token: str,
    answer: str,
    telemetry: Telemetry,
    now: datetime | None = None,
) -> Participant:
    """Save the answer of the current task (training or main) and move to the next step.

    Parameters
    ----------
    study : Study
        The participant's study with settings prefetched (``study_get_with_settings``).
    answer : str
        The participant's text, already stripped; ``study.min_answer_chars`` ..
        ``study.max_answer_chars`` characters.
    telemetry : Telemetry
        Browser-reported evidence for this page.

    Returns
    -------
    Participant
        With its new step. A failed instruction check under the ``end`` policy ends the session
        (status ``failed_check``).

    Raises
    ------
    StaleStep
        If the page is not the current step (the answer is not stored).
    InvalidAnswer
        If the answer is empty or too long.

    Notes
    -----
    ``time_on_task_ms`` = ``answered_at - served_at`` on the server clock, in ms.
    """
    now = now or timezone.now()
    with transaction.atomic():
        p = _lock(participant_id, token)
        if p.study_id != study.pk:
            raise ValueError("The participant belongs to another study.")
        if not answer or not study.min_answer_chars <= len(answer) <= study.max_answer_chars:
            raise InvalidAnswer(
                f"Please write an answer of {study.min_answer_chars} to "
                f"{study.max_answer_chars} characters."
            )
        setting, condition, position = current_task(p, study)
        response = TaskResponse.objects.filter(participant=p, position=position).first()
        if response is None:
            # Posted without the page having been served (e.g. a crafted request): time starts now.
            response = task_serve(participant=p, study=study, now=now)
        if response.answered_at is not None:
            raise StaleStep(STALE_MESSAGE)
        response.answer = answer
        response.answered_at = now
        response.time_on_task_ms = max(0, int((now - response.served_at).total_seconds() * 1000))
        response.paste_count = telemetry.paste_count
        response.paste_chars = telemetry.paste_chars
        response.hidden_ms = telemetry.hidden_ms
        response.blur_count = telemetry.blur_count
        response.client_events = telemetry.events
        response.save()
        if p.step == Participant.Step.TRAINING:
            p.instruction_check_passed = instruction_check_passes(
                answer=answer, keywords=setting.check_keywords
            )
            if not p.instruction_check_passed and study.failed_check_policy == Study.FailedCheckPolicy.END:
                p.status = Participant.Status.FAILED_CHECK
                p.step = Participant.Step.DONE
                p.finished_at = now
            else:
                p.step = Participant.Step.TASK
                p.task_index = 0
        elif p.task_index + 1 < len(p.cell_plan):
            p.task_index += 1
        else:
            p.step = Participant.Step.SURVEY
        p.save()
    return p


def survey_submit(
    *,
    participant_id: int,
    token: str,
    responses: dict[tuple[str, str], int],
    comment: str,
    now: datetime | None = None,
) -> Participant:
    """Save the survey and complete the participant (status ``completed``).

    Parameters
    ----------
    responses : dict
        ``{(condition or "background", item_key): response}`` with responses 1..5, one for every
        item the participant was asked.
    comment : str
        The free comment, possibly empty.

    Raises
    ------
    StaleStep
        If the survey is not the current step.
    InvalidAnswer
        If an item is missing or a response is out of range.
    """
    now = now or timezone.now()
    with transaction.atomic():
        p = _lock(participant_id, token)
        expected = survey_item_keys(p)
        if set(responses) != expected:
            raise InvalidAnswer("Please answer every question.")
        if any(not (1 <= int(v) <= 5) for v in responses.values()):
            raise InvalidAnswer("Every answer must be on the 1-5 scale.")
        SurveyAnswer.objects.bulk_create(
            SurveyAnswer(participant=p, condition=c, item=i, response=int(v))
            for (c, i), v in sorted(responses.items())
        )
        p.comment = comment
        p.status = Participant.Status.COMPLETED
        p.step = Participant.Step.DONE
        p.finished_at = now
        p.save()
    return p


def survey_item_keys(participant: Participant) -> set[tuple[str, str]]:
    """The ``(condition, item)`` pairs the participant must answer in the survey."""
    survey = participant.study.survey
    keys = {
        (c, item["key"]) for c in participant_conditions(participant) for item in survey["condition_items"]
    }
    keys |= {("background", item["key"]) for item in survey.get("background_items", [])}
    return keys


def participant_prolific_status_set(
    *, participant_id: int, status: str, now: datetime | None = None
) -> bool:
    """Record that Prolific returned, timed out or rejected the participant's submission.

    Used by the Prolific sync and webhook (``spotlight_study.prolific``). The status never moves
    backwards and never loses information:

    - in progress or completed -> ``returned``, ``timed_out`` or ``rejected``: the place in the
      cell is freed (see :func:`selectors.holding_filter`), and the researcher page and the
      export show the new status, since all three read it from this row. A completed
      participant's answers are kept (Prolific does not count the submission, so the place is
      filled again; whether to analyse those answers is the researcher's choice);
    - failed check, no consent, or an earlier Prolific status: unchanged (they hold no place).

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
        if p.status not in (Participant.Status.IN_PROGRESS, Participant.Status.COMPLETED):
            return False
        p.status = status
        p.finished_at = p.finished_at or now
        p.save(update_fields=["status", "finished_at", "updated_at"])
    return True
