"""Writing to the audit trail: :func:`audit_record`, the one function every app calls.

It is called inside the caller's transaction, so a decision and its audit row are committed (or
rolled back) together.
"""
from __future__ import annotations

from typing import Any

from .models import AuditEntry

# The actions the platform records, with their meaning (docs/security.md lists them too).
ACTIONS = {
    "membership.add": "a user became a member of the study with a role",
    "membership.remove": "a user's role on the study was taken away",
    "credentials.set": "the study's Prolific credentials were saved",
    "credentials.clear": "the study's Prolific credentials were removed",
    "review.decide": "submissions were approved, rejected or asked to return",
    "participants.end": "staff ended participants' sessions",
    "export.download": "study data was downloaded",
    "privacy.erase": "a participant's data was erased",
    "privacy.purge": "the study's Prolific IDs were replaced by pseudonyms",
}


def _plain(value: Any) -> Any:
    """``value`` reduced to JSON: dicts, lists, str, int, float, bool and None; anything else
    becomes its ``str``."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    return str(value)


def audit_record(
    *, action: str, actor=None, study=None, summary: str = "", detail: dict | None = None
) -> AuditEntry:
    """Record one decision in the audit trail and return its row.

    Parameters
    ----------
    action : str
        One of :data:`ACTIONS` (e.g. ``"membership.add"``).
    actor : User or None
        Who decided: the request's user, or ``None`` for a management command or a task (an
        anonymous user counts as ``None``).
    study : Study or None
        The study the decision is about (any object with ``pk`` and ``slug``), or ``None``.
    summary : str
        One human sentence for the trail's page and CSV (cut to 500 characters).
    detail : dict or None
        Plain values describing the decision (counts, usernames, roles, pseudonyms). Never put
        a secret (a token, a webhook secret) or a participant's Prolific id here: the trail is
        shown to the study's owners and exported.

    Raises
    ------
    ValueError
        If ``action`` is not in :data:`ACTIONS` (a typo would make a decision unfindable).
    """
    if action not in ACTIONS:
        raise ValueError(f"Unknown audit action {action!r}; add it to audit.services.ACTIONS.")
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None
    return AuditEntry.objects.create(
        action=action,
        actor=actor,
        actor_username=actor.get_username() if actor is not None else "",
        study_id=getattr(study, "pk", None),
        study_slug=getattr(study, "slug", "") or "",
        summary=(summary or "")[:500],
        detail=_plain(detail or {}),
    )


def credentials_change_record(*, study, actor=None, cleared: bool = False, fields=()) -> AuditEntry:
    """Record that ``study``'s Prolific credentials were saved (or, with ``cleared``, removed).

    ``fields`` names what changed (e.g. ``["token", "webhook_secret"]``), never a value: the
    trail is shown to owners and exported, and a secret must not be written anywhere again.
    For the per-study credentials (issue 40, section 2), called inside their save's transaction.
    """
    names = sorted(str(f) for f in fields)
    return audit_record(
        action="credentials.clear" if cleared else "credentials.set", actor=actor, study=study,
        summary=("Removed" if cleared else "Saved") + " the study's Prolific credentials"
        + (f" ({', '.join(names)})." if names else "."),
        detail={"fields": names},
    )
