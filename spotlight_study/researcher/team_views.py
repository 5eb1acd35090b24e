"""The researcher team page (``/researcher/team/``): add and remove annotators and adjudicators.

Staff only: it creates accounts and hands out password links. The writes are the services of
:mod:`spotlight_study.annotation.team`.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from spotlight_study.accounts.roles import staff_required
from spotlight_study.annotation.errors import TeamError
from spotlight_study.annotation.team import (
    ROLE_LABELS,
    member_get,
    password_set_link,
    team_member_add,
    team_member_create,
    team_member_remove,
    team_rows,
)

from .team_forms import TeamAddForm, TeamRemoveForm


def _duration_words(seconds: int) -> str:
    hours = seconds // 3600
    return f"{hours // 24} days" if hours >= 48 else f"{max(hours, 1)} hours"


def _page(request: HttpRequest, form: TeamAddForm, *, new_member=None, link=None, status=200):
    response = render(
        request,
        "researcher/team.html",
        {
            "rows": team_rows(),
            "form": form,
            "new_member": new_member,
            "link": link,
            "link_valid_for": _duration_words(settings.PASSWORD_RESET_TIMEOUT),
        },
        status=status,
    )
    # The page may carry a password or a set-password link: keep it out of every cache.
    response["Cache-Control"] = "no-store"
    return response


@staff_required
@require_http_methods(["GET", "POST"])
def team(request: HttpRequest) -> HttpResponse:
    """GET: the team and the add form. POST: add a member.

    A new account is shown on the page itself (its set-password link or generated password),
    not through a redirect, so the secret never lands in the message cookie or the session.
    A refused addition shows the form again with the reason (400) and changes nothing.
    """
    if request.method == "GET":
        return _page(request, TeamAddForm())
    form = TeamAddForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    data = form.cleaned_data
    label = ROLE_LABELS[data["role"]]
    try:
        if data["existing"]:
            user = team_member_add(
                username=data["username"], role=data["role"], studies=data["studies"], actor=request.user
            )
        else:
            member = team_member_create(
                username=data["username"],
                role=data["role"],
                email=data["email"],
                generate_password=data["password"] == "generate",
                studies=data["studies"],
                actor=request.user,
            )
    except TeamError as exc:
        form.add_error(None, str(exc))
        return _page(request, form, status=400)
    if data["existing"]:
        messages.success(request, f"{user.username} is now an {label}.")
        return redirect("researcher:team")
    link = None
    if member.password is None:
        link = password_set_link(user=member.user, base_url=request.build_absolute_uri("/"))
    messages.success(request, f"Created the {label} {member.user.username}.")
    return _page(request, TeamAddForm(), new_member=member, link=link)


@staff_required
@require_http_methods(["GET", "POST"])
def team_remove(request: HttpRequest) -> HttpResponse:
    """Take a member out of a role (``user``, ``role``), keeping their labels, after a confirmation.

    GET (the team page's "Remove" button), or a POST without ``confirm``: the confirmation page,
    nothing changed. POST with ``confirm`` (that page's button): the removal, then back to the
    team page with a message. No JavaScript is needed. An unknown user or role goes back to
    the team page with a message, nothing changed.
    """
    form = TeamRemoveForm(request.POST if request.method == "POST" else request.GET)
    user = member_get(pk=form.cleaned_data["user"]) if form.is_valid() else None
    if user is None:
        messages.error(request, "That team member does not exist (any more). Nothing was changed.")
        return redirect("researcher:team")
    role = form.cleaned_data["role"]
    if request.method != "POST" or not form.cleaned_data["confirm"]:
        return render(
            request,
            "researcher/team_remove_confirm.html",
            {"member": user, "role": role, "role_label": ROLE_LABELS[role]},
        )
    try:
        released = team_member_remove(user=user, role=role, actor=request.user)
    except TeamError as exc:
        messages.error(request, str(exc))
        return redirect("researcher:team")
    note = f"; {released} open reservation(s) released to other annotators" if released else ""
    messages.success(
        request,
        f"{user.username} is no longer an {ROLE_LABELS[role]}. Their saved labels are kept{note}.",
    )
    return redirect("researcher:team")
