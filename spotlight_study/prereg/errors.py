"""The errors of preregistration: one base, :class:`PreregError`, and its kinds.

They derive from :class:`spotlight_study.exceptions.DomainError` (``code``, ``http_status``);
``str()`` is the message for the researcher (``manage.py preregister`` prints it).
"""
from __future__ import annotations

from spotlight_study.exceptions import DomainError


class PreregError(DomainError):
    """A plan version cannot be registered as asked (message for the researcher)."""

    code = "prereg_conflict"
    http_status = 409


class PlanInputError(PreregError):
    """The options for the plan are incomplete or out of range (message for the researcher)."""

    code = "invalid_plan_input"
    http_status = 400


class PlanTamperedError(PreregError):
    """A stored plan version no longer hashes to the SHA-256 recorded when it was registered:
    it was changed after it was frozen, and no report may cite it (message for the researcher)."""

    code = "plan_tampered"
    http_status = 409
