"""The participant flow as a declared step machine.

One :class:`.spec.StepSpec` per step (:mod:`.consent`, :mod:`.instructions`, :mod:`.task` for
the training and main tasks, :mod:`.reread` for the instructions again after a failed first
check (a detour: only the training task's save enters it), :mod:`.survey`, :mod:`.end` for the done and ended pages, :mod:`.pages` (``info``), :mod:`.attention_check` and
:mod:`.comprehension_quiz` for the pages a study file inserts, :mod:`.checks` for what the check
kinds share with the instruction check) gives
its form, template, context builder, save service, preview context, pilot behaviour and the
compiled statements it uses (:mod:`.statements`, where every SQL statement of the steps is
written out). :mod:`.machine` dispatches the step page's GET and POST, the researcher's preview
and the pilot through them; the monitor, the pilot's timing, the typed drafts and the export ask
:mod:`.lookup`, Back and Forward :mod:`.place`. A new page kind is one spec module, one template
and one register line here, after the step it follows (docs/architecture.md, "A new page kind").
"""
from __future__ import annotations

from .consent import CONFIRM_DECLINE, CONSENT
from .end import DONE, ENDED_PAGE
from .instructions import INSTRUCTIONS
from .pages import PAGE_AFTER_INSTRUCTIONS, PAGE_BEFORE_SURVEY, PAGE_BETWEEN_TASKS, PAGE_END
from .attention_check import (
    CHECK_AFTER_INSTRUCTIONS, CHECK_BEFORE_SURVEY, CHECK_BETWEEN_TASKS, CHECK_END,
)
from .comprehension_quiz import QUIZ_AFTER_INSTRUCTIONS, QUIZ_BEFORE_SURVEY, QUIZ_BETWEEN_TASKS, QUIZ_END
from .reread import REREAD
from .machine import Refused, page, pilot_turn, preview, preview_pages, step_save, submit
from .spec import (
    ENDED,
    Outcome,
    PilotTurn,
    PreviewPage,
    StepSpec,
    Turn,
    advance,
    first_step,
    flow_order,
    register,
    spec_for,
    spec_named,
    step_key_validate,
    unregister,
)
from .survey import SURVEY
from .task import TASK, TRAINING

if not flow_order:
    for _spec in (
        CONSENT, INSTRUCTIONS, PAGE_AFTER_INSTRUCTIONS, TRAINING, REREAD, PAGE_BETWEEN_TASKS, TASK,
        PAGE_BEFORE_SURVEY, SURVEY, PAGE_END, DONE,
    ):
        register(_spec)
    # The check kinds, one step per place after that place's info page (one page per place).
    for _place, _kinds in (
        (PAGE_AFTER_INSTRUCTIONS, (QUIZ_AFTER_INSTRUCTIONS, CHECK_AFTER_INSTRUCTIONS)),
        (PAGE_BETWEEN_TASKS, (QUIZ_BETWEEN_TASKS, CHECK_BETWEEN_TASKS)),
        (PAGE_BEFORE_SURVEY, (QUIZ_BEFORE_SURVEY, CHECK_BEFORE_SURVEY)),
        (PAGE_END, (QUIZ_END, CHECK_END)),
    ):
        for _spec in _kinds:
            register(_spec, after=_place.key)
    register(ENDED_PAGE, after=ENDED)

__all__ = [
    "CONFIRM_DECLINE", "ENDED", "Outcome", "PilotTurn", "PreviewPage", "Refused", "StepSpec",
    "Turn", "advance", "first_step", "flow_order", "page", "pilot_turn", "preview",
    "preview_pages", "register", "spec_for", "spec_named", "step_key_validate", "step_save",
    "submit", "unregister",
]
