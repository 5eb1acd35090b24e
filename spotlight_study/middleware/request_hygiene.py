"""Refuse request bodies that are not UTF-8 before any view or form reads them.

Django decodes form data with ``errors="replace"``, so bytes that are not UTF-8 would reach the
database as U+FFFD replacement characters; and a form body that declares another character set
(``charset=latin-1``) makes Django raise ``BadRequest`` inside the CSRF check, which fails again
in the 400 and 500 handlers (they run the same check) and ends as a bare server error. This
middleware's ``process_view`` runs before the CSRF middleware's and answers such requests itself with a 400 page
(a JSON error body under ``/api/``), so nothing is stored and no handler runs.

Rules, for every request that may carry a body (not GET or HEAD):

- a ``charset`` parameter in ``Content-Type`` must name UTF-8 (or its subset US-ASCII);
- ``application/x-www-form-urlencoded``: the body and every percent-decoded name and value must
  be valid UTF-8 (``%ff%fe`` is refused); the form is then parsed here, so a body over
  ``DATA_UPLOAD_MAX_MEMORY_SIZE`` or with too many fields is refused here too (413 / 400);
- ``multipart/form-data``: the form is parsed here; a text field holding U+FFFD (what Django
  makes of bytes that are not UTF-8) is refused. Uploaded files are left to the importers,
  which decode and check them with their own messages.

Transport problems, for every request:

- a ``Content-Length`` that is not a decimal number (``abc``, ``1e3``, ``0x10``, ``-5``) is a
  400 before anything runs (Django would read such a body as empty);
- a client that hangs up mid-upload (``UnreadablePostError``, raised wherever the body is read:
  here, or in a view or API parser) gets a 400, usually unseen, and one warning line without
  a traceback.

On the participant's step pages (:data:`SINGLE_VALUED_FORM_VIEWS`) a form field sent more
than once (``answer_0=a&answer_0=b``) is refused with a 400 page, as the entry link refuses a
repeated parameter.

A path with a NUL character (``%00``) is a 404 for every method: no address has one, and
PostgreSQL would refuse it in the lookup with a 500.

Other bodies (JSON) are left to their parsers, which refuse bytes that are not UTF-8; the APIs'
exception handler (``spotlight_study.api.exceptions``) answers that with this module's
:class:`Refusal`, the same 400 ``invalid_utf8`` a form body gets.
"""
from __future__ import annotations

import codecs
import logging
import re
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.core.exceptions import BadRequest, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, UnreadablePostError
from django.http.multipartparser import MultiPartParserError
from django.template.loader import render_to_string

from spotlight_study.errors import error_context
from spotlight_study.exceptions import JSON_API_PREFIXES, DomainError, domain_error_body

_BODYLESS_METHODS = {"GET", "HEAD", "OPTIONS", "TRACE"}
# Names that codecs.lookup gives for the character sets a body may declare.
_ACCEPTED_CHARSETS = {"utf-8", "ascii"}

NOT_UTF8 = (
    "Some of the text that was sent is not valid UTF-8, so nothing was saved. "
    "Please go back, check the text and send it again."
)
TOO_LARGE = "What was sent is too large, so nothing was saved."
MALFORMED = "The form data could not be read, so nothing was saved."
BAD_LENGTH = "The request's Content-Length is not a number of bytes, so nothing was read."
INCOMPLETE = "The connection ended before the whole request arrived, so nothing was saved."
REPEATED = (
    "A field of the form was sent more than once, so nothing was saved. "
    "Please go back and send the page again."
)
#: The views whose forms refuse a repeated field (the participant's step pages); the entry
#: link refuses a repeated parameter itself (participation/arrival.py).
SINGLE_VALUED_FORM_VIEWS = frozenset({"participation:step"})
_DECIMAL = re.compile(r"[0-9]{1,18}")
#: A body refused as too large is read to its end (and dropped) up to this size, so that the
#: client gets the 413 page instead of a connection reset (:func:`_drain`).
DRAIN_MAX_BYTES = 32 * 1024 * 1024

logger = logging.getLogger(__name__)


class Refusal(DomainError):
    """A request body that is refused: text that is not UTF-8 (400 ``invalid_utf8``); the
    subclasses below are the other reasons."""

    code = "invalid_utf8"
    http_status = 400


class UnsupportedCharset(Refusal):
    """The body declares a character set other than UTF-8 (400)."""

    code = "unsupported_charset"


class MalformedForm(Refusal):
    """Django cannot parse the form body (400)."""

    code = "malformed_form"


class BadContentLength(Refusal):
    """A ``Content-Length`` that is not a decimal number (400): Django would read it as 0."""

    code = "bad_content_length"


class ClientGone(Refusal):
    """The client hung up before sending the whole body (400; it is usually no longer there)."""

    code = "incomplete_body"


class RepeatedField(Refusal):
    """A participant form with a field sent more than once (400): Django would keep the last
    value silently, and no participant form has a field that takes several values."""

    code = "repeated_field"


class BodyTooLarge(Refusal):
    """The body is over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413)."""

    code = "too_large"
    http_status = 413


def _check_charset(request: HttpRequest) -> None:
    charset = request.content_params.get("charset") if request.content_params else None
    if charset is None:
        return
    try:
        name = codecs.lookup(charset.strip().strip('"')).name
    except (LookupError, ValueError):
        name = None
    if name not in _ACCEPTED_CHARSETS:
        shown = charset[:40]
        raise UnsupportedCharset(
            f"The request declares the character set '{shown}'; this site accepts only UTF-8, "
            "so nothing was saved.",
        )
    # Django's form parser takes only the exact spelling "utf-8"; "UTF8" or "us-ascii" mean the
    # same bytes here.
    request.encoding = "utf-8"


def _check_urlencoded(body: bytes) -> None:
    """Raise :class:`Refusal` unless ``body`` and all its decoded names and values are UTF-8.

    The names and values are decoded all at once: the separators ``&`` and ``=`` are ASCII,
    which never occurs inside a multi-byte UTF-8 sequence, so the decoded body is UTF-8 exactly
    when each decoded name and value is (one decode instead of one per part).
    """
    try:
        body.decode("utf-8")
        unquote_to_bytes(body.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        raise Refusal(NOT_UTF8) from None


def _parse_form(request: HttpRequest) -> None:
    """Parse ``request.POST`` now, turning Django's parse errors into a :class:`Refusal`."""
    try:
        request.POST  # noqa: B018 - parsing is the point; the result is cached on the request
    except RequestDataTooBig:
        raise BodyTooLarge(TOO_LARGE) from None
    except (BadRequest, SuspiciousOperation, MultiPartParserError):
        raise MalformedForm(MALFORMED) from None


def _check_single_valued(request: HttpRequest) -> None:
    """Raise :class:`RepeatedField` if a form field of ``request`` was sent more than once."""
    if request.method not in _BODYLESS_METHODS:
        for values in request.POST.lists():
            if len(values[1]) > 1:
                raise RepeatedField(REPEATED)


def _drain(request: HttpRequest) -> None:
    """Read and drop the rest of a refused body of at most :data:`DRAIN_MAX_BYTES`.

    A server that answers 413 while the client is still sending closes a connection with
    unread data, and the client's TCP stack then resets it: the browser shows "connection
    reset" instead of the 413 page. Reading the rest first lets the page arrive. A larger body
    is not read (that would let anyone make a worker read gigabytes).
    """
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return
    if length > DRAIN_MAX_BYTES:
        return
    stream = getattr(request, "_stream", None)
    try:
        while stream is not None and stream.read(64 * 1024):
            pass
    except OSError:
        pass  # the client went away: nothing to answer


def check_request(request: HttpRequest, *, parse_multipart: bool = True) -> None:
    """Apply the module's rules to ``request``; raise :class:`Refusal` if it breaks one.

    ``parse_multipart=False`` leaves a multipart body (and any body but a form) unread, for
    views that read the raw body themselves (once a multipart form is parsed, ``request.body``
    is gone). Raises ``UnreadablePostError`` if the client hangs up while the body is read.
    """
    if request.method in _BODYLESS_METHODS:
        return
    _check_charset(request)
    if request.content_type == "application/x-www-form-urlencoded":
        try:
            body = request.body
        except RequestDataTooBig:
            raise BodyTooLarge(TOO_LARGE) from None
        _check_urlencoded(body)
        _parse_form(request)
    elif request.content_type == "multipart/form-data" and parse_multipart:
        _parse_form(request)
        for name, values in request.POST.lists():
            if "\ufffd" in name or any("\ufffd" in v for v in values):
                raise Refusal(NOT_UTF8)
    elif parse_multipart and request.META.get("CONTENT_LENGTH", "") not in ("", "0"):
        # Any other body (JSON for the APIs) is read now, so that a client hanging up mid-body
        # raises UnreadablePostError here: DRF's session CSRF check swallows it, and the
        # parser then fails on a half-read stream with another error.
        try:
            request.body  # noqa: B018 - cached on the request for the parsers
        except RequestDataTooBig:
            raise BodyTooLarge(TOO_LARGE) from None


class RequestHygieneMiddleware:
    """Answer a refused request body (see the module docstring) with a 400 or 413 page.

    Under the two JSON APIs (``/api/`` and ``/annotate/api/``) the answer is their one error body
    (:func:`spotlight_study.exceptions.domain_error_body`); elsewhere ``400.html``, worded for
    the URL's area (:func:`spotlight_study.errors.error_context`), with the message as ``reason``.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH")
        if length and not _DECIMAL.fullmatch(length):
            return self._refuse(request, BadContentLength(BAD_LENGTH))
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        """A view that read the body itself (the webhook, the APIs' parsers) when the client
        hung up: one log line and a 400, instead of a traceback and a 500."""
        if isinstance(exception, UnreadablePostError):
            return self._client_gone(request, exception)
        return None

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        """Check the body before the CSRF middleware's ``process_view`` reads it.

        Views exempt from CSRF that are not DRF views (the Prolific webhook) read and verify the
        raw body themselves, so their multipart bodies are left unread here.
        """
        if "\x00" in request.path:
            # No address of this site has NUL (slugs and ids are letters, digits, - and _), and
            # PostgreSQL refuses NUL in a query: the page or the API's not_found, on any database.
            raise Http404("No page at this address.")
        raw_body_view = getattr(view_func, "csrf_exempt", False) and not hasattr(view_func, "cls")
        try:
            check_request(request, parse_multipart=not raw_body_view)
            match = request.resolver_match
            if match is not None and match.view_name in SINGLE_VALUED_FORM_VIEWS:
                _check_single_valued(request)
        except Refusal as refusal:
            if isinstance(refusal, BodyTooLarge):
                _drain(request)
            return self._refuse(request, refusal)
        except UnreadablePostError as exc:
            return self._client_gone(request, exc)
        return None

    @classmethod
    def _client_gone(cls, request: HttpRequest, exc: Exception) -> HttpResponse:
        # One line, no traceback, the path without its query string (which may carry Prolific
        # IDs); Django's own "Bad Request" line is suppressed so it stays one line.
        logger.warning(
            "%s %s: the client hung up before sending the whole body (%s); nothing was read.",
            request.method, request.path, str(exc)[:100] or type(exc).__name__,
        )
        response = cls._refuse(request, ClientGone(INCOMPLETE))
        response._has_been_logged = True
        return response

    @staticmethod
    def _refuse(request: HttpRequest, refusal: Refusal) -> HttpResponse:
        if request.path.startswith(JSON_API_PREFIXES):
            return JsonResponse(domain_error_body(refusal), status=refusal.http_status)
        # Rendered without the request: the 400 page needs no CSRF token, and a request
        # context would run the very check that fails on this body.
        html = render_to_string("400.html", {**error_context(request.path), "reason": refusal.message})
        return HttpResponse(html, status=refusal.http_status, content_type="text/html; charset=utf-8")
