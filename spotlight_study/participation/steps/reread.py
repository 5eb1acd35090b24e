"""The instructions again, after a failed first instruction check (``instruction_check_attempts:
2``): a neutral page with the instructions and the example, then the training task once more.

A detour step (:attr:`.spec.StepSpec.detour`): the training task's save enters it, the flow's
order never does, so a participant who passes the check never sees it.
"""
from __future__ import annotations

from ..forms import StepForm
from ..models import Participant
from . import statements
from .instructions import instructions_context, instructions_pilot, instructions_preview
from .spec import Outcome, StepSpec, Turn, enter


def reread_save(turn: Turn) -> Outcome | None:
    """Move a locked participant from the instructions again to their second attempt at the
    training task (``task_index`` 1, so the first attempt's page token is stale)."""
    enter(turn.participant, Participant.Step.TRAINING, [], task_index=1)
    return None


REREAD = StepSpec(
    key=Participant.Step.REREAD,
    template="participation/reread.html",
    form=StepForm,
    context=instructions_context,
    save=reread_save,
    preview=instructions_preview,
    pilot=instructions_pilot,  # reading them again takes the planned reading time again
    statements=(statements.LOCKED_READ, statements.PARTICIPANT_SAVE),
    detour=True,
    in_preview=lambda study: study.instruction_check_attempts == 2,
)
