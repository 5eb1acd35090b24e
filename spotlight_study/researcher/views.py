"""Researcher pages: each study's for its members by role (``studies.access``; non-members get
the 404 of an unknown study, members without the role 403), the study list for anyone with a
researcher role (it lists only their studies).

The preview walks the flow with GET links and records nothing.
"""
from __future__ import annotations

from django.conf import settings as django_settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from spotlight_study.accounts.roles import (
    OWNING,
    READING,
    RUNNING,
    is_adjudicator,
    is_annotator,
    is_researcher,
    researcher_required,
)
from spotlight_study.audit.selectors import audit_entries
from spotlight_study.audit.services import audit_record
from spotlight_study.participation.errors import PilotError
from spotlight_study.participation.pilot import PILOT_MAX_PARTICIPANTS_WEB, pilot_delete, pilot_run
from spotlight_study.participation.selectors import study_dashboard
from spotlight_study.researcher.launch import launch_check
from spotlight_study.researcher.downloads import results_zip
from spotlight_study.researcher.flow_preview import flow_preview_page
from spotlight_study.researcher.forms import MonitorFilterForm
from spotlight_study.researcher import monitor as monitor_selectors
from spotlight_study.researcher.participant_evidence import participant_evidence
from spotlight_study.researcher.planning import study_plan
from spotlight_study.researcher.selectors import (
    analysis_run_latest,
    analysis_runs_recent,
    study_home_rows,
)
from spotlight_study.studies.export import study_file_data, study_file_text
from spotlight_study.studies.access import study_member_required, user_may
from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import drafts_unpublished, study_cells

#: Flagged participants listed on the study page (the export and the API list every one).
FLAGGED_ROWS_SHOWN = 200
#: Audit entries on the study page for its owners (the trail page and its CSV have every one).
AUDIT_ROWS_SHOWN = 10


def study_list(request: HttpRequest) -> HttpResponse:
    """All studies with links to their pages.

    This is where everyone lands after logging in, so annotators and adjudicators who are not
    researchers are sent on to their annotation home, and an account with no role left (e.g.
    taken off the annotation team) gets a page that says so (403) instead of a refusal worded
    for researchers.
    """
    user = request.user
    other_role = is_annotator(user) or is_adjudicator(user)
    if user.is_authenticated and not is_researcher(user):
        if other_role:
            return redirect("annotation:home")
        return render(request, "researcher/no_role.html", status=403)
    return _study_list(request)


@researcher_required
def _study_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "researcher/study_list.html",
        {"rows": study_home_rows(user=request.user), "drafts": drafts_unpublished(user=request.user)},
    )


@never_cache
@study_member_required(*READING, with_settings=True)
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Participants per cell, median time per task and flags, live from the database (never
    cached by the browser, so Back shows them as they are now)."""
    study = request.study
    entry = request.build_absolute_uri(reverse("participation:entry", kwargs={"slug": slug}))
    prolific_link = (
        f"{entry}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        f"&SESSION_ID={{{{%SESSION_ID%}}}}"
    )
    return render(
        request,
        "researcher/study_detail.html",
        {
            "study": study,
            "dash": study_dashboard(study=study, flag_rows=FLAGGED_ROWS_SHOWN),
            "prolific_link": prolific_link,
            "pilot_max": PILOT_MAX_PARTICIPANTS_WEB,
            "latest_run": analysis_run_latest(study=study),
            "analysis_runs": analysis_runs_recent(study=study),
            "launch": _launch_report(request, study),
            "planner": study_plan(study=study, query=request.GET),
            # The owners' part of the page (issue 40): the team and the latest audit entries.
            "owner": (owner := user_may(request.user, study, OWNING)),
            "entries": list(audit_entries(study_id=study.pk)[:AUDIT_ROWS_SHOWN]) if owner else [],
        },
    )


def _launch_report(request: HttpRequest, study: Study):
    # The URL fetch makes the page wait, so it runs only when asked (?launch=full); without a
    # configured public origin it checks the address the researcher is using.
    full = request.GET.get("launch") == "full"
    base = django_settings.PROLIFIC_STUDY_BASE_URL or request.build_absolute_uri("/")
    return launch_check(study=study, base_url=base, check_url=full)


@require_POST
@study_member_required(*RUNNING, with_settings=True)
def pilot(request: HttpRequest, slug: str) -> HttpResponse:
    """Run a pilot of N simulated participants (``action=run``) or delete the pilot data
    (``action=delete``), then back to the study page with a message (POST-redirect-GET)."""
    study = request.study
    back = reverse("researcher:study_detail", kwargs={"slug": slug}) + "#pilot"
    if request.POST.get("action") == "delete":
        deleted = pilot_delete(study=study)
        n = deleted.get("participation.Participant", 0)
        messages.success(request, f"Deleted {n} pilot participant(s) and their data.")
        return redirect(back)
    raw = request.POST.get("participants", "").strip()
    if not raw.isdigit() or not 1 <= int(raw) <= PILOT_MAX_PARTICIPANTS_WEB:
        messages.error(
            request,
            f"Give a number of pilot participants from 1 to {PILOT_MAX_PARTICIPANTS_WEB} "
            "(more with manage.py pilot). Nothing was run.",
        )
        return redirect(back)
    try:
        report = pilot_run(study=study, participants=int(raw))
    except PilotError as exc:
        messages.error(request, f"{exc} Nothing was run.")
        return redirect(back)
    messages.success(
        request,
        f"Pilot: {report.participants} simulated participant(s): {report.summary()} "
        f"(seed {report.seed}).",
    )
    return redirect(back)


def _monitor_context(request: HttpRequest, study: Study) -> tuple[dict, int]:
    form = MonitorFilterForm(request.GET)
    if not form.is_valid():
        return {"study": study, "form": form, "error": form.error_text()}, 400
    filters = form.filters()
    page = monitor_selectors.monitor_page(study=study, filters=filters)
    query = request.GET.copy()
    query.pop("page", None)
    return {
        "study": study,
        "form": form,
        "filters": filters,
        "monitor": page,
        # monitor_page shows the last page for a page past the end; say so rather than let
        # the researcher think the rows they asked for are these.
        "past_end_page": filters.page if filters.page > page.pages else None,
        "page_size": monitor_selectors.PAGE_SIZE,
        "refresh_seconds": monitor_selectors.REFRESH_SECONDS,
        "query": query.urlencode(),
    }, 200


@never_cache
@study_member_required(*READING, with_settings=True)
def monitor(request: HttpRequest, slug: str) -> HttpResponse:
    """The live monitor: one row per participant, filtered by ``status``, ``flag`` and
    ``pilot`` (GET), 200 rows a page; bad filter values give the page with a message (400)."""
    study = request.study
    context, status = _monitor_context(request, study)
    return render(request, "researcher/monitor.html", context, status=status)


@study_member_required(*READING, with_settings=True)
def participant_detail(request: HttpRequest, slug: str, pseudonym: str) -> HttpResponse:
    """One participant's answers with their writing-process evidence and flags, by export
    pseudonym; 404 for an unknown one."""
    study = request.study
    evidence = participant_evidence(study=study, pseudonym=pseudonym)
    if evidence is None:
        raise Http404("No participant of this study has that pseudonym.")
    return render(request, "researcher/participant.html", {"study": study, "evidence": evidence})


@study_member_required(*READING, with_settings=True)
def monitor_rows(request: HttpRequest, slug: str) -> HttpResponse:
    """The monitor's ``<tbody>`` alone, for the page's auto-refresh (same GET parameters)."""
    study = request.study
    context, status = _monitor_context(request, study)
    response = render(request, "researcher/_monitor_rows.html", context, status=status)
    response["Cache-Control"] = "no-store"
    return response


@study_member_required(*RUNNING, with_settings=True)
def export_zip(request: HttpRequest, slug: str) -> HttpResponse:
    """Download ``<slug>-export.zip``: the three CSV files of ``export_results``,
    ``participants_wide.csv`` and ``README.txt``. Pilot data only with ``?include_pilot=1``."""
    study = request.study
    raw = request.GET.get("include_pilot", "0")
    if raw not in ("0", "1", ""):
        messages.error(
            request,
            "include_pilot must be 1 (with the pilot) or 0 (without). Nothing was downloaded.",
        )
        return redirect(reverse("researcher:study_detail", kwargs={"slug": slug}) + "#downloads")
    include_pilot = raw == "1"
    name = f"{study.slug}-export{'-with-pilot' if include_pilot else ''}.zip"
    response = HttpResponse(
        results_zip(study=study, include_pilot=include_pilot), content_type="application/zip"
    )
    audit_record(
        action="export.download", actor=request.user, study=study, summary=f"Downloaded {name}.",
        detail={"file": name, "include_pilot": include_pilot},
    )
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["Cache-Control"] = "no-store"
    return response


@study_member_required(*OWNING, with_settings=True)
def study_file(request: HttpRequest, slug: str) -> HttpResponse:
    """Download ``<slug>.yaml``: the study file ``manage.py export_study`` writes, which
    ``import_study`` reads back into the same study (settings built on the Stimuli pages
    included). Staff only: the file holds the completion codes and everything participants see."""
    study = request.study
    try:
        text = study_file_text(study_file_data(study))
    except ValueError as exc:  # no training setting: nothing importable to give
        messages.error(request, f"{exc} Nothing was downloaded.")
        return redirect(reverse("researcher:study_detail", kwargs={"slug": slug}) + "#downloads")
    audit_record(
        action="export.download", actor=request.user, study=study,
        summary=f"Downloaded the study file {study.slug}.yaml.", detail={"file": f"{study.slug}.yaml"},
    )
    response = HttpResponse(text.encode("utf-8"), content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}.yaml"'
    response["Cache-Control"] = "no-store"
    return response


@study_member_required(*READING, with_settings=True)
def preview_index(request: HttpRequest, slug: str) -> HttpResponse:
    """The study's cells, each with a link to walk its flow."""
    study = request.study
    return render(request, "researcher/preview_index.html", {"study": study, "cells": study_cells(study)})


@study_member_required(*READING, with_settings=True)
def preview_page(request: HttpRequest, slug: str, cell: int, page: str) -> HttpResponse:
    """One page of the flow as a participant in ``cell`` would see it, through the step's spec
    (:func:`spotlight_study.participation.steps.preview`), in the study's language. Records
    nothing."""
    return flow_preview_page(
        request, request.study, cell=cell, page=page,
        home_url=reverse("researcher:preview", kwargs={"slug": slug}), page_url_name="researcher:preview_page",
    )
