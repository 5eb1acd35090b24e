"""Annotation pages: thin wrappers around services and selectors (the annotator API is in
:mod:`.apis`).

Annotator and adjudicator pages render :class:`~.selectors.BlindItem` objects only. Items are
addressed by their opaque ``public_id``; an item that is not the user's answers 404 whether or not
it exists. The pilot annotation round (:mod:`.pilot_round`) has its own queue pages
(``/annotate/<slug>/pilot/``); its items are marked "pilot" wherever they are shown.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from spotlight_study.accounts.roles import (
    ADJUDICATING,
    ANNOTATING,
    OWNING,
    READING,
    RUNNING,
    is_adjudicator,
    is_annotator,
    is_researcher,
)
from spotlight_study.audit.services import audit_record
from spotlight_study.studies.access import study_member_required, user_may
from spotlight_study.studies.models import Study

from . import exports, selectors
from .errors import (
    InvalidLabel,
    ItemNotFound,
    MachineAcceptanceError,
    NotAllowed,
    PilotRoundClosed,
    ReservationLost,
    StaleLabel,
)
from .codebook_agreement import codebook_agreement
from .codebook_form import label_form
from .codebook_labels import competing_rows
from .forms import LabelForm, MachineAcceptanceForm
from .kept_choice import kept_choice_pop
from .label_versions import label_versions
from .machine_agreement import machine_models, machine_overview
from .models import Exclusion, FinalLabel, Item
from .overview import researcher_overview
from .pilot_round import (
    pilot_item_ids,
    pilot_round_is_open,
    pilot_round_open_study_ids,
    pilot_round_state,
)
from .services.adjudication import adjudication_save
from .services.labels import label_save
from .services.machine_acceptance import (
    ACCEPTABLE_FIELDS,
    machine_labels_accept,
    machine_labels_revoke,
)
from .services.pilot_round import pilot_round_set
from .services.queue import assignment_next, assignment_skip, item_open


def _error(
    request: HttpRequest, study: Study | None, message: str, status_code: int
) -> HttpResponse:
    return render(
        request, "annotation/error.html", {"study": study, "message": message}, status=status_code
    )


# --- home ----------------------------------------------------------------------------------


@login_required
@never_cache
def home(request: HttpRequest) -> HttpResponse:
    """Where everyone lands: annotators see their studies, adjudicators their queues;
    researchers without another role go to the researcher pages."""
    user = request.user
    annotator, adjudicator = is_annotator(user), is_adjudicator(user)
    if not (annotator or adjudicator):
        if is_researcher(user):
            return redirect("researcher:study_list")
        raise PermissionDenied
    return render(
        request,
        "annotation/home.html",
        {
            "studies": selectors.annotation_studies(user=user),
            "pilot_open": pilot_round_open_study_ids(),
            "annotator": annotator,
            "adjudicator": adjudicator,
            "researcher": is_researcher(user),
        },
    )


# --- annotator pages -----------------------------------------------------------------------


def _queue_url(slug: str, pilot: bool) -> str:
    return reverse("annotation:pilot_queue" if pilot else "annotation:queue", args=[slug])


def _queue_page(request: HttpRequest, slug: str, *, pilot: bool) -> HttpResponse:
    study = request.study
    # Writes nothing: answers that are not items yet count as open (selectors.answers_without_item).
    return render(
        request,
        "annotation/queue.html",
        {
            "study": study,
            "pilot": pilot,
            "pilot_round_open": pilot_round_is_open(study),
            "queue": selectors.annotator_queue(study=study, annotator=request.user, pilot=pilot),
        },
    )


@study_member_required(*ANNOTATING)
@never_cache
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    """The annotator's own queue: the open item, their labeled items and how many remain."""
    return _queue_page(request, slug, pilot=False)


@study_member_required(*ANNOTATING)
@never_cache
def pilot_queue(request: HttpRequest, slug: str) -> HttpResponse:
    """The annotator's queue of the pilot annotation round (pilot participants' answers),
    marked "pilot"; it says so when the round is closed."""
    return _queue_page(request, slug, pilot=True)


def _next(request: HttpRequest, slug: str, *, pilot: bool) -> HttpResponse:
    study = request.study
    try:
        item = assignment_next(study=study, annotator=request.user, pilot=pilot)
    except PilotRoundClosed as exc:
        messages.error(request, str(exc))
        return redirect(_queue_url(slug, pilot))
    if item is None:
        where = "pilot round" if pilot else "study"
        messages.info(request, f"There is nothing left for you to label in this {where}. Thank you!")
        return redirect(_queue_url(slug, pilot))
    return redirect("annotation:item", slug=slug, item_id=item.public_id)


@study_member_required(*ANNOTATING)
@require_POST
def next_item(request: HttpRequest, slug: str) -> HttpResponse:
    """Reserve (or resume) the annotator's next item and open it."""
    return _next(request, slug, pilot=False)


@study_member_required(*ANNOTATING)
@require_POST
def pilot_next_item(request: HttpRequest, slug: str) -> HttpResponse:
    """Reserve (or resume) the annotator's next item of the open pilot round and open it."""
    return _next(request, slug, pilot=True)


@study_member_required(*ANNOTATING)
@never_cache
@require_http_methods(["GET", "POST"])
def item_page(request: HttpRequest, slug: str, item_id: str) -> HttpResponse:
    """GET shows the item and the annotator's label; POST saves it.

    A POST whose hidden ``base_revision`` is older than the saved label (a second tab) saves
    nothing: the page shows both versions and, saved again, replaces the saved one.
    """
    study = request.study
    try:
        item = item_open(study=study, annotator=request.user, public_id=item_id)
    except ItemNotFound as exc:
        return _error(request, study, str(exc), 404)
    except (ReservationLost, PilotRoundClosed) as exc:
        messages.error(request, str(exc))
        return redirect("annotation:queue", slug=slug)
    blind = selectors.blind_item(item)
    own = selectors.own_annotation(item=item, annotator=request.user)
    def make_form(data) -> LabelForm:
        form = label_form(study, item.setting, data, codebook=blind.codebook,
                          initial_label=own.label_dict() if own else None)
        form.initial["base_revision"] = own.revision if own else 0
        return form

    # A choice refused by the CSRF check comes back once, unsaved (kept_choice.py).
    form = make_form((request.POST if request.method == "POST" else kept_choice_pop(request)) or None)
    status_code = 200
    conflict = None
    if request.method == "POST":
        if form.is_valid():
            try:
                label_save(
                    study=study,
                    annotator=request.user,
                    public_id=item_id,
                    label=form.label_input(),
                    base_revision=form.cleaned_data["base_revision"],
                )
            except InvalidLabel as exc:
                for name, message in exc.errors.items():
                    form.add_error(name if name in form.fields else None, message)
            except StaleLabel as exc:
                form, conflict = _stale_conflict(request, exc, form, make_form)
                status_code = 409
            except ItemNotFound as exc:
                return _error(request, study, str(exc), 404)
            except (ReservationLost, PilotRoundClosed) as exc:
                messages.error(request, str(exc))
                return redirect("annotation:queue", slug=slug)
            else:
                messages.success(request, "Saved.")
                if "save_next" in request.POST:
                    return _to_next(request, study, pilot=item.is_pilot)
                return redirect("annotation:item", slug=slug, item_id=item_id)
        if conflict is None:
            status_code = 400
    return render(
        request,
        "annotation/item.html",
        {
            "study": study,
            "blind": blind,
            "form": form,
            "own": own,
            "conflict": conflict,
            "progress": selectors.annotator_progress(
                study=study, annotator=request.user, pilot=item.is_pilot
            ),
        },
        status=status_code,
    )


def _stale_conflict(
    request: HttpRequest, exc: StaleLabel, form: LabelForm, make_form
) -> tuple[LabelForm, dict]:
    """The form to show after a :class:`StaleLabel` and the conflict (both versions) for the
    page. The new form carries the saved revision, so saving this page again is a deliberate
    choice of its version."""
    conflict = {
        "message": str(exc),
        "revision": exc.revision,
        "updated_at": exc.updated_at,
        "rows": label_versions(saved=exc.current, submitted=form.label_dict()),
    }
    data = request.POST.copy()
    data["base_revision"] = str(exc.revision)
    return make_form(data), conflict


def _to_next(request: HttpRequest, study: Study, *, pilot: bool) -> HttpResponse:
    """Redirect to the annotator's next item of the same round (real or pilot), or to that
    round's queue when nothing is left (or the pilot round was closed meanwhile)."""
    try:
        following = assignment_next(study=study, annotator=request.user, pilot=pilot)
    except PilotRoundClosed as exc:
        messages.error(request, str(exc))
        return redirect(_queue_url(study.slug, pilot))
    if following is None:
        messages.info(request, "There is nothing left for you to label. Thank you!")
        return redirect(_queue_url(study.slug, pilot))
    return redirect("annotation:item", slug=study.slug, item_id=following.public_id)


@study_member_required(*ANNOTATING)
@require_POST
def skip_item(request: HttpRequest, slug: str, item_id: str) -> HttpResponse:
    """Give the item back unlabeled (it returns last) and open the next one of its round."""
    study = request.study
    try:
        skipped = assignment_skip(study=study, annotator=request.user, public_id=item_id)
    except ItemNotFound as exc:
        return _error(request, study, str(exc), 404)
    # The item is the annotator's (assignment_skip checked it), so its round may be read.
    pilot = Item.objects.filter(study=study, public_id=item_id, is_pilot=True).exists()
    try:
        following = assignment_next(study=study, annotator=request.user, pilot=pilot)
    except PilotRoundClosed as exc:
        messages.error(request, str(exc))
        return redirect(_queue_url(slug, pilot))
    if following is None:
        messages.info(request, "There is nothing left for you to label. Thank you!")
        return redirect(_queue_url(slug, pilot))
    if following.public_id == item_id:
        messages.info(request, "Nothing else is open to you, so here is the skipped item again.")
    elif skipped:
        messages.info(request, "Skipped. The item comes back after all the others.")
    return redirect("annotation:item", slug=slug, item_id=following.public_id)


# --- adjudication --------------------------------------------------------------------------


@study_member_required(*ADJUDICATING)
@never_cache
def adjudication_list(request: HttpRequest, slug: str) -> HttpResponse:
    """Items whose labels disagree, without annotator names, and a link to the first one."""
    study = request.study
    ids = selectors.adjudication_queue(study=study, adjudicator=request.user)
    return render(
        request,
        "annotation/adjudication_list.html",
        {"study": study, "ids": ids, "pilot_ids": pilot_item_ids(study=study, ids=ids)},
    )


@study_member_required(*ADJUDICATING)
@never_cache
@require_http_methods(["GET", "POST"])
def adjudicate(request: HttpRequest, slug: str, item_id: str) -> HttpResponse:
    """Show the competing labels (A, B, ... in random order) and set the final label.

    A first decision starts from what the annotators agree on; the fields they disagree on are
    left blank (and marked in the table).
    """
    study = request.study
    item = selectors.adjudication_item(study=study, public_id=item_id, adjudicator=request.user)
    if item is None:
        return _error(request, study, "No such item awaits adjudication.", 404)
    blind = selectors.blind_item(item)
    competing = selectors.competing_labels(item=item)
    # An accepted machine label is no decision to start from: start from the annotators.
    final = selectors.human_final(FinalLabel.objects.filter(item=item).first())
    agreed, disagree = selectors.agreed_initial(item=item)
    form = label_form(
        study, item.setting,
        (request.POST if request.method == "POST" else kept_choice_pop(request)) or None,
        codebook=blind.codebook,
        initial_label=final.label_dict() if final else None, initial=agreed,
    )
    status_code = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                adjudication_save(
                    study=study,
                    adjudicator=request.user,
                    public_id=item_id,
                    label=form.label_input(),
                )
            except InvalidLabel as exc:
                for name, message in exc.errors.items():
                    form.add_error(name if name in form.fields else None, message)
            except ItemNotFound as exc:
                return _error(request, study, str(exc), 404)
            except PilotRoundClosed as exc:
                return _error(request, study, str(exc), 409)
            except NotAllowed as exc:
                return _error(request, study, str(exc), 403)
            else:
                messages.success(request, "Final label saved.")
                return redirect("annotation:adjudication", slug=slug)
        status_code = 400
    return render(
        request,
        "annotation/adjudicate.html",
        {
            "study": study,
            "blind": blind,
            "form": form,
            "competing": competing,
            "codebook_rows": competing_rows(study, competing, disagree),
            "exclusions": dict(Exclusion.choices),
            "disagree": disagree,
            "prefilled": final is None,
        },
        status=status_code,
    )


# --- researcher ----------------------------------------------------------------------------


@never_cache
@study_member_required(*READING)
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    """Annotation progress, annotators, agreement per label and the downloads, of the real
    items; the pilot annotation round in a section of its own. Never cached by the browser:
    Back would show figures older than the labels."""
    study = request.study
    pilot = pilot_round_state(study=study)
    if pilot["open"] or pilot["items"]:
        pilot["o"] = researcher_overview(study=study, is_pilot=True)
    return render(
        request,
        "annotation/overview.html",
        {
            "study": study,
            "o": researcher_overview(study=study),
            "pilot": pilot,
            "can_switch_pilot_round": user_may(request.user, study, OWNING),
            "machine": machine_overview(study=study),
            "acceptance": _acceptance_context(request, study),
            "exports": exports.EXPORTS,
            "codebook_agreement": codebook_agreement(study=study),
        },
    )


@study_member_required(*OWNING)
@require_POST
def pilot_round(request: HttpRequest, slug: str) -> HttpResponse:
    """Open (``action=open``) or close (``action=close``) the pilot annotation round.

    Staff only, POST with CSRF; the outcome is a message on the overview. Another ``action``
    changes nothing and says so.
    """
    study = request.study
    back = redirect(reverse("annotation:overview", args=[slug]) + "#pilot-round")
    action = request.POST.get("action", "")
    if action not in ("open", "close"):
        messages.error(request, "Nothing was changed: action must be open or close.")
        return back
    changed = pilot_round_set(study=study, open_=action == "open")
    word = "opened" if action == "open" else "closed"
    if not changed:
        messages.info(request, f"The pilot annotation round was already {word}; nothing changed.")
    elif action == "open":
        messages.success(
            request,
            "Pilot annotation round opened: annotators now get the pilot answers in their "
            "pilot round, marked pilot. Their labels stay apart from the real data.",
        )
    else:
        messages.success(request, "Pilot annotation round closed; its labels are kept.")
    return back


def _acceptance_context(request: HttpRequest, study: Study) -> dict:
    """What the overview shows of the accepted machine labels; the form for staff only."""
    models = machine_models(study=study)
    form = None
    if user_may(request.user, study, OWNING) and models:
        form = MachineAcceptanceForm(models=models, label_fields=ACCEPTABLE_FIELDS)
    return {
        "current": selectors.machine_accepted_fields(study=study),
        "log": selectors.machine_acceptance_log(study=study),
        "form": form,
    }


@study_member_required(*OWNING)
@require_POST
def machine_accept(request: HttpRequest, slug: str) -> HttpResponse:
    """Accept (or revoke) one model's machine labels as final labels for label fields.

    Staff only, POST with a ticked confirmation box; the outcome is a message on the overview.
    """
    study = request.study
    form = MachineAcceptanceForm(
        request.POST, models=machine_models(study=study), label_fields=ACCEPTABLE_FIELDS
    )
    back = redirect(reverse("annotation:overview", args=[slug]) + "#machine-acceptance")
    if not form.is_valid():
        problems = "; ".join(
            f"{name}: {' '.join(errs)}" if name != "__all__" else " ".join(errs)
            for name, errs in form.errors.items()
        )
        messages.error(request, f"Nothing was changed. {problems}")
        return back
    data = form.cleaned_data
    service = machine_labels_revoke if data["action"] == "revoke" else machine_labels_accept
    try:
        report = service(study=study, model=data["model"], fields=data["fields"], user=request.user)
    except MachineAcceptanceError as exc:
        messages.error(request, str(exc))
        return back
    counts = ", ".join(f"{f}: {n} item(s)" for f, n in report.items.items())
    if data["action"] == "revoke":
        messages.success(request, f"Revoked llm:{report.model} for {counts}.")
    else:
        messages.success(
            request,
            f"Accepted llm:{report.model} as final labels for {counts}; "
            f"{report.human_final} item(s) with a human final label were left unchanged.",
        )
    return back


@study_member_required(*RUNNING)
def export(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    """Download ``annotations.csv``, ``final_labels.csv`` or ``agreement.csv``; the pilot
    round's items too with ``?include_pilot=1`` (any other value but 0 is a 400 page)."""
    study = request.study
    if name not in exports.EXPORTS:
        raise Http404("No such export.")
    raw = request.GET.get("include_pilot", "0")
    if raw not in ("0", "1") or len(request.GET.getlist("include_pilot")) > 1:
        return _error(
            request, study, "include_pilot must be 1 (with the pilot round) or 0 (without).", 400
        )
    text = exports.export_csv_text(study=study, name=name, include_pilot=raw == "1")
    audit_record(
        action="export.download", actor=request.user, study=study,
        summary=f"Downloaded {name}.csv{' with the pilot round' if raw == '1' else ''}.",
        detail={"file": f"{name}.csv", "include_pilot": raw == "1"},
    )
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    suffix = "-with-pilot" if raw == "1" else ""
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{name}{suffix}.csv"'
    return response
