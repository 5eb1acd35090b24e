"""Stimulus preparation pages for staff: import or generate outputs, mine, build a setting.

Views validate input with a form, call one service or selector, and render. Long jobs are only
queued here (see :mod:`spotlight_study.stimuli.jobs.runner`); pages of running jobs refresh themselves
and ``progress.json`` gives the same progress as JSON.
"""
from __future__ import annotations

from django.contrib import messages
from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from spotlight_study.accounts.roles import staff_required

from . import selectors, services
from .forms import GenerationForm, ImportForm, MiningForm, SettingBuildForm
from .errors import JobStateError, OutputImportError, SettingBuildError, StimuliError
from .importers import ImportOptions
from .mining import premise_problem_here
from .models import StimulusSet
from .tokenize import pipeline_label


def _validation_messages(exc: ValidationError) -> list[str]:
    if hasattr(exc, "message_dict"):
        return [f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items()]
    return list(exc.messages)


@staff_required
@require_GET
def stimulus_set_list(request: HttpRequest) -> HttpResponse:
    """All stimulus sets with their output counts, and the progress of the jobs still running."""
    return render(
        request,
        "stimuli/set_list.html",
        {"sets": selectors.stimulus_set_list(), "active_jobs": selectors.active_jobs()},
    )


@staff_required
def import_outputs(request: HttpRequest) -> HttpResponse:
    """Upload outputs; on any problem the form comes back with the message and nothing is stored.

    A file over the size or line limit is refused before it is parsed; a large file is read by
    a background import job, whose progress the set's page shows.
    """
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        options = ImportOptions(
            format=d["format"],
            column=d["column"],
            group_column=d["group_column"],
            group1_value=d["group1_value"],
            group2_value=d["group2_value"],
            max_bytes=settings.STIMULI_MAX_UPLOAD_BYTES,
            max_lines=settings.STIMULI_MAX_UPLOAD_LINES,
        )
        try:
            stimulus_set, job = services.stimulus_set_import_start(
                title=d["title"],
                file1=d["file1"],
                file2=d.get("file2"),
                options=options,
                created_by=request.user,
            )
        except OutputImportError as exc:
            form.add_error(None, str(exc))
        except ValidationError as exc:
            for msg in _validation_messages(exc):
                form.add_error(None, msg)
        else:
            if job is None:
                messages.success(request, f"Imported {stimulus_set.outputs.count()} outputs.")
            else:
                messages.success(request, "Import queued: the files are read in the background.")
            return redirect("stimuli:set_detail", pk=stimulus_set.pk)
    return render(request, "stimuli/import.html", {"form": form})


@staff_required
def generate_outputs(request: HttpRequest) -> HttpResponse:
    """Queue a generation job; the page of its stimulus set shows the progress."""
    form = GenerationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            job = services.generation_job_create(created_by=request.user, **form.cleaned_data)
        except ValidationError as exc:
            for msg in _validation_messages(exc):
                form.add_error(None, msg)
        else:
            messages.success(request, "Generation queued.")
            return redirect("stimuli:set_detail", pk=job.stimulus_set_id)
    return render(
        request,
        "stimuli/generate.html",
        {"form": form, "base_url": settings.OPENAI_BASE_URL, "has_key": bool(settings.OPENAI_API_KEY)},
    )


@staff_required
@require_GET
def stimulus_set_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A set's outputs, its generation job and its mining jobs, and the form to mine."""
    try:
        stimulus_set = selectors.stimulus_set_get(pk=pk)
    except StimulusSet.DoesNotExist:
        raise Http404("No such stimulus set.") from None
    generation_job = selectors.generation_job_for(stimulus_set)
    import_job = selectors.import_job_for(stimulus_set)
    mining_jobs = list(selectors.mining_jobs_for(stimulus_set))
    return render(
        request,
        "stimuli/set_detail.html",
        {
            "set": stimulus_set,
            "generation_job": generation_job,
            "generation_progress": (
                selectors.job_progress(generation_job, kind="generation") if generation_job else None
            ),
            "import_job": import_job,
            "import_progress": selectors.job_progress(import_job, kind="import") if import_job else None,
            "mining_jobs": [
                (j, selectors.job_progress(j, kind="mining"), pipeline_label(j.pipeline)) for j in mining_jobs
            ],
            "preview": selectors.outputs_preview(stimulus_set),
            # Where Premise cannot run, the form starts on c-TF-IDF (the page says why).
            "mining_form": MiningForm(initial={"method": "ctfidf"} if premise_problem_here() else None),
        },
    )


@staff_required
@require_POST
def mining_start(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue a mining job on a set."""
    stimulus_set = get_object_or_404(StimulusSet, pk=pk)
    form = MiningForm(request.POST)
    if not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
        return redirect("stimuli:set_detail", pk=pk)
    try:
        services.mining_job_create(
            stimulus_set=stimulus_set,
            method=form.cleaned_data["method"],
            pipeline=form.cleaned_data["pipeline"] or None,
            params=form.params(),
            created_by=request.user,
        )
    except StimuliError as exc:
        messages.error(request, str(exc))
    except ValidationError as exc:
        for msg in _validation_messages(exc):
            messages.error(request, msg)
    else:
        messages.success(request, "Mining queued.")
    return redirect("stimuli:set_detail", pk=pk)


def _job_or_404(kind: str, pk: int):
    try:
        return selectors.job_get(kind=kind, job_id=pk)
    except (ValueError, ObjectDoesNotExist):
        raise Http404("No such job.") from None


@staff_required
@require_GET
def job_progress(request: HttpRequest, kind: str, pk: int) -> JsonResponse:
    """Progress of a job as JSON (see :func:`spotlight_study.stimuli.selectors.job_progress`)."""
    job = _job_or_404(kind, pk)
    return JsonResponse(selectors.job_progress(job, kind=kind))


@staff_required
@require_POST
def generation_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Cancel a generation job; outputs stored so far stay."""
    job = _job_or_404("generation", pk)
    try:
        services.generation_job_cancel(job_id=job.pk)
    except JobStateError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Generation cancelled. Resume it to continue where it stopped.")
    return redirect("stimuli:set_detail", pk=job.stimulus_set_id)


@staff_required
@require_POST
def job_resume(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    """Queue a failed, cancelled or stale job again."""
    job = _job_or_404(kind, pk)
    try:
        services.job_resume(kind=kind, job_id=job.pk)
    except JobStateError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Job queued again; it continues where it stopped.")
    return redirect("stimuli:set_detail", pk=job.stimulus_set_id)


@staff_required
@require_GET
def mining_job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The sortable pattern table with highlighted examples; choose patterns to build a setting."""
    job = _job_or_404("mining", pk)
    sort = request.GET.get("sort", "rank")
    descending = request.GET.get("dir") == "desc"
    patterns = selectors.pattern_table(job, sort=sort, descending=descending)
    columns = [
        ("rank", "#"),
        ("group", "Leans to"),
        ("count_group1", "Group 1 outputs"),
        ("count_group2", "Group 2 outputs"),
        ("mdl_gain", "MDL gain"),
        ("fisher_p", "Fisher p"),
        ("score", "c-TF-IDF score"),
    ]
    headers = []
    for field, label in columns:
        next_dir = "asc" if (field == sort and descending) else "desc"
        if field != sort:
            next_dir = "asc" if field in ("rank", "fisher_p", "mdl_gain") else "desc"
        headers.append(
            {
                "field": field,
                "label": label,
                "url": f"?sort={field}&dir={next_dir}",
                "active": field == sort,
                "descending": descending,
            }
        )
    return render(
        request,
        "stimuli/mining_detail.html",
        {
            "job": job,
            "progress": selectors.job_progress(job, kind="mining"),
            "pipeline": pipeline_label(job.pipeline),
            "rows": selectors.pattern_rows(job, patterns),
            "headers": headers,
        },
    )


@staff_required
def setting_build(request: HttpRequest, pk: int) -> HttpResponse:
    """Choose the study, patterns and outputs, and save the setting into the study."""
    job = _job_or_404("mining", pk)
    if request.method == "POST":
        form = SettingBuildForm(request.POST, mining_job=job)
    else:
        initial = {"target": request.GET.get("target"), "distractors": request.GET.getlist("distractors")}
        form = SettingBuildForm(initial=initial, mining_job=job)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        choice = services.SettingChoice(
            key=d["key"],
            title=d["title"],
            target_description=d["target_description"],
            target_pattern_id=d["target"].pk,
            distractor_pattern_ids=tuple(p.pk for p in d["distractors"]),
            selection=d["selection"],
            n_per_group=d["n_per_group"],
            seed=d["seed"],
            max_chars=d["max_chars"],
            picked_output_ids=tuple(o.pk for o in d["picked"]),
        )
        try:
            setting = services.setting_create_from_patterns(
                mining_job=job, study=d["study"], choice=choice, created_by=request.user
            )
        except SettingBuildError as exc:
            form.add_error(None, str(exc))
        except ValidationError as exc:
            for msg in _validation_messages(exc):
                form.add_error(None, msg)
        else:
            messages.success(
                request,
                f"Setting '{setting.key}' added to study '{d['study'].slug}' with "
                f"{len(setting.group1_texts)} + {len(setting.group2_texts)} texts.",
            )
            return redirect(reverse("researcher:study_detail", kwargs={"slug": d["study"].slug}))
    picked = {str(v) for v in (request.POST.getlist("picked") if request.method == "POST" else [])}
    return render(
        request,
        "stimuli/setting_build.html",
        {"job": job, "form": form, "outputs": selectors.outputs_for_picking(job), "picked": picked},
    )
