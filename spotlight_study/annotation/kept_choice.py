"""An annotator's unsaved choice survives a form refused by the CSRF check.

When an annotator's cookies are gone (cleared, expired, or a login elsewhere rotated the CSRF
token), saving a label fails Django's CSRF check before any view runs. The site-wide failure
page said "reload", and reloading sent the stale form again or showed the item without the
choice, with no word about it. Instead, for a label or adjudication form posted from this site:

1. :func:`kept_choice_on_csrf_failure` (registered for the annotator area with
   :func:`spotlight_study.errors.csrf_failure_keeper_register`) keeps the posted fields in the
   session, saves nothing, and sends the browser to the same page with a GET (303). A session
   whose cookie was lost too is a new one: the login page comes first, and Django's login keeps
   the session's data.
2. The page's GET takes the kept fields back once (:func:`kept_choice_pop`): the form is
   shown filled in with them, with a fresh CSRF token, and a message saying that the label was
   not saved and why. The next save is an ordinary one, with its revision check.

Only a post whose ``Origin`` is this site is kept (Django's check verified it; a browser cannot
forge it). A cross-site post is not kept: it must not fill in an annotator's form.
"""
from __future__ import annotations

import time

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.middleware.csrf import REASON_BAD_ORIGIN
from django.urls import Resolver404, resolve

#: Session key of the kept fields: ``{"path": str, "fields": list[[name, value]], "at": epoch s,
#: "user": the annotator's id, or None when the session was lost too}``.
SESSION_KEY = "annotation_kept_choice"
#: The pages whose refused forms are kept (URL names in ``annotation/urls.py``).
KEPT_PAGES = ("item", "adjudicate")
#: Fields a form carries that are not the person's choice.
_NOT_KEPT = ("csrfmiddlewaretoken",)
#: A kept choice older than this (s) is dropped instead of shown: it belongs to an old visit.
MAX_AGE_S = 24 * 3600
#: The most fields and characters kept (a label form has about ten short fields).
_MAX_FIELDS, _MAX_CHARS = 200, 50_000

NOT_SAVED_MESSAGE = (
    "Your label was not saved: this page's security token no longer matched your browser "
    "(its cookies were cleared or expired, or you signed in again elsewhere). Your choice is "
    "filled in below; check it and save again."
)


def _kept_page(request: HttpRequest) -> bool:
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return False
    return match.app_name == "annotation" and match.url_name in KEPT_PAGES


def kept_choice_on_csrf_failure(request: HttpRequest, reason: str) -> HttpResponse | None:
    """For a label form of this site refused by the CSRF check: keep its fields in the session
    and redirect (303) to the same page; else ``None`` (the plain out-of-date page).

    ``reason`` is Django's failure reason; a post without an ``Origin`` header or from another
    origin (``REASON_BAD_ORIGIN``) is never kept. Saves nothing else.
    """
    if request.method != "POST" or not _kept_page(request):
        return None
    if "HTTP_ORIGIN" not in request.META or reason.startswith(REASON_BAD_ORIGIN.split("%")[0]):
        return None
    fields = [[name, value] for name, values in request.POST.lists() if name not in _NOT_KEPT
              for value in values]
    if len(fields) > _MAX_FIELDS or sum(len(n) + len(v) for n, v in fields) > _MAX_CHARS:
        return None
    user = request.user.pk if getattr(request, "user", None) and request.user.is_authenticated else None
    request.session[SESSION_KEY] = {"path": request.path, "fields": fields, "at": time.time(), "user": user}
    return HttpResponseRedirect(request.path, status=303)


def kept_choice_pop(request: HttpRequest) -> QueryDict | None:
    """The fields kept for this page by :func:`kept_choice_on_csrf_failure`, once (they are
    removed from the session), with the message queued; ``None`` if none are kept for it."""
    kept = request.session.get(SESSION_KEY)
    if not isinstance(kept, dict) or kept.get("path") != request.path:
        return None
    del request.session[SESSION_KEY]
    if time.time() - float(kept.get("at", 0)) > MAX_AGE_S:
        return None
    if kept.get("user") not in (None, request.user.pk):
        return None  # kept for another annotator who used this browser
    data = QueryDict(mutable=True)
    for name, value in kept.get("fields", []):
        data.appendlist(str(name), str(value))
    messages.warning(request, NOT_SAVED_MESSAGE)
    return data
