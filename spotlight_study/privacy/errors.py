"""The errors of erasure and purge: one base, :class:`PrivacyError`.

It derives from :class:`spotlight_study.exceptions.DomainError` (``code``, ``http_status``);
``str()`` says why, and is printed by ``erase_participant`` and ``purge_identifiers``.
"""
from __future__ import annotations

from spotlight_study.exceptions import DomainError


class PrivacyError(DomainError):
    """An erasure or purge that cannot be done; the message says why. Nothing was changed."""

    code = "privacy_refused"
    http_status = 409
