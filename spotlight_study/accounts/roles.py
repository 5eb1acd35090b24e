"""Who may do what: instance staff, and each study's members with their roles (issue 40).

The instance-wide half of the access rules; the study-scoped half (a study's members, the
decorator ``study_member_required`` and the selector ``studies_visible_to``) is
:mod:`spotlight_study.studies.access`, which builds on the predicates here.

- **Instance staff** (:func:`is_staff_user`) are the superusers and the members of the
  ``lab admins`` group: they see and run every study, the stimulus pages and the team page.
  ``is_staff`` alone (Django's admin flag) no longer makes anyone instance staff; the migration
  that introduced study members put every ``is_staff`` user of the time into ``lab admins``.
- **Members** of a study (``studies.StudyMember``) hold one or more of :data:`STUDY_ROLES`
  on it; the predicates below say whether a user holds a role on *some* study (for the site
  navigation and the pages that list studies), never which.
- **Researchers** are instance staff or owners, researchers or viewers of some study.
- **Adjudicators** are instance staff or adjudicators of some study.
- **Annotators** are annotators of some study, and only they: staff are not blind (they can see
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
# The global group of instance staff besides the superusers.
LAB_ADMINS = "lab admins"

# A study member's roles (``studies.StudyMember.role``), most powerful first.
OWNER = "owner"
RESEARCHER = "researcher"
ADJUDICATOR = "adjudicator"
ANNOTATOR = "annotator"
VIEWER = "viewer"
STUDY_ROLES = (OWNER, RESEARCHER, ADJUDICATOR, ANNOTATOR, VIEWER)
# Which roles a page or API operation accepts; instance staff pass every set except ANNOTATING.
READING = (OWNER, RESEARCHER, VIEWER)  # researcher pages that only show (no participant data out)
RUNNING = (OWNER, RESEARCHER)  # changes, downloads, Prolific review, the API
OWNING = (OWNER,)  # members, the audit trail, the study's credentials
ANNOTATING = (ANNOTATOR,)
ADJUDICATING = (ADJUDICATOR,)
# The roles that see conditions: an annotator of a study may hold none of them there.
SEES_CONDITIONS = (OWNER, RESEARCHER, VIEWER)


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
    """Instance staff: logged in, active, and a superuser or a member of ``lab admins``."""
    if not (user and user.is_authenticated and user.is_active):
        return False
    return bool(user.is_superuser) or _in_group(user, LAB_ADMINS)


def member_roles(user) -> frozenset[str]:
    """The roles ``user`` holds on any study (empty for anonymous or inactive users).

    Read through the reverse accessor ``study_memberships`` of ``studies.StudyMember`` (this
    module sits below ``studies`` and imports none of it); one query per user object.
    """
    if not user or not user.is_authenticated or not user.is_active:
        return frozenset()
    cache = getattr(user, "_spotlight_member_roles", None)
    if cache is None:
        cache = frozenset(user.study_memberships.values_list("role", flat=True).distinct())
        user._spotlight_member_roles = cache
    return cache


def is_annotator(user) -> bool:
    """Annotator of some study (and active)."""
    return ANNOTATOR in member_roles(user)


def is_adjudicator(user) -> bool:
    """Instance staff, or adjudicator of some study."""
    return is_staff_user(user) or ADJUDICATOR in member_roles(user)


def is_researcher(user) -> bool:
    """Instance staff, or owner, researcher or viewer of some study."""
    return is_staff_user(user) or bool(member_roles(user) & set(READING))


def is_study_runner(user) -> bool:
    """Instance staff, or owner or researcher of some study: who may start a new study in the
    builder (and use the researcher API)."""
    return is_staff_user(user) or bool(member_roles(user) & set(RUNNING))


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
study_runner_required = role_required(is_study_runner)


class IsStaff(permissions.BasePermission):
    """DRF permission of the instance-wide parts of the researcher API (the stimulus
    endpoints, the schema and its docs): instance staff only (:func:`is_staff_user`)."""

    def has_permission(self, request, view) -> bool:
        """Whether the request's user is instance staff."""
        return is_staff_user(request.user)


class IsStudyRunner(permissions.BasePermission):
    """DRF permission of the researcher API (its default, ``REST_FRAMEWORK`` settings): instance
    staff, or an owner or researcher of some study. Which studies a user reaches is decided per
    request by ``studies.access`` (lists filtered, other studies 404)."""

    def has_permission(self, request, view) -> bool:
        """Whether the request's user is instance staff or runs some study."""
        return is_study_runner(request.user)


class IsAnnotator(permissions.BasePermission):
    """DRF permission of the annotator JSON API: logged in and a member of ``annotators``."""

    message = "Only annotators may use this endpoint."

    def has_permission(self, request, view) -> bool:
        """Whether the request's user is an annotator (:func:`is_annotator`)."""
        return is_annotator(request.user)
