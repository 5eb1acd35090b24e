"""Expected 403s, and the 400s of a bad Host header or an entry URL with 1,000 parameters, are
one warning line in the logs; unexpected errors keep their traceback."""
from __future__ import annotations

import logging

import pytest
from django.test import Client
from django.urls import path

from spotlight_study.log_scrubbing import ScrubbingFormatter, SuspiciousRequestFilter

from ..annotation.conftest import make_user
from ..conftest import new_id


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


def _many_parameters_query() -> str:
    ids = f"PROLIFIC_PID={new_id()}&STUDY_ID={new_id()}&SESSION_ID={new_id()}"
    return ids + "&" + "&".join(f"p{i}=x" for i in range(1000))


@pytest.mark.django_db
@pytest.mark.parametrize("case", ["bad host", "1,000 parameters"])
def test_a_refused_host_or_too_many_parameters_is_one_warning_line(demo_study, caplog, case):
    """A Host header not in ALLOWED_HOSTS, or an entry URL with 1,000 parameters: 400, and the
    console handler's filter makes Django's django.security record one WARNING line with the
    method and path (no query string, no traceback)."""
    client = Client(raise_request_exception=False)
    url = f"/s/{demo_study.slug}/"
    with caplog.at_level(logging.WARNING):
        if case == "bad host":
            response = client.get(url, HTTP_HOST="evil.example.com")
        else:
            response = client.get(f"{url}?{_many_parameters_query()}")
    assert response.status_code == 400
    (record,) = [r for r in caplog.records if r.name.startswith("django.security.")]
    assert SuspiciousRequestFilter().filter(record) is True
    line = _formatted(record)
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert "\n" not in line and "Traceback" not in line and line.endswith(f"(GET {url})"), line
    assert ("Invalid HTTP_HOST header: 'evil.example.com'" if case == "bad host"
            else "DATA_UPLOAD_MAX_NUMBER_FIELDS") in line


def test_through_uwsgi_a_refused_host_or_too_many_parameters_leave_no_traceback(procfile_server, demo_study):
    """The Procfile's uWSGI: a bad Host header and an entry URL with 1,000 parameters are 400s,
    each one line in the log, no traceback."""
    import httpx

    url = f"/s/{demo_study.slug}/"
    with httpx.Client(base_url=procfile_server.url, timeout=30, trust_env=False) as c:
        bad_host = c.get(url, headers={"Host": "evil.example.com"})
        many = c.get(f"{url}?{_many_parameters_query()}")
    log = procfile_server.stop()
    assert bad_host.status_code == 400 and many.status_code == 400, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert log.count("Invalid HTTP_HOST header: 'evil.example.com'") == 1, log[-3000:]
    assert log.count("DATA_UPLOAD_MAX_NUMBER_FIELDS") == 1, log[-3000:]
