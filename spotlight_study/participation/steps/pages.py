"""The pages a study file inserts into the flow (``pages:``, ``studies/pages.py``).

One step per place (``after_instructions``, ``between_tasks``, ``before_survey``, ``end``), each
passed by (:attr:`.spec.StepSpec.applies`) when the study has no page there; a place holds at
most one page, so ``Participant.step`` alone names the page. This module is the kind ``info``: the
page's title and text and a continue button (the check kinds: :mod:`.attention_check`,
:mod:`.comprehension_quiz`). With ``min_seconds``, a continue earlier than that
after the page was entered is refused by the server, without a write: the page was entered by
the previous step's save, the participant's last write, so ``updated_at`` is its server time
stamp. A pilot participant's saves carry simulated instants, so for pilots the hook's planned
seconds (never below ``min_seconds``) stand in for the check.
"""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from django.utils.translation import gettext, ngettext

from spotlight_study.studies.pages import page_at
from spotlight_study.studies.plan import study_plan

from ..forms import StepForm
from ..models import Participant
from . import keys, statements
from .spec import Outcome, PilotTurn, PreviewPage, StepSpec, Turn, advance, next_step
from .survey import participant_complete


def _page(participant: Participant, at: str) -> dict | None:
    # The locked and the served rows carry their study's version; another row compiles anew.
    version = getattr(participant, "definition_version", None)
    plan = study_plan(study_id=participant.study_id, version=version)
    return page_at(plan.pages, at, kind="info")


def _seconds_left(page: dict, participant: Participant, now) -> int:
    """Whole seconds until ``page``'s ``min_seconds`` have passed since it was entered (0: none)."""
    wait = (participant.updated_at + timedelta(seconds=page.get("min_seconds") or 0)) - now
    return max(0, int(wait.total_seconds() + 0.999))


def _wait_line(n: int) -> str:
    """The info page's wait line for ``n`` seconds, with ``%(n)s`` (the template's own message)."""
    return ngettext("You can continue in %(n)s second.", "You can continue in %(n)s seconds.", n)


def _info_spec(key: str, at: str) -> StepSpec:
    """The step of the page placed ``at``, as step ``key``."""

    def context(turn: Turn, form) -> dict:
        page = page_at(turn.plan.pages, at, kind="info") or {}
        return {
            "info": page, "seconds_left": _seconds_left(page, turn.participant, timezone.now()),
            # The line's words for flow.js's countdown, with {n} for the seconds (the template's
            # own message; the singular, and the plural as 2 takes it).
            "wait_one": _wait_line(1) % {"n": "{n}"}, "wait_many": _wait_line(2) % {"n": "{n}"},
        }

    def save(turn: Turn) -> Outcome | None:
        page = page_at(turn.plan.pages, at, kind="info") or {}
        left = 0 if turn.participant.is_pilot else _seconds_left(
            page, turn.participant, turn.now or timezone.now()
        )
        if left:
            return Outcome(
                message=ngettext(
                    "Please stay on this page a little longer: you can continue in %(n)d second.",
                    "Please stay on this page a little longer: you can continue in %(n)d seconds.",
                    left,
                ) % {"n": left},
                level="info",
            )
        if next_step(turn.participant) == keys.DONE:
            # The last page before the completion code completes the participant.
            return participant_complete(turn, turn.now or timezone.now(), fields=[])
        advance(turn.participant, [])
        return None

    def preview(page: PreviewPage):
        return StepForm(), {"info": page_at(page.study.pages, at, kind="info") or {}, "seconds_left": 0}

    def pilot(pt: PilotTurn) -> dict:
        pt.turn.now = pt.advance(pt.seconds[key])
        return {}

    def pilot_seconds(profile, study, rng) -> float:
        page = page_at(getattr(study, "pages", ()), at, kind="info")
        # No draw for a study without the page: the other steps' seconds stay as they were.
        return 0.0 if page is None else page.get("min_seconds", 0) + rng.uniform(5, 40)

    def place(participant: Participant) -> tuple[int, str, str]:
        title = (_page(participant, at) or {}).get("title", "")
        return (
            0,
            gettext("You have already read the page “%(title)s”") % {"title": title},
            gettext("this is the page “%(title)s”") % {"title": title},
        )

    return StepSpec(
        key=key,
        template="participation/info.html",
        form=StepForm,
        context=context,
        save=save,
        preview=preview,
        pilot=pilot,
        statements=(statements.LOCKED_READ, statements.PARTICIPANT_SAVE),
        in_preview=lambda study: page_at(study.pages, at, kind="info") is not None,
        applies=lambda participant: _page(participant, at) is not None,
        label=lambda task_index, n_tasks: gettext("page (%(at)s)") % {"at": at},
        place=place,
        pilot_seconds=pilot_seconds,
    )


PAGE_AFTER_INSTRUCTIONS = _info_spec(keys.PAGE_AFTER_INSTRUCTIONS, "after_instructions")
PAGE_BETWEEN_TASKS = _info_spec(keys.PAGE_BETWEEN_TASKS, "between_tasks")
PAGE_BEFORE_SURVEY = _info_spec(keys.PAGE_BEFORE_SURVEY, "before_survey")
PAGE_END = _info_spec(keys.PAGE_END, "end")
