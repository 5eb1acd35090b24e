"""Prolific submission statuses: their order, and reading them however they are spelled.

Pure functions, no database. Prolific's API reference spells statuses in upper case with a
space or a hyphen (``AWAITING REVIEW``, ``TIMED-OUT``), but webhook payloads, exports and older
integrations have been seen with other spellings (``timed_out``, ``Timed-Out``, ``returned``).
:func:`status_normalize` maps every spelling to the one canonical form this app stores.
"""
from __future__ import annotations

import re

# Order of a submission's life on Prolific: a status never replaces one of a higher rank.
# RESERVED -> ACTIVE -> AWAITING REVIEW -> a final status (approved, rejected, returned, ...).
STATUS_RANK = {
    "RESERVED": 0,
    "ACTIVE": 1,
    "AWAITING REVIEW": 2,
    "TIMED-OUT": 3,
    "RETURNED": 3,
    "REJECTED": 3,
    "APPROVED": 3,
    "SCREENED OUT": 3,
    "PARTIALLY APPROVED": 3,
}
# Known statuses that say nothing lasting about a submission (Prolific shows PROCESSING while
# it handles a transition): skipped without a warning.
TRANSIENT_STATUSES = frozenset({"PROCESSING"})

_SEPARATORS = re.compile(r"[\s_\-]+")


def _key(value: str) -> str:
    return _SEPARATORS.sub("", value).upper()


_CANONICAL = {_key(s): s for s in (*STATUS_RANK, *TRANSIENT_STATUSES)}


def status_normalize(value: object) -> str | None:
    """The canonical spelling of a Prolific submission status, or ``None`` if it is unknown.

    Case, surrounding whitespace and the separators between words (spaces, hyphens,
    underscores, in any number) do not matter: ``"timed_out"``, ``" Timed-Out "`` and
    ``"TIMED OUT"`` all give ``"TIMED-OUT"``; ``"returned"`` gives ``"RETURNED"``, and so does
    ``"RETURNED\u200b"`` (characters that are not printable, such as a zero-width space, are
    ignored). A transient
    status gives its canonical name too (``"PROCESSING"``); callers skip those. Anything that is
    not a string, or is empty, gives ``None``.
    """
    if not isinstance(value, str):
        return None
    # Invisible characters (a zero-width space, a byte-order mark) are dropped first, as
    # status_display_name drops them: the webhook and the sync then read a status alike.
    value = "".join(ch for ch in value if ch.isprintable() or ch.isspace())
    return _CANONICAL.get(_key(value)) if value.strip() else None


def status_display_name(value: object, *, max_chars: int = 30) -> str:
    """A status as received, safe to log and show: printable characters only, at most
    ``max_chars`` of them (an unknown status is named by this, never by a repr of the payload)."""
    text = "" if value is None else str(value)
    return "".join(ch for ch in text if ch.isprintable()).strip()[:max_chars]
