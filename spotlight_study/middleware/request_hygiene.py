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

A path with a NUL character (``%00``) is a 404 for every method: no address has one, and
PostgreSQL would refuse it in the lookup with a 500.

Other bodies (JSON) are left to their parsers, which refuse bytes that are not UTF-8; the APIs'
exception handler (``spotlight_study.api.exceptions``) answers that with this module's
:class:`Refusal`, the same 400 ``invalid_utf8`` a form body gets.
"""
from __future__ import annotations

import codecs
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.core.exceptions import BadRequest, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
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


def check_request(request: HttpRequest, *, parse_multipart: bool = True) -> None:
    """Apply the module's rules to ``request``; raise :class:`Refusal` if it breaks one.

    ``parse_multipart=False`` leaves a multipart body unread, for views that read the raw body
    themselves (once a multipart form is parsed, ``request.body`` is gone).
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


class RequestHygieneMiddleware:
    """Answer a refused request body (see the module docstring) with a 400 or 413 page.

    Under the two JSON APIs (``/api/`` and ``/annotate/api/``) the answer is their one error body
    (:func:`spotlight_study.exceptions.domain_error_body`); elsewhere ``400.html``, worded for
    the URL's area (:func:`spotlight_study.errors.error_context`), with the message as ``reason``.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

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
        except Refusal as refusal:
            return self._refuse(request, refusal)
        return None

    @staticmethod
    def _refuse(request: HttpRequest, refusal: Refusal) -> HttpResponse:
        if request.path.startswith(JSON_API_PREFIXES):
            return JsonResponse(domain_error_body(refusal), status=refusal.http_status)
        # Rendered without the request: the 400 page needs no CSRF token, and a request
        # context would run the very check that fails on this body.
        html = render_to_string("400.html", {**error_context(request.path), "reason": refusal.message})
        return HttpResponse(html, status=refusal.http_status, content_type="text/html; charset=utf-8")
