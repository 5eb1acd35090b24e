"""Who may do what: the ``annotators``, ``adjudicators`` and ``researchers`` groups.

Staff users act as researchers and as adjudicators. Annotating needs membership of
``annotators``: staff are not blind (they can see conditions), so being staff is not enough.
"""

from __future__ import annotations

from functools import wraps
from typing import Callable

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

ANNOTATORS = "annotators"
ADJUDICATORS = "adjudicators"
RESEARCHERS = "researchers"
GROUPS = (ANNOTATORS, ADJUDICATORS, RESEARCHERS)


def _in_group(user, name: str) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    cache = getattr(user, "_spotlight_groups", None)
    if cache is None:
        cache = set(user.groups.values_list("name", flat=True))
        user._spotlight_groups = cache
    return name in cache


def is_annotator(user) -> bool:
    """Member of ``annotators`` (and active)."""
    return _in_group(user, ANNOTATORS)


def is_adjudicator(user) -> bool:
    """Member of ``adjudicators``, or staff."""
    return bool(user.is_authenticated and user.is_active and user.is_staff) or _in_group(
        user, ADJUDICATORS
    )


def is_researcher(user) -> bool:
    """Staff, or member of ``researchers``."""
    return bool(user.is_authenticated and user.is_active and user.is_staff) or _in_group(
        user, RESEARCHERS
    )


def role_required(check: Callable[[object], bool]) -> Callable:
    """View decorator: anonymous users go to the login page, logged-in users without the role
    get 403 (``PermissionDenied``), never a redirect that could reveal where they were going."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not check(request.user):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


annotator_required = role_required(is_annotator)
adjudicator_required = role_required(is_adjudicator)
researcher_required = role_required(is_researcher)
