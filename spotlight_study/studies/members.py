"""Writes of a study's team: add and remove a member's role, each recorded in the audit trail.

Reads are in :mod:`spotlight_study.studies.access` (who sees what) and :func:`member_rows`.
"""
from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from spotlight_study.accounts.roles import ANNOTATOR, SEES_CONDITIONS, STUDY_ROLES, is_staff_user
from spotlight_study.audit.services import audit_record

from .errors import StudyMemberError
from .models import Study, StudyMember


def _role(role: str) -> str:
    role = (role or "").strip().lower()
    if role not in STUDY_ROLES:
        raise StudyMemberError(f"Unknown role {role!r}: choose one of {', '.join(STUDY_ROLES)}.")
    return role


def member_add(*, study: Study, username: str, role: str, actor=None) -> StudyMember:
    """Give the existing user ``username`` the ``role`` on ``study`` and record it (audit
    ``membership.add``).

    Raises
    ------
    StudyMemberError
        Unknown role or user; the user already holds the role; ``annotator`` for instance staff
        or for a user who sees the study's conditions (owner, researcher or viewer of it), or a
        condition-seeing role for one of its annotators: annotation stays blind. Nothing changes.
    """
    role = _role(role)
    user = User.objects.filter(username=(username or "").strip()).first()
    if user is None:
        raise StudyMemberError(f"There is no user named {username!r}.")
    held = set(StudyMember.objects.filter(study=study, user=user).values_list("role", flat=True))
    if role in held:
        raise StudyMemberError(f"{user.username} is already {role} of {study.slug}; nothing was changed.")
    if role == ANNOTATOR and (is_staff_user(user) or user.is_staff or held & set(SEES_CONDITIONS)):
        raise StudyMemberError(
            f"{user.username} can see this study's conditions, so cannot annotate it blind; "
            "use a separate annotator account."
        )
    if role in SEES_CONDITIONS and ANNOTATOR in held:
        raise StudyMemberError(
            f"{user.username} annotates {study.slug} blind, so cannot also be {role} of it; "
            "remove the annotator role first."
        )
    try:
        with transaction.atomic():
            member = StudyMember.objects.create(study=study, user=user, role=role)
            audit_record(
                action="membership.add", actor=actor, study=study,
                summary=f"{user.username} became {role}.",
                detail={"username": user.username, "role": role},
            )
    except IntegrityError:
        raise StudyMemberError(f"{user.username} is already {role} of {study.slug}; nothing was changed.") from None
    return member


def member_remove(*, study: Study, username: str, role: str | None = None, actor=None) -> list[str]:
    """Take ``role`` (or, with ``None``, every role) on ``study`` away from ``username`` and
    record it (audit ``membership.remove``). Their labels and decisions are kept.

    Returns the roles removed.

    Raises
    ------
    StudyMemberError
        Unknown role, or the user holds no such role on the study (nothing changes).
    """
    role = _role(role) if role is not None else None
    with transaction.atomic():
        rows = StudyMember.objects.select_for_update().filter(study=study, user__username=(username or "").strip())
        if role is not None:
            rows = rows.filter(role=role)
        removed = sorted(rows.values_list("role", flat=True))
        if not removed:
            what = f"{role} of" if role else "a member of"
            raise StudyMemberError(f"{username} is not {what} {study.slug}; nothing was changed.")
        rows.delete()
        audit_record(
            action="membership.remove", actor=actor, study=study,
            summary=f"{username} is no longer {', '.join(removed)}.",
            detail={"username": username, "roles": removed},
        )
    return removed


def member_rows(*, study: Study) -> list[dict]:
    """The study's members for its team page and ``study_members list``: one dict per user
    (``username``, ``roles`` in :data:`STUDY_ROLES` order, ``added_at`` of the first), by username."""
    users: dict[str, dict] = {}
    for m in StudyMember.objects.filter(study=study).select_related("user").order_by("user__username", "added_at"):
        row = users.setdefault(m.user.username, {"username": m.user.username, "roles": [], "added_at": m.added_at})
        row["roles"].append(m.role)
    for row in users.values():
        row["roles"] = [r for r in STUDY_ROLES if r in row["roles"]]
    return list(users.values())


def studies_of_member(*, user, role: str) -> list[Study]:
    """The studies on which ``user`` holds ``role``, by slug."""
    return list(Study.objects.filter(members__user=user, members__role=_role(role)).order_by("slug"))
