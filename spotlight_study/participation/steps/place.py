"""Where a step page lies in the flow, so that Back to a submitted page can say so.

Every step has the same URL, so after Back (or Forward) the browser asks the server again and
gets the participant's current step, which may not be the page they left there. Each step page
carries its :class:`PagePlace` as ``data-place-*`` attributes on ``<main>``; ``static/js/flow.js``
keeps the place a history entry last showed in that entry's ``history.state`` (which stays in
the browser), and when a later visit to the entry finds a later page, it writes, e.g., "Your
answer to task 1 is saved; this is task 2." The place names the step and the task's number
only, never the setting or the condition. Without JavaScript nothing is added: the page is still
the current step, and a submit from an old copy is answered by the stale-page message.

The words come from each step's spec (``StepSpec.place``); the order from the registry: the
pages of the steps before it in :data:`.spec.flow_order` (``StepSpec.pages``), a detour step
sharing the place of the step it returns to.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import pgettext

from ..models import Participant
from .spec import flow_order, spec_for, spec_named


@dataclass(frozen=True)
class PagePlace:
    """One step page's place in the flow.

    ``order`` grows along the flow (with the built-in steps: consent 0, instructions 1, example
    task 2, main task k at 2 + k, survey 3 + n); ``saved`` says what leaving the page stored
    ("Your answer to task 1 is saved") and ``here`` names the page ("this is task 2"), to be
    joined as ``f"{earlier.saved}; {later.here}."`` (:func:`place_note_pattern`, in the
    language of the page). Both are in the active language: the study's.
    """

    order: int
    saved: str
    here: str


def page_place(participant: Participant) -> PagePlace | None:
    """The place of ``participant``'s current step page; ``None`` for a page without one (the
    end pages: done, ended), which have nothing after them and no script. Pure: reads the
    row's step fields and the registry."""
    spec = spec_for(participant)
    if spec.place is None:
        return None
    n_tasks = len(participant.cell_plan)
    base = previous = 0
    for key in flow_order:
        if key == spec.key:
            break
        other = spec_named(key)
        # A step the study does not have (an inserted page it lacks) takes no place.
        if not other.detour and (other.applies is None or other.applies(participant)):
            previous = base
            base += len(other.pages(n_tasks))
    offset, saved, here = spec.place(participant)
    # A detour (the instructions again) stands where the step it interrupts stood.
    return PagePlace((previous if spec.detour else base) + offset, saved, here)


def place_note_pattern() -> str:
    """How ``static/js/flow.js`` joins an earlier page's ``saved`` and this page's ``here``, in
    the active language: ``"{saved}; {here}."`` in English (the page's ``data-place-note``)."""
    # Translators: {saved} and {here} are replaced in the browser; keep both, with the braces.
    return pgettext("Back/Forward note", "{saved}; {here}.")
