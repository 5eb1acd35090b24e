"""The roles the site navigation (``templates/_site_nav.html``) needs, as a context processor.

Lazy: participant pages never show the navigation, so they never pay for the role lookup.
"""
from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from spotlight_study.accounts.roles import is_adjudicator, is_annotator, is_researcher, is_staff_user


def _roles(user) -> dict[str, bool]:
    return {
        "staff": is_staff_user(user),
        "researcher": is_researcher(user),
        "annotation": is_annotator(user) or is_adjudicator(user),
    }


def nav_roles(request: HttpRequest) -> dict:
    """``nav_roles``: ``staff``, ``researcher`` and ``annotation`` (annotator or adjudicator)
    flags of the logged-in user, computed on first use (one groups query per request)."""
    return {"nav_roles": SimpleLazyObject(lambda: _roles(request.user))}
