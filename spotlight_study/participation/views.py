"""Participant-facing views: thin wrappers around the forms, services and selectors.

The participant is identified by the server session (bound at entry), never by a form field.
Every page is the GET of the participant's current step; every POST redirects (POST-redirect-GET).
"""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import study_get_with_settings, training_setting

from . import services
from .forms import AnswerForm, ConsentForm, EntryForm, StepForm, SurveyForm
from .models import Participant
from .selectors import (
    completion_code,
    completion_url,
    participant_conditions,
    participant_for_session,
    task_page,
)


def _session_key(study: Study) -> str:
    return f"participant:{study.pk}"


def _study_or_404(request: HttpRequest, slug: str) -> Study | HttpResponse:
    try:
        return study_get_with_settings(slug=slug)
    except Study.DoesNotExist:
        return render(request, "participation/unknown_study.html", status=404)


@require_GET
@never_cache
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Arrival from Prolific: validate the IDs, assign a cell (or resume), bind the session."""
    study = _study_or_404(request, slug)
    if isinstance(study, HttpResponse):
        return study
    has_params = any(k in request.GET for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
    if not has_params and request.session.get(_session_key(study)):
        return redirect("participation:step", slug=study.slug)
    form = EntryForm(request.GET)
    if not form.is_valid():
        return render(
            request,
            "participation/entry_error.html",
            {"study": study, "problems": form.problems()},
            status=400,
        )
    try:
        participant = services.assignment_create(
            study=study,
            prolific_pid=form.cleaned_data["PROLIFIC_PID"],
            prolific_study_id=form.cleaned_data["STUDY_ID"],
            prolific_session_id=form.cleaned_data["SESSION_ID"],
        )
    except services.StudyNotOpen:
        return render(request, "participation/not_open.html", {"study": study}, status=200)
    if request.session.get(_session_key(study)) != participant.pk:
        request.session.cycle_key()
        request.session[_session_key(study)] = participant.pk
    return redirect("participation:step", slug=study.slug)


@require_http_methods(["GET", "POST"])
@never_cache
def step(request: HttpRequest, slug: str) -> HttpResponse:
    """The participant's current step: GET renders it, POST submits it and redirects."""
    study = _study_or_404(request, slug)
    if isinstance(study, HttpResponse):
        return study
    participant = participant_for_session(
        study=study, participant_id=request.session.get(_session_key(study))
    )
    if participant is None:
        return render(request, "participation/no_session.html", {"study": study}, status=403)
    participant.study = study
    if request.method == "POST":
        return _post(request, study, participant)
    return _render_step(request, study, participant)


def _here(study: Study) -> HttpResponseRedirect:
    return redirect("participation:step", slug=study.slug)


def _post(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    if request.POST.get("token") != services.step_token(participant) or (
        participant.status != Participant.Status.IN_PROGRESS
    ):
        messages.info(request, services.STALE_MESSAGE)
        return _here(study)
    try:
        step_ = participant.step
        if step_ == Participant.Step.CONSENT:
            form = ConsentForm(request.POST)
            if not form.is_valid():
                return _render_step(request, study, participant, form=form, status=400)
            p = services.consent_record(
                participant_id=participant.pk,
                token=form.cleaned_data["token"],
                agreed=form.cleaned_data["decision"] == "agree",
            )
            if p.status == Participant.Status.NO_CONSENT:
                return redirect(completion_url(study.no_consent_code))
        elif step_ == Participant.Step.INSTRUCTIONS:
            form = StepForm(request.POST)
            if form.is_valid():
                services.instructions_confirm(
                    participant_id=participant.pk, token=form.cleaned_data["token"]
                )
        elif step_ in (Participant.Step.TRAINING, Participant.Step.TASK):
            form = AnswerForm(request.POST, max_chars=study.max_answer_chars)
            if not form.is_valid():
                return _render_step(request, study, participant, form=form, status=400)
            p = services.answer_submit(
                study=study,
                participant_id=participant.pk,
                token=form.cleaned_data["token"],
                answer=form.cleaned_data["answer"],
                telemetry=form.cleaned_data["client_events"],
            )
            if p.status == Participant.Status.FAILED_CHECK:
                return redirect(completion_url(study.failed_check_code))
        elif step_ == Participant.Step.SURVEY:
            form = SurveyForm(
                request.POST, survey=study.survey, conditions=participant_conditions(participant)
            )
            if not form.is_valid():
                messages.error(request, "Please check the questions marked below.")
                return _render_step(request, study, participant, form=form, status=400)
            services.survey_submit(
                participant_id=participant.pk,
                token=form.cleaned_data["token"],
                responses=form.responses(),
                comment=form.cleaned_data["comment"],
            )
            return redirect(completion_url(study.completion_code))
    except services.StaleStep as exc:
        messages.info(request, str(exc))
    except services.InvalidAnswer as exc:
        messages.error(request, str(exc))
    return _here(study)


def _render_step(
    request: HttpRequest,
    study: Study,
    participant: Participant,
    *,
    form=None,
    status: int = 200,
) -> HttpResponse:
    token = services.step_token(participant)
    ctx = {"study": study, "participant": participant, "form_method": "post", "form_action": ""}
    step_ = participant.step
    if participant.status in (
        Participant.Status.RETURNED,
        Participant.Status.TIMED_OUT,
        Participant.Status.REJECTED,
    ):
        return render(request, "participation/ended.html", ctx)
    if step_ == Participant.Step.DONE:
        code = completion_code(participant)
        ctx.update(code=code, completion_url=completion_url(code) if code else None)
        return render(request, "participation/done.html", ctx)
    if step_ == Participant.Step.CONSENT:
        ctx["form"] = form or ConsentForm(initial={"token": token})
        return render(request, "participation/consent.html", ctx, status=status)
    if step_ == Participant.Step.INSTRUCTIONS:
        ctx.update(
            form=StepForm(initial={"token": token}),
            page=task_page(setting=training_setting(study), condition="no_pattern", shuffle_seed=0),
        )
        return render(request, "participation/instructions.html", ctx)
    if step_ in (Participant.Step.TRAINING, Participant.Step.TASK):
        response = services.task_serve(participant=participant, study=study)
        setting, condition, position = services.current_task(participant, study)
        ctx.update(
            form=form or AnswerForm(initial={"token": token}, max_chars=study.max_answer_chars),
            page=task_page(setting=setting, condition=condition, shuffle_seed=participant.shuffle_seed),
            position=position,
            n_tasks=len(participant.cell_plan),
            is_training=position == 0,
            response=response,
        )
        return render(request, "participation/task.html", ctx, status=status)
    form = form or SurveyForm(
        initial={"token": token}, survey=study.survey, conditions=participant_conditions(participant)
    )
    ctx["form"] = form
    return render(request, "participation/survey.html", ctx, status=status)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A friendly page for a form posted from an expired or foreign page (no details leaked)."""
    return render(request, "participation/csrf_failure.html", status=403)
