"""What code outside the step machine asks the registry about a participant's step.

The monitor (``researcher/monitor.py``), the pilot (``participation/pilot.py``), the typed
drafts (``participation/drafts.py``) and the export (``results/exports.py``) never compare a
step with a concrete name: they call these functions, which read the registered
:class:`.spec.StepSpec` of the step. A new page kind registered with :func:`.spec.register`
is therefore in all of them at once.
"""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from .spec import StepSpec, _SPECS, flow_order


def _known(step: str) -> StepSpec | None:
    return _SPECS.get(str(step))


def step_label(step: str, task_index: int, n_tasks: int) -> str:
    """The step as the monitor names it: the spec's ``label(task_index, n_tasks)`` (``"task 2
    of 3"``), else its key; an unknown key (a step no longer registered) as it is stored."""
    spec = _known(step)
    if spec is None or spec.label is None:
        return str(step)
    return spec.label(task_index, n_tasks)


def step_is_end(step: str) -> bool:
    """Whether ``step`` is a page that takes nothing (an end page such as ``done``): the
    monitor shows no time on it. An unknown key counts as an end."""
    spec = _known(step)
    return spec is None or spec.save is None


def step_started_at(row: dict, answers: dict[int, tuple]) -> datetime | None:
    """When the participant of ``row`` entered their current step (the spec's
    ``started_at``; see :class:`.spec.StepSpec`), or ``None`` on an end page.

    ``row`` holds ``step``, ``task_index``, ``started_at``, ``consented_at`` and
    ``updated_at``; ``answers`` maps a task position (0 the training task) to ``(served_at,
    answered_at)``.
    """
    if step_is_end(row["step"]):
        return None
    spec = _SPECS[str(row["step"])]
    if spec.started_at is None:
        return row["updated_at"]
    return spec.started_at(row, answers)


def pilot_time_plan(profile: str, *, study: Any, rng: random.Random) -> dict:
    """A pilot participant's simulated seconds per step, ``{step key: seconds}`` (a list for a
    step of several pages), drawn from ``rng`` by each spec's ``pilot_seconds`` in flow order
    (so a seed gives the same plan)."""
    return {
        key: _SPECS[key].pilot_seconds(profile, study, rng)
        for key in flow_order
        if _SPECS[key].pilot_seconds is not None
    }


def draft_kind(step: str) -> tuple[str | None, StepSpec | None]:
    """``(the draft kind of step, its spec)``: ``(None, None)`` for an unknown step, and a
    ``None`` kind for a page with nothing to type (see ``StepSpec.draft_kind``)."""
    spec = _known(step)
    return (None, None) if spec is None else (spec.draft_kind, spec)


def export_columns(study: Any = None) -> list[str]:
    """The registered steps' own ``participants.csv`` columns, in flow order (none for the
    built-in steps, whose columns are the export's fixed ones); with ``study``, only those of
    the steps it has (``StepSpec.in_preview``: a check page of another place or kind adds none)."""
    return [
        column
        for key in flow_order
        if study is None or _SPECS[key].in_preview is None or _SPECS[key].in_preview(study)
        for column in _SPECS[key].export_columns
    ]


def export_cells(participant_ids: list[int]) -> dict[int, dict]:
    """``{participant_id: {column: value}}`` of the registered steps' own columns for these
    participants (one query per step that has columns)."""
    cells: dict[int, dict] = {}
    for key in flow_order:
        spec = _SPECS[key]
        if spec.export is None:
            continue
        for pid, values in spec.export(participant_ids).items():
            cells.setdefault(pid, {}).update(values)
    return cells
