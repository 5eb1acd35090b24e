"""The end pages: ``done`` (the last step: the completion code, or why the study ended) and
``ended`` (Prolific returned, timed out or rejected the submission). Neither has a form."""
from __future__ import annotations

from ..models import Participant
from ..selectors import completion_code, completion_url
from . import keys
from .checks import check_ending
from .spec import ENDED, PreviewPage, StepSpec, Turn


def done_context(turn: Turn, form) -> dict:
    """The participant's completion code and Prolific's URL for it (none: no code to give), and
    ``check_ending``, the check page's failed try that ended the study (``None``: not a check
    page's end). Under a check page's ``return`` policy there is no code: the page asks the
    participant to return the submission on Prolific."""
    ending = check_ending(turn.participant)
    code = completion_code(turn.participant, turn.plan)
    if ending is not None and ending.outcome == "return":
        code = None
    return {
        "code": code, "completion_url": completion_url(code) if code else None,
        "check_ending": ending,
    }


def done_preview(page: PreviewPage):
    """The done page of a completed participant, without the link to Prolific."""
    return None, {
        "participant": {"status": "completed"},
        "code": page.study.completion_code,
        "completion_url": None,
    }


DONE = StepSpec(
    key=keys.DONE,
    template="participation/done.html",
    form=None,
    context=done_context,
    save=None,
    preview=done_preview,
)
ENDED_PAGE = StepSpec(
    key=ENDED,
    template="participation/ended.html",
    form=None,
    context=lambda turn, form: {},
    save=None,
    preview=lambda page: (None, {}),
    preview_pages=lambda n_tasks: [],
)
