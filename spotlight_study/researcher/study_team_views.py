"""A study's own team and audit trail (issue 40): ``/researcher/<slug>/team/`` and
``/researcher/<slug>/audit/`` (with ``audit.csv``), for the study's owners and instance staff.

The writes are :mod:`spotlight_study.studies.members` (each recorded in the audit trail); the
trail is read by :mod:`spotlight_study.audit.selectors`.
"""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from spotlight_study.accounts.roles import OWNING, STUDY_ROLES
from spotlight_study.audit.selectors import audit_csv, audit_entries
from spotlight_study.studies.access import study_member_required
from spotlight_study.studies.errors import StudyMemberError
from spotlight_study.studies.members import member_add, member_remove, member_rows

#: Entries shown on the trail page (the CSV has every one).
TRAIL_ROWS_SHOWN = 500


class MemberForm(forms.Form):
    """A username and a role (add or remove)."""

    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=[(r, r) for r in STUDY_ROLES])


def _team_page(request: HttpRequest, form: MemberForm, status: int = 200) -> HttpResponse:
    study = request.study
    return render(
        request,
        "researcher/study_team.html",
        {"study": study, "rows": member_rows(study=study), "form": form, "roles": STUDY_ROLES},
        status=status,
    )


@study_member_required(*OWNING)
@require_http_methods(["GET", "POST"])
def study_team(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the study's members and their roles, with the add form. POST: give an existing user
    a role (400 with the reason, nothing changed, when the rules refuse it)."""
    if request.method == "GET":
        return _team_page(request, MemberForm())
    form = MemberForm(request.POST)
    if not form.is_valid():
        return _team_page(request, form, status=400)
    try:
        member_add(study=request.study, actor=request.user, **form.cleaned_data)
    except StudyMemberError as exc:
        form.add_error(None, str(exc))
        return _team_page(request, form, status=400)
    messages.success(request, f"{form.cleaned_data['username']} is now {form.cleaned_data['role']} of this study.")
    return redirect("researcher:study_team", slug=slug)


@study_member_required(*OWNING)
@require_POST
def study_team_remove(request: HttpRequest, slug: str) -> HttpResponse:
    """Take one role away from a member (``username``, ``role``); their work is kept."""
    form = MemberForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Name a member and one of their roles. Nothing was changed.")
        return redirect("researcher:study_team", slug=slug)
    try:
        member_remove(study=request.study, actor=request.user, **form.cleaned_data)
    except StudyMemberError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{form.cleaned_data['username']} is no longer {form.cleaned_data['role']} of this study.")
    return redirect("researcher:study_team", slug=slug)


@study_member_required(*OWNING)
def study_audit(request: HttpRequest, slug: str) -> HttpResponse:
    """The study's audit trail, newest first (the latest :data:`TRAIL_ROWS_SHOWN`)."""
    entries = list(audit_entries(study_id=request.study.pk)[:TRAIL_ROWS_SHOWN])
    return render(request, "researcher/study_audit.html", {"study": request.study, "entries": entries, "shown": TRAIL_ROWS_SHOWN})


@study_member_required(*OWNING)
def study_audit_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """Download ``<slug>-audit.csv``: every entry of the trail, oldest first, spreadsheet-safe."""
    response = HttpResponse(audit_csv(study_id=request.study.pk), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{request.study.slug}-audit.csv"'
    response["Cache-Control"] = "no-store"
    return response
