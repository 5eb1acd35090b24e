"""Who may do what: staff, and the ``annotators``, ``adjudicators`` and ``researchers`` groups.

The one place where access rules live; every app's views, the site navigation and both JSON
APIs ask here.

- **Staff** (``is_staff``, active) run the study: the stimulus pages, the team page and the
  researcher REST API (:class:`IsStaff`, the rule DRF's ``IsAdminUser`` applied before).
- **Researchers** are staff or members of ``researchers``: the researcher pages, the Prolific
  review pages and the annotation overview.
- **Adjudicators** are staff or members of ``adjudicators``.
- **Annotators** are members of ``annotators``, and only they: staff are not blind (they can see
  conditions), so being staff is not enough. The annotator JSON API uses :class:`IsAnnotator`.

A user who is not logged in is sent to the login page by the view decorators; a logged-in user
without the role gets 403, never a redirect that could reveal where they were going.
"""
from __future__ import annotations

from functools import wraps
from typing import Callable

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from rest_framework import permissions

ANNOTATORS = "annotators"
ADJUDICATORS = "adjudicators"
RESEARCHERS = "researchers"
GROUPS = (ANNOTATORS, ADJUDICATORS, RESEARCHERS)


def _in_group(user, name: str) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    # One groups query per user object (i.e. per request), however many checks a page makes.
    cache = getattr(user, "_spotlight_groups", None)
    if cache is None:
        cache = set(user.groups.values_list("name", flat=True))
        user._spotlight_groups = cache
    return name in cache


def is_staff_user(user) -> bool:
    """Logged in, active and staff (``is_staff``)."""
    return bool(user and user.is_authenticated and user.is_active and user.is_staff)


def is_annotator(user) -> bool:
    """Member of ``annotators`` (and active)."""
    return _in_group(user, ANNOTATORS)


def is_adjudicator(user) -> bool:
    """Member of ``adjudicators``, or staff."""
    return is_staff_user(user) or _in_group(user, ADJUDICATORS)


def is_researcher(user) -> bool:
    """Staff, or member of ``researchers``."""
    return is_staff_user(user) or _in_group(user, RESEARCHERS)


def role_required(check: Callable[[object], bool]) -> Callable:
    """View decorator from a role check such as :func:`is_researcher`: anonymous users go to the
    login page, logged-in users without the role get 403 (``PermissionDenied``)."""

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


staff_required = role_required(is_staff_user)
annotator_required = role_required(is_annotator)
adjudicator_required = role_required(is_adjudicator)
researcher_required = role_required(is_researcher)


class IsStaff(permissions.BasePermission):
    """DRF permission of the researcher API (its default, ``REST_FRAMEWORK`` settings): staff
    only (:func:`is_staff_user`).

    The API's rule is staff, not :func:`is_researcher`: members of ``researchers`` who are not
    staff use the pages, not the API. This is the rule of DRF's ``IsAdminUser`` used before;
    the added ``is_active`` check changes nothing because authentication already refuses
    inactive users.
    """

    def has_permission(self, request, view) -> bool:
        """Whether the request's user is staff."""
        return is_staff_user(request.user)


class IsAnnotator(permissions.BasePermission):
    """DRF permission of the annotator JSON API: logged in and a member of ``annotators``."""

    message = "Only annotators may use this endpoint."

    def has_permission(self, request, view) -> bool:
        """Whether the request's user is an annotator (:func:`is_annotator`)."""
        return is_annotator(request.user)
