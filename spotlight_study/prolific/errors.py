"""The errors of the Prolific app: the client's (talking to Prolific) and the services' (state here).

Plain Python, no Django, so the client (:mod:`.client`, :mod:`.transport`) stays free of it.
Every class derives from :class:`~spotlight_study.exceptions.DomainError` and carries the
``code`` and ``http_status`` an API answers with (listed in ``docs/api.md``):

==========================  ======  ===========================
error                       status  code
==========================  ======  ===========================
ProlificNotConfigured       409     ``prolific_not_configured``
ProlificValidationError     400     ``invalid``
ProlificTransportError      502     ``prolific_error``
ProlificPagingError         502     ``prolific_error``
ProlificAPIError            502     ``prolific_error``
ProlificServiceError        409     ``conflict``
NotLinked                   409     ``not_on_prolific``
AlreadyCreated              409     ``conflict``
StudyNotLive                409     ``conflict``
WebhookEventInvalid         409     ``conflict``
BonusCSVError               400     ``invalid_bonus_csv``
BonusAlreadySent            409     ``already_sent``
BonusPayFailed              502     ``bonus_pay_failed``
SubmissionNotFound          404     ``not_found``
NotAwaitingReview           409     ``not_awaiting_review``
AlreadyDecided              409     ``already_decided``
ConfirmationRequired        400     ``confirmation_required``
ReviewSendFailed            502     ``review_send_failed``
==========================  ======  ===========================

``str()`` of any of them is the message for people and never contains the API token.
"""
from __future__ import annotations

from typing import Any

from spotlight_study.exceptions import DomainError

# Statuses an idempotent request may retry: rate limited, or Prolific failing.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


# --- the client: Prolific refuses, fails or cannot be reached --------------------------------


class ProlificError(DomainError):
    """Base class of the client's errors: a call to Prolific that did not succeed."""

    code = "prolific_error"
    http_status = 502


class ProlificNotConfigured(ProlificError):
    """No API token is configured (``PROLIFIC_API_TOKEN``)."""

    code = "prolific_not_configured"
    http_status = 409


class ProlificValidationError(ProlificError, ValueError):
    """A request refused before sending because it would be invalid (e.g. a short message)."""

    code = "invalid"
    http_status = 400


class ProlificTransportError(ProlificError):
    """The request did not get an HTTP answer (connection refused, timeout, ...).

    For a non-idempotent call the request may or may not have reached Prolific.
    """


class ProlificPagingError(ProlificError):
    """A list's next links led off the API's host or never ended."""


class ProlificAPIError(ProlificError):
    """Prolific answered with an error status.

    Attributes
    ----------
    status_code : int
        The HTTP status Prolific answered with (not the status an API here answers with, which
        is ``http_status``, 502).
    error_code : int or str or None
        Prolific's ``error_code``, when the body has one.
    title : str
        Prolific's ``title`` (empty if absent).
    detail : Any
        Prolific's ``detail``: a string, or a mapping of field names to messages.
    method, path : str
        The request, for the message (never the headers).
    """

    def __init__(
        self,
        *,
        status_code: int,
        method: str,
        path: str,
        error_code: int | str | None = None,
        title: str = "",
        detail: Any = None,
    ):
        self.status_code = status_code
        self.method = method
        self.path = path
        self.error_code = error_code
        self.title = title
        self.detail = detail
        parts = [f"Prolific answered {status_code} to {method} {path}"]
        if error_code is not None:
            parts.append(f"error_code {error_code}")
        if title:
            parts.append(title)
        if detail not in (None, "", {}, []):
            parts.append(str(detail))
        message = parts[0] + (f" ({'; '.join(parts[1:])})" if len(parts) > 1 else "")
        super().__init__(message)

    @property
    def retryable(self) -> bool:
        """Whether the status is one an idempotent call may retry (429, 5xx)."""
        return self.status_code in RETRY_STATUSES or self.status_code >= 500


# --- the services: an action that the state here forbids --------------------------------------


class ProlificServiceError(DomainError):
    """An action on the Prolific side that cannot be done now; ``str()`` says why."""

    code = "conflict"
    http_status = 409


class NotLinked(ProlificServiceError):
    """The study has no study on Prolific yet (create it or link it first)."""

    code = "not_on_prolific"


class AlreadyCreated(ProlificServiceError):
    """The study was already created on Prolific (a second draft would duplicate it)."""


class StudyNotLive(ProlificServiceError):
    """Publishing on Prolific while the study here does not accept participants."""


class WebhookEventInvalid(ProlificServiceError):
    """A verified webhook event that cannot be stored (e.g. no ``event_type``); ``str()`` says why."""


class BonusCSVError(ProlificServiceError):
    """A bonus CSV with bad lines.

    ``errors`` lists ``(line number, message)`` (the header is line 1); ``fields`` has the same
    as ``{"line N": [message, ...]}`` for the API's error shape.
    """

    code = "invalid_bonus_csv"
    http_status = 400

    def __init__(self, errors: list[tuple[int, str]]):
        self.errors = errors
        fields: dict[str, list[str]] = {}
        for n, msg in errors:
            fields.setdefault(f"line {n}", []).append(msg)
        super().__init__("; ".join(f"line {n}: {msg}" for n, msg in errors), fields=fields)


class BonusAlreadySent(ProlificServiceError):
    """The pay request of this bonus payment was already sent; it is never sent twice."""

    code = "already_sent"


class BonusPayFailed(ProlificServiceError):
    """The pay request failed. It may or may not have been paid: check on Prolific."""

    code = "bonus_pay_failed"
    http_status = 502


# --- decisions on held submissions -----------------------------------------------------------


class SubmissionNotFound(ProlificServiceError):
    """No submission with this id in the study (as last synced)."""

    code = "not_found"
    http_status = 404


class NotAwaitingReview(ProlificServiceError):
    """The submission is not awaiting review (Prolific ended it, or it was reviewed already)."""

    code = "not_awaiting_review"


class AlreadyDecided(ProlificServiceError):
    """Another decision on this submission was sent, is done, or has no known outcome; a
    submission is decided once."""

    code = "already_decided"


class ConfirmationRequired(ProlificServiceError):
    """A decision on a held submission was asked for without its confirmation."""

    code = "confirmation_required"
    http_status = 400


class ReviewSendFailed(ProlificServiceError):
    """The decision was recorded but Prolific refused it or did not answer; ``decision`` is the
    recorded :class:`~.models.ReviewDecision` (its ``outcome`` says whether it may be tried
    again)."""

    code = "review_send_failed"
    http_status = 502

    def __init__(self, message: str, *, decision=None):
        self.decision = decision
        super().__init__(message)
