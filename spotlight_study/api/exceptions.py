"""One error shape for every error of the researcher API.

Every error response has the body::

    {"error": {"status": 404, "code": "not_found", "message": "No study with slug 'x'.",
               "fields": {}}}

``status`` repeats the HTTP status; ``code`` is a stable machine-readable name (listed in
``docs/api.md``); ``message`` is for people; ``fields`` maps an input field (or a study-file
path such as ``settings[1].group2``) to its messages, and is empty unless the input was invalid.

The app exceptions of the other apps map as follows: invalid input (``StudyFileError``,
``ValidationError``, ``OutputImportError``, ``BonusCSVError``) -> 400; a state that forbids the
action (``StudyImportError``, ``AnalysisInputError``, ``StimuliError``,
``ProlificServiceError``, Prolific not configured) -> 409; Prolific failing or unreachable -> 502.
"""
from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class ApiError(exceptions.APIException):
    """An API error with an explicit status, code, message and field errors."""

    def __init__(self, *, status_code: int, code: str, message: str, fields: dict | None = None):
        super().__init__(detail=message, code=code)
        self.status_code = status_code
        self.code = code
        self.message = message
        self.fields = fields or {}


def _flatten(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested errors as ``{"field.sub[0]": ["message", ...]}``."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = prefix if key in ("non_field_errors", "__all__") and prefix else (
                f"{prefix}.{key}" if prefix else str(key)
            )
            for path, msgs in _flatten(value, name).items():
                out.setdefault(path, []).extend(msgs)
    elif isinstance(detail, (list, tuple)):
        for i, value in enumerate(detail):
            if isinstance(value, (dict, list, tuple)):
                for path, msgs in _flatten(value, f"{prefix}[{i}]").items():
                    out.setdefault(path, []).extend(msgs)
            else:
                out.setdefault(prefix or "non_field_errors", []).append(str(value))
    else:
        out.setdefault(prefix or "non_field_errors", []).append(str(detail))
    return out


def error_body(*, status_code: int, code: str, message: str, fields: dict | None = None) -> dict:
    """The error shape as a dict."""
    return {"error": {"status": status_code, "code": code, "message": message, "fields": fields or {}}}


def _translate(exc: Exception) -> ApiError | None:
    """The other apps' exceptions as :class:`ApiError`, or ``None`` for unknown ones."""
    from analysis import AnalysisInputError

    from spotlight_study.prolific.client import (
        ProlificAPIError,
        ProlificNotConfigured,
        ProlificTransportError,
        ProlificValidationError,
    )
    from spotlight_study.prolific.services import (
        BonusAlreadySent,
        BonusCSVError,
        BonusPayFailed,
        NotLinked,
        ProlificServiceError,
    )
    from spotlight_study.stimuli.importers import OutputImportError
    from spotlight_study.stimuli.services import StimuliError
    from spotlight_study.studies.schema import StudyFileError
    from spotlight_study.studies.services import StudyImportError

    if isinstance(exc, StudyFileError):
        return ApiError(status_code=400, code="invalid_study_file", message="The study file is invalid.", fields=exc.errors)
    if isinstance(exc, BonusCSVError):
        return ApiError(
            status_code=400,
            code="invalid_bonus_csv",
            message=str(exc),
            fields={f"line {n}": [m] for n, m in exc.errors},
        )
    if isinstance(exc, DjangoValidationError):
        fields = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return ApiError(status_code=400, code="invalid", message="Invalid input.", fields=fields)
    if isinstance(exc, (OutputImportError, ProlificValidationError)):
        return ApiError(status_code=400, code="invalid", message=str(exc))
    if isinstance(exc, StudyImportError):
        return ApiError(status_code=409, code="study_exists", message=str(exc))
    if isinstance(exc, AnalysisInputError):
        return ApiError(
            status_code=409,
            code="not_analysable",
            message=f"The study's data cannot be analysed yet: {exc}",
        )
    if isinstance(exc, BonusPayFailed):
        return ApiError(status_code=502, code="bonus_pay_failed", message=str(exc))
    if isinstance(exc, BonusAlreadySent):
        return ApiError(status_code=409, code="already_sent", message=str(exc))
    if isinstance(exc, NotLinked):
        return ApiError(status_code=409, code="not_on_prolific", message=str(exc))
    if isinstance(exc, ProlificNotConfigured):
        return ApiError(status_code=409, code="prolific_not_configured", message=str(exc))
    if isinstance(exc, (ProlificServiceError, StimuliError)):
        return ApiError(status_code=409, code="conflict", message=str(exc))
    if isinstance(exc, (ProlificAPIError, ProlificTransportError)):
        return ApiError(status_code=502, code="prolific_error", message=str(exc))
    return None


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF exception handler producing the shape above; ``None`` (a 500) for unknown errors."""
    translated = _translate(exc)
    if translated is not None:
        exc = translated
    if isinstance(exc, ApiError):
        return Response(
            error_body(status_code=exc.status_code, code=exc.code, message=exc.message, fields=exc.fields),
            status=exc.status_code,
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        code, message, fields = "invalid", "Invalid input.", _flatten(exc.detail)
    elif isinstance(exc, exceptions.APIException):
        code = exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code
        message, fields = str(exc.detail), {}
    else:  # Http404, PermissionDenied converted by DRF
        code = {404: "not_found", 403: "permission_denied"}.get(response.status_code, "error")
        message, fields = str(response.data.get("detail", "")) if isinstance(response.data, dict) else "", {}
    response.data = error_body(status_code=response.status_code, code=code, message=message, fields=fields)
    return response


class ErrorShapeMixin:
    """Give a DRF view the researcher API's error shape (without changing other apps' APIs)."""

    def get_exception_handler(self):
        """The handler of this module."""
        return api_exception_handler


