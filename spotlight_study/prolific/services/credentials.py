"""Writes of a study's own Prolific credentials: save, clear, and re-encrypt after a key change.

The study page's form (``views.credentials``) and ``manage.py study_prolific_credentials`` call
these. Each change is one transaction with its audit-trail row (``credentials.set`` /
``credentials.clear``; the row says which credential changed, never its value). Reads are in
:mod:`..credentials`.
"""
from __future__ import annotations

import re

from django.db import transaction

from spotlight_study.audit.services import audit_record
from spotlight_study.studies.models import Study

from ..credentials import KINDS, encrypt, rotate
from ..errors import ProlificValidationError
from ..models import ProlificCredentials

#: The longest credential accepted, in characters (Prolific's tokens are about 100).
MAX_CHARS = 500
# Visible ASCII only: the token goes into an HTTP header, the secret into an HMAC key, and a
# space or a control character in either is a paste mistake.
_PRINTABLE = re.compile(r"[\x21-\x7e]+")


def _checked(value: str, what: str) -> str:
    """``value`` without surrounding whitespace; raises :class:`ProlificValidationError` (the
    message never quotes the value) if it is empty, too long or not visible ASCII."""
    value = (value or "").strip()
    if not value:
        raise ProlificValidationError(f"The {what} is empty. Nothing was saved.")
    if len(value) > MAX_CHARS:
        raise ProlificValidationError(f"The {what} is longer than {MAX_CHARS} characters. Nothing was saved.")
    if not _PRINTABLE.fullmatch(value):
        raise ProlificValidationError(
            f"The {what} may only hold visible ASCII characters (no spaces). Nothing was saved."
        )
    return value


def _record(study: Study, *, action: str, kinds: list[str], actor, via: str) -> None:
    """The one audit-trail call of a credential change (inside the change's transaction)."""
    words = " and ".join(KINDS[k][0] for k in kinds)
    verb = "saved" if action == "credentials.set" else "cleared"
    audit_record(
        action=action, actor=actor, study=study,
        summary=f"Prolific {words} of the study {verb} ({via}).",
        detail={"credentials": kinds, "via": via},
    )


def credentials_save(
    *, study: Study, api_token: str | None = None, webhook_secret: str | None = None,
    actor=None, via: str = "page",
) -> list[str]:
    """Save the study's own API token and/or webhook secret (``None``: leave that one as it is).

    Both are checked first (:func:`_checked`), then encrypted (:func:`~..credentials.encrypt`)
    and stored with their audit row in one transaction. Returns the kinds saved
    (``["api_token", ...]``). Raises :class:`ProlificValidationError` for a bad value or when
    both are ``None``, and :class:`~..credentials.CredentialsEncryptionOff` without a key;
    nothing is changed then.
    """
    values = {}
    if api_token is not None:
        values["api_token"] = _checked(api_token, KINDS["api_token"][0])
    if webhook_secret is not None:
        values["webhook_secret"] = _checked(webhook_secret, KINDS["webhook_secret"][0])
    if not values:
        raise ProlificValidationError("Give a token or a webhook secret to save. Nothing was saved.")
    encrypted = {f"{kind}_encrypted": encrypt(value) for kind, value in values.items()}
    with transaction.atomic():
        row, _ = ProlificCredentials.objects.select_for_update().get_or_create(study=study)
        for field, value in encrypted.items():
            setattr(row, field, value)
        row.save()
        _record(study, action="credentials.set", kinds=list(values), actor=actor, via=via)
    return list(values)


def credentials_clear(
    *, study: Study, api_token: bool = False, webhook_secret: bool = False, actor=None, via: str = "page",
) -> list[str]:
    """Remove the study's own token and/or webhook secret: the study falls back to the
    instance's environment for them. Returns the kinds that were set and are now cleared (an
    empty list, and no audit row, when there was nothing to clear)."""
    asked = [k for k, wanted in (("api_token", api_token), ("webhook_secret", webhook_secret)) if wanted]
    if not asked:
        raise ProlificValidationError("Say which credential to clear. Nothing was changed.")
    with transaction.atomic():
        row = ProlificCredentials.objects.select_for_update().filter(study=study).first()
        cleared = [k for k in asked if row is not None and getattr(row, f"{k}_encrypted")]
        if not cleared:
            return []
        for kind in cleared:
            setattr(row, f"{kind}_encrypted", "")
        if row.api_token_encrypted or row.webhook_secret_encrypted:
            row.save()
        else:
            row.delete()
        _record(study, action="credentials.clear", kinds=cleared, actor=actor, via=via)
    return cleared


def credentials_rotate() -> int:
    """Re-encrypt every stored credential with the first key of ``PROLIFIC_CREDENTIALS_KEYS``
    (after a new key was put first); returns how many values were re-encrypted. All or nothing:
    raises :class:`~..credentials.CredentialsUnreadable` (nothing changed) if a value opens
    with no configured key. The values do not change, so no audit row is written."""
    count = 0
    with transaction.atomic():
        for row in ProlificCredentials.objects.select_for_update().order_by("pk"):
            for kind in KINDS:
                field = f"{kind}_encrypted"
                if getattr(row, field):
                    setattr(row, field, rotate(getattr(row, field)))
                    count += 1
            row.save(update_fields=["api_token_encrypted", "webhook_secret_encrypted"])
    return count
