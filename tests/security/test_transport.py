"""No 500 from the transport, through the Procfile's uWSGI with raw sockets.

- A client that hangs up mid-upload (the head promises more body than it sends, then the
  client shuts its side) gets 400 or nothing, and the server logs one line without a
  traceback, on every POST URL of the site (every route of the URLconf, with its parameters
  filled in), in form, multipart and JSON bodies.
- A ``Content-Length`` that is not a decimal number (``abc``, ``1e3``, ``0x10``) answers 400 on
  every URL and method.
- A 10 MB answer gets the 413 page, not a connection reset.
"""
from __future__ import annotations

import re
import socket
import time

import httpx
import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from .conftest import _start_server, csrf_token, procfile_web_command

SLUG = "spotlight-replication"
_CONVERTER_VALUES = {"slug": SLUG, "int": "1", "dbid": "1", "str": "x", "path": "x", "uuid": "00000000-0000-0000-0000-000000000000"}


def _routes(patterns=None, prefix: str = "") -> list[str]:
    """Every path route of the URLconf, parameters filled in (regex routes are left out)."""
    found: list[str] = []
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        route = getattr(entry.pattern, "_route", None)
        if route is None:  # a regex route (DRF's router, some admin pages)
            route = _regex_route(entry.pattern.regex.pattern)
            if route is None:
                continue
        route = re.sub(r"<(?:(\w+):)?\w+>", lambda m: _CONVERTER_VALUES.get(m.group(1) or "str", "x"), route)
        if isinstance(entry, URLResolver):
            found.extend(_routes(entry.url_patterns, prefix + route))
        elif isinstance(entry, URLPattern):
            found.append("/" + prefix + route)
    return sorted(set(found))


def _regex_route(regex: str) -> str | None:
    """A concrete path for a simple regex route (named groups filled in), ``None`` if it is not
    simple (a format suffix, alternatives with nested groups)."""
    route = regex.removeprefix("^").removesuffix("$").removesuffix("\\Z")
    route = re.sub(r"\(\?P<(\w+)>[^()]*\)", lambda m: SLUG if "slug" in m.group(1) else "1", route)
    if re.search(r"[()\\?*+\[\]|$^]", route):
        return None
    return route


def raw_request(url: str, head: str, body: bytes = b"", *, hang_up: bool = True, timeout_s: float = 20) -> bytes:
    """Send ``head`` (request line and headers, without the blank line) and ``body`` on a raw
    socket; with ``hang_up``, shut the sending side at once; return all that comes back."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout_s) as s:
        s.sendall(head.encode("latin-1") + b"\r\n\r\n" + body)
        if hang_up:
            s.shutdown(socket.SHUT_WR)
        chunks = []
        try:
            while chunk := s.recv(65536):
                chunks.append(chunk)
        except (ConnectionResetError, TimeoutError):
            pass
        return b"".join(chunks)


def status_of(response: bytes) -> int | None:
    """The HTTP status of a raw response, ``None`` if nothing came back."""
    match = re.match(rb"HTTP/1\.[01] (\d{3})", response)
    return int(match.group(1)) if match else None


BODIES = {
    "form": ("application/x-www-form-urlencoded", b"answer=half an ans"),
    "multipart": ("multipart/form-data; boundary=XyZ", b'--XyZ\r\nContent-Disposition: form-data; name="answer"\r\n\r\nhalf'),
    "json": ("application/json", b'{"identified": tr'),
}


@pytest.fixture
def server(transactional_db, tmp_path, demo_data, monkeypatch, real_password_hashers):
    """The Procfile's uWSGI on the test database with the demo study and a Prolific webhook secret."""
    from spotlight_study.studies.services import study_import

    study_import(data=demo_data)
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from django.contrib.auth.models import Group

    staff = User.objects.create_user("transport", password="transport-pw-1234", is_staff=True, is_superuser=True)
    staff.groups.add(Group.objects.get_or_create(name="annotators")[0])  # the annotator API too
    Token.objects.create(user=staff, key="t" * 40)
    monkeypatch.setenv("PROLIFIC_WEBHOOK_SECRET", "whsec-transport-test")
    command = procfile_web_command().replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:")
    server = _start_server(command, tmp_path)
    yield server
    server.stop()


def test_the_routes_cover_the_post_urls_the_issue_names():
    """The enumerated routes include participant steps, login, admin login, webhook, both APIs, staff forms."""
    routes = _routes()
    for needed in (f"/s/{SLUG}/step/", "/accounts/login/", "/admin/login/", "/prolific/webhook/",
                   "/api/studies/import/", f"/annotate/api/{SLUG}/items/x/label/", "/stimuli/import/"):
        assert needed in routes, needed


def test_a_client_hanging_up_mid_upload_gets_400_or_nothing_on_every_post_url(server):
    """Every route × form/multipart/JSON: a body cut short gets 400 or no answer, never 500;
    one log line per request and no traceback."""
    # Logging out (a JSON body is not read before the view) ends the session: last.
    routes = sorted(_routes(), key=lambda path: "logout" in path)
    # A staff and annotator session (the annotator API takes sessions only) with its CSRF token,
    # so that views get as far as reading the body.
    with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as c:
        form = c.get("/accounts/login/")
        c.post("/accounts/login/", data={"username": "transport", "password": "transport-pw-1234",
                                         "csrfmiddlewaretoken": csrf_token(form.text)})
        cookies = dict(c.cookies)
    auth = (f"Cookie: sessionid={cookies['sessionid']}; csrftoken={cookies['csrftoken']}\r\n"
            f"X-CSRFToken: {cookies['csrftoken']}\r\n")
    outcomes: dict[tuple[str, str], int | None] = {}
    for path in routes:
        for shape, (content_type, partial) in BODIES.items():
            # A staff token too: the researcher API authenticates before it reads the body.
            head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
                    f"Authorization: Token {'t' * 40}\r\n{auth}Content-Length: {len(partial) + 5000}")
            outcomes[(path, shape)] = status_of(raw_request(server.url, head, partial))
    log = server.stop()
    bad = {k: v for k, v in outcomes.items() if v not in (400, None)}
    # Routes that answer before reading any body (a redirect, 405, 401/403 before parsing) are
    # fine too: what matters is that none answers 500.
    assert not [k for k, v in bad.items() if v is not None and v >= 500], bad
    assert "Traceback" not in log and "Internal Server Error" not in log, log[-4000:]
    hung_up = log.count("hung up before sending the whole body")
    answered_400 = sum(v == 400 for v in outcomes.values())
    # One line per request that read a body: the middleware's; neither Django's "Bad Request"
    # nor uWSGI's own body-read message.
    assert hung_up == answered_400 >= len(routes), (hung_up, answered_400, len(routes))
    assert "Bad Request:" not in log and "[uwsgi-body-read]" not in log
    read_400 = [k for k, v in outcomes.items() if v == 400]
    assert (f"/s/{SLUG}/step/", "form") in read_400 and ("/accounts/login/", "form") in read_400
    assert ("/prolific/webhook/", "json") in read_400 and ("/api/studies/import/", "json") in read_400
    assert (f"/annotate/api/{SLUG}/items/x/label/", "json") in read_400, outcomes[(f"/annotate/api/{SLUG}/items/x/label/", "json")]
    print(f"{len(outcomes)} requests on {len(routes)} routes: "
          f"{sum(v == 400 for v in outcomes.values())} answered 400, {sum(v is None for v in outcomes.values())} nothing, "
          f"others {sorted(set(v for v in outcomes.values() if v not in (400, None)))}")


#: Content-Length values that are not a number of bytes.
NOT_A_NUMBER = ["abc", "1e3", "0x10", "-5", "12 34", "+7"]


def test_a_content_length_that_is_not_a_number_is_400_everywhere(server):
    """Content-Length abc / 1e3 / 0x10 / -5 / "12 34" / +7: 400 on GET and POST of pages and APIs.

    All six values against one server (a uWSGI start is 2-3 s), each request on its own
    connection, so that one value's answer cannot depend on another's."""
    statuses = {}
    for value in NOT_A_NUMBER:
        for method, path in [("POST", "/accounts/login/"), ("POST", f"/s/{SLUG}/step/"), ("GET", f"/s/{SLUG}/"),
                             ("POST", "/prolific/webhook/"), ("POST", "/api/studies/import/"),
                             ("PUT", f"/annotate/api/{SLUG}/items/x/label/")]:
            head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {value}")
            statuses[(value, method, path)] = status_of(raw_request(server.url, head, b"a=1", hang_up=False))
    log = server.stop()
    for value in NOT_A_NUMBER:
        of_value = {k[1:]: v for k, v in statuses.items() if k[0] == value}
        assert set(of_value.values()) == {400}, (value, of_value)
    assert "Traceback" not in log


def test_a_10_mb_answer_gets_the_413_page_not_a_reset(server):
    """A 10 MB form body on a participant step: the whole 413 page arrives (the body is read and dropped)."""
    body = b"answer=" + b"a" * (10 * 1024 * 1024)
    head = (f"POST /s/{SLUG}/step/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}")
    started = time.monotonic()
    response = raw_request(server.url, head, body, hang_up=False, timeout_s=30)
    elapsed = time.monotonic() - started
    assert status_of(response) == 413, response[:300]
    assert b"too large" in response
    print(f"10 MB answer: 413 page in {elapsed:.2f} s")
