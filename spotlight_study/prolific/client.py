"""A typed client for the parts of Prolific's REST API that the platform uses.

Source: Prolific's API reference (https://docs.prolific.com/api-reference), checked for each
endpoint below. All amounts that Prolific takes or returns in studies (``reward``) and in
bonus set-up responses are in minor currency units (pence, cents); the bonus CSV it takes is in
major units (``4.25`` is 4.25 pounds). Times (``estimated_completion_time``,
``maximum_allowed_time``) are in minutes.

- Every request carries ``Authorization: Token <token>`` and a timeout.
- Errors become :class:`ProlificAPIError` with Prolific's ``error_code``, ``title`` and
  ``detail``, read from ``{"error": {...}}`` or from a flat ``{"detail": ...}``.
- Only idempotent calls are retried (exponential backoff with jitter, on 429, 5xx and network
  errors; ``Retry-After`` is honoured). Creating a study, setting up bonuses, asking for a return
  and above all paying bonuses are never retried: a retry could create a second draft or pay
  twice.

The client never logs or shows the token.
"""
from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Iterable
from urllib.parse import urljoin, urlsplit

import httpx

logger = logging.getLogger(__name__)

# Submission statuses (Prolific: "Submission object").
SUBMISSION_STATUSES = (
    "RESERVED",
    "ACTIVE",
    "TIMED-OUT",
    "AWAITING REVIEW",
    "APPROVED",
    "RETURNED",
    "REJECTED",
    "SCREENED OUT",
    "PARTIALLY APPROVED",
)
# Study transitions (Prolific: "Transition a study's status").
STUDY_ACTIONS = ("PUBLISH", "PAUSE", "START", "STOP")
# Rejection categories (Prolific: "Approve or reject a submission", ``rejection_category``).
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)
REJECTION_MESSAGE_MIN_CHARS = 100
# Prolific recommends at most 1,000 ids per bulk-approve request.
BULK_APPROVE_MAX_IDS = 1000
# A list that keeps giving new pages past this is treated as broken rather than followed forever.
MAX_PAGES = 10_000
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class ProlificError(Exception):
    """Base class of the client's errors; ``str()`` never contains the API token."""


class ProlificNotConfigured(ProlificError):
    """No API token is configured (``PROLIFIC_API_TOKEN``)."""


class ProlificValidationError(ProlificError, ValueError):
    """A request refused before sending because it would be invalid (e.g. a short message)."""


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
        The HTTP status.
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


@dataclass(frozen=True)
class SubmissionRecord:
    """One submission as Prolific reports it.

    ``id`` is the submission id, which Prolific also passes to the study URL as
    ``SESSION_ID``; ``participant_id`` is the ``PROLIFIC_PID``. ``status`` is one of
    :data:`SUBMISSION_STATUSES` (an unknown value is kept as sent). Times are ISO 8601 strings as
    sent, or ``None``.
    """

    id: str
    participant_id: str
    status: str
    study_id: str = ""
    started_at: str | None = None
    completed_at: str | None = None
    study_code: str | None = None

    @classmethod
    def from_api(cls, data: dict[str, Any], *, study_id: str = "") -> "SubmissionRecord":
        """Build from a list item (``participant_id``) or a detail (``participant``)."""
        return cls(
            id=str(data["id"]),
            participant_id=str(data.get("participant_id") or data.get("participant") or ""),
            status=str(data.get("status") or ""),
            study_id=str(data.get("study_id") or study_id or ""),
            started_at=data.get("started_at"),
            completed_at=data.get("completed_at"),
            study_code=data.get("study_code") or data.get("entered_code"),
        )


@dataclass(frozen=True)
class BonusSetup:
    """Prolific's answer to a bonus set-up: ``id`` is the bulk bonus payment to pay later.

    ``amount``, ``fees``, ``vat`` and ``total_amount`` are in minor units as Prolific returns
    them (``"amount": 850`` for two bonuses of 4.25).
    """

    id: str
    amount: Decimal
    fees: Decimal
    vat: Decimal
    total_amount: Decimal
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CompletionCode:
    """One ``completion_codes`` item of a study: ``code``, ``code_type`` and ``actions``.

    ``code_type`` e.g. ``COMPLETED``, ``FAILED_ATTENTION_CHECK``, ``NO_CONSENT``; ``actions`` a
    list of ``{"action": "MANUALLY_REVIEW"}``-like objects (``ADD_TO_PARTICIPANT_GROUP`` also
    has ``participant_group``).
    """

    code: str
    code_type: str
    actions: tuple[dict[str, str], ...]

    def as_payload(self) -> dict[str, Any]:
        """The JSON object Prolific expects."""
        return {"code": self.code, "code_type": self.code_type, "actions": [dict(a) for a in self.actions]}


@dataclass(frozen=True)
class StudyDraft:
    """The fields of a new Prolific study (``POST /studies/``).

    ``reward`` is in minor units (pence/cents); ``estimated_completion_time`` and
    ``maximum_allowed_time`` in minutes. ``external_study_url`` must contain
    ``{{%PROLIFIC_PID%}}``, ``{{%STUDY_ID%}}`` and ``{{%SESSION_ID%}}``.
    """

    name: str
    internal_name: str
    description: str
    external_study_url: str
    estimated_completion_time: int
    maximum_allowed_time: int
    reward: int
    total_available_places: int
    completion_codes: tuple[CompletionCode, ...]
    device_compatibility: tuple[str, ...] = ("desktop",)
    filters: tuple[dict[str, Any], ...] = ()
    prolific_id_option: str = "url_parameters"

    def validate(self) -> None:
        """Raise :class:`ProlificValidationError` naming the first bad field."""
        for placeholder in ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}"):
            if placeholder not in self.external_study_url:
                raise ProlificValidationError(f"external_study_url must contain {placeholder}.")
        if not self.external_study_url.startswith(("https://", "http://")):
            raise ProlificValidationError("external_study_url must be an http(s) URL.")
        if self.reward <= 0:
            raise ProlificValidationError("reward must be positive (minor currency units).")
        if self.estimated_completion_time <= 0:
            raise ProlificValidationError("estimated_completion_time must be positive (minutes).")
        if self.maximum_allowed_time < self.estimated_completion_time:
            raise ProlificValidationError("maximum_allowed_time must be at least the estimate.")
        if self.total_available_places <= 0:
            raise ProlificValidationError("total_available_places must be positive.")
        if not self.description.strip():
            raise ProlificValidationError("description must not be empty.")
        if not self.completion_codes:
            raise ProlificValidationError("At least one completion code is required.")

    def as_payload(self) -> dict[str, Any]:
        """The JSON body of ``POST /studies/``."""
        return {
            "name": self.name,
            "internal_name": self.internal_name,
            "description": self.description,
            "external_study_url": self.external_study_url,
            "prolific_id_option": self.prolific_id_option,
            "completion_codes": [c.as_payload() for c in self.completion_codes],
            "estimated_completion_time": self.estimated_completion_time,
            "maximum_allowed_time": self.maximum_allowed_time,
            "reward": self.reward,
            "total_available_places": self.total_available_places,
            "device_compatibility": list(self.device_compatibility),
            "filters": [dict(f) for f in self.filters],
        }


def validate_rejection(*, rejection_category: str, message: str) -> None:
    """Check a rejection before it is sent; raises :class:`ProlificValidationError`.

    Prolific requires a ``rejection_category`` from :data:`REJECTION_CATEGORIES` and a message
    to the participant of at least 100 characters.
    """
    if rejection_category not in REJECTION_CATEGORIES:
        raise ProlificValidationError(
            f"rejection_category must be one of {', '.join(REJECTION_CATEGORIES)}."
        )
    if len((message or "").strip()) < REJECTION_MESSAGE_MIN_CHARS:
        raise ProlificValidationError(
            f"The rejection message must be at least {REJECTION_MESSAGE_MIN_CHARS} characters "
            f"(it has {len((message or '').strip())})."
        )


def _error_from_response(response: httpx.Response, method: str, path: str) -> ProlificAPIError:
    """Read Prolific's error body: ``{"error": {...}}``, or a flat ``{"detail": ...}``."""
    error_code, title, detail = None, "", None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        error_code = err.get("error_code")
        title = str(err.get("title") or "")
        detail = err.get("detail")
        if detail is None:
            detail = err.get("additional_information")
    elif isinstance(body, dict):
        detail = body.get("detail", body.get("message", body or None))
        title = str(body.get("title") or "")
        error_code = body.get("error_code")
    elif body is not None:
        detail = body
    else:
        detail = response.text[:500] or None
    return ProlificAPIError(
        status_code=response.status_code,
        method=method,
        path=path,
        error_code=error_code,
        title=title,
        detail=detail,
    )


class ProlificClient:
    """A synchronous client of Prolific's API (httpx).

    Parameters
    ----------
    token : str
        The API token (``PROLIFIC_API_TOKEN``). Sent as ``Authorization: Token <token>``.
    base_url : str
        Default ``https://api.prolific.com/api/v1/``; must end with ``/``.
    timeout_seconds : float
        Timeout of every request (connect, read, write, pool), in seconds.
    max_retries : int
        Retries of an idempotent call after a 429, a 5xx or a network error.
    backoff_seconds : float
        Base of the exponential backoff: attempt ``n`` waits ``backoff * 2**n`` seconds times a
        random factor in [0.5, 1] (full jitter on the upper half), at most 60 s; a
        ``Retry-After`` header in seconds wins when it is longer.
    sleep : callable
        ``time.sleep`` by default (tests may pass a recorder).

    Raises
    ------
    ProlificNotConfigured
        If ``token`` is empty.
    """

    def __init__(
        self,
        *,
        token: str,
        base_url: str = "https://api.prolific.com/api/v1/",
        timeout_seconds: float = 30.0,
        max_retries: int = 4,
        backoff_seconds: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not token:
            raise ProlificNotConfigured(
                "No Prolific API token: set PROLIFIC_API_TOKEN in the environment."
            )
        if not base_url.endswith("/"):
            base_url += "/"
        self.base_url = base_url
        self.max_retries = max(0, int(max_retries))
        self.backoff_seconds = max(0.0, float(backoff_seconds))
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=base_url,
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            timeout=httpx.Timeout(timeout_seconds),
            follow_redirects=False,
        )

    @classmethod
    def from_settings(cls) -> "ProlificClient":
        """A client configured from Django settings (``PROLIFIC_*``, see ``docs/prolific.md``)."""
        from django.conf import settings

        return cls(
            token=settings.PROLIFIC_API_TOKEN,
            base_url=settings.PROLIFIC_API_BASE_URL,
            timeout_seconds=settings.PROLIFIC_TIMEOUT_SECONDS,
            max_retries=settings.PROLIFIC_MAX_RETRIES,
            backoff_seconds=settings.PROLIFIC_RETRY_BACKOFF_SECONDS,
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> "ProlificClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- transport -----------------------------------------------------------------------

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        delay = min(60.0, self.backoff_seconds * (2**attempt)) * random.uniform(0.5, 1.0)
        if response is not None:
            retry_after = response.headers.get("Retry-After", "")
            if retry_after.strip().isdigit():
                delay = max(delay, min(60.0, float(retry_after)))
        return delay

    def _request(
        self,
        method: str,
        path: str,
        *,
        idempotent: bool,
        json: Any = None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        """Send one request; return the decoded JSON body (``None`` when empty).

        ``path`` is relative to ``base_url`` or an absolute URL on the same host (next links).
        Retries only when ``idempotent`` is true. Raises :class:`ProlificAPIError` or
        :class:`ProlificTransportError`.
        """
        attempts = 1 + (self.max_retries if idempotent else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._http.request(method, path, json=json, params=params)
            except httpx.TransportError as exc:
                if last:
                    raise ProlificTransportError(
                        f"{method} {path}: no answer from Prolific ({type(exc).__name__})."
                    ) from None
                delay = self._delay(attempt, None)
                logger.warning("Prolific %s %s: %s; retrying in %.2f s.", method, path, type(exc).__name__, delay)
                self._sleep(delay)
                continue
            if response.is_success:
                if not response.content:
                    return None
                try:
                    return response.json()
                except ValueError:
                    return response.text
            error = _error_from_response(response, method, path)
            if last or not error.retryable:
                raise error
            delay = self._delay(attempt, response)
            logger.warning("Prolific %s %s answered %s; retrying in %.2f s.", method, path, response.status_code, delay)
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _same_host(self, url: str) -> str:
        """A next link, made absolute and checked to stay on the API's host (the token goes there)."""
        absolute = urljoin(self.base_url, url)
        base, target = urlsplit(self.base_url), urlsplit(absolute)
        if (target.scheme, target.netloc) != (base.scheme, base.netloc):
            raise ProlificPagingError(f"A next link points away from the API host: {target.netloc}.")
        return absolute

    def _paginate(self, path: str) -> Iterable[dict[str, Any]]:
        """Every item of a list, following ``_links.next.href`` until it is empty.

        A next link already visited ends the list (a loop), and items are deduplicated by
        ``id`` (a page served twice adds nothing). Raises :class:`ProlificPagingError` after
        :data:`MAX_PAGES` pages.
        """
        seen_ids: set[str] = set()
        visited: set[str] = set()
        url: str | None = self._same_host(path)
        pages = 0
        while url:
            if url in visited:
                logger.warning("Prolific list %s: next link %s repeats; stopping.", path, url)
                break
            visited.add(url)
            pages += 1
            if pages > MAX_PAGES:
                raise ProlificPagingError(f"{path}: more than {MAX_PAGES} pages.")
            body = self._request("GET", url, idempotent=True) or {}
            for item in body.get("results") or []:
                item_id = str(item.get("id"))
                if item_id in seen_ids:
                    continue
                seen_ids.add(item_id)
                yield item
            next_link = ((body.get("_links") or {}).get("next") or {}).get("href")
            url = self._same_host(next_link) if next_link else None

    # --- studies -------------------------------------------------------------------------

    def study_create(self, draft: StudyDraft) -> dict[str, Any]:
        """Create a draft (unpublished) study: ``POST /studies/``. Never retried.

        Returns Prolific's study object (with ``id`` and ``status``). Raises
        :class:`ProlificValidationError` before sending if the draft is invalid.
        """
        draft.validate()
        return self._request("POST", "studies/", json=draft.as_payload(), idempotent=False)

    def study_get(self, study_id: str) -> dict[str, Any]:
        """``GET /studies/{id}/``: the study object."""
        return self._request("GET", f"studies/{study_id}/", idempotent=True)

    def study_transition(self, study_id: str, action: str) -> dict[str, Any]:
        """``POST /studies/{id}/transition/`` with ``PUBLISH``, ``PAUSE``, ``START`` or ``STOP``.

        Asking for the state a study is already in changes nothing, so the call is retried.
        """
        if action not in STUDY_ACTIONS:
            raise ProlificValidationError(f"action must be one of {', '.join(STUDY_ACTIONS)}.")
        return self._request(
            "POST", f"studies/{study_id}/transition/", json={"action": action}, idempotent=True
        )

    def study_submissions(self, study_id: str) -> list[SubmissionRecord]:
        """All submissions of a study (``GET /studies/{id}/submissions/``), every page.

        Deduplicated by submission id; a next link that loops ends the list.
        """
        return [
            SubmissionRecord.from_api(item, study_id=study_id)
            for item in self._paginate(f"studies/{study_id}/submissions/")
        ]

    # --- submissions ---------------------------------------------------------------------

    def submission_get(self, submission_id: str) -> SubmissionRecord:
        """``GET /submissions/{id}/``: one submission (its id is the study URL's SESSION_ID)."""
        return SubmissionRecord.from_api(
            self._request("GET", f"submissions/{submission_id}/", idempotent=True)
        )

    def submission_approve(self, submission_id: str) -> dict[str, Any]:
        """``POST /submissions/{id}/transition/`` with ``APPROVE`` (idempotent per Prolific)."""
        return self._request(
            "POST",
            f"submissions/{submission_id}/transition/",
            json={"action": "APPROVE"},
            idempotent=True,
        )

    def submission_reject(
        self, submission_id: str, *, rejection_category: str, message: str
    ) -> dict[str, Any]:
        """``REJECT`` a submission with a category and a message of at least 100 characters.

        Both are validated before sending (:func:`validate_rejection`). The transition is
        idempotent per Prolific, so it is retried.
        """
        validate_rejection(rejection_category=rejection_category, message=message)
        return self._request(
            "POST",
            f"submissions/{submission_id}/transition/",
            json={
                "action": "REJECT",
                "rejection_category": rejection_category,
                "message": message.strip(),
            },
            idempotent=True,
        )

    def submission_request_return(self, submission_id: str, *, reasons: list[str]) -> dict[str, Any]:
        """``POST /submissions/{id}/request-return/``: ask the participant to return. Not retried

        (a second request would send the participant a second message).
        """
        if not reasons or not all(r.strip() for r in reasons):
            raise ProlificValidationError("At least one return reason is required.")
        return self._request(
            "POST",
            f"submissions/{submission_id}/request-return/",
            json={"request_return_reasons": [r.strip() for r in reasons]},
            idempotent=False,
        )

    def submissions_bulk_approve(self, submission_ids: Iterable[str]) -> int:
        """Approve submissions, at most :data:`BULK_APPROVE_MAX_IDS` ids per request.

        ``POST /submissions/bulk-approve/`` with ``submission_ids``. Approving an approved
        submission changes nothing, so each chunk is retried. Returns the number of requests.
        """
        ids = list(dict.fromkeys(str(i) for i in submission_ids))
        calls = 0
        for start in range(0, len(ids), BULK_APPROVE_MAX_IDS):
            chunk = ids[start : start + BULK_APPROVE_MAX_IDS]
            self._request(
                "POST", "submissions/bulk-approve/", json={"submission_ids": chunk}, idempotent=True
            )
            calls += 1
        return calls

    # --- bonuses -------------------------------------------------------------------------

    def bonus_setup(self, study_id: str, csv_bonuses: str) -> BonusSetup:
        """Set up (not pay) bonuses: ``POST /submissions/bonus-payments/``. Not retried.

        ``csv_bonuses`` is ``<participant or submission id>,<amount in major units>`` per line.
        Returns the bulk bonus payment to pass to :meth:`bonus_pay`.
        """
        body = self._request(
            "POST",
            "submissions/bonus-payments/",
            json={"study_id": study_id, "csv_bonuses": csv_bonuses},
            idempotent=False,
        ) or {}

        def amount(key: str) -> Decimal:
            return Decimal(str(body.get(key) or 0))

        return BonusSetup(
            id=str(body.get("id") or ""),
            amount=amount("amount"),
            fees=amount("fees"),
            vat=amount("vat"),
            total_amount=amount("total_amount"),
            raw=body if isinstance(body, dict) else {},
        )

    def bonus_pay(self, bulk_id: str) -> Any:
        """Pay a set-up bulk bonus: ``POST /bulk-bonus-payments/{id}/pay/``.

        **Never retried**: Prolific documents this endpoint as not idempotent (a second request
        pays the participants again). Callers record that the payment was sent before calling.
        """
        return self._request("POST", f"bulk-bonus-payments/{bulk_id}/pay/", idempotent=False)
