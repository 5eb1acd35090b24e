"""One error shape for both JSON APIs: the researcher API (``/api/``) and the annotator API
(``/annotate/api/``).

Every error response has the body::

    {"error": {"status": 404, "code": "not_found", "message": "No study with slug 'x'.",
               "fields": {}}}

``status`` repeats the HTTP status; ``code`` is a stable machine-readable name (listed in
``docs/api.md``); ``message`` is for people; ``fields`` maps an input field (or a study-file
path such as ``settings[1].group2``, or a CSV line) to its messages, and is empty unless the
input was invalid. An error that carries data for the client (a ``DomainError`` with an
``extra`` dict, e.g. the saved label of a conflicting annotation) adds those keys beside
``"error"``.

How an exception becomes that body (:func:`api_exception_handler`):

- a :class:`~spotlight_study.exceptions.DomainError` (the base of every app's errors, in
  ``<app>/errors.py``): its ``http_status``, ``code``, message and ``fields``; no per-class case;
- Django's ``ValidationError`` (a model's ``full_clean()``): 400 ``invalid``, its messages by field;
- ``analysis.AnalysisInputError``: 409 ``not_analysable``. ``analysis/`` is pure (no Django, no
  ``spotlight_study``), so its error cannot derive from ``DomainError``; it is the one foreign
  error, mapped here by one explicit case (:class:`~.errors.NotAnalysable`);
- a JSON body that is not UTF-8 (DRF's ``ParseError`` raised from a ``UnicodeDecodeError``):
  400 ``invalid_utf8``, the request-hygiene middleware's
  :class:`~spotlight_study.middleware.request_hygiene.Refusal`, as a form body with those bytes
  gets (:func:`_not_utf8_json`);
- DRF's own exceptions (bad JSON ``parse_error``, serializer ``invalid`` with nested fields
  flattened, ``not_authenticated``, ``throttled``, ...) and ``Http404`` / ``PermissionDenied``
  (``not_found`` / ``permission_denied``);
- anything else: ``None``, which DRF turns into a 500 (a bug, logged with its traceback).
"""
from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from spotlight_study.exceptions import DomainError, domain_error_body, error_body
from spotlight_study.middleware.request_hygiene import Refusal

from .errors import InvalidInput, NotAnalysable


def domain_error_response(error: DomainError) -> Response:
    """A DRF response with the body and HTTP status of ``error``."""
    return Response(domain_error_body(error), status=error.http_status)


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


def _analysis_error(exc: Exception) -> DomainError | None:
    """``analysis.AnalysisInputError`` as :class:`~.errors.NotAnalysable`, else ``None``."""
    # Imported here: loading ``analysis`` pulls in pandas and scipy, and only the analysis run
    # (``POST .../analysis/``) can raise this; every other error is answered before this line.
    from analysis import AnalysisInputError

    if isinstance(exc, AnalysisInputError):
        return NotAnalysable(f"The study's data cannot be analysed yet: {exc}")
    return None


def _not_utf8_json(exc: Exception) -> Refusal | None:
    """DRF's ``ParseError`` for a JSON body that is not UTF-8 as a 400 ``invalid_utf8``
    :class:`Refusal`; ``None`` for any other exception (a JSON syntax error stays ``parse_error``).

    The request-hygiene middleware checks form bodies only and leaves JSON to DRF's parser, which
    raises ``ParseError`` from the ``UnicodeDecodeError`` (its ``__context__``) with Python's
    decoder message. That message's byte offset is left out: the parser decodes the stream in
    chunks, so it counts from the start of a chunk, not of the body.
    """
    cause = exc.__cause__ or exc.__context__
    if not isinstance(exc, exceptions.ParseError) or not isinstance(cause, UnicodeDecodeError):
        return None
    return Refusal(
        "The request body is not valid UTF-8, so it cannot be read as JSON and nothing was "
        "saved. Send the JSON encoded as UTF-8."
    )


def as_domain_error(exc: Exception) -> DomainError | None:
    """``exc`` as a :class:`DomainError` when it is one or stands for one; ``None`` otherwise.

    Django's ``ValidationError`` becomes :class:`~.errors.InvalidInput` with its messages as
    ``fields``; ``analysis.AnalysisInputError`` becomes :class:`~.errors.NotAnalysable`. DRF's
    exceptions, ``Http404`` and ``PermissionDenied`` are not converted (``None``): DRF's handler
    answers them with their status and headers (``Retry-After``, ``WWW-Authenticate``), except a
    ``ParseError`` of a JSON body that is not UTF-8, which becomes the middleware's 400
    ``invalid_utf8`` :class:`Refusal`.
    """
    if isinstance(exc, DomainError):
        return exc
    refusal = _not_utf8_json(exc)
    if refusal is not None:
        return refusal
    if isinstance(exc, DjangoValidationError):
        fields = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return InvalidInput("Invalid input.", fields=fields)
    if isinstance(exc, (exceptions.APIException, Http404, PermissionDenied)):
        return None
    return _analysis_error(exc)


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF exception handler producing the shape above; ``None`` (a 500) for unknown errors."""
    error = as_domain_error(exc)
    if error is not None:
        set_rollback()  # as DRF's handler does: an open atomic request block must not commit
        return domain_error_response(error)
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

