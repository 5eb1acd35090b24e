"""Participant-flow helpers of the security tests that read field names from the page."""
from __future__ import annotations

import re

from ..conftest import Walker


def answer_field(w: Walker) -> str:
    """The name of the answer field on the walker's last page (``answer`` or ``answer_<n>``)."""
    return re.search(r'<textarea name="(answer[^"]*)"', w.last_page.content.decode()).group(1)


def at_training(w: Walker) -> Walker:
    """Walk ``w`` to the training task page (entered, consented, instructions read)."""
    w.enter()
    w.consent()
    w.instructions()
    w.page()
    return w


def give_answer(w: Walker, text: str, events: str = ""):
    """Open the current task page and submit ``text`` as its answer."""
    w.page()
    return w.post({answer_field(w): text, "client_events": events})


def complete(w: Walker, *, training: str = "The first group fishes by day, the second at night.",
             answers: tuple[str, str] = ("Group 2 describes the doctor as a woman more often.",
                                         "Group 1 grows maize and beans, group 2 wheat."),
             comment: str = ""):
    """Walk ``w`` through the whole demo study (training, two main answers, survey)."""
    w.enter()
    w.consent()
    w.instructions()
    give_answer(w, training)
    for text in answers:
        give_answer(w, text)
    return w.survey(comment=comment)
