"""The errors of the researcher app: one base, :class:`ResearcherError`, and its kinds.

They derive from :class:`spotlight_study.exceptions.DomainError` (``code``, ``http_status``);
``str()`` is the message for the researcher (the study page shows it, ``manage.py analyze``
prints it, the API returns it).
"""
from __future__ import annotations

from spotlight_study.exceptions import DomainError


class ResearcherError(DomainError):
    """A researcher action cannot be done as asked (message for the researcher)."""

    code = "researcher_conflict"
    http_status = 409


class AnalysisBusyError(ResearcherError):
    """An analysis run of the study is already queued or running (and still reporting): a second
    one is refused until it finishes."""

    code = "analysis_busy"
    http_status = 409
