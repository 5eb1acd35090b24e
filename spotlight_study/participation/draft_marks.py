"""Draft marks: which writer stored a page's draft, so that a tab can tell whether its own copy of
the unsent text is newer than the server's draft.

``static/js/draft.js`` keeps what the participant types in the tab (sessionStorage) on every
input, because the draft it sends as the page unloads can be stored after the reload's GET was
answered by another worker. On load it puts that copy back only when the server's draft is one
the copy already supersedes. For that, each stored draft carries a **mark**, ``"<writer>.<seq>"``:

- a typed draft: the page load that sent it (``writer``, random letters and digits chosen by
  draft.js at each page load) and that load's edit count when it was sent (``seq``);
- a refused draft (the step's POST refused the form): a writer made up by the server
  (:func:`server_draft_mark`), which no tab's copy has seen, so the server's draft wins.

The page renders the mark of its own draft (:func:`page_draft_mark`) on its form
(``data-draft-mark``): ``""`` when the server holds no draft of this page, :data:`UNMARKED` for a
draft stored without a mark (by a page of an earlier draft.js).
"""
from __future__ import annotations

import re
import secrets

from .errors import InvalidDraft

#: A mark as draft.js writes it: 8-32 letters or digits, a dot, an edit count of 1-12 digits.
MARK_PATTERN = re.compile(r"[A-Za-z0-9]{8,32}\.[0-9]{1,12}")
#: The form field that carries a typed draft's mark.
MARK_FIELD = "draft_mark"
#: The page mark of a draft that was stored without one.
UNMARKED = "?"


def draft_mark_of(fields) -> str | None:
    """The mark a typed draft's request carries (``fields``: a ``QueryDict`` or a dict of lists
    of values), or ``None`` when it carries none (a page of an earlier draft.js).

    Raises :class:`~.errors.InvalidDraft` (400, nothing stored) for a mark given more than once
    or not of :data:`MARK_PATTERN`.
    """
    values = fields.getlist(MARK_FIELD) if hasattr(fields, "getlist") else fields.get(MARK_FIELD)
    if not values:
        return None
    if len(values) != 1 or not MARK_PATTERN.fullmatch(values[0]):
        raise InvalidDraft("The draft's mark is malformed; nothing was saved.")
    return values[0]


def server_draft_mark() -> str:
    """A fresh mark for a draft the server writes itself (a refused form): a random writer of
    16 hex digits that no tab has seen, edit count 0."""
    return f"{secrets.token_hex(8)}.0"


def page_draft_mark(draft: dict | None, token: str) -> str:
    """The mark of the server's draft of the page ``token``, for its form's ``data-draft-mark``:
    ``""`` when ``draft`` (``Participant.draft``) is none or another page's, :data:`UNMARKED`
    when it was stored without a valid mark, else its mark."""
    if not draft or draft.get("token") != token:
        return ""
    mark = draft.get("mark")
    if isinstance(mark, str) and MARK_PATTERN.fullmatch(mark):
        return mark
    return UNMARKED
