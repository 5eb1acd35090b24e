"""The annotation team: annotator and adjudicator accounts and their group membership.

Used by ``manage.py add_annotator`` and the researcher team page (``/researcher/team/``).
Members are ordinary, non-staff users in the ``annotators`` or ``adjudicators`` group (the
accounts of the annotation team); which studies they work on is their study membership
(``studies.StudyMember``, :mod:`spotlight_study.studies.members`), not the group. Staff are
never annotators because they can see conditions and so are not blind. Removing a member takes
the user out of the group and out of that role on every study, and keeps every label they saved.

Passwords are never chosen by the researcher: a new member gets a one-time link to set one
(Django's password-reset tokens, :class:`django.contrib.auth.tokens.PasswordResetTokenGenerator`)
or, on request, a generated password shown once.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, Prefetch
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from .errors import TeamError
from .models import Assignment
from spotlight_study.accounts.roles import ADJUDICATOR, ADJUDICATORS, ANNOTATOR, ANNOTATORS
from spotlight_study.studies.errors import StudyMemberError
from spotlight_study.studies.members import member_add, member_remove, studies_of_member

TEAM_ROLES = (ANNOTATORS, ADJUDICATORS)
# The study role (studies.StudyMember.role) a team group's member gets on a study.
STUDY_ROLE = {ANNOTATORS: ANNOTATOR, ADJUDICATORS: ADJUDICATOR}
ROLE_LABELS = {ANNOTATORS: "annotator", ADJUDICATORS: "adjudicator"}


@dataclass(frozen=True)
class NewMember:
    """A member created by :func:`team_member_create`.

    ``password`` is the generated password (shown once) or ``None`` when the member is to set
    one through :func:`password_set_link`.
    """

    user: User
    role: str
    password: str | None


@dataclass(frozen=True)
class TeamRow:
    """One user on the team page: their roles and how many labels they saved."""

    user: User
    roles: tuple[str, ...]
    labels_saved: int
    adjudications: int


def role_group(role: str) -> Group:
    """The ``Group`` of ``role`` (``annotators`` or ``adjudicators``), created if missing.

    Raises
    ------
    TeamError
        If ``role`` is not a team role.
    """
    if role not in TEAM_ROLES:
        raise TeamError(f"Unknown role {role!r}: choose {' or '.join(TEAM_ROLES)}.")
    return Group.objects.get_or_create(name=role)[0]


def _check_new_username(username: str) -> str:
    username = (username or "").strip()
    field = User._meta.get_field("username")
    try:
        field.clean(username, None)
    except ValidationError as exc:
        raise TeamError(f"Username {username!r} is not valid: {' '.join(exc.messages)}") from None
    if User.objects.filter(username__iexact=username).exists():
        raise TeamError(f"A user named {username!r} already exists; nothing was changed.")
    return username


def team_member_create(
    *, username: str, role: str, email: str = "", generate_password: bool = False,
    studies=(), actor=None,
) -> NewMember:
    """Create a non-staff user in the group of ``role``.

    Parameters
    ----------
    username : str
        New username (Django's username rules); compared case-insensitively with existing ones.
    role : {"annotators", "adjudicators"}
    email : str
        Optional e-mail address, validated.
    generate_password : bool
        Give the user a random password (returned once in :attr:`NewMember.password`); otherwise
        the password is unusable until set through :func:`password_set_link`.
    studies : iterable of Study
        Studies the new user becomes a member of with the role (``annotator`` or
        ``adjudicator``), each recorded in the audit trail with ``actor`` as its author.

    Returns
    -------
    NewMember

    Raises
    ------
    TeamError
        If the username is taken or invalid, the e-mail invalid or the role unknown. Nothing is
        created then.
    """
    group = role_group(role)
    username = _check_new_username(username)
    email = (email or "").strip()
    if email:
        try:
            User._meta.get_field("email").clean(email, None)
        except ValidationError as exc:
            raise TeamError(f"E-mail {email!r} is not valid: {' '.join(exc.messages)}") from None
    password = secrets.token_urlsafe(12) if generate_password else None
    try:
        with transaction.atomic():
            user = User(username=username, email=email, is_staff=False, is_superuser=False)
            if password:
                user.set_password(password)
            else:
                user.set_unusable_password()
            user.save()
            user.groups.add(group)
            for study in studies:
                member_add(study=study, username=user.username, role=STUDY_ROLE[role], actor=actor)
    except IntegrityError:
        # Someone created the same username between the check and the insert.
        raise TeamError(f"A user named {username!r} already exists; nothing was changed.") from None
    except StudyMemberError as exc:
        raise TeamError(str(exc)) from None
    return NewMember(user=user, role=role, password=password)


def team_member_add(*, username: str, role: str, studies=(), actor=None) -> User:
    """Put the existing user ``username`` in the group of ``role`` (e.g. to bring back a member),
    and make them a member of ``studies`` with that role (audited, author ``actor``).

    Raises
    ------
    TeamError
        If there is no such user, the user is staff and ``role`` is ``annotators`` (staff see
        conditions, so they cannot annotate blind), or the user is already in the group.
    """
    group = role_group(role)
    user = User.objects.filter(username=(username or "").strip()).first()
    if user is None:
        raise TeamError(f"There is no user named {username!r}.")
    if role == ANNOTATORS and (user.is_staff or user.is_superuser):
        raise TeamError(
            f"{user.username} is staff and can see conditions, so cannot annotate blind; "
            "create a separate annotator account."
        )
    if user.groups.filter(pk=group.pk).exists():
        raise TeamError(f"{user.username} is already an {ROLE_LABELS[role]}.")
    try:
        with transaction.atomic():
            user.groups.add(group)
            for study in studies:
                member_add(study=study, username=user.username, role=STUDY_ROLE[role], actor=actor)
    except StudyMemberError as exc:
        raise TeamError(str(exc)) from None
    return user


def team_member_remove(*, user: User, role: str, now=None, actor=None) -> int:
    """Take ``user`` out of the group of ``role`` and out of that role on every study (each
    removal recorded in the audit trail, author ``actor``), keeping their labels and adjudications.

    An annotator's open reservations are released at once, so the items they held go to other
    annotators without waiting for the reservation timeout.

    Returns
    -------
    int
        Number of reservations released.

    Raises
    ------
    TeamError
        If the role is unknown or the user is not in the group.
    """
    group = role_group(role)
    now = now or timezone.now()
    with transaction.atomic():
        if not user.groups.filter(pk=group.pk).exists():
            raise TeamError(f"{user.username} is not an {ROLE_LABELS[role]}; nothing was changed.")
        user.groups.remove(group)
        for study in studies_of_member(user=user, role=STUDY_ROLE[role]):
            member_remove(study=study, username=user.username, role=STUDY_ROLE[role], actor=actor)
        released = 0
        if role == ANNOTATORS:
            released = Assignment.objects.filter(
                annotator=user, state=Assignment.State.RESERVED
            ).update(state=Assignment.State.RELEASED, expires_at=now)
    return released


def password_set_link(*, user: User, base_url: str) -> str:
    """An absolute one-time link at which ``user`` sets a password.

    The token comes from Django's :class:`~django.contrib.auth.tokens.PasswordResetTokenGenerator`
    (``default_token_generator``): it stops working once the password is set (the token hashes
    the password and last login) and after ``PASSWORD_RESET_TIMEOUT`` seconds (Django default:
    3 days). The link points at ``/accounts/reset/<uidb64>/<token>/``.

    Parameters
    ----------
    user : User
    base_url : str
        Scheme and host the member will use, e.g. ``https://study.example.org``.
    """
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    path = reverse("password_reset_confirm", kwargs={"uidb64": uidb64, "token": token})
    return base_url.rstrip("/") + path


def team_rows() -> list[TeamRow]:
    """Members of ``annotators`` and ``adjudicators`` with their label counts, by username.

    Three queries, whatever the team size: the users with their label and adjudication counts,
    and their groups (prefetched).
    """
    users = (
        User.objects.filter(groups__name__in=TEAM_ROLES)
        .distinct()
        .annotate(
            n_labels=Count("annotations", distinct=True),
            n_adjudications=Count("adjudications", distinct=True),
        )
        .prefetch_related(Prefetch("groups", queryset=Group.objects.filter(name__in=TEAM_ROLES)))
        .order_by("username")
    )
    return [
        TeamRow(
            user=u,
            roles=tuple(sorted(g.name for g in u.groups.all())),
            labels_saved=u.n_labels,
            adjudications=u.n_adjudications,
        )
        for u in users
    ]


def member_get(*, pk: int) -> User | None:
    """The user ``pk`` if they are in a team group, else ``None``."""
    return User.objects.filter(pk=pk, groups__name__in=TEAM_ROLES).distinct().first()
