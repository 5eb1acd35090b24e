"""Keeping Prolific identifiers out of logs and error reports.

Prolific IDs are personal data (docs/security.md). Participants arrive at
``/s/<slug>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…``, so any log line that quotes a URL, a query
dict or an exception message about the entry can carry one. This module scrubs them:

- :func:`scrub_identifiers` replaces the values of ``PROLIFIC_PID``, ``STUDY_ID`` and
  ``SESSION_ID`` (as a query parameter, URL-encoded inside another parameter, or a dict/JSON key)
  and any bare 24-hex-digit Prolific ID with ``[scrubbed]``;
- :class:`ScrubbingFormatter` applies it to everything a handler writes, traceback included
  (settings ``LOGGING``: every handler uses it);
- :class:`ServerScrubbingFormatter` also removes the whole query string from the request lines
  of ``runserver`` (the ``django.server`` logger), as the Procfile's uWSGI access-log format
  does;
- :func:`scrub_sentry_event` is the same scrubbing as Sentry's ``before_send``, and
  :func:`sentry_init` starts the optional sentry-sdk reporting with it (``SENTRY_DSN``).

Two more filters keep the logs readable: :class:`ExpectedForbiddenFilter` logs an expected 403
(a ``PermissionDenied`` of a user without the role) as one warning line, without the traceback
Django attaches to it, and :class:`SuspiciousRequestFilter` does the same for the 400s Django
answers to a request it distrusts (a ``Host`` header not in ``ALLOWED_HOSTS``, an entry URL with
more than ``DATA_UPLOAD_MAX_NUMBER_FIELDS`` parameters).
"""
from __future__ import annotations

import logging
import re
from typing import Any

from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.utils.log import ServerFormatter

from spotlight_study.identifiers import PROLIFIC_ID_IN_TEXT_RE

IDENTIFIER_PARAMETERS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
SCRUBBED = "[scrubbed]"

# key, then a separator: "=", "%3D" (encoded inside a ?next= URL), or a dict/JSON/QueryDict
# spelling such as "': ['" or '": "'; then the value up to a delimiter. The runs of spaces are
# possessive (\s*+, never given back): with plain \s*\[?\s* a key followed by n spaces and no
# value was tried in n**2 ways (30,000 spaces: 27 s of CPU on an unauthenticated request line).
# A value never starts with a space, so nothing that matched before is missed.
_NAMED = re.compile(
    r"(?P<key>" + "|".join(IDENTIFIER_PARAMETERS) + r")"
    r"(?P<sep>=|%3D|['\"]?\s*+[:=]\s*+(?:\[\s*+)?['\"]?)"
    r"(?P<value>[^&\s\"'#;,\]\})<>]+)",
    re.IGNORECASE,
)
# Prolific IDs are 24 hexadecimal digits (MongoDB ObjectIds); one on its own is scrubbed too.
_BARE_ID = PROLIFIC_ID_IN_TEXT_RE
# A request line's target: "GET /path?query HTTP/1.1" keeps "GET /path HTTP/1.1".
_QUERY_IN_REQUEST_LINE = re.compile(r"(?P<path>\s/[^\s?]*)\?[^\s\"]*")


def scrub_identifiers(text: str) -> str:
    """``text`` with Prolific identifier values replaced by ``[scrubbed]``.

    Parameters: any string (a log message, a URL, a traceback). Returns the scrubbed string; the
    parameter names stay, so a reader still sees that an entry URL was involved.
    """
    text = _NAMED.sub(lambda m: f"{m.group('key')}{m.group('sep')}{SCRUBBED}", text)
    return _BARE_ID.sub(SCRUBBED, text)


def drop_query_string(request_line: str) -> str:
    """A request line (``"GET /s/x/?a=1 HTTP/1.1" 200 5``) without the query string of its path."""
    return _QUERY_IN_REQUEST_LINE.sub(lambda m: m.group("path"), request_line)


class ScrubbingFormatter(logging.Formatter):
    """A formatter whose output (message, traceback and stack) has identifiers scrubbed.

    Scrubbing the formatted text, rather than the record in a filter, leaves the record as it
    was for any other handler (such as pytest's log capture).
    """

    def format(self, record: logging.LogRecord) -> str:
        return scrub_identifiers(super().format(record))


class ServerScrubbingFormatter(ServerFormatter):
    """Django's runserver formatter (``django.server``), with request lines losing their query
    string and identifiers scrubbed."""

    def format(self, record: logging.LogRecord) -> str:
        return scrub_identifiers(drop_query_string(super().format(record)))


class ExpectedForbiddenFilter(logging.Filter):
    """A filter (of the ``django.request`` logger) that drops the traceback of an expected 403.

    Django logs a ``PermissionDenied`` raised by a view (a logged-in user without the role,
    :mod:`spotlight_study.accounts.roles`) as ``Forbidden (Permission denied): <path>`` with the
    exception's traceback, which says nothing a reader needs and hides the real errors. This
    filter keeps the record (one WARNING line, the status code and path) and removes its
    ``exc_info``. Any other exception, and any record of another status, keeps its traceback.
    CSRF failures are logged by Django without a traceback already.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Always ``True`` (the record is kept); a 403 ``PermissionDenied`` loses its traceback."""
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, PermissionDenied) and getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True


class SuspiciousRequestFilter(logging.Filter):
    """A filter (of the console handler) that makes Django's ``django.security.*`` records of a
    refused request one WARNING line, without a traceback.

    Django answers a ``SuspiciousOperation`` (``DisallowedHost`` for a ``Host`` header not in
    ``ALLOWED_HOSTS``, ``TooManyFieldsSent`` for an entry URL with 1,000 parameters, ...) with a
    correct 400, and logs it at ERROR on ``django.security.<class name>`` with the full
    traceback: a scanner sending bad hosts fills the log with tracebacks of no bug. The record is
    kept, with Django's one-line message (the host is quoted with ``repr``) followed by the
    method and the path (no query string), at WARNING. Other records are left as they are.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Always ``True``; a ``django.security`` record of a ``SuspiciousOperation`` becomes one
        WARNING line."""
        exc = record.exc_info[1] if record.exc_info else None
        if not (record.name.startswith("django.security.") and isinstance(exc, SuspiciousOperation)):
            return True
        request = getattr(record, "request", None)
        where = f" ({request.method} {request.path})" if request is not None else ""
        record.msg = f"{record.getMessage()}{where}".replace("\n", " ")
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        record.levelno = logging.WARNING
        record.levelname = logging.getLevelName(logging.WARNING)
        return True


#: Keys whose values are credentials wherever they appear in an error report (a form's POST
#: data, a frame's local variables): the study page's Prolific credentials form and the code
#: that encrypts them (prolific/credentials.py). Replaced whole, whatever the value.
CREDENTIAL_KEYS = frozenset({
    "api_token", "webhook_secret", "api_token_encrypted", "webhook_secret_encrypted", "token",
    "secret", "authorization",
})


def _scrub_value(value: Any) -> Any:
    """``value`` with every string inside it (dicts, lists, tuples) scrubbed, and the value of
    every :data:`CREDENTIAL_KEYS` key replaced."""
    if isinstance(value, str):
        return scrub_identifiers(value)
    if isinstance(value, dict):
        return {key: SCRUBBED if isinstance(key, str) and key.lower() in CREDENTIAL_KEYS
                else _scrub_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub_value(item) for item in value)
    return value


def scrub_sentry_event(event: dict, hint: dict | None = None) -> dict:
    """Sentry's ``before_send`` (and ``before_send_transaction``): the event, scrubbed.

    The request's query string is removed, the URL keeps only its path, the value of every
    :data:`CREDENTIAL_KEYS` key (form fields, frame variables) is replaced, and every other
    string in the event (messages, exception values, breadcrumbs, frame variables) goes through
    :func:`scrub_identifiers`. Returns the event (never ``None``: the error is still reported).
    """
    request = event.get("request")
    if isinstance(request, dict):
        request.pop("query_string", None)
        if isinstance(request.get("url"), str):
            request["url"] = request["url"].split("?", 1)[0]
    return _scrub_value(event)


def scrub_sentry_breadcrumb(crumb: dict, hint: dict | None = None) -> dict:
    """Sentry's ``before_breadcrumb``: the breadcrumb with identifiers scrubbed."""
    return _scrub_value(crumb)


def sentry_init(*, dsn: str, environment: str) -> None:
    """Start sentry-sdk error reporting with the scrubbing above and without default PII.

    Raises ImproperlyConfigured when sentry-sdk is not installed (``pip install
    'spotlight-study[sentry]'``). No performance tracing is sampled.
    """
    from django.core.exceptions import ImproperlyConfigured

    try:
        import sentry_sdk
    except ImportError:
        raise ImproperlyConfigured(
            "SENTRY_DSN is set but sentry-sdk is not installed: pip install 'spotlight-study[sentry]'."
        ) from None
    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        send_default_pii=False,
        traces_sample_rate=0.0,
        before_send=scrub_sentry_event,
        before_send_transaction=scrub_sentry_event,
        before_breadcrumb=scrub_sentry_breadcrumb,
    )
