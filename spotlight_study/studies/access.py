"""Who may see which study: the ONE study-scoped access check (issue 40).

Every page, API view and admin page that is about one study asks here:

- :func:`studies_visible_to` ``(user, roles=None)``: the studies a user may see (instance staff:
  all; everyone else: those they hold one of ``roles`` on; for lists, querysets and the admin);
- :func:`study_for_user` ``(*, user, slug, roles, with_settings=False)``: one study by slug, or
  ``Http404`` when the user is no member (the same 404 as for a slug that does not exist, so a
  non-member learns nothing), or ``PermissionDenied`` (403) when the user is a member without
  one of ``roles``;
- :func:`study_member_required` ``(*roles, with_settings=False)``: the view decorator built on
  it for views whose URL has ``<slug>``; it puts the study on ``request.study``.

Instance staff (``accounts.roles.is_staff_user``: superusers and ``lab admins``) pass every role
except ``annotator``: staff see conditions, so they are never blind annotators. Role sets to
pass are in :mod:`spotlight_study.accounts.roles` (``READING``, ``RUNNING``, ``OWNING``,
``ANNOTATING``, ``ADJUDICATING``).
"""
from __future__ import annotations

from functools import wraps
from typing import Iterable

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from spotlight_study.accounts.roles import ANNOTATOR, STUDY_ROLES, is_staff_user

from .models import Study, StudyDraft, StudyMember
from .selectors import studies_with_settings


def _check_roles(roles: Iterable[str]) -> tuple[str, ...]:
    roles = tuple(roles) or STUDY_ROLES
    unknown = set(roles) - set(STUDY_ROLES)
    if unknown:
        raise ValueError(f"Unknown study roles {sorted(unknown)}; choose from {STUDY_ROLES}.")
    return roles


def _staff_passes(user, roles: tuple[str, ...]) -> bool:
    return is_staff_user(user) and any(r != ANNOTATOR for r in roles)


def studies_visible_to(user, roles: Iterable[str] = ()) -> QuerySet[Study]:
    """The studies ``user`` may see holding one of ``roles`` (all roles when empty).

    Instance staff get every study (unless ``roles`` is only ``annotator``); anyone else the
    studies where they hold one of ``roles``; an anonymous or inactive user none. A queryset,
    so callers may order, filter and prefetch it.

    Raises
    ------
    ValueError
        If a role is not one of ``accounts.roles.STUDY_ROLES``.
    """
    roles = _check_roles(roles)
    if _staff_passes(user, roles):
        return Study.objects.all()
    if not user or not user.is_authenticated or not user.is_active:
        return Study.objects.none()
    return Study.objects.filter(
        pk__in=StudyMember.objects.filter(user=user, role__in=roles).values("study_id")
    )


def user_study_roles(user, study: Study) -> frozenset[str]:
    """The roles ``user`` holds on ``study`` (as members; instance staff hold none by this)."""
    if not user or not user.is_authenticated or not user.is_active:
        return frozenset()
    return frozenset(
        StudyMember.objects.filter(user=user, study=study).values_list("role", flat=True)
    )


def user_may(user, study: Study, roles: Iterable[str]) -> bool:
    """Whether ``user`` holds one of ``roles`` on ``study`` (instance staff: every role but
    ``annotator``). For templates that show or hide a button; views use the decorator."""
    roles = _check_roles(roles)
    return _staff_passes(user, roles) or bool(user_study_roles(user, study) & set(roles))


def study_for_user(*, user, slug: str, roles: Iterable[str], with_settings: bool = False) -> Study:
    """The study ``slug`` if ``user`` may see it holding one of ``roles``.

    Parameters
    ----------
    user : User
        The request's user (logged in: callers send anonymous users to the login page first).
    slug : str
    roles : iterable of str
        Roles that pass (``accounts.roles`` role sets); instance staff pass all but annotator.
    with_settings : bool
        Prefetch the settings and patterns (two extra queries), as ``study_get`` does.

    Raises
    ------
    Http404
        ``No study with slug '<slug>'.`` when the study does not exist *or* the user is no member
        of it (the same message, so that a non-member cannot tell the two apart).
    PermissionDenied
        When the user is a member of the study but holds none of ``roles``, or is instance
        staff and ``roles`` is only ``annotator``.
    """
    roles = _check_roles(roles)
    queryset = studies_with_settings() if with_settings else Study.objects.all()
    study = queryset.filter(slug=slug).first()
    if study is not None and _staff_passes(user, roles):
        return study
    if study is not None and is_staff_user(user):
        raise PermissionDenied  # staff see every study, but never annotate one
    held = user_study_roles(user, study) if study is not None else frozenset()
    if not held:
        raise Http404(f"No study with slug '{slug}'.")
    if not held & set(roles):
        raise PermissionDenied
    return study


def study_member_required(*roles: str, with_settings: bool = False):
    """View decorator for a view whose URL carries ``slug``: anonymous users go to the login
    page (before any lookup, so no study's existence shows), then :func:`study_for_user` decides
    (404 for non-members and unknown slugs, 403 for members without one of ``roles``). The study
    is put on ``request.study``; the view keeps its ``slug`` argument.

    Raises ``ValueError`` at import time for an unknown role.
    """
    checked = _check_roles(roles)

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            request.study = study_for_user(
                user=request.user, slug=kwargs["slug"], roles=checked, with_settings=with_settings
            )
            return view(request, *args, **kwargs)

        wrapper.study_roles = checked
        return wrapper

    return decorator


def builder_member_required(*roles: str):
    """View decorator for the study builder's pages of ``slug`` (``/researcher/<slug>/edit/``):
    a published study is checked as :func:`study_member_required` checks it (404 for
    non-members, 403 for members without one of ``roles``); a draft of a study not published
    yet is open to instance staff and to the user who started it, and is the same 404 as an
    unknown slug to anyone else. Anonymous users go to the login page first.

    Raises ``ValueError`` at import time for an unknown role.
    """
    checked = _check_roles(roles)

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            slug = kwargs["slug"]
            if Study.objects.filter(slug=slug).exists():
                study_for_user(user=request.user, slug=slug, roles=checked)
            else:
                starter = StudyDraft.objects.filter(slug=slug).values_list("created_by_id", flat=True).first()
                if not (is_staff_user(request.user) or (starter is not None and starter == request.user.pk)):
                    raise Http404(f"No study with slug '{slug}'.")
            return view(request, *args, **kwargs)

        wrapper.study_roles = checked
        return wrapper

    return decorator
