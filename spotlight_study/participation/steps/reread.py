"""The instructions again, after a failed first instruction check (``instruction_check_attempts:
2``): a neutral page with the instructions and the example, then the training task once more.

A detour step (:attr:`.spec.StepSpec.detour`): the training task's save enters it, the flow's
order never does, so a participant who passes the check never sees it.
"""
from __future__ import annotations

from django.utils.translation import gettext

from ..forms import StepForm
from ..models import Participant
from . import keys, statements
from .instructions import instructions_context, instructions_pilot, instructions_preview
from .spec import Outcome, StepSpec, Turn, enter


def reread_save(turn: Turn) -> Outcome | None:
    """Move a locked participant from the instructions again to their second attempt at the
    training task (``task_index`` 1, so the first attempt's page token is stale)."""
    enter(turn.participant, keys.TRAINING, [], task_index=1)
    return None


REREAD = StepSpec(
    key=keys.REREAD,
    template="participation/reread.html",
    form=StepForm,
    context=instructions_context,
    save=reread_save,
    preview=instructions_preview,
    pilot=instructions_pilot,  # reading them again takes the planned reading time again
    statements=(statements.LOCKED_READ, statements.PARTICIPANT_SAVE),
    detour=True,
    # Entered by the save of the failed first attempt (the participant's last write), so the
    # monitor's default start (``updated_at``) is right.
    place=lambda p: (
        0, gettext("Your answer to the example task is saved"), gettext("these are the instructions again")
    ),
    in_preview=lambda study: study.instruction_check_attempts == 2,
)
