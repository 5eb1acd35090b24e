"""The analysis pages: start a run, follow it, read its report, figures and tables, download it.

Every file is read from the ``analysis`` storage (:mod:`.analysis_storage`) through these views,
never from a public media URL, so any server answers and the access check is the view's: each
view has one decorator, ``study_member_required`` (the study's owners, researchers and
viewers read; owners and researchers start a run), the only access check, and names only
files listed in the run's manifest (``AnalysisRun.files``).
"""
from __future__ import annotations

import mimetypes

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from spotlight_study.accounts.roles import READING, RUNNING
from spotlight_study.studies.access import study_member_required

from .analysis_jobs import analysis_job_create
from .analysis_storage import output_open, outputs_zip
from .errors import AnalysisBusyError
from .models import AnalysisRun
from .selectors import analysis_run_get, analysis_run_latest, analysis_run_progress

#: The report may show only itself: its figures are embedded (data: URIs), its style inline.
REPORT_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
#: A stored figure or table opened alone: no script, nothing loaded (an SVG can hold a script).
FILE_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox"


@require_POST
@study_member_required(*RUNNING, with_settings=True)
def analysis_start(request: HttpRequest, slug: str) -> HttpResponse:
    """Start an analysis run in the background ("Run analysis"); back to the study page, which
    shows its progress. ``include_pilot=1`` analyses the pilot participants too. A second run
    while one is queued or running is refused with a message."""
    study = request.study
    back = reverse("researcher:study_detail", kwargs={"slug": slug}) + "#analysis"
    raw = request.POST.get("include_pilot", "0")
    if raw not in ("0", "1"):
        messages.error(request, "include_pilot must be 1 (with the pilot) or 0. Nothing was started.")
        return redirect(back)
    try:
        run = analysis_job_create(study=study, origin=AnalysisRun.Origin.PAGE,
                                  created_by=request.user, include_pilot=raw == "1")
    except AnalysisBusyError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    messages.success(request, f"Analysis run {run.pk} started; its progress shows below.")
    return redirect(back)


def _run_or_404(study, run_id: int) -> AnalysisRun:
    try:
        return analysis_run_get(study=study, run_id=run_id)
    except AnalysisRun.DoesNotExist:
        raise Http404("No analysis run of this study has that number.") from None


@study_member_required(*READING)
def analysis_progress(request: HttpRequest, slug: str, run_id: int) -> JsonResponse:
    """A run's progress as JSON (:func:`~.selectors.analysis_run_progress`), polled by the page."""
    run = _run_or_404(request.study, run_id)
    response = JsonResponse(analysis_run_progress(run))
    response["Cache-Control"] = "no-store"
    return response


@study_member_required(*READING)
def analysis_run_detail(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    """One run: when, who, what it analysed (input SHA-256, plan hash, software versions), its
    progress or error, its report, figures and tables, and the zip."""
    study = request.study
    run = _run_or_404(study, run_id)
    figures = [f["name"] for f in run.files
               if f["name"].startswith("figures/") and f["name"].endswith(".png")]
    return render(request, "researcher/analysis_run.html", {
        "study": study, "run": run, "progress": analysis_run_progress(run), "figures": figures,
    })


def _stored_response(run: AnalysisRun, name: str, *, csp: str) -> FileResponse:
    """``name`` of ``run`` from the storage, or 404 if the run has no such file (or the storage
    lost it)."""
    if name not in {f["name"] for f in run.files}:
        raise Http404("This run has no such file.")
    try:
        handle = output_open(prefix=run.storage_prefix, name=name)
    except (FileNotFoundError, OSError):
        raise Http404("The file is missing from the analysis storage.") from None
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    if content_type.startswith("text/") or content_type in ("application/json", "image/svg+xml"):
        content_type += "; charset=utf-8"
    response = FileResponse(handle, content_type=content_type)
    response["Content-Security-Policy"] = csp
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response


@study_member_required(*READING)
def analysis_report(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    """The run's ``report.html`` (figures and tables embedded); 404 before the run succeeded."""
    run = _run_or_404(request.study, run_id)
    return _stored_response(run, "report.html", csp=REPORT_CSP)


@study_member_required(*READING)
def analysis_file(request: HttpRequest, slug: str, run_id: int, name: str) -> HttpResponse:
    """One stored output of the run by its name in the manifest (``figures/likert.svg``,
    ``tables/identification.csv``, ``results.json``, ...); 404 for any other name."""
    run = _run_or_404(request.study, run_id)
    return _stored_response(run, name, csp=FILE_CSP)


@study_member_required(*READING)
def analysis_zip(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    """Download every stored output of the run as ``<slug>-analysis-<id>.zip``."""
    run = _run_or_404(request.study, run_id)
    if not run.files:
        raise Http404("This run has stored no files (it has not succeeded).")
    folder = f"{run.study.slug}-analysis-{run.pk}"
    try:
        body = outputs_zip(prefix=run.storage_prefix, names=[f["name"] for f in run.files],
                           folder=folder)
    except (FileNotFoundError, OSError):
        raise Http404("A file of this run is missing from the analysis storage.") from None
    response = HttpResponse(body, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{folder}.zip"'
    response["Cache-Control"] = "no-store"
    return response


@study_member_required(*READING)
def latest_report(request: HttpRequest, slug: str) -> HttpResponse:
    """The report of the study's newest succeeded run, from whichever server or command started
    it; a page saying there is none yet (404) before the first."""
    study = request.study
    run = analysis_run_latest(study=study)
    if run is None:
        return render(request, "researcher/no_report.html", {"study": study}, status=404)
    return _stored_response(run, "report.html", csp=REPORT_CSP)
