"""Where a step page lies in the flow, so that Back to a submitted page can say so.

Every step has the same URL, so after Back (or Forward) the browser asks the server again and
gets the participant's current step, which may not be the page they left there. Each step page
carries its :class:`PagePlace` as ``data-place-*`` attributes on ``<main>``; ``static/js/flow.js``
keeps the place a history entry last showed in that entry's ``history.state`` (which stays in
the browser), and when a later visit to the entry finds a later page, it writes, e.g., "Your
answer to task 1 is saved; this is task 2." The place names the step and the task's number
only, never the setting or the condition. Without JavaScript nothing is added: the page is still
the current step, and a submit from an old copy is answered by the stale-page message.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext, pgettext

from .models import Participant


@dataclass(frozen=True)
class PagePlace:
    """One step page's place in the flow.

    ``order`` grows along the flow (consent 0, instructions 1, example task 2, main task k at
    2 + k, survey 3 + n); ``saved`` says what leaving the page stored ("Your answer to task 1
    is saved") and ``here`` names the page ("this is task 2"), to be joined as
    ``f"{earlier.saved}; {later.here}."`` (:func:`place_note_pattern`, in the language of
    the page). Both are in the active language: the study's.
    """

    order: int
    saved: str
    here: str


def page_place(participant: Participant) -> PagePlace | None:
    """The place of ``participant``'s current step page; ``None`` for the end pages (done,
    ended), which have nothing after them and no script. Pure: reads the row's step fields."""
    step = participant.step
    if step == Participant.Step.CONSENT:
        return PagePlace(0, gettext("Your consent is saved"), gettext("this is the consent page"))
    if step == Participant.Step.INSTRUCTIONS:
        return PagePlace(
            1, gettext("You have already read the instructions"), gettext("this is the instructions page")
        )
    if step == Participant.Step.TRAINING:
        return PagePlace(
            2, gettext("Your answer to the example task is saved"), gettext("this is the example task")
        )
    if step == Participant.Step.REREAD:
        return PagePlace(
            2, gettext("Your answer to the example task is saved"), gettext("these are the instructions again")
        )
    if step == Participant.Step.TASK:
        k = participant.task_index + 1
        return PagePlace(
            2 + k,
            gettext("Your answer to task %(number)s is saved") % {"number": k},
            gettext("this is task %(number)s") % {"number": k},
        )
    if step == Participant.Step.SURVEY:
        return PagePlace(
            3 + len(participant.cell_plan),
            gettext("Your survey answers are saved"),
            gettext("this is the survey"),
        )
    return None


def place_note_pattern() -> str:
    """How ``static/js/flow.js`` joins an earlier page's ``saved`` and this page's ``here``, in
    the active language: ``"{saved}; {here}."`` in English (the page's ``data-place-note``)."""
    # Translators: {saved} and {here} are replaced in the browser; keep both, with the braces.
    return pgettext("Back/Forward note", "{saved}; {here}.")
