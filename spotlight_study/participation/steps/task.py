"""The task steps: the training task (position 0, with its instruction check) and the main
tasks (positions 1..k, one per entry of the participant's ``cell_plan``)."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from django.utils import timezone
from django.utils.formats import number_format
from django.utils.translation import gettext

from spotlight_study.studies.models import Study
from spotlight_study.studies.plan import study_plan_of
from spotlight_study.studies.selectors import main_settings, setting_for_key, training_setting

from ..errors import InvalidAnswer, StaleStep
from ..forms import AnswerForm
from ..models import Participant
from ..selectors import task_page
from ..models import TaskResponse
from ..pilot_behaviour import pilot_answer, pilot_task_seconds, pilot_telemetry, pilot_training_answer
from ..selectors import TaskPage
from ..services import STALE_MESSAGE, Telemetry, instruction_check_passes
from .. import near_duplicates, writing
from ..flags import normalize_answer
from . import keys, statements
from .checks import participant_check_end
from .spec import Outcome, PilotTurn, PreviewPage, StepSpec, Turn, advance, current_task, enter


def task_serve(
    *,
    participant: Participant,
    study,
    now: datetime | None = None,
    page: TaskPage | None = None,
    task: tuple | None = None,
) -> bool:
    """Record that the current task page is being served; return whether it is the first time.

    The first serving creates the response row and fixes ``served_at`` (the start of time on
    task) and the shown order (``page``, the :func:`..selectors.task_page` the caller renders;
    built here if not given); later servings (refresh, second tab) only update
    ``last_served_at`` and ``serve_count`` of an unanswered row. One statement either way
    (:data:`.statements.TASK_SERVED_SQL`); of two tabs serving at the same instant one inserts
    and the other counts a second serving. ``study`` is the plan or the study; ``task`` the
    current task if the caller has it (:func:`.spec.current_task`). Raises ``ValueError`` if
    the participant is not on a task step.
    """
    now = now or timezone.now()
    setting, condition, position = task or current_task(participant, study_plan_of(study))
    if page is None:
        page = task_page(setting=setting, condition=condition, shuffle_seed=participant.shuffle_seed)
    serve_count = statements.task_served(TaskResponse(
        participant_id=participant.pk,
        setting_id=setting.pk,
        position=position,
        condition=condition,
        group1_order=page.group1_order,
        group2_order=page.group2_order,
        pattern_ids=[p.pk for p in page.patterns],
        served_at=now,
        last_served_at=now,
    ))
    # None: the row exists and is answered (a stale tab); -1: a row for this setting at another
    # position. Nothing is recorded either way.
    return serve_count == 1


def _form_kwargs(turn: Turn) -> dict:
    plan = turn.plan
    return {"position": turn.task[2], "min_chars": plan.min_answer_chars, "max_chars": plan.max_answer_chars}


def task_context(turn: Turn, form) -> dict:
    """The task page, and the record of its serving (the only write of a GET: it starts the
    time on task and fixes the shown order of the texts, see :func:`task_serve`); the answer
    box's typed draft is restored by the machine's form and saved to ``draft_url``."""
    p = turn.participant
    setting, condition, position = turn.task
    # Built once: it fixes the response row's shown order and is what the page shows.
    page = task_page(setting=setting, condition=condition, shuffle_seed=p.shuffle_seed)
    task_serve(participant=p, study=turn.plan, page=page, task=turn.task)
    return {
        "page": page,
        "position": position,
        "n_tasks": len(p.cell_plan),
        "is_training": position == 0,
        "draft_url": turn.draft_url,
    }


def answer_save(turn: Turn, *, answer: str, telemetry: Telemetry) -> Outcome | None:
    """Save the answer of a locked participant's current task and move to the next step.

    Parameters
    ----------
    turn : Turn
        Its participant locked by :func:`.statements.participant_locked` (which reads
        ``served_at``), on a task step.
    answer : str
        The participant's text, already stripped; ``plan.min_answer_chars`` ..
        ``plan.max_answer_chars`` characters.
    telemetry : Telemetry
        Browser-reported evidence for this page.

    Returns ``None``: the participant's next page follows (a failed instruction check under
    the ``end`` policy ends the session, status ``failed_check``, and the done page explains
    why before the participant returns to Prolific). With ``instruction_check_attempts`` 2 a
    failed first attempt is kept (:func:`.statements.check_attempt_kept`) and the participant
    reads the instructions again (the ``reread`` step), then answers the training task once
    more (``task_index`` 1); the policy applies to the last attempt.

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
    ``time_on_task_ms`` = ``answered_at - served_at`` on the server clock, in ms
    (:data:`.statements.ANSWER_SAVED_SQL`).
    """
    now = turn.now or timezone.now()
    p, plan = turn.participant, turn.plan
    if p.study_id != plan.pk:
        raise ValueError("The participant belongs to another study.")
    if not answer or not plan.min_answer_chars <= len(answer) <= plan.max_answer_chars:
        raise InvalidAnswer(
            gettext("Please write an answer of %(min)s to %(max)s characters.")
            % {"min": number_format(plan.min_answer_chars, force_grouping=True),
               "max": number_format(plan.max_answer_chars, force_grouping=True)}
        )
    setting, condition, position = turn.task
    served_at = getattr(p, "served_at", None)
    if served_at is None:
        # Posted without the page having been served (e.g. a crafted request): time starts now.
        task_serve(participant=p, study=plan, now=now, task=turn.task)
        served_at = now
    # Measured once here, so that no page compares texts (participation/writing.py).
    near_duplicate, _raised = writing.near_duplicate_record(
        answer=answer, setting_id=setting.pk, participant_id=p.pk, is_pilot=p.is_pilot
    )
    saved = statements.answer_saved(
        participant_id=p.pk,
        position=position,
        values={
            "answer": answer,
            "answered_at": now,
            "time_on_task_ms": max(0, int((now - served_at).total_seconds() * 1000)),
            "paste_count": telemetry.paste_count,
            "paste_chars": telemetry.paste_chars,
            "hidden_ms": telemetry.hidden_ms,
            "blur_count": telemetry.blur_count,
            "client_events": telemetry.events,
            "typed_chars": telemetry.typed_chars,
            "dropped_chars": telemetry.dropped_chars,
            "replaced_chars": telemetry.replaced_chars,
            "insertions": telemetry.insertions,
            "deletions": telemetry.deletions,
            "typing_ms": telemetry.typing_ms,
            "largest_insert_chars": telemetry.largest_insert_chars,
            "away_before_paste_ms": telemetry.away_before_paste_ms,
            "shown_overlap_permille": writing.shown_overlap_permille(
                answer, (*setting.group1_texts, *setting.group2_texts)
            ),
            "near_duplicate_score": near_duplicate,
            "text_key": near_duplicates.text_key(normalize_answer(answer)),
        },
    )
    if not saved:
        raise StaleStep(STALE_MESSAGE)
    if p.step == keys.TRAINING:
        p.instruction_check_passed = instruction_check_passes(
            answer=answer, keywords=list(setting.check_keywords)
        )
        attempt = p.task_index + 1
        if not p.instruction_check_passed and attempt < plan.instruction_check_attempts:
            # Another attempt: keep this one, then the instructions again (the detour step).
            statements.check_attempt_kept(participant_id=p.pk, attempt=attempt, passed=False)
            # Undecided until the last attempt: the monitor, the flags and the review must not
            # count a failed check while a second try is still to come.
            p.instruction_check_passed = None
            enter(p, keys.REREAD, ["instruction_check_passed"])
        elif not p.instruction_check_passed and plan.failed_check_policy == Study.FailedCheckPolicy.END:
            participant_check_end(p, now, ["task_index", "instruction_check_passed"])
        else:
            advance(p, ["task_index", "instruction_check_passed"])
    elif p.task_index + 1 < len(p.cell_plan):
        p.task_index += 1
        p.draft = None
        statements.participant_save(p, ["step", "task_index", "draft", "updated_at"])
    else:
        advance(p, ["task_index"])
    return None


def _answer_values(form: AnswerForm) -> dict:
    return {"answer": form.answer_text(), "telemetry": form.cleaned_data["client_events"]}


def _task_preview(page: PreviewPage):
    study, cell, position = page.study, page.cell, page.position
    if position == 0:
        setting, condition = training_setting(study), "pattern"
    else:
        task = cell.tasks[position - 1]
        setting, condition = setting_for_key(study, task.setting), task.condition
    form = AnswerForm(
        position=position, min_chars=study.min_answer_chars, max_chars=study.max_answer_chars
    )
    return form, {
        "page": task_page(setting=setting, condition=condition, shuffle_seed=0),
        "position": position,
        "n_tasks": len(cell.tasks),
        "is_training": position == 0,
    }


def _at_least(text: str, min_chars: int) -> str:
    while len(text) < min_chars:
        text += " I compared the two groups text by text before writing this."
    return text


def _pilot_answer(pt: PilotTurn, text: str, seconds: float) -> dict:
    """Serve the task at the simulated now and answer ``text`` ``seconds`` later."""
    text = _at_least(text, pt.study.min_answer_chars)
    p, served_at = pt.turn.participant, pt.turn.now
    if task_serve(participant=p, study=pt.turn.plan, now=served_at, task=pt.turn.task):
        p.served_at = served_at  # the lock read the row before this first serving
    telemetry = pilot_telemetry(pt.profile, seconds, text, pt.rng)
    pt.turn.now = pt.advance(seconds)
    return {"answer": text, "telemetry": telemetry}


def training_pilot(pt: PilotTurn) -> dict:
    """A training answer that passes the instruction check, or fails it (``failed_check``)."""
    passes = pt.profile != "failed_check"
    text = pilot_training_answer(setting=training_setting(pt.study), passes=passes, rng=pt.rng)
    return _pilot_answer(pt, text, pt.seconds[keys.TRAINING])


def main_task_pilot(pt: PilotTurn) -> dict | None:
    """A main task's answer; the ``dropout`` profile sees the second task and leaves."""
    p = pt.turn.participant
    if pt.profile == "dropout" and p.task_index > 0:
        task_serve(participant=p, study=pt.turn.plan, now=pt.turn.now, task=pt.turn.task)
        return None
    task = p.cell_plan[p.task_index]
    setting = next(s for s in main_settings(pt.study) if s.key == task["setting"])
    text = pilot_answer(setting=setting, condition=task["condition"], rng=pt.rng)
    if pt.profile == "paster" and p.task_index == 0:
        # Pastes one of the shown texts instead of an answer (copied_from_shown_texts).
        text = pt.rng.choice([*setting.group1_texts, *setting.group2_texts]) or text
    return _pilot_answer(pt, text, pt.seconds[keys.TASK][p.task_index])


def task_started_at(row: dict, answers: dict):
    """A task step starts when its page was first served; until then (the page was not loaded
    yet) when the previous task's answer was saved, else at the participant's last write (the
    instructions' submit before the training task)."""
    position = 0 if row["step"] == keys.TRAINING else row["task_index"] + 1
    if position in answers:
        return answers[position][0]
    if position - 1 in answers and answers[position - 1][1]:
        return answers[position - 1][1]
    return row["updated_at"]


def _task_place(p: Participant) -> tuple[int, str, str]:
    if p.step == keys.TRAINING:
        return 0, gettext("Your answer to the example task is saved"), gettext("this is the example task")
    k = p.task_index + 1
    return (
        p.task_index,
        gettext("Your answer to task %(number)s is saved") % {"number": k},
        gettext("this is task %(number)s") % {"number": k},
    )


_STATEMENTS = (
    statements.LOCKED_READ, statements.TASK_SERVED, statements.ANSWER_SAVED,
    statements.PARTICIPANT_SAVE, statements.TYPED_DRAFT_SAVED, statements.CHECK_ATTEMPT_KEPT,
)

TRAINING = StepSpec(
    key=keys.TRAINING,
    template="participation/task.html",
    form=AnswerForm,
    form_kwargs=_form_kwargs,
    context=task_context,
    values=_answer_values,
    save=answer_save,
    preview=_task_preview,
    pilot=training_pilot,
    for_this_page=AnswerForm.is_for_this_page,
    statements=_STATEMENTS,
    place=_task_place,
    started_at=task_started_at,
    pilot_seconds=pilot_task_seconds,
    draft_kind="answer",
    position=lambda task_index: 0,
)
# The main tasks are the training's page with their own key, one preview page per task and the
# main-task pilot behaviour.
TASK = replace(
    TRAINING,
    key=keys.TASK,
    preview_pages=lambda n_tasks: [(f"task-{i}", i) for i in range(1, n_tasks + 1)],
    pilot=main_task_pilot,
    label=lambda task_index, n_tasks: f"task {task_index + 1} of {n_tasks}",
    pilot_seconds=lambda profile, study, rng: [
        pilot_task_seconds(profile, study, rng) for _ in main_settings(study)
    ],
    position=lambda task_index: task_index + 1,
)
