"""How a page's kept draft is stored on the participant's row and read back.

``Participant.draft = {"token": step token of the page, "data": {field: value}}``, with
``"typed": true`` for a draft that ``static/js/draft.js`` sent while the participant typed
(``participation/drafts.py`` checks and saves those) rather than the fields of a refused form
(:func:`draft_save`). Here, inside the step machine, because its page builder restores a draft
into the step's form: the machine needs these, and the typed drafts' checks need the registry,
so they live above it and this below.
"""
from __future__ import annotations

from ..draft_marks import server_draft_mark
from ..models import Participant
from .statements import participant_save

# A Unicode noncharacter (never valid in submitted text) standing for NUL inside stored drafts.
DRAFT_NUL = "\ufdd0"


def draft_data(draft: dict) -> dict[str, str]:
    """The ``{field: value}`` of a stored draft as it was submitted (NUL restored)."""
    return {name: value.replace(DRAFT_NUL, "\x00") for name, value in (draft.get("data") or {}).items()}


def draft_is_typed(draft: dict) -> bool:
    """Whether a stored draft was typed (shown without errors) rather than refused."""
    return bool(draft.get("typed"))


def draft_stored(data: dict[str, str]) -> dict[str, str]:
    """``data`` as a draft stores it: every value a string, NUL as :data:`DRAFT_NUL`."""
    # PostgreSQL's jsonb cannot hold U+0000, which crafted text may contain.
    return {name: str(value).replace("\x00", DRAFT_NUL) for name, value in data.items()}


def draft_save(*, participant: Participant, token: str, data: dict[str, str]) -> None:
    """Keep what a locked participant typed into a refused form of the page ``token``.

    ``data`` is ``{field name: submitted value}``; the page's next GET shows it with its errors
    (see ``Participant.draft``). NUL is stored as :data:`DRAFT_NUL` and :func:`draft_data` gives
    it back. The draft gets a mark of the server's own
    (:func:`..draft_marks.server_draft_mark`), so no tab's copy of older text is put back over it.
    """
    participant.draft = {"token": token, "data": draft_stored(data), "mark": server_draft_mark()}
    participant_save(participant, ["draft", "updated_at"])
