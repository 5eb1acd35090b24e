"""Drafts: what a participant typed into a refused form, kept for the page's next GET.

Writes only; the participant row is already locked by the caller
(:func:`.steps.statements.participant_locked`). The draft is restored by the step page's form
(:mod:`.steps.machine`).
"""

from __future__ import annotations

from .models import Participant
from .steps.statements import participant_save

# A Unicode noncharacter (never valid in submitted text) standing for NUL inside stored drafts.
DRAFT_NUL = "\ufdd0"


def draft_data(draft: dict) -> dict[str, str]:
    """The ``{field: value}`` of a stored draft as it was submitted (NUL restored)."""
    return {name: value.replace(DRAFT_NUL, "\x00") for name, value in (draft.get("data") or {}).items()}


def draft_save(*, participant: Participant, token: str, data: dict[str, str]) -> None:
    """Keep what a locked participant typed into a refused form of the page ``token``.

    ``data`` is ``{field name: submitted value}``; the page's next GET shows it with its errors
    (see ``Participant.draft``). PostgreSQL's jsonb cannot hold U+0000, which a refused answer
    may contain, so NUL is stored as :data:`DRAFT_NUL` and :func:`draft_data` gives it back.
    """
    stored = {name: str(value).replace("\x00", DRAFT_NUL) for name, value in data.items()}
    participant.draft = {"token": token, "data": stored}
    participant_save(participant, ["draft", "updated_at"])
