"""The researcher API's own errors: what the API itself refuses, before any service runs.

They derive from :class:`spotlight_study.exceptions.DomainError` like every app's errors, so the
one handler (:func:`spotlight_study.api.exceptions.api_exception_handler`) answers them with the
shared error body. The codes are listed in ``docs/api.md`` (checked by
``tests/api/test_error_codes.py``).
"""
from __future__ import annotations

from spotlight_study.exceptions import DomainError


class ApiError(DomainError):
    """Base of the researcher API's own errors (a request the API refuses as such)."""

    code = "invalid"
    http_status = 400


class InvalidInput(ApiError):
    """A bad request parameter or upload that no serializer checks (e.g. ``?group=3``)."""

    code = "invalid"
    http_status = 400


class NotAnalysable(ApiError):
    """The study's data cannot be analysed yet (``analysis.AnalysisInputError``, e.g. answers
    without final annotation labels); the message says why.

    ``analysis/`` imports no Django and nothing of ``spotlight_study``, so its error cannot
    derive from :class:`DomainError`; the API's handler wraps it in this one.
    """

    code = "not_analysable"
    http_status = 409


class NotFound(ApiError):
    """No study, job, stimulus set or bonus payment with the id or slug in the URL."""

    code = "not_found"
    http_status = 404


class NotOnProlific(NotFound):
    """The study has no Prolific settings yet (a read of its Prolific resources)."""

    code = "not_on_prolific"


class NoAnalysis(NotFound):
    """No analysis has been run for the study yet (``GET .../analysis/``)."""

    code = "no_analysis"
