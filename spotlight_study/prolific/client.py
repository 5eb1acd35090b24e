"""A typed client for the parts of Prolific's REST API that the platform uses: its endpoints.

Source: Prolific's API reference (https://docs.prolific.com/api-reference), checked for each
endpoint below. All amounts that Prolific takes or returns in studies (``reward``) and in
bonus set-up responses are in minor currency units (pence, cents); the bonus CSV it takes is in
major units (``4.25`` is 4.25 pounds). Times (``estimated_completion_time``,
``maximum_allowed_time``) are in minutes.

The client is in three pure modules (no Django outside :meth:`ProlificClient.from_settings`):

- this one, the endpoints, each deciding whether it may be retried;
- :mod:`.transport`: the token, timeouts, retries, Prolific's error bodies and paging;
- :mod:`.payloads`: the constants and records it sends and receives;

and its errors are in :mod:`.errors`. Only idempotent calls are retried. Creating a study,
setting up bonuses, asking for a return and above all paying bonuses are never retried: a retry
could create a second draft or pay twice. The client never logs or shows the token.
"""
from __future__ import annotations

import time
from decimal import Decimal
from typing import Any, Callable, Iterable

from .errors import ProlificValidationError
from .payloads import (
    BULK_APPROVE_MAX_IDS,
    STUDY_ACTIONS,
    BonusSetup,
    DemographicRecord,
    StudyDraft,
    SubmissionRecord,
    parse_demographic_export,
    validate_rejection,
)
from .transport import ProlificTransport


class ProlificClient:
    """A synchronous client of Prolific's API: one method per endpoint.

    Parameters
    ----------
    token : str
        The API token (``PROLIFIC_API_TOKEN``). Sent as ``Authorization: Token <token>``.
    base_url : str
        Default ``https://api.prolific.com/api/v1/``; a missing final ``/`` is added.
    timeout_seconds : float
        Timeout of every request (connect, read, write, pool), in seconds.
    max_retries : int
        Retries of an idempotent call after a 429, a 5xx or a network error.
    backoff_seconds : float
        Base of the exponential backoff (see :class:`~.transport.ProlificTransport`).
    sleep : callable
        ``time.sleep`` by default (tests may pass a recorder).

    Raises
    ------
    ProlificNotConfigured
        If ``token`` is empty (checked by the transport, before any request).
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
        self.transport = ProlificTransport(
            token=token,
            base_url=base_url,
            timeout_seconds=timeout_seconds,
            max_retries=max_retries,
            backoff_seconds=backoff_seconds,
            sleep=sleep,
        )

    @classmethod
    def from_settings(cls, *, token: str | None = None) -> "ProlificClient":
        """A client configured from Django settings (``PROLIFIC_*``, see ``docs/prolific.md``).

        ``token`` replaces ``PROLIFIC_API_TOKEN`` (a study's own token, from
        :func:`~spotlight_study.prolific.credentials.study_api_token`); the base URL, timeouts and
        retries are the instance's either way.
        """
        from django.conf import settings

        return cls(
            token=settings.PROLIFIC_API_TOKEN if token is None else token,
            base_url=settings.PROLIFIC_API_BASE_URL,
            timeout_seconds=settings.PROLIFIC_TIMEOUT_SECONDS,
            max_retries=settings.PROLIFIC_MAX_RETRIES,
            backoff_seconds=settings.PROLIFIC_RETRY_BACKOFF_SECONDS,
        )

    @property
    def base_url(self) -> str:
        """The API root every path is relative to (ends with ``/``)."""
        return self.transport.base_url

    def close(self) -> None:
        """Close the connection pool."""
        self.transport.close()

    def __enter__(self) -> "ProlificClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- studies -------------------------------------------------------------------------

    def study_create(self, draft: StudyDraft) -> dict[str, Any]:
        """Create a draft (unpublished) study: ``POST /studies/``. Never retried.

        Returns Prolific's study object (with ``id`` and ``status``). Raises
        :class:`ProlificValidationError` before sending if the draft is invalid.
        """
        draft.validate()
        return self.transport.request("POST", "studies/", json=draft.as_payload(), idempotent=False)

    def study_get(self, study_id: str) -> dict[str, Any]:
        """``GET /studies/{id}/``: the study object."""
        return self.transport.request("GET", f"studies/{study_id}/", idempotent=True)

    def study_update(self, study_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """``PATCH /studies/{id}/`` with ``fields`` (after publishing Prolific accepts only
        ``internal_name`` and ``total_available_places``, and places only upwards). The fields
        are absolute values, so sending them twice changes nothing and the call is retried."""
        if not fields:
            raise ProlificValidationError("Nothing to update.")
        return self.transport.request("PATCH", f"studies/{study_id}/", json=dict(fields), idempotent=True)

    def study_transition(self, study_id: str, action: str) -> dict[str, Any]:
        """``POST /studies/{id}/transition/`` with ``PUBLISH``, ``PAUSE``, ``START`` or ``STOP``.

        Asking for the state a study is already in changes nothing, so the call is retried.
        """
        if action not in STUDY_ACTIONS:
            raise ProlificValidationError(f"action must be one of {', '.join(STUDY_ACTIONS)}.")
        return self.transport.request(
            "POST", f"studies/{study_id}/transition/", json={"action": action}, idempotent=True
        )

    def study_submissions(self, study_id: str) -> list[SubmissionRecord]:
        """All submissions of a study (``GET /studies/{id}/submissions/``), every page.

        Deduplicated by submission id; a next link that loops ends the list.
        """
        return [
            SubmissionRecord.from_api(item, study_id=study_id)
            for item in self.transport.paginate(f"studies/{study_id}/submissions/")
        ]

    def study_demographic_export(
        self, study_id: str, *, filters: Iterable[dict[str, Any]] = ()
    ) -> list[DemographicRecord]:
        """The study's demographic export: ``POST /studies/{id}/demographic-export/``.

        The body is ``{"filters": [...]}`` (empty: only Prolific's basic data: age, sex, first
        language, country of residence, nationality, country of birth, ethnicity, student and
        employment status). Prolific answers with CSV text (possibly as a JSON string), one row
        per submission, parsed by :func:`~.payloads.parse_demographic_export`. Prolific allows
        two different filter combinations per study and any number of downloads of the same one,
        so asking again for the same filters is safe and the call is retried. Raises
        :class:`ProlificValidationError` if the answer is not such a CSV.
        """
        body = self.transport.request(
            "POST",
            f"studies/{study_id}/demographic-export/",
            json={"filters": [dict(f) for f in filters]},
            idempotent=True,
        )
        if not isinstance(body, str):
            raise ProlificValidationError("The demographic export is not CSV text.")
        return parse_demographic_export(body)

    # --- submissions ---------------------------------------------------------------------

    def submission_get(self, submission_id: str) -> SubmissionRecord:
        """``GET /submissions/{id}/``: one submission (its id is the study URL's SESSION_ID)."""
        return SubmissionRecord.from_api(
            self.transport.request("GET", f"submissions/{submission_id}/", idempotent=True)
        )

    def submission_approve(self, submission_id: str) -> dict[str, Any]:
        """``POST /submissions/{id}/transition/`` with ``APPROVE`` (idempotent per Prolific)."""
        return self.transport.request(
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
        return self.transport.request(
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
        return self.transport.request(
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
            self.transport.request(
                "POST", "submissions/bulk-approve/", json={"submission_ids": chunk}, idempotent=True
            )
            calls += 1
        return calls

    def study_screen_out(
        self, study_id: str, submission_ids: Iterable[str], *, bonus_per_submission: Decimal,
        increase_places: bool = False,
    ) -> Any:
        """Paid screen-out of ACTIVE submissions: ``POST /studies/{id}/screen-out-submissions/``.

        ``bonus_per_submission`` is in **major** units (``Decimal("0.50")``), the study's fixed
        screen-out payment; ``increase_places`` asks Prolific to add a place per screen-out. The
        study needs a ``FIXED_SCREENOUT`` completion code. **Never retried**: a screen-out pays
        the participant, so callers record that it was sent before calling.
        """
        ids = list(dict.fromkeys(str(i) for i in submission_ids))
        if not ids:
            raise ProlificValidationError("No submission to screen out.")
        return self.transport.request(
            "POST",
            f"studies/{study_id}/screen-out-submissions/",
            json={
                "submission_ids": ids,
                "bonus_per_submission": float(bonus_per_submission),
                "increase_places": bool(increase_places),
            },
            idempotent=False,
        )

    # --- webhook subscriptions -----------------------------------------------------------

    def hook_secrets(self, workspace_id: str) -> list[dict[str, Any]]:
        """``GET /hooks/secrets/?workspace_id=``: the workspace's secrets (``id``, ``value``)."""
        body = self.transport.request("GET", "hooks/secrets/", params={"workspace_id": workspace_id}, idempotent=True)
        return list((body or {}).get("results") or []) if isinstance(body, dict) else list(body or [])

    def hook_secret_create(self, workspace_id: str) -> dict[str, Any]:
        """``POST /hooks/secrets/``: create (or replace: one per workspace) the signing secret;
        returns ``{"id", "value", "workspace_id"}``. Not retried (a retry replaces it again)."""
        return self.transport.request("POST", "hooks/secrets/", json={"workspace_id": workspace_id}, idempotent=False)

    def hook_subscriptions(self, workspace_id: str) -> list[dict[str, Any]]:
        """``GET /hooks/subscriptions/?workspace_id=``: ``id``, ``event_type``, ``target_url``,
        ``is_enabled`` of each."""
        body = self.transport.request(
            "GET", "hooks/subscriptions/", params={"workspace_id": workspace_id}, idempotent=True
        )
        return list((body or {}).get("results") or [])

    def hook_subscription_create(self, *, workspace_id: str, event_type: str, target_url: str) -> dict[str, Any]:
        """``POST /hooks/subscriptions/``, then the confirmation ``POST /hooks/subscriptions/{id}/``
        with the ``X-Hook-Secret`` header of the first answer. Returns the subscription. Not
        retried (a retry would create a second subscription)."""
        body, headers = self.transport.request(
            "POST", "hooks/subscriptions/",
            json={"workspace_id": workspace_id, "event_type": event_type, "target_url": target_url},
            idempotent=False, with_headers=True,
        )
        created = body or {}
        if isinstance(created.get("results"), list) and created["results"]:
            created = created["results"][0]
        sub_id, hook_secret = str(created.get("id") or ""), headers.get("X-Hook-Secret", "")
        if not sub_id or not hook_secret:
            raise ProlificValidationError("Prolific did not return the subscription's id and X-Hook-Secret.")
        self.transport.request("POST", f"hooks/subscriptions/{sub_id}/", json={"secret": hook_secret}, idempotent=True)
        return created

    def hook_subscription_delete(self, subscription_id: str) -> None:
        """``DELETE /hooks/subscriptions/{id}/`` (deleting twice gives a 404)."""
        self.transport.request("DELETE", f"hooks/subscriptions/{subscription_id}/", idempotent=True)

    # --- workspaces ----------------------------------------------------------------------

    def workspace_balance(self, workspace_id: str) -> dict[str, Any]:
        """``GET /workspaces/{id}/balance/``: ``currency_code``, ``total_balance`` and
        ``available_balance`` (minor units; available = not yet assigned to active studies),
        with their ``*_breakdown`` into rewards, fees and VAT."""
        return self.transport.request("GET", f"workspaces/{workspace_id}/balance/", idempotent=True)

    # --- messages ------------------------------------------------------------------------

    def message_send(self, *, study_id: str, participant_ids: Iterable[str], body: str) -> Any:
        """Send ``body`` to participants about the study: ``POST /messages/`` (``recipient_id``)
        for one, ``POST /messages/bulk/`` (``ids``) for several; both with ``study_id``.

        **Never retried**: a retry could deliver the message twice. Raises
        :class:`ProlificValidationError` for an empty body or no recipient.
        """
        ids = list(dict.fromkeys(str(i) for i in participant_ids if i))
        text = (body or "").strip()
        if not ids or not text:
            raise ProlificValidationError("A message needs a recipient and a text.")
        if len(ids) == 1:
            payload: dict[str, Any] = {"recipient_id": ids[0], "body": text, "study_id": study_id}
            return self.transport.request("POST", "messages/", json=payload, idempotent=False)
        payload = {"ids": ids, "body": text, "study_id": study_id}
        return self.transport.request("POST", "messages/bulk/", json=payload, idempotent=False)

    # --- bonuses -------------------------------------------------------------------------

    def bonus_setup(self, study_id: str, csv_bonuses: str) -> BonusSetup:
        """Set up (not pay) bonuses: ``POST /submissions/bonus-payments/``. Not retried.

        ``csv_bonuses`` is ``<participant or submission id>,<amount in major units>`` per line.
        Returns the bulk bonus payment to pass to :meth:`bonus_pay`.
        """
        body = self.transport.request(
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
        return self.transport.request("POST", f"bulk-bonus-payments/{bulk_id}/pay/", idempotent=False)
