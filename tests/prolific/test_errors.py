"""The Prolific app's errors: one root (DomainError), each with the API's code and status."""
from __future__ import annotations

import pytest

from spotlight_study.exceptions import DomainError
from spotlight_study.identifiers import PROLIFIC_ID_IN_TEXT_RE, is_prolific_id, is_pseudonym
from spotlight_study.prolific import errors

# (error, http_status, code): the mapping the researcher API answered with before issue 14.
EXPECTED = [
    (errors.ProlificNotConfigured("no token"), 409, "prolific_not_configured"),
    (errors.ProlificValidationError("bad"), 400, "invalid"),
    (errors.ProlificTransportError("no answer"), 502, "prolific_error"),
    (errors.ProlificPagingError("loop"), 502, "prolific_error"),
    (errors.ProlificAPIError(status_code=401, method="GET", path="studies/"), 502, "prolific_error"),
    (errors.ProlificServiceError("not now"), 409, "conflict"),
    (errors.NotLinked("link first"), 409, "not_on_prolific"),
    (errors.AlreadyCreated("twice"), 409, "conflict"),
    (errors.StudyNotLive("not live"), 409, "conflict"),
    (errors.WebhookEventInvalid("no type"), 409, "conflict"),
    (errors.BonusCSVError([(2, "bad amount")]), 400, "invalid_bonus_csv"),
    (errors.BonusAlreadySent("sent"), 409, "already_sent"),
    (errors.BonusPayFailed("failed"), 502, "bonus_pay_failed"),
]


@pytest.mark.parametrize("error,status,code", EXPECTED, ids=[type(e).__name__ for e, _, _ in EXPECTED])
def test_every_error_is_a_domain_error_with_its_api_code(error, status, code):
    """Each error derives from DomainError and carries the status and code the API answers with."""
    assert isinstance(error, DomainError)
    assert (error.http_status, error.code) == (status, code)
    assert str(error) == error.message and error.message


def test_client_and_service_errors_keep_their_own_bases():
    """Client errors are ProlificError, service errors ProlificServiceError; a validation error is a ValueError."""
    assert issubclass(errors.ProlificAPIError, errors.ProlificError)
    assert not issubclass(errors.ProlificError, errors.ProlificServiceError)
    assert issubclass(errors.BonusPayFailed, errors.ProlificServiceError)
    assert issubclass(errors.ProlificValidationError, ValueError)


def test_bonus_csv_error_lists_every_line_as_fields():
    """A bonus CSV error names each bad line in its message and in ``fields``."""
    error = errors.BonusCSVError([(2, "bad amount"), (4, "unknown participant"), (4, "twice")])
    assert str(error) == "line 2: bad amount; line 4: unknown participant; line 4: twice"
    assert error.fields == {"line 2": ["bad amount"], "line 4": ["unknown participant", "twice"]}
    assert error.errors[0] == (2, "bad amount")


def test_api_error_message_has_prolifics_details_but_no_headers():
    """Prolific's status, error code, title and detail make the message; retryable follows the status."""
    error = errors.ProlificAPIError(
        status_code=503, method="POST", path="studies/", error_code=140100, title="Down", detail="later"
    )
    assert str(error) == "Prolific answered 503 to POST studies/ (error_code 140100; Down; later)"
    assert error.retryable and not errors.ProlificAPIError(status_code=400, method="GET", path="x").retryable


@pytest.mark.parametrize(
    "value,expected",
    [("a" * 24, True), ("0123456789abcdef01234567", True), ("A" * 24, False), ("a" * 23, False),
     ("a" * 25, False), ("a" * 24 + "\n", False), ("", False), (None, False)],
)
def test_one_prolific_id_pattern(value, expected):
    """A Prolific ID is exactly 24 lowercase hex digits (no trailing newline)."""
    assert is_prolific_id(value) is expected


def test_pseudonym_and_ids_in_text():
    """The pseudonym pattern is p_ + 16 hex digits; an ID in text is found in either case, not inside a longer run."""
    assert is_pseudonym("p_" + "0" * 16) and not is_pseudonym("p_" + "0" * 17)
    text = f"pid={'A' * 24} and x{'b' * 24} and {'c' * 24}."
    assert PROLIFIC_ID_IN_TEXT_RE.findall(text) == ["A" * 24, "c" * 24]
