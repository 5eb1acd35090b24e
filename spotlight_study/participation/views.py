"""Participant-facing views: thin wrappers around the forms, services and selectors.

The participant is identified by a signed cookie bound at entry (:mod:`.binding`), never by a
form field; their state is their row. Every page is the GET of the participant's current step;
every POST redirects (POST-redirect-GET), refused forms included: their text is kept on the
participant's row for the step's next GET (see "drafts" below). Each step's form and text box
are named after the step (``answer_<position>``), and only the current step's field is read.

What a request costs (asserted in ``tests/participation/test_query_counts.py``): the study's
definition comes from its compiled plan (:mod:`spotlight_study.studies.plan`), never from a
query; a GET reads the participant once (a task page also records its serving); a POST makes one
locked read of the participant and one write of its row (an answer also updates its response
row, the survey inserts its answers); a typed draft (:func:`draft`) is one ``UPDATE`` and no read.
"""
from __future__ import annotations

import logging
from functools import lru_cache, wraps

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.urls import Resolver404, resolve, reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from spotlight_study.errors import PARTICIPANT, csrf_failure_kept, error_context
from spotlight_study.exceptions import domain_error_body
from spotlight_study.studies.errors import StudyUnavailable
from spotlight_study.studies.plan import (
    StudyPlan,
    plan_usable,
    study_plan,
    study_plan_for_slug,
    study_plan_for_slug_recent,
)

from . import assignment, drafts, services, steps
from .binding import bound_participant_id, participant_bind
from .errors import ArrivalRefused, InvalidDraft, StaleStep, StudyNotOpen
from .forms import EntryForm
from .language import study_language
from .models import Participant
from .ratelimit import arrival_admit, draft_admit
from .selectors import participant_exists, participant_for_page
from .steps.statements import participant_locked

logger = logging.getLogger(__name__)


def _unknown_study(request: HttpRequest) -> HttpResponse:
    # Participants get their own page: the link they followed is wrong, not their session.
    return render(request, "participation/unknown_study.html", status=404)


def _no_session(request: HttpRequest, slug: str) -> HttpResponse:
    """403 "open the study again from Prolific", or the unknown-study 404 for a wrong slug."""
    plan = study_plan_for_slug(slug)
    if plan is None:
        return _unknown_study(request)
    with study_language(request, plan):
        return render(request, "participation/no_session.html", {"study": plan}, status=403)


def _unavailable(request: HttpRequest, error: StudyUnavailable) -> HttpResponse:
    """503 "not open at the moment", in the study's language, for a study whose stored
    definition ``import_study`` would refuse; the problems go to the log, not to the page."""
    logger.warning("%s", error)
    with study_language(request, error):
        response = render(request, "participation/unavailable.html", status=503)
    response["Retry-After"] = "600"
    return response


def _refuse_unavailable(view):
    """Answer :class:`StudyUnavailable` from ``view`` with :func:`_unavailable`: no part of a
    broken definition reaches a participant, and none of it gives a 500."""

    @wraps(view)
    def wrapped(request: HttpRequest, slug: str) -> HttpResponse:
        try:
            return view(request, slug)
        except StudyUnavailable as error:
            return _unavailable(request, error)

    return wrapped


def _say(request: HttpRequest, level: int, message) -> None:
    """Queue a message for the next page, translated now: the message store writes it after
    the view, when the study's language is no longer active."""
    messages.add_message(request, level, str(message))


@require_GET
@never_cache
@_refuse_unavailable
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    """Arrival from Prolific: validate the IDs, assign a cell (or resume), bind the browser.

    Refusals change nothing: malformed or repeated IDs (400), too many new arrivals from one
    address (429, :mod:`.ratelimit`; a resume is never counted), a ``STUDY_ID`` of another
    Prolific study (400) or a ``SESSION_ID`` used by another participant (409). Every accepted
    arrival gets a fresh binding cookie (:func:`.binding.participant_bind`).
    """
    study = study_plan_for_slug(slug)
    if study is None:
        return _unknown_study(request)
    with study_language(request, plan_usable(study)):
        return _entry(request, study)


def _entry(request: HttpRequest, study: StudyPlan) -> HttpResponse:
    """:func:`entry` for a known study, in its language."""
    slug = study.slug
    has_params = any(k in request.GET for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
    if not has_params and bound_participant_id(request, slug=slug) is not None:
        return HttpResponseRedirect(_step_url(slug))
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
        participant = assignment.assignment_create(
            study=study,
            prolific_pid=pid,
            prolific_study_id=form.cleaned_data["STUDY_ID"],
            prolific_session_id=form.cleaned_data["SESSION_ID"],
        )
    except StudyNotOpen:
        return render(request, "participation/not_open.html", {"study": study}, status=200)
    except ArrivalRefused as exc:
        return render(
            request,
            "participation/arrival_refused.html",
            {"study": study, "title": exc.title, "message": str(exc)},
            status=exc.http_status,
        )
    response = HttpResponseRedirect(_step_url(slug))
    participant_bind(response, slug=slug, participant_id=participant.pk)
    return response


@require_http_methods(["GET", "POST"])
@never_cache
@_refuse_unavailable
def step(request: HttpRequest, slug: str) -> HttpResponse:
    """The participant's current step: GET renders it, POST submits it and always redirects.

    Both go through the current step's spec (:mod:`.steps`). A POST from another page (stale
    token, another step's text box) stores nothing and lands on the current step with a
    message; a refused form (empty answer, too long, survey incomplete) is kept as a draft and
    shown, with its errors, on the redirected GET.
    """
    participant_id = bound_participant_id(request, slug=slug)
    if participant_id is None:
        return _no_session(request, slug)
    if request.method == "POST":
        with participant_locked(participant_id=participant_id, slug=slug) as participant:
            if participant is None:
                return _no_session(request, slug)
            plan = study_plan(study_id=participant.study_id, version=participant.definition_version)
            with study_language(request, plan_usable(plan)):
                return _post(request, plan, participant)
    participant = participant_for_page(participant_id=participant_id, slug=slug)
    if participant is None:
        return _no_session(request, slug)
    plan = study_plan(study_id=participant.study_id, version=participant.definition_version)
    with study_language(request, plan_usable(plan)):
        template, ctx = steps.page(
            participant=participant,
            plan=plan,
            query_string=request.META.get("QUERY_STRING", ""),
            draft_url=_draft_url(slug),
        )
        return render(request, template, ctx)


#: The query string of the consent page that asks a participant to confirm not taking part.
CONFIRM_DECLINE = steps.CONFIRM_DECLINE


def _here(study: StudyPlan) -> HttpResponseRedirect:
    return HttpResponseRedirect(_step_url(study.slug))


@lru_cache(maxsize=256)
def _step_url(slug: str) -> str:
    # Every POST ends in this redirect; the URLconf is fixed for the process's life.
    return reverse("participation:step", kwargs={"slug": slug})


@lru_cache(maxsize=256)
def _draft_url(slug: str) -> str:
    """Where ``static/js/draft.js`` sends a page's typed draft (the form's ``data-draft``)."""
    return reverse("participation:draft", kwargs={"slug": slug})


# --- drafts: what a participant typed into a form that was refused ---------------------------
#
# A refused form (empty answer, too long, survey incomplete) is not re-rendered in the POST's
# response: its data go onto the participant's row (``Participant.draft``) and the participant
# is redirected to the step's GET, whose form shows them with their errors (steps.machine). So
# every POST ends in a redirect, Refresh never re-posts, and Back never meets a "confirm form
# resubmission" page. A draft belongs to one page (its step token): another page ignores it,
# and the next step change clears it. A typed draft (:func:`draft`, ``static/js/draft.js``) is
# shown by the same page as typed, without errors (steps.machine).


def _post(request: HttpRequest, study: StudyPlan, participant: Participant) -> HttpResponse:
    """Submit the current step of a participant locked by the caller (see :func:`step`)."""
    token = services.step_token(participant)
    posted = request.POST.get("token", "")
    if posted != token and services.token_of_other_participant(participant, posted):
        _say(request, messages.WARNING, services.OTHER_PARTICIPANT_MESSAGE)
        return _here(study)
    if posted != token or participant.status != Participant.Status.IN_PROGRESS:
        # A consent button from an old page saved nothing: "its answer is saved" would be untrue.
        stale = services.STALE_CONSENT_MESSAGE if "decision" in request.POST else services.STALE_MESSAGE
        _say(request, messages.INFO, stale)
        return _here(study)
    outcome = steps.submit(participant=participant, plan=study, token=token, data=request.POST)
    if isinstance(outcome, steps.Refused):
        drafts.draft_save(participant=participant, token=token, data=outcome.data)
        if outcome.message:
            _say(request, messages.ERROR, outcome.message)
        return _here(study)
    if outcome.message:
        _say(request, getattr(messages, outcome.level.upper()), outcome.message)
    if outcome.redirect and outcome.redirect.startswith("?"):
        return HttpResponseRedirect(f"{_step_url(study.slug)}{outcome.redirect}")
    if outcome.redirect:
        return redirect(outcome.redirect)
    # Also after a failed instruction check under the "end" policy: the done page explains why
    # the study ends before the participant returns to Prolific with the failed-check code.
    return _here(study)


def _draft_refusal(error: InvalidDraft) -> HttpResponse:
    return JsonResponse(domain_error_body(error), status=error.http_status)


#: The answer to a stale page's draft (the JavaScript shows nothing either way).
_STALE_DRAFT = StaleStep("That page was already submitted or is out of date; its draft was not kept.")


@require_POST
@never_cache
def draft(request: HttpRequest, slug: str) -> HttpResponse:
    """Keep what the participant has typed so far on a step page (``static/js/draft.js``).

    A form post as the page's own (``csrfmiddlewaretoken``, ``token``, the page's fields; see
    :func:`.drafts.typed_draft_fields`), bound to the participant as the step POST is (the
    signed cookie, CSRF, the body limit, ``DRAFT_RATE_LIMIT``). Answers 204 when kept; 409 when
    the page is stale (nothing kept); 400 or 403 for a draft that cannot be kept, 403 without a
    binding, 404 for an unknown study, 429 over the limit; JSON error bodies. Never an answer:
    the step's own POST is the only way to save one.
    """
    participant_id = bound_participant_id(request, slug=slug)
    if participant_id is None:
        return _draft_refusal(InvalidDraft(
            "This browser has no session in this study; open the study again from Prolific.",
            code="no_session", http_status=403,
        ))
    try:
        plan = study_plan_for_slug_recent(slug)
        if plan is not None:
            plan_usable(plan)
    except StudyUnavailable as error:
        logger.warning("%s", error)
        return _draft_refusal(InvalidDraft(
            "This study is not open at the moment; the draft was not kept.",
            code="study_unavailable", http_status=503,
        ))
    if plan is None:
        return _draft_refusal(InvalidDraft("There is no such study.", code="unknown_study", http_status=404))
    allowance = draft_admit(request, slug=slug, participant_id=participant_id)
    if not allowance.allowed:
        response = _draft_refusal(InvalidDraft(
            "Too many drafts in a short time; this one was not kept.", code="rate_limited", http_status=429,
        ))
        response["Retry-After"] = str(allowance.retry_after_s)
        return response
    try:
        kept = drafts.typed_draft_save(
            plan=plan, participant_id=participant_id, token=request.POST.get("token", ""), fields=request.POST
        )
    except InvalidDraft as exc:
        return _draft_refusal(exc)
    if not kept:
        return JsonResponse(domain_error_body(_STALE_DRAFT), status=409)
    return HttpResponse(status=204)


@never_cache
def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A friendly page for a form posted from an expired or foreign page (no details leaked).

    ``CSRF_FAILURE_VIEW`` serves every URL, so the wording follows the URL's area
    (participant, researcher or annotator; see :func:`spotlight_study.errors.url_area`); a
    study's page gets it in the study's language (one query for the study). Not stored by the
    browser, as the participant pages: Back and Forward must ask the server again.
    """
    kept = csrf_failure_kept(request, reason)  # e.g. an annotator's unsaved choice, kept
    if kept is not None:
        return kept
    context = error_context(request.path)
    plan = None
    if context["area"] == PARTICIPANT:
        match = request.resolver_match or _resolve_quietly(request.path_info)
        slug = (match.kwargs.get("slug") if match and match.app_name == "participation" else None)
        plan = study_plan_for_slug(slug) if slug else None
    if plan is None:
        return render(request, "participation/csrf_failure.html", context, status=403)
    with study_language(request, plan):
        return render(request, "participation/csrf_failure.html", context, status=403)


def _resolve_quietly(path: str):
    """The URL match of ``path``, or ``None`` when no URL matches it."""
    try:
        return resolve(path)
    except Resolver404:
        return None
