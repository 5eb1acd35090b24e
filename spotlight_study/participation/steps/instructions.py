"""The instructions step: the study's instructions with the training setting as an example."""
from __future__ import annotations

from django.utils.translation import gettext

from spotlight_study.studies.selectors import training_setting

from ..forms import StepForm
from ..models import Participant
from ..selectors import task_page
from . import keys, statements
from .spec import Outcome, PilotTurn, PreviewPage, StepSpec, Turn, advance


def instructions_context(turn: Turn, form) -> dict:
    """The instructions with the training setting's texts, unshuffled and without patterns."""
    return {"page": task_page(setting=turn.plan.training, condition="no_pattern", shuffle_seed=0)}


def instructions_save(turn: Turn) -> Outcome | None:
    """Move a locked participant on from the instructions (its Continue)."""
    advance(turn.participant, [])
    return None


def instructions_preview(page: PreviewPage):
    """The instructions as in the flow."""
    example = task_page(setting=training_setting(page.study), condition="no_pattern", shuffle_seed=0)
    return StepForm(), {"page": example}


def instructions_pilot(pt: PilotTurn) -> dict:
    """A pilot participant reads for the planned seconds and continues."""
    pt.turn.now = pt.advance(pt.seconds[keys.INSTRUCTIONS])
    return {}


INSTRUCTIONS = StepSpec(
    key=keys.INSTRUCTIONS,
    template="participation/instructions.html",
    form=StepForm,
    context=instructions_context,
    save=instructions_save,
    preview=instructions_preview,
    pilot=instructions_pilot,
    statements=(statements.LOCKED_READ, statements.PARTICIPANT_SAVE),
    place=lambda p: (
        0, gettext("You have already read the instructions"), gettext("this is the instructions page")
    ),
    started_at=lambda row, answers: row["consented_at"],  # entered by the consent's save
    pilot_seconds=lambda profile, study, rng: rng.uniform(30, 120),
)
