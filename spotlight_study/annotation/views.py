"""Annotation pages and the annotator API: thin wrappers around services and selectors.

Annotator and adjudicator pages render :class:`~.selectors.BlindItem` objects only. Items are
addressed by their opaque ``public_id``; an item that is not the user's answers 404 whether or not
it exists.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework import permissions, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.response import Response
from rest_framework.views import APIView

from spotlight_study.studies.models import Study

from . import exports, selectors, services
from .forms import LabelForm
from .machine_agreement import machine_overview
from .models import Annotation, Exclusion, FinalLabel, Item
from .roles import (
    adjudicator_required,
    annotator_required,
    is_adjudicator,
    is_annotator,
    is_researcher,
    researcher_required,
)
from .serializers import BlindItemSerializer, LabelInSerializer, LabelOutSerializer


def _study(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise Http404("No such study.")
    return study


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
            "studies": selectors.annotation_studies(),
            "annotator": annotator,
            "adjudicator": adjudicator,
            "researcher": is_researcher(user),
        },
    )


# --- annotator pages -----------------------------------------------------------------------


@annotator_required
@never_cache
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    """The annotator's own queue: the open item, their labeled items and how many remain."""
    study = _study(slug)
    services.items_sync(study=study)
    return render(
        request,
        "annotation/queue.html",
        {"study": study, "queue": selectors.annotator_queue(study=study, annotator=request.user)},
    )


@annotator_required
@require_POST
def next_item(request: HttpRequest, slug: str) -> HttpResponse:
    """Reserve (or resume) the annotator's next item and open it."""
    study = _study(slug)
    item = services.assignment_next(study=study, annotator=request.user)
    if item is None:
        messages.info(request, "There is nothing left for you to label in this study. Thank you!")
        return redirect("annotation:queue", slug=slug)
    return redirect("annotation:item", slug=slug, item_id=item.public_id)


@annotator_required
@never_cache
@require_http_methods(["GET", "POST"])
def item_page(request: HttpRequest, slug: str, item_id: str) -> HttpResponse:
    """GET shows the item and the annotator's label; POST saves it.

    A POST whose hidden ``base_revision`` is older than the saved label (a second tab) saves
    nothing: the page shows both versions and, saved again, replaces the saved one.
    """
    study = _study(slug)
    try:
        item = services.item_open(study=study, annotator=request.user, public_id=item_id)
    except services.ItemNotFound as exc:
        return _error(request, study, str(exc), 404)
    except services.ReservationLost as exc:
        messages.error(request, str(exc))
        return redirect("annotation:queue", slug=slug)
    blind = selectors.blind_item(item)
    own = selectors.own_annotation(item=item, annotator=request.user)
    initial = LabelForm.initial_from(own.label_dict() if own else None)
    initial["base_revision"] = own.revision if own else 0
    form = LabelForm(request.POST or None, codebook=blind.codebook, initial=initial)
    status_code = 200
    conflict = None
    if request.method == "POST":
        if form.is_valid():
            try:
                services.label_save(
                    study=study,
                    annotator=request.user,
                    public_id=item_id,
                    label=form.label_input(),
                    base_revision=form.cleaned_data["base_revision"],
                )
            except services.InvalidLabel as exc:
                for name, message in exc.errors.items():
                    form.add_error(name if name in form.fields else None, message)
            except services.StaleLabel as exc:
                conflict = {
                    "message": str(exc),
                    "revision": exc.revision,
                    "updated_at": exc.updated_at,
                    "rows": selectors.label_versions(
                        saved=exc.current, submitted=form.label_dict()
                    ),
                }
                # Saving this page again is now a deliberate choice of its version.
                data = request.POST.copy()
                data["base_revision"] = str(exc.revision)
                form = LabelForm(data, codebook=blind.codebook, initial=initial)
                status_code = 409
            except services.ItemNotFound as exc:
                return _error(request, study, str(exc), 404)
            except services.ReservationLost as exc:
                messages.error(request, str(exc))
                return redirect("annotation:queue", slug=slug)
            else:
                messages.success(request, "Saved.")
                if "save_next" in request.POST:
                    return _to_next(request, study)
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
            "progress": selectors.annotator_progress(study=study, annotator=request.user),
        },
        status=status_code,
    )


def _to_next(request: HttpRequest, study: Study) -> HttpResponse:
    """Redirect to the annotator's next item, or to the queue when nothing is left."""
    following = services.assignment_next(study=study, annotator=request.user)
    if following is None:
        messages.info(request, "There is nothing left for you to label. Thank you!")
        return redirect("annotation:queue", slug=study.slug)
    return redirect("annotation:item", slug=study.slug, item_id=following.public_id)


@annotator_required
@require_POST
def skip_item(request: HttpRequest, slug: str, item_id: str) -> HttpResponse:
    """Give the item back unlabeled (it returns last) and open the next one."""
    study = _study(slug)
    try:
        skipped = services.assignment_skip(study=study, annotator=request.user, public_id=item_id)
    except services.ItemNotFound as exc:
        return _error(request, study, str(exc), 404)
    following = services.assignment_next(study=study, annotator=request.user)
    if following is None:
        messages.info(request, "There is nothing left for you to label. Thank you!")
        return redirect("annotation:queue", slug=slug)
    if following.public_id == item_id:
        messages.info(request, "Nothing else is open to you, so here is the skipped item again.")
    elif skipped:
        messages.info(request, "Skipped. The item comes back after all the others.")
    return redirect("annotation:item", slug=slug, item_id=following.public_id)


# --- adjudication --------------------------------------------------------------------------


@adjudicator_required
@never_cache
def adjudication_list(request: HttpRequest, slug: str) -> HttpResponse:
    """Items whose labels disagree, without annotator names, and a link to the first one."""
    study = _study(slug)
    ids = selectors.adjudication_queue(study=study, adjudicator=request.user)
    return render(request, "annotation/adjudication_list.html", {"study": study, "ids": ids})


@adjudicator_required
@never_cache
@require_http_methods(["GET", "POST"])
def adjudicate(request: HttpRequest, slug: str, item_id: str) -> HttpResponse:
    """Show the competing labels (A, B, ... in random order) and set the final label.

    A first decision starts from what the annotators agree on; the fields they disagree on are
    left blank (and marked in the table).
    """
    study = _study(slug)
    item = selectors.adjudication_item(study=study, public_id=item_id, adjudicator=request.user)
    if item is None:
        return _error(request, study, "No such item awaits adjudication.", 404)
    blind = selectors.blind_item(item)
    competing = selectors.competing_labels(item=item)
    final = FinalLabel.objects.filter(item=item).first()
    agreed, disagree = selectors.agreed_initial(item=item)
    form = LabelForm(
        request.POST or None,
        codebook=blind.codebook,
        initial=LabelForm.initial_from(final.label_dict()) if final else agreed,
    )
    status_code = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                services.adjudication_save(
                    study=study,
                    adjudicator=request.user,
                    public_id=item_id,
                    label=form.label_input(),
                )
            except services.InvalidLabel as exc:
                for name, message in exc.errors.items():
                    form.add_error(name if name in form.fields else None, message)
            except services.ItemNotFound as exc:
                return _error(request, study, str(exc), 404)
            except services.NotAllowed as exc:
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
            "fields": [
                "identified",
                "surface_difference",
                "no_difference",
                "tags",
                "exclusion",
                "exclusion_note",
            ],
            "exclusions": dict(Exclusion.choices),
            "disagree": disagree,
            "prefilled": final is None,
        },
        status=status_code,
    )


# --- researcher ----------------------------------------------------------------------------


@researcher_required
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    """Annotation progress, annotators, agreement per label and the downloads."""
    study = _study(slug)
    services.items_sync(study=study)
    return render(
        request,
        "annotation/overview.html",
        {
            "study": study,
            "o": selectors.researcher_overview(study=study),
            "machine": machine_overview(study=study),
            "exports": exports.EXPORTS,
        },
    )


@researcher_required
def export(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    """Download ``annotations.csv``, ``final_labels.csv`` or ``agreement.csv``."""
    study = _study(slug)
    if name not in exports.EXPORTS:
        raise Http404("No such export.")
    response = HttpResponse(
        exports.export_csv_text(study=study, name=name), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{name}.csv"'
    return response


# --- annotator API -------------------------------------------------------------------------


class IsAnnotator(permissions.BasePermission):
    """Logged in and a member of ``annotators``."""

    message = "Only annotators may use this endpoint."

    def has_permission(self, request, view) -> bool:
        return is_annotator(request.user)


class _AnnotatorAPI(APIView):
    authentication_classes = [SessionAuthentication]
    permission_classes = [IsAnnotator]

    def _payload(self, item: Item, annotator) -> dict:
        own = selectors.own_annotation(item=item, annotator=annotator)
        return {
            "item": BlindItemSerializer(selectors.blind_item(item)).data,
            "label": LabelOutSerializer(own).data if own else None,
        }

    def handle_exception(self, exc):
        """The app's errors as JSON: 404 not yours, 409 reservation lost or a label saved since
        ``base_revision`` (with the saved ``current`` label), 400 bad label."""
        if isinstance(exc, services.ItemNotFound):
            return Response({"detail": str(exc)}, status=status.HTTP_404_NOT_FOUND)
        if isinstance(exc, services.ReservationLost):
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        if isinstance(exc, services.StaleLabel):
            return Response(
                {
                    "detail": str(exc),
                    "current": exc.current,
                    "revision": exc.revision,
                    "updated_at": exc.updated_at,
                },
                status=status.HTTP_409_CONFLICT,
            )
        if isinstance(exc, services.InvalidLabel):
            return Response({"errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, Http404):
            return Response({"detail": "Not found."}, status=status.HTTP_404_NOT_FOUND)
        return super().handle_exception(exc)


class NextItemAPI(_AnnotatorAPI):
    """``POST``: reserve (or resume) the next item; ``{"item": ..., "label": ...}`` or
    ``{"item": null, "label": null}`` when nothing is left."""

    def post(self, request, slug: str):
        study = _study(slug)
        item = services.assignment_next(study=study, annotator=request.user)
        if item is None:
            return Response({"item": None, "label": None})
        item = selectors.item_queryset().get(pk=item.pk)
        return Response(self._payload(item, request.user))


class ItemAPI(_AnnotatorAPI):
    """``GET``: one of the annotator's items and their own label (renews the reservation)."""

    def get(self, request, slug: str, item_id: str):
        study = _study(slug)
        item = services.item_open(study=study, annotator=request.user, public_id=item_id)
        return Response(self._payload(item, request.user))


class LabelAPI(_AnnotatorAPI):
    """``PUT`` (or ``POST``): save the annotator's label of an item; returns the item and label.

    With ``base_revision`` (the ``revision`` the client last read; 0 for none) a label saved
    since then is not overwritten: 409 with the saved label as ``current``.
    """

    def put(self, request, slug: str, item_id: str):
        study = _study(slug)
        serializer = LabelInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        services.label_save(
            study=study,
            annotator=request.user,
            public_id=item_id,
            label=serializer.label_input(),
            source=Annotation.Source.API,
            base_revision=serializer.validated_data.get("base_revision"),
        )
        item = selectors.item_queryset().get(study=study, public_id=item_id)
        return Response(self._payload(item, request.user))

    post = put
