"""Participant-facing views: thin wrappers around the forms, services and selectors.

The participant is identified by the server session (bound at entry), never by a form field.
Every page is the GET of the participant's current step; every POST redirects (POST-redirect-GET),
refused forms included: their text is kept in the session for the step's next GET (see "drafts"
below). Each step's form and text box are named after the step (``answer_<position>``), and only
the current step's field is read.
"""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from spotlight_study.errors import error_context
from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import study_get_with_settings, training_setting

from . import services
from .forms import AnswerForm, ConsentForm, EntryForm, StepForm, SurveyForm
from .models import Participant
from .ratelimit import arrival_admit
from .selectors import (
    completion_code,
    completion_url,
    participant_conditions,
    participant_exists,
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
    """Arrival from Prolific: validate the IDs, assign a cell (or resume), bind the session.

    Refusals change nothing: malformed or repeated IDs (400), too many new arrivals from one
    address (429, :mod:`.ratelimit`; a resume is never counted), a ``STUDY_ID`` of another
    Prolific study (400) or a ``SESSION_ID`` used by another participant (409).
    """
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
    pid = form.cleaned_data["PROLIFIC_PID"]
    if not participant_exists(study=study, prolific_pid=pid):
        allowance = arrival_admit(request)
        if not allowance.allowed:
            response = render(
                request,
                "participation/rate_limited.html",
                {"study": study, "retry_after_s": allowance.retry_after_s},
                status=429,
            )
            response["Retry-After"] = str(allowance.retry_after_s)
            return response
    try:
        participant = services.assignment_create(
            study=study,
            prolific_pid=pid,
            prolific_study_id=form.cleaned_data["STUDY_ID"],
            prolific_session_id=form.cleaned_data["SESSION_ID"],
        )
    except services.StudyNotOpen:
        return render(request, "participation/not_open.html", {"study": study}, status=200)
    except services.ArrivalRefused as exc:
        status = 409 if isinstance(exc, services.SessionInUse) else 400
        return render(
            request,
            "participation/arrival_refused.html",
            {"study": study, "title": exc.title, "message": str(exc)},
            status=status,
        )
    if request.session.get(_session_key(study)) != participant.pk:
        request.session.cycle_key()
        request.session[_session_key(study)] = participant.pk
    return redirect("participation:step", slug=study.slug)


@require_http_methods(["GET", "POST"])
@never_cache
def step(request: HttpRequest, slug: str) -> HttpResponse:
    """The participant's current step: GET renders it, POST submits it and always redirects.

    A POST from another page (stale token, another step's text box) stores nothing and lands on
    the current step with a message; a refused form (empty answer, too long, survey incomplete)
    is kept as a draft and shown, with its errors, on the redirected GET.
    """
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


# --- drafts: what a participant typed into a form that was refused ---------------------------
#
# A refused form (empty answer, too long, survey incomplete) is not re-rendered in the POST's
# response: its data go into the session and the participant is redirected to the step's GET,
# which shows them with their errors. So every POST ends in a redirect, Refresh never re-posts,
# and Back never meets a "confirm form resubmission" page. A draft belongs to one page (its step
# token) and is dropped as soon as the participant is on another page.


def _draft_key(study: Study) -> str:
    return f"draft:{study.pk}"


def _draft_keep(request: HttpRequest, study: Study, form, token: str) -> None:
    """Store the submitted values of ``form``'s own fields for the page with ``token``."""
    data = {
        name: request.POST[name]
        for name in form.fields
        if name != "token" and name in request.POST
    }
    request.session[_draft_key(study)] = {"token": token, "data": data}


def _draft_for(request: HttpRequest, study: Study, token: str) -> dict | None:
    """The draft of the page with ``token`` (``{field: value}``), or ``None``; drops older ones."""
    draft = request.session.get(_draft_key(study))
    if draft is None:
        return None
    if draft.get("token") != token:
        del request.session[_draft_key(study)]
        return None
    return draft["data"]


def _draft_drop(request: HttpRequest, study: Study) -> None:
    request.session.pop(_draft_key(study), None)


def _refuse(request: HttpRequest, study: Study, form, token: str, message: str = "") -> HttpResponse:
    """Keep a refused form's data for the next GET of the step and redirect there."""
    _draft_keep(request, study, form, token)
    if message:
        messages.error(request, message)
    return _here(study)


def _post(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    token = services.step_token(participant)
    posted = request.POST.get("token", "")
    if posted != token and services.token_of_other_participant(participant, posted):
        messages.warning(request, services.OTHER_PARTICIPANT_MESSAGE)
        return _here(study)
    if posted != token or participant.status != Participant.Status.IN_PROGRESS:
        messages.info(request, services.STALE_MESSAGE)
        return _here(study)
    try:
        step_ = participant.step
        if step_ == Participant.Step.CONSENT:
            form = ConsentForm(request.POST)
            if not form.is_valid():
                return _refuse(request, study, form, token)
            p = services.consent_record(
                participant_id=participant.pk,
                token=form.cleaned_data["token"],
                agreed=form.cleaned_data["decision"] == "agree",
            )
            _draft_drop(request, study)
            if p.status == Participant.Status.NO_CONSENT:
                return redirect(completion_url(study.no_consent_code))
        elif step_ == Participant.Step.INSTRUCTIONS:
            form = StepForm(request.POST)
            if form.is_valid():
                services.instructions_confirm(
                    participant_id=participant.pk, token=form.cleaned_data["token"]
                )
        elif step_ in (Participant.Step.TRAINING, Participant.Step.TASK):
            _, _, position = services.current_task(participant, study)
            form = AnswerForm(
                request.POST,
                position=position,
                min_chars=study.min_answer_chars,
                max_chars=study.max_answer_chars,
            )
            if not form.is_for_this_page():
                # The token is current but the text box is another step's (a form restored or
                # rebuilt by the browser): never read it as this step's answer.
                messages.info(request, services.STALE_MESSAGE)
                return _here(study)
            if not form.is_valid():
                return _refuse(request, study, form, token)
            try:
                services.answer_submit(
                    study=study,
                    participant_id=participant.pk,
                    token=form.cleaned_data["token"],
                    answer=form.answer_text(),
                    telemetry=form.cleaned_data["client_events"],
                )
            except services.InvalidAnswer as exc:
                return _refuse(request, study, form, token, str(exc))
            _draft_drop(request, study)
        elif step_ == Participant.Step.SURVEY:
            form = SurveyForm(
                request.POST, survey=study.survey, conditions=participant_conditions(participant)
            )
            if not form.is_valid():
                return _refuse(request, study, form, token, "Please check the questions marked below.")
            try:
                services.survey_submit(
                    participant_id=participant.pk,
                    token=form.cleaned_data["token"],
                    responses=form.responses(),
                    comment=form.cleaned_data["comment"],
                )
            except services.InvalidAnswer as exc:
                return _refuse(request, study, form, token, str(exc))
            _draft_drop(request, study)
            return redirect(completion_url(study.completion_code))
    except services.StaleStep as exc:
        messages.info(request, str(exc))
    # Also after a failed instruction check under the "end" policy: the done page explains why
    # the study ends before the participant returns to Prolific with the failed-check code.
    return _here(study)


def _bound(form_class, draft: dict | None, token: str, **kwargs):
    """``form_class`` bound to a kept draft (showing its errors), or unbound for a fresh page."""
    if draft is None:
        return form_class(initial={"token": token}, **kwargs)
    form = form_class({**draft, "token": token}, **kwargs)
    form.is_valid()  # computes the errors the template shows next to the fields
    return form


def _render_step(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    token = services.step_token(participant)
    draft = _draft_for(request, study, token)
    ctx = {
        "study": study,
        "participant": participant,
        "form_method": "post",
        "form_action": "",
    }
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
        ctx["form"] = _bound(ConsentForm, draft, token)
        return render(request, "participation/consent.html", ctx)
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
            form=_bound(
                AnswerForm,
                draft,
                token,
                position=position,
                min_chars=study.min_answer_chars,
                max_chars=study.max_answer_chars,
            ),
            page=task_page(setting=setting, condition=condition, shuffle_seed=participant.shuffle_seed),
            position=position,
            n_tasks=len(participant.cell_plan),
            is_training=position == 0,
            response=response,
        )
        return render(request, "participation/task.html", ctx)
    ctx["form"] = _bound(
        SurveyForm, draft, token, survey=study.survey, conditions=participant_conditions(participant)
    )
    return render(request, "participation/survey.html", ctx)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A friendly page for a form posted from an expired or foreign page (no details leaked).

    ``CSRF_FAILURE_VIEW`` serves every URL, so the wording follows the URL's area
    (participant, researcher or annotator; see :func:`spotlight_study.errors.url_area`).
    """
    return render(
        request, "participation/csrf_failure.html", error_context(request.path), status=403
    )
