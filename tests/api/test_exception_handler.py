"""The one exception handler of both JSON APIs maps every app error by its code and status."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.http import Http404
from rest_framework import exceptions as drf_exceptions

from analysis import AnalysisInputError
from spotlight_study.api.exceptions import api_exception_handler
from spotlight_study.exceptions import DomainError

from .test_error_codes import _import_every_module, _subclasses


def _app_error_classes() -> list[type]:
    _import_every_module()
    classes = [c for c in _subclasses(DomainError) if c.__module__.startswith("spotlight_study.")]
    return sorted(classes, key=lambda c: f"{c.__module__}.{c.__qualname__}")


def _bare(cls: type[DomainError]) -> DomainError:
    """An instance of ``cls`` without its own ``__init__`` (some take other arguments)."""
    error = cls.__new__(cls)
    DomainError.__init__(error, "Something the user should read.")
    return error


@pytest.mark.parametrize("cls", _app_error_classes(), ids=lambda c: f"{c.__module__.split('.')[1]}.{c.__name__}")
def test_every_app_error_is_answered_with_its_class_code_and_status(cls):
    """No per-class case: each DomainError subclass gets its own status and code in the shape."""
    error = _bare(cls)
    response = api_exception_handler(error, {})
    assert response.status_code == cls.http_status
    assert response.data["error"] == {"status": cls.http_status, "code": cls.code, "message": error.message, "fields": {}}
    assert error.message  # a class may word its own message (e.g. StudyFileError), never none


def test_instance_overrides_fields_and_extra_keys():
    """``code=``/``http_status=``/``fields=`` of an instance win; ``extra`` goes beside ``error``."""

    class WithExtra(DomainError):
        code, http_status = "with_extra", 409
        extra = {"current": {"identified": True}, "error": "never replaces the shape"}

    error = WithExtra("m", code="other_code", http_status=404, fields={"name": ["bad"]})
    response = api_exception_handler(error, {})
    assert response.status_code == 404
    assert response.data == {
        "current": {"identified": True},
        "error": {"status": 404, "code": "other_code", "message": "m", "fields": {"name": ["bad"]}},
    }


def test_django_validation_error_is_400_invalid_with_its_fields():
    """A model's full_clean() error: 400 ``invalid`` with the messages by field."""
    response = api_exception_handler(ValidationError({"slug": ["Enter a valid slug."]}), {})
    assert response.status_code == 400
    assert response.data["error"] == {
        "status": 400, "code": "invalid", "message": "Invalid input.", "fields": {"slug": ["Enter a valid slug."]},
    }
    flat = api_exception_handler(ValidationError("Nope."), {})
    assert flat.data["error"]["fields"] == {"non_field_errors": ["Nope."]}


def test_analysis_input_error_is_409_not_analysable():
    """The pure analysis package's error is the one explicit case: 409 ``not_analysable``."""
    response = api_exception_handler(AnalysisInputError("responses.csv is missing column(s): setting"), {})
    assert response.status_code == 409
    assert response.data["error"]["code"] == "not_analysable"
    assert response.data["error"]["message"].endswith("responses.csv is missing column(s): setting")


def test_drf_and_django_exceptions_keep_their_status_in_the_shape():
    """DRF's errors, Http404 and nested serializer errors are answered in the same shape."""
    nested = api_exception_handler(drf_exceptions.ValidationError({"settings": [{"group2": ["Too short."]}]}), {})
    assert nested.status_code == 400 and nested.data["error"]["fields"] == {"settings[0].group2": ["Too short."]}
    missing = api_exception_handler(Http404("No study with slug 'x'."), {})
    assert missing.status_code == 404
    assert missing.data["error"] == {"status": 404, "code": "not_found", "message": "No study with slug 'x'.", "fields": {}}
    throttled = api_exception_handler(drf_exceptions.Throttled(wait=3), {})
    assert throttled.status_code == 429 and throttled.data["error"]["code"] == "throttled"
    assert throttled["Retry-After"] == "3"


def test_parse_error_from_a_unicode_decode_error_is_400_invalid_utf8():
    """DRF's ParseError raised while decoding bytes that are not UTF-8 becomes ``invalid_utf8``;
    a ParseError of a JSON syntax error stays ``parse_error``."""
    try:
        try:
            b"\xff".decode("utf-8")
        except ValueError as exc:
            raise drf_exceptions.ParseError(f"JSON parse error - {exc}")
    except drf_exceptions.ParseError as parse_error:
        response = api_exception_handler(parse_error, {})
    assert response.status_code == 400
    error = response.data["error"]
    assert error["code"] == "invalid_utf8" and error["fields"] == {}
    assert error["message"].startswith("The request body is not valid UTF-8")
    syntax = api_exception_handler(drf_exceptions.ParseError("JSON parse error - Expecting value"), {})
    assert syntax.status_code == 400 and syntax.data["error"]["code"] == "parse_error"


def test_unknown_exceptions_are_left_to_a_500():
    """Anything that is not an app, Django or DRF error is a bug: the handler returns None."""
    assert api_exception_handler(KeyError("x"), {}) is None
