"""The declaration of a step, the registry of steps in flow order, and what a step's code gets.

A :class:`StepSpec` says everything the flow, the researcher's preview and ``pilot`` need of one
step; :mod:`.machine` dispatches to it. The steps of a participant flow, in order, are
:data:`flow_order` (``Participant.step`` holds a spec's ``key``); :func:`register` adds a step
after another one (a test registers a step of its own that way), and a step's save moves the
participant on with :func:`advance`, which follows that order.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from django import forms

from spotlight_study.studies.plan import SettingPlan, StudyPlan

from ..models import Participant
from ..selectors import participant_conditions
from . import keys, statements


@dataclass(frozen=True)
class Outcome:
    """Where a submitted step leads, besides the participant's (new) current step page.

    ``redirect``: a URL to send the participant to instead (Prolific's completion URL), or a
    query string starting with ``?`` for the step page itself; ``refused``: the form is kept as
    a draft and shown again with its errors; ``message``: shown once on the next page, at
    ``level`` (``"error"``, ``"info"``).
    """

    redirect: str | None = None
    refused: bool = False
    message: str = ""
    level: str = "error"


@dataclass
class Turn:
    """One participant at one step: what a step's form builder, context builder and save get.

    ``now`` is the instant of the request (or the pilot's simulated instant); ``draft`` the kept
    ``{field: value}`` of this page, or ``None``, and ``draft_typed`` whether it was typed
    (``static/js/draft.js``) rather than a refused form; ``query_string`` the GET's;
    ``draft_url`` where the page sends typed drafts (empty: none).
    ``task`` and ``conditions`` are worked out once per turn, when first asked for.
    """

    participant: Participant
    plan: StudyPlan
    now: datetime | None = None
    token: str = ""
    draft: dict | None = None
    draft_typed: bool = False
    query_string: str = ""
    draft_url: str = ""

    @cached_property
    def task(self) -> tuple[SettingPlan, str, int]:
        """The current task as ``(setting, condition, position)``
        (:func:`current_task`). Raises ``ValueError`` off a task step."""
        return current_task(self.participant, self.plan)

    @cached_property
    def conditions(self) -> list[str]:
        """The participant's conditions in order of first appearance."""
        return participant_conditions(self.participant)


@dataclass(frozen=True)
class PreviewPage:
    """One page of the researcher's preview: ``study`` (the model, settings prefetched),
    ``cell`` (a :class:`spotlight_study.studies.selectors.Cell`) and, on a task page, its
    ``position`` (0 the training task, 1..k the main tasks)."""

    study: Any
    cell: Any
    position: int = 0


@dataclass
class PilotTurn:
    """What a step's pilot hook gets: the :class:`Turn`, the simulated participant's
    ``profile`` (``pilot.PROFILES``), its ``rng`` and ``seconds`` planned per step, and
    ``advance(seconds)``, which moves its simulated clock on and returns the new instant."""

    turn: Turn
    study: Any
    profile: str
    rng: random.Random
    seconds: dict
    advance: Callable[[float], datetime]


def current_task(participant: Participant, plan: StudyPlan) -> tuple[SettingPlan, str, int]:
    """The participant's current task as ``(setting, condition, position)``.

    Position 0 is the training task (always shown with its pattern box); main tasks are 1..k.
    Raises ``ValueError`` if the participant is not on a task step.
    """
    if participant.step == keys.TRAINING:
        return plan.training, "pattern", 0
    if participant.step == keys.TASK:
        task = participant.cell_plan[participant.task_index]
        return plan.setting(task["setting"]), task["condition"], participant.task_index + 1
    raise ValueError(f"Participant is on step {participant.step}, not a task.")


def _no_values(form: forms.Form) -> dict:
    return {}


@dataclass(frozen=True)
class StepSpec:
    """One step of the participant flow.

    Attributes
    ----------
    key : str
        The ``Participant.step`` value (at most 20 characters).
    template : str
        The Django template of the step page (``participation/templates/participation/``),
        which extends ``participation/step_base.html``.
    form : type or None
        The step's form class; ``None`` for an end page.
    form_kwargs : callable
        ``form_kwargs(turn) -> dict``: the form's keyword arguments besides data and initial.
    context : callable
        ``context(turn, form) -> dict``: the page's context besides ``study``, ``participant``,
        ``form`` and the form's method and action (which the machine adds). May record the
        serving of the page (the task pages do; nothing else a GET does writes).
    values : callable
        ``values(form) -> dict``: the save's arguments from a valid form.
    save : callable or None
        ``save(turn, **values) -> Outcome | None``: the save service, on a participant its
        caller locked and whose page token it checked. Raises ``InvalidAnswer`` (the form is
        kept as a draft, with the message) or ``StaleStep``.
    preview : callable
        ``preview(page) -> (form, context)`` for a :class:`PreviewPage`; records nothing.
    preview_pages : callable
        ``preview_pages(n_tasks) -> [(page name, position)]``: the step's pages in the preview.
    pilot : callable or None
        ``pilot(pilot_turn) -> dict | None``: the save's arguments a simulated participant
        submits, or ``None`` when it leaves the study here.
    statements : tuple of str
        The names of the compiled statements its save and context use (:mod:`.statements`).
    for_this_page : callable or None
        ``for_this_page(form) -> bool``: whether the post carries this page's fields at all
        (a form from another page is ignored with the stale-page message).
    detour : bool
        A step that :func:`advance` passes by: only a save that chooses it enters it (with
        :func:`enter`), e.g. the instructions again after a failed first instruction check.
    in_preview : callable or None
        ``in_preview(study) -> bool``: whether the step's pages are in the preview of this
        study (``None``: always).
    applies : callable or None
        ``applies(participant) -> bool``: whether the participant's study has this step at all
        (a page the study file inserts, ``steps/pages.py``); :func:`advance` passes by a step
        that does not apply (``None``: always applies).
    label : callable or None
        ``label(task_index, n_tasks) -> str``: the step as the monitor names it (``"task 2 of
        3"``); ``None``: its key.
    place : callable or None
        ``place(participant) -> (offset, saved, here)``: the page's place for Back and Forward
        (:mod:`.place`): ``offset`` the page's number within the step (0 but on the main
        tasks), ``saved`` what leaving it stored and ``here`` its name, both in the active
        language. ``None``: no place (an end page).
    started_at : callable or None
        ``started_at(row, answers) -> datetime | None``: when a participant entered the step,
        for the monitor's time on step. ``row`` has the participant's ``step``,
        ``task_index``, ``started_at``, ``consented_at`` and ``updated_at``; ``answers`` maps
        a task position to ``(served_at, answered_at)``. ``None``: the row's ``updated_at``
        (the save that entered the step is the participant's last write).
    pilot_seconds : callable or None
        ``pilot_seconds(profile, study, rng) -> float | list``: the simulated seconds a pilot
        participant of ``profile`` spends on the step (a list: one per page), drawn from
        ``rng``; the step's pilot hook reads it back as ``pilot_turn.seconds[key]``.
    draft_kind : str or None
        What a typed draft of the page may hold (``participation/drafts.py``): ``"answer"``
        (the answer box ``answer_<position>``), ``"survey"`` (the survey's choices and
        comment), or ``None`` (nothing to type: no typed draft is kept).
    position : callable or None
        ``position(task_index) -> int``: the task position (``TaskResponse.position``) a task
        page shows; ``None`` off the task pages.
    export_columns : tuple of str
        The step's own columns of ``participants.csv``, after the fixed ones (docs/export.md).
    export : callable or None
        ``export(participant_ids) -> {participant_id: {column: value}}``: those columns' cells
        (a missing cell is written empty); one query for all participants.
    """

    key: str
    template: str
    form: type | None
    context: Callable[[Turn, Any], dict]
    save: Callable[..., Outcome | None] | None
    preview: Callable[[PreviewPage], tuple]
    statements: tuple[str, ...] = ()
    form_kwargs: Callable[[Turn], dict] = field(default=lambda turn: {})
    values: Callable[[forms.Form], dict] = _no_values
    preview_pages: Callable[[int], list] | None = None
    pilot: Callable[[PilotTurn], dict | None] | None = None
    for_this_page: Callable[[Any], bool] | None = None
    detour: bool = False
    in_preview: Callable[[Any], bool] | None = None
    applies: Callable[[Participant], bool] | None = None
    label: Callable[[int, int], str] | None = None
    place: Callable[[Participant], tuple[int, str, str]] | None = None
    started_at: Callable[[dict, dict], datetime | None] | None = None
    pilot_seconds: Callable[[str, Any, random.Random], Any] | None = None
    draft_kind: str | None = None
    position: Callable[[int], int] | None = None
    export_columns: tuple[str, ...] = ()
    export: Callable[[list[int]], dict[int, dict]] | None = None

    def pages(self, n_tasks: int) -> list[tuple[str, int]]:
        """This step's preview pages, ``[(name, position)]``."""
        if self.preview_pages is not None:
            return self.preview_pages(n_tasks)
        return [(self.key, 0)]


#: The steps in flow order (keys); ``done`` is last. The end page of a submission that
#: Prolific ended (``ended``) is not a step of the order: :func:`spec_for` picks it by status.
flow_order: list[str] = []
_SPECS: dict[str, StepSpec] = {}

ENDED = keys.ENDED
#: The draft kinds ``StepSpec.draft_kind`` may name (``participation/drafts.py`` checks them).
DRAFT_KINDS = ("answer", "survey")


def register(spec: StepSpec, *, after: str | None = None) -> None:
    """Add ``spec`` to the flow, after the step ``after`` (at the end when ``None``; the
    ``ended`` page is registered apart, with ``after=ENDED``). Raises ``ValueError`` for a key
    that is taken, too long, or an unknown ``after``."""
    # Plain strings: a TextChoices member hashes by its name, a row's step is its value.
    key = str(spec.key)
    if key in _SPECS:
        raise ValueError(f"A step {key!r} is registered already.")
    if len(key) > 20:
        raise ValueError(f"A step key has at most 20 characters, not {key!r}.")
    if after is not None and after != ENDED and str(after) not in flow_order:
        raise ValueError(f"No step {after!r} to put {key!r} after.")
    if spec.draft_kind not in (None, *DRAFT_KINDS):
        raise ValueError(f"Step {key!r}: draft kind {spec.draft_kind!r} is not one of {DRAFT_KINDS}.")
    _SPECS[key] = spec
    if after == ENDED:
        return
    if after is None:
        flow_order.append(key)
    else:
        flow_order.insert(flow_order.index(str(after)) + 1, key)


def unregister(key: str) -> None:
    """Take the step ``key`` out of the flow (a test's own step, at its end)."""
    _SPECS.pop(key, None)
    if key in flow_order:
        flow_order.remove(key)


def spec_for(participant: Participant) -> StepSpec:
    """The spec of the participant's current page. Raises ``KeyError`` for an unknown step."""
    if participant.status in Participant.Status.ENDED:
        return _SPECS[ENDED]
    return _SPECS[str(participant.step)]


def spec_named(key: str) -> StepSpec:
    """The spec of step ``key``. Raises ``KeyError`` for an unknown step."""
    return _SPECS[str(key)]


def step_key_validate(key: str) -> str:
    """``key`` if it is a registered step (``Participant.step`` holds one); raises
    ``ValueError`` naming the registered steps otherwise."""
    if str(key) not in flow_order:
        raise ValueError(f"{str(key)[:40]!r} is not a step of the flow ({', '.join(flow_order)}).")
    return str(key)


def first_step() -> str:
    """The key of the flow's first step, where an arriving participant starts."""
    return flow_order[0]


def advance(participant: Participant, fields: list[str]) -> None:
    """Move a locked participant to the step after its current one, passing by the detours
    and the steps its study does not have (``StepSpec.applies``), and save ``fields`` with the step, its draft cleared (one ``UPDATE``). Entering the main
    tasks starts at the first."""
    following = next_step(participant)
    enter(participant, following, fields, task_index=0 if following == keys.TASK else None)


def next_step(participant: Participant) -> str:
    """The key of the step :func:`advance` moves ``participant`` to: the next in flow order that
    is no detour and that the participant's study has (``StepSpec.applies``)."""
    at = flow_order.index(str(participant.step)) + 1
    while _SPECS[flow_order[at]].detour or not _applies(_SPECS[flow_order[at]], participant):
        at += 1
    return flow_order[at]


def _applies(spec: StepSpec, participant: Participant) -> bool:
    return spec.applies is None or spec.applies(participant)


def enter(
    participant: Participant, key: str, fields: list[str], *, task_index: int | None = None
) -> None:
    """Move a locked participant to the registered step ``key`` and save ``fields`` with it, the
    draft cleared (one ``UPDATE``). ``task_index``: the main task's index, or on the training
    step the attempt (see ``Participant.task_index``); ``None`` keeps it. Raises ``ValueError``
    for a key that is not a step of the flow (:func:`step_key_validate`: the registry is what
    checks ``Participant.step``, a plain text field)."""
    participant.step = step_key_validate(key)
    participant.draft = None
    fields = [*fields, "step", "draft", "updated_at"]
    if task_index is not None:
        participant.task_index = task_index
        fields.append("task_index")
    statements.participant_save(participant, list(dict.fromkeys(fields)))
