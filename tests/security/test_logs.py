"""Prolific identifiers stay out of the access logs, Django's logs and Sentry reports."""
from __future__ import annotations

import gzip
import io
import json
import logging
import os
import re
from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from spotlight_study.log_scrubbing import (
    SCRUBBED,
    drop_query_string,
    scrub_identifiers,
    scrub_sentry_event,
)

from ..conftest import new_id
from ..local_http import ThreadServer
from ..processes import run_python
from .conftest import csrf_token


def _participant_entry(server, slug: str) -> dict[str, str]:
    """Enter the study at ``server`` as a browser would (entry URL, stylesheet, consent POST);
    returns the identifiers used."""
    ids = {"PROLIFIC_PID": new_id(), "STUDY_ID": new_id(), "SESSION_ID": new_id()}
    with httpx.Client(base_url=server.url, follow_redirects=True, timeout=30) as c:
        entry_url = httpx.URL(f"{server.url}/s/{slug}/", params=ids)
        page = c.get(entry_url)
        assert page.status_code == 200 and 'name="token"' in page.text, page.text[:500]
        # A browser fetches the stylesheet with the page it came from as Referer.
        assert c.get("/static/css/study.css", headers={"Referer": str(entry_url)}).status_code == 200
        token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)
        consent = c.post(
            f"/s/{slug}/step/",
            data={"token": token, "decision": "agree", "csrfmiddlewaretoken": csrf_token(page.text)},
            headers={"Referer": f"{server.url}/s/{slug}/step/"},
        )
        assert consent.status_code == 200
        # An unknown study: Django's request log writes a "Not Found" warning for it.
        assert c.get("/s/no-such-study/", params=ids).status_code == 404
    return ids


def test_procfile_access_log_holds_no_prolific_identifiers(procfile_server, demo_study):
    """With the Procfile's uWSGI command, a participant entry leaves no PID in any log line."""
    ids = _participant_entry(procfile_server, demo_study.slug)
    log = procfile_server.stop()
    assert f'"GET /s/{demo_study.slug}/ HTTP/1.1" 302' in log, log  # the access log is on
    assert "Not Found: /s/no-such-study/" in log, log  # so is Django's request log
    for name, value in ids.items():
        assert value not in log, f"{name} in the access log:\n{log}"
    assert "PROLIFIC_PID" not in log


def test_serve_sh_log_holds_no_query_string(serve_sh_server, demo_study):
    """With serve.sh's uWSGI command, request lines are logged without their query string."""
    ids = _participant_entry(serve_sh_server, demo_study.slug)
    log = serve_sh_server.stop()
    assert f'"GET /s/{demo_study.slug}/ HTTP/1.1" 302' in log, log
    for name, value in ids.items():
        assert value not in log, f"{name} in serve.sh's log:\n{log}"
    assert "?" not in "".join(re.findall(r'"(?:GET|POST) [^"]*"', log)), log


# --- the scrubbing functions ------------------------------------------------------------------


PID = "5f1e2d3c4b5a69788796a5b4"


@pytest.mark.parametrize(
    "text",
    [
        f"GET /s/demo/?PROLIFIC_PID={PID}&STUDY_ID=x1&SESSION_ID=y2 HTTP/1.1",
        f"/accounts/login/?next=/s/demo/%3FPROLIFIC_PID%3D{PID}",
        f"<QueryDict: {{'PROLIFIC_PID': ['{PID}'], 'STUDY_ID': ['x1']}}>",
        f'{{"prolific_pid": "{PID}", "session_id": "y2"}}',
        f"Participant {PID} already has an answer",
    ],
)
def test_scrub_identifiers_removes_the_pid_in_every_spelling(text):
    """The PID goes from query strings, encoded URLs, query dicts, JSON and plain messages."""
    scrubbed = scrub_identifiers(text)
    assert PID not in scrubbed and SCRUBBED in scrubbed
    assert "x1" not in scrubbed and "y2" not in scrubbed


def test_scrub_identifiers_keeps_other_text():
    """Text without identifiers, and hex strings of other lengths (tokens, hashes), stay as they are."""
    text = "GET /s/demo/step/ 200 token=0123456789abcdef0123456789abcdef01234567"
    assert scrub_identifiers(text) == text


def test_drop_query_string_keeps_method_path_and_protocol():
    """A runserver request line loses its query string only."""
    line = f'"GET /s/demo/?PROLIFIC_PID={PID}&x=1 HTTP/1.1" 302 0'
    assert drop_query_string(line) == '"GET /s/demo/ HTTP/1.1" 302 0'


def _through_handler(handler_name: str, logger_name: str, *args, **kwargs) -> str:
    """What the configured LOGGING handler ``handler_name`` writes for one record."""
    handler = logging._handlers[handler_name]  # the handlers settings.LOGGING configured
    stream = io.StringIO()
    # Swap the stream directly: setStream() flushes the old one, which pytest may already have
    # closed (it was the captured stderr of an earlier test).
    old, handler.stream = handler.stream, stream
    try:
        logging.getLogger(logger_name).error(*args, **kwargs)
    finally:
        handler.stream = old
    return stream.getvalue()


def test_django_request_logging_scrubs_identifiers_and_tracebacks():
    """A django.request error with the PID in its message and traceback is written scrubbed."""
    try:
        raise ValueError(f"bad entry /s/demo/?PROLIFIC_PID={PID}&SESSION_ID=abc")
    except ValueError:
        out = _through_handler("console", "django.request", "Internal Server Error: %s", f"/s/?PROLIFIC_PID={PID}", exc_info=True)
    assert "Internal Server Error" in out and "ValueError: bad entry" in out
    assert PID not in out and "SESSION_ID=abc" not in out


def test_runserver_handler_drops_query_strings():
    """The django.server handler writes request lines without their query string."""
    out = _through_handler("django.server", "django.server", '"%s" %s %s', f"GET /s/demo/?PROLIFIC_PID={PID} HTTP/1.1", 302, 0)
    assert '"GET /s/demo/ HTTP/1.1" 302 0' in out and PID not in out


def test_scrub_sentry_event_removes_identifiers_everywhere():
    """Sentry's before_send: no PID in the URL, query string, message, exception or breadcrumbs."""
    event = {
        "message": f"Participant {PID} failed",
        "request": {
            "url": f"https://study.example.org/s/demo/?PROLIFIC_PID={PID}",
            "query_string": f"PROLIFIC_PID={PID}&STUDY_ID=s1",
            "method": "GET",
        },
        "exception": {"values": [{"type": "ValueError", "value": f"PROLIFIC_PID={PID}"}]},
        "breadcrumbs": {"values": [{"message": f"GET /s/demo/?PROLIFIC_PID={PID}"}]},
        "extra": {"ids": (PID, 3)},
    }
    scrubbed = scrub_sentry_event(event, {})
    assert PID not in json.dumps(scrubbed)
    assert scrubbed["request"]["url"] == "https://study.example.org/s/demo/"
    assert "query_string" not in scrubbed["request"] and scrubbed["request"]["method"] == "GET"


def test_scrub_sentry_event_drops_prolific_credentials():
    """The study page's credential fields in a request's form data, and local variables named
    like credentials in a frame, never reach Sentry (issue 40)."""
    event = {
        "request": {"url": "https://study.example.org/prolific/s/credentials/", "method": "POST",
                    "data": {"api_token": "tok-SECRET-1", "webhook_secret": "sec-SECRET-2", "x": "kept"}},
        "exception": {"values": [{"stacktrace": {"frames": [
            {"vars": {"token": "tok-SECRET-3", "secret": "sec-SECRET-4", "Authorization": "Token tok-SECRET-5"}},
        ]}}]},
    }
    text = json.dumps(scrub_sentry_event(event, {}))
    assert "SECRET" not in text and '"x": "kept"' in text


class _FakeSentry(BaseHTTPRequestHandler):
    """Records the bodies of envelopes posted to it (a stand-in for a Sentry server)."""

    bodies: list[bytes] = []

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        self.bodies.append(body)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def test_sentry_reports_are_scrubbed_when_sentry_dsn_is_set():
    """With SENTRY_DSN set, an error captured by the app reaches Sentry without the PID."""
    pytest.importorskip("sentry_sdk")
    server = ThreadServer(_FakeSentry).start()
    _FakeSentry.bodies = []
    script = (
        "import django, sentry_sdk; django.setup()\n"
        f"try:\n    raise ValueError('entry /s/demo/?PROLIFIC_PID={PID} failed for {PID}')\n"
        "except ValueError as e:\n    sentry_sdk.capture_exception(e)\n"
        "sentry_sdk.flush(timeout=10)\n"
    )
    env = {
        **os.environ,
        "SENTRY_DSN": f"http://publickey@127.0.0.1:{server.port}/1",
        "DJANGO_SETTINGS_MODULE": "spotlight_study.settings",
    }
    try:
        result = run_python("-c", script, env=env, timeout=60)
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    received = b"".join(_FakeSentry.bodies).decode(errors="replace")
    assert "ValueError" in received and "failed for" in received, received[:2000]
    assert PID not in received


def test_uwsgi_settings_never_log_a_query_string():
    """uwsgi.ini's access line has the path only, and uWSGI's own per-request messages, which
    quote the whole URI, are switched off or dropped when they carry an entry's IDs."""
    from ..conftest import REPO

    settings: dict[str, list[str]] = {}
    for line in (REPO / "uwsgi.ini").read_text().splitlines():
        if "=" in line and not line.lstrip().startswith((";", "#", "[")):
            key, value = (part.strip() for part in line.split("=", 1))
            settings.setdefault(key, []).append(value)
    (log_format,) = settings["log-format"]
    assert "%(var.PATH_INFO)" in log_format
    for leaky in ("%(uri)", "QUERY_STRING", "REQUEST_URI", "%(var.", "%(vars)"):
        assert leaky not in log_format.replace("%(var.PATH_INFO)", ""), leaky
    for switch in ("ignore-sigpipe", "ignore-write-errors", "disable-write-exception", "log-master"):
        assert settings[switch] == ["true"], switch
    drains = settings["log-drain"]
    dropped = [f"GET /s/demo/?{name}=x" for name in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")]
    dropped.append('"GET /s/demo/5f1e2d3c4b5a69788796a5b4/ HTTP/1.1" 404')
    for line in dropped:
        assert any(re.search(drain, line) for drain in drains), line
    # Ordinary lines stay: hashed static files, annotation item ids, times.
    for line in ('"GET /static/css/study.3f2a9c1b0d4e.css HTTP/1.1" 200',
                 '"POST /annotate/demo/items/jHJEXk8PefiNP-t9/ HTTP/1.1" 302 0 12ms'):
        assert not any(re.search(drain, line) for drain in drains), line


# Hostile lines of about n characters: the key, then n spaces (or repeated keys, or no key).
_HOSTILE_LINES = {
    "colon-spaces": lambda n: "GET /PROLIFIC_PID:" + " " * n,
    "equals-spaces": lambda n: "GET /PROLIFIC_PID=" + " " * n,
    "spaces-colon-spaces": lambda n: "GET /PROLIFIC_PID" + " " * (n // 2) + ":" + " " * (n // 2),
    "bracket-spaces": lambda n: "GET /PROLIFIC_PID: [" + " " * n,
    "repeated-keys": lambda n: "PROLIFIC_PID " * (n // 12),
    "letters": lambda n: "a" * n,
    "hex": lambda n: "0123456789abcdef" * (n // 16),
}


def _best_scrub_seconds(line: str) -> float:
    """The least CPU time of this thread (s) over five scrubs of ``line``.

    CPU time, not wall time: while the machine is busy and this thread waits for a CPU, its CPU
    clock stops, so the other processes' work does not count."""
    import time

    from spotlight_study.log_scrubbing import scrub_identifiers

    best = float("inf")
    for _ in range(5):
        start = time.thread_time()
        scrub_identifiers(line)
        best = min(best, time.thread_time() - start)
    return best


@pytest.mark.parametrize("shape", sorted(_HOSTILE_LINES))
def test_scrubbing_a_hostile_line_takes_time_linear_in_its_length(shape):
    """A hostile 30,000-character line takes at most 30 times as long to scrub as a 3,000-character
    one: linear (10 times) with room for noise, where a quadratic scrubber takes 100 times.

    A ratio of the thread's CPU times, not a time limit: it holds on a slow or busy machine,
    where a fixed limit in ms does not."""
    from spotlight_study.log_scrubbing import scrub_identifiers

    scrub_identifiers("warm up PROLIFIC_PID=" + "a" * 24)
    build = _HOSTILE_LINES[shape]
    short, long = _best_scrub_seconds(build(3_000)), _best_scrub_seconds(build(30_000))
    print(f"{shape}: 3,000 characters in {short * 1000:.3f} ms, 30,000 in {long * 1000:.3f} ms "
          f"({long / short:.1f} times)")
    assert long < 30 * short + 0.001, (short, long)
