"""Error pages (400, 403, 404, 500) worded for the part of the site the URL belongs to.

The same templates serve participants (``/s/...``), researchers (``/researcher/``, ``/stimuli/``,
``/admin/``, ``/accounts/``, ``/api/``, ``/prolific/``) and annotators (``/annotate/``). Telling a
researcher to "open the study again from Prolific" is wrong, so the handlers below pass the area
(:func:`url_area`) and a link back into it. Pages are rendered without the request: no context
processor (session, user, messages) can fail or leak into an error page.

A database outage (PostgreSQL stopped or restarting, a full disk; see
``spotlight_study/database_outage.py``) reaches ``handler500`` as any uncaught error does; it is
answered with 503, ``Retry-After`` and the same page (the JSON error body
``database_unavailable`` under the APIs), and logged once per outage instead of a traceback per
request.
"""
from __future__ import annotations

import logging
import sys
from typing import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils import translation

from spotlight_study import database_outage
from spotlight_study.exceptions import JSON_API_PREFIXES, DomainError, domain_error_body, error_body

logger = logging.getLogger(__name__)

PARTICIPANT, STAFF, ANNOTATOR = "participant", "staff", "annotator"
#: The request attribute where a participant view notes its study's language (a code such as
#: ``"de"``; spotlight_study/participation/language.py), so that an error page in that request
#: speaks it too.
STUDY_LANGUAGE_ATTRIBUTE = "study_language"
_PREFIXES = (
    ("/annotate/", ANNOTATOR),
    ("/researcher/", STAFF),
    ("/stimuli/", STAFF),
    ("/admin/", STAFF),
    ("/accounts/", STAFF),
    ("/api/", STAFF),
    ("/prolific/", STAFF),
)
_HOMES = {STAFF: "researcher:study_list", ANNOTATOR: "annotation:home"}
_FALLBACK = {
    400: "Something was wrong with that request.",
    403: "Not allowed.",
    404: "Page not found.",
    500: "Something went wrong on our side.",
}


def url_area(path: str) -> str:
    """The area of a URL path: ``"staff"``, ``"annotator"`` or ``"participant"`` (the default).

    ``url_area("/researcher/demo/")`` is ``"staff"``; ``url_area("/s/demo/step/")`` is
    ``"participant"``, as is any path outside the staff and annotator areas.
    """
    for prefix, area in _PREFIXES:
        if path.startswith(prefix):
            return area
    return PARTICIPANT


def error_context(path: str) -> dict:
    """Template context of an error page for ``path``: ``{"area": ..., "home_url": str | None}``."""
    area = url_area(path)
    home_url = None
    if area in _HOMES:
        try:
            home_url = reverse(_HOMES[area])
        except NoReverseMatch:  # a broken URLconf must not break the error page too
            home_url = None
    return {"area": area, "home_url": home_url}


#: Finds the language of the study a participant URL belongs to (``"/s/<slug>/..."`` -> ``"de"``),
#: or ``None``; registered by the participation app (this kernel module cannot import studies).
_path_language: Callable[[str], str | None] | None = None


def path_language_register(find: Callable[[str], str | None]) -> None:
    """Register ``find(path) -> language code | None``: the language of the study a participant
    URL belongs to, for an error page that no participant view reached (an address under
    ``/s/<slug>/`` that no page has). ``find`` may query the database; if it raises, the page
    is shown in the site's default language."""
    global _path_language
    _path_language = find


#: Per area, a function that may keep what a form refused by the CSRF check carried (see
#: :func:`csrf_failure_keeper_register`).
_csrf_keepers: dict[str, Callable[[HttpRequest, str], HttpResponse | None]] = {}


def csrf_failure_keeper_register(area: str, keeper: Callable[[HttpRequest, str], HttpResponse | None]) -> None:
    """Register ``keeper(request, reason)`` for the CSRF failures of ``area`` (``"annotator"``):
    it returns a response that keeps the refused form's data for the person (the annotation app
    puts an annotator's unsaved choice back into the form), or ``None`` for the plain
    out-of-date page. Registered by an app's ``ready()``: the failure view cannot import it."""
    _csrf_keepers[area] = keeper


def csrf_failure_kept(request: HttpRequest, reason: str) -> HttpResponse | None:
    """The registered keeper's response for a CSRF failure on ``request``'s area, or ``None``
    (no keeper, nothing kept, or the keeper failed: the plain page is then the answer)."""
    keeper = _csrf_keepers.get(url_area(request.path))
    if keeper is None:
        return None
    try:
        return keeper(request, reason)
    except Exception:  # noqa: BLE001 - the plain out-of-date page is better than a 500
        logger.exception("Keeping the data of a form refused by the CSRF check failed")
        return None


def _language(request: HttpRequest) -> str:
    """The error page's language: the study's when a participant view had noted it, else the
    study's that the participant URL names, else the site's default."""
    noted = getattr(request, STUDY_LANGUAGE_ATTRIBUTE, None)
    if noted:
        return noted
    if _path_language is not None and url_area(request.path) == PARTICIPANT:
        try:
            found = _path_language(request.path)
        except Exception as exc:  # noqa: BLE001 - an error page must not fail on its language
            # No traceback: during a database outage every such page would log one.
            logger.warning("The study language of an error page could not be found (%s)", type(exc).__name__)
            found = None
        if found:
            return found
    return translation.get_language()


def _page(request: HttpRequest, status: int, **extra) -> HttpResponse:
    language = _language(request)
    try:
        with translation.override(language):
            html = render_to_string(f"{status}.html", {**error_context(request.path), **extra})
    except Exception:  # the error page itself failed: answer with plain text, never a traceback
        logger.exception("Rendering the %s page failed", status)
        return HttpResponse(_FALLBACK[status], status=status, content_type="text/plain; charset=utf-8")
    return HttpResponse(html, status=status)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler400``: the 400 page worded for the URL's area."""
    return _page(request, 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler403``: the 403 page worded for the URL's area."""
    return _page(request, 403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: the 404 page worded for the URL's area; under the JSON APIs an address
    that no endpoint matches gets their JSON error body (``not_found``) instead of a page."""
    if request.path.startswith(JSON_API_PREFIXES):
        body = error_body(status_code=404, code="not_found", message="No API endpoint at this address.")
        return JsonResponse(body, status=404)
    return _page(request, 404)


class DatabaseUnavailable(DomainError):
    """The database cannot be reached or written just now (503, with ``Retry-After``)."""

    code = "database_unavailable"
    http_status = 503


DATABASE_UNAVAILABLE = (
    "The database cannot be reached just now, so this request was not carried out. "
    "Please try again in a few seconds."
)


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: the 500 page worded for the URL's area (no exception details).

    Django calls it while handling the uncaught exception, so ``sys.exc_info()`` holds it. A
    database outage (:func:`spotlight_study.database_outage.outage_kind`) gets 503 with
    ``Retry-After`` instead, the same page (the JSON error body ``database_unavailable`` under
    the APIs), and one log line per outage: Django's own traceback is skipped.
    """
    exc = sys.exc_info()[1]
    kind = database_outage.outage_kind(exc)
    if kind is None:
        return _page(request, 500)
    database_outage.outage_note(kind, exc)
    if request.path.startswith(JSON_API_PREFIXES):
        response = JsonResponse(domain_error_body(DatabaseUnavailable(DATABASE_UNAVAILABLE)), status=503)
    else:
        response = _page(request, 500)
        response.status_code = 503
    response["Retry-After"] = str(database_outage.retry_after_s())
    response["Cache-Control"] = "no-store"
    # django.request's "Service Unavailable" line with the traceback: the note above says it.
    response._has_been_logged = True
    return response
