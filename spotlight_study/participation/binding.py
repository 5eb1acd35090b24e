"""Which participant a browser is, per study: a signed cookie instead of a database session.

A participant request used to read its database session (one query, and an INSERT or UPDATE at
entry) only to learn one number, the participant's id. That id now travels in a cookie signed
with ``SECRET_KEY`` (:meth:`~django.http.HttpResponse.set_signed_cookie`): the server can trust
it without storing anything, and a participant cannot change it into another's. Everything else
stays on the server: the participant's state is their row, and a refused form's text is kept on
the row too (``Participant.draft``), never in the cookie.

- One cookie per study, named after its slug and limited to the study's URLs (``/s/<slug>/``),
  so one browser can take part in several studies.
- Issued afresh at every entry from Prolific (a new signature and timestamp: the "cycle" of a
  session at login), and valid for ``SESSION_COOKIE_AGE`` seconds after it.
- ``HttpOnly``, ``SameSite`` and ``Secure`` as the session cookie (settings).

Staff and annotators keep Django's database sessions; participant pages never touch
``request.session``, so they never query it.
"""
from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.urls import reverse


def _cookie_name(slug: str) -> str:
    return f"participant_{slug}"


def _salt(slug: str) -> str:
    return f"participation.participant:{slug}"


def bound_participant_id(request: HttpRequest, *, slug: str) -> int | None:
    """The id of the participant this browser was bound to in study ``slug``, or ``None``.

    ``None`` as well for a cookie that is missing, forged, signed with another key, of another
    study, or older than ``SESSION_COOKIE_AGE``.
    """
    try:
        value = request.get_signed_cookie(
            _cookie_name(slug), salt=_salt(slug), max_age=settings.SESSION_COOKIE_AGE
        )
    except (KeyError, signing.BadSignature):
        return None
    return int(value) if value.isdigit() else None


def participant_bind(response: HttpResponse, *, slug: str, participant_id: int) -> None:
    """Bind the browser to participant ``participant_id`` of study ``slug`` (a fresh cookie)."""
    response.set_signed_cookie(
        _cookie_name(slug),
        str(participant_id),
        salt=_salt(slug),
        max_age=settings.SESSION_COOKIE_AGE,
        path=reverse("participation:entry", kwargs={"slug": slug}),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite=settings.SESSION_COOKIE_SAMESITE,
    )
