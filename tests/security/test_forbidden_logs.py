"""Expected 403s are one warning line in the logs; unexpected errors keep their traceback."""
from __future__ import annotations

import logging

import pytest
from django.test import Client
from django.urls import path

from spotlight_study.log_scrubbing import ScrubbingFormatter

from ..annotation.conftest import make_user


def _boom(request):
    raise RuntimeError("an unexpected bug")


# The URLconf of test_unexpected_errors_keep_their_traceback (``pytest.mark.urls(__name__)``).
urlpatterns = [path("boom/", _boom)]


def _request_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "django.request"]


def _formatted(record: logging.LogRecord) -> str:
    """The record as the console handler of settings ``LOGGING`` writes it."""
    return ScrubbingFormatter().format(record)


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/annotate/", "/stimuli/"])
def test_permission_denied_for_a_user_without_the_role_is_one_warning_line(caplog, url):
    """A logged-in user without the role gets 403, logged as one WARNING line, no traceback."""
    client = Client()
    client.force_login(make_user("no-role"))
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert client.get(url).status_code == 403
    (record,) = _request_records(caplog)
    assert record.levelno == logging.WARNING and record.exc_info is None
    line = _formatted(record)
    assert line == f"Forbidden (Permission denied): {url}"
    assert "Traceback" not in caplog.text


@pytest.mark.django_db
def test_csrf_failure_is_one_warning_line(caplog):
    """A form posted without its CSRF token gets 403, logged as one WARNING line."""
    with caplog.at_level(logging.WARNING):
        response = Client(enforce_csrf_checks=True).post("/accounts/login/", {"username": "x"})
    assert response.status_code == 403
    records = [r for r in caplog.records if r.name.startswith("django.")]
    assert records and all(r.levelno == logging.WARNING and r.exc_info is None for r in records)
    assert all("\n" not in _formatted(r) for r in records)
    assert "Traceback" not in caplog.text


@pytest.mark.urls(__name__)
def test_unexpected_errors_keep_their_traceback(caplog):
    """A view that fails is still logged as an ERROR with its traceback."""
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert Client(raise_request_exception=False).get("/boom/").status_code == 500
    (record,) = _request_records(caplog)
    assert record.levelno == logging.ERROR and record.exc_info is not None
    formatted = _formatted(record)
    assert "Traceback" in formatted and "RuntimeError: an unexpected bug" in formatted
