"""The researcher REST API: thin DRF views over the apps' selectors and services.

Staff only (``IsAdminUser``, token or session authentication). Annotators are not staff: they
get 403 here and use the blinded annotator API under ``/annotate/api/`` instead. Errors have one
shape (:mod:`.exceptions`). Lists are paginated (``?page``, ``?page_size``) and filtered with
django-filter where they are database queries.
"""
from __future__ import annotations

import json
import tempfile
from functools import cached_property
from pathlib import Path

from django.db.models import Count
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework import generics, serializers as drf_serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from spotlight_study.annotation import exports as annotation_exports
from spotlight_study.annotation import services as annotation_services
from spotlight_study.annotation.selectors import final_labels_by_response, researcher_overview
from spotlight_study.participation.exports import export_rows
from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.participation.selectors import cell_counts, study_dashboard
from spotlight_study.prolific import selectors as prolific_selectors
from spotlight_study.prolific import services as prolific_services
from spotlight_study.prolific.models import BonusPayment, ProlificStudy, Submission
from spotlight_study.researcher.services import analysis_run, latest_report_dir
from spotlight_study.stimuli import selectors as stimuli_selectors
from spotlight_study.stimuli import services as stimuli_services
from spotlight_study.stimuli.models import GenerationJob, MiningJob, Output, StimulusSet
from spotlight_study.studies.models import Setting, Study
from spotlight_study.studies.selectors import study_cells, study_get_with_settings
from spotlight_study.studies.services import study_import, study_import_file

from . import filters, serializers
from .exceptions import ApiError, ErrorShapeMixin

ERROR_RESPONSE = inline_serializer(
    name="Error",
    fields={
        "error": inline_serializer(
            name="ErrorBody",
            fields={
                "status": drf_serializers.IntegerField(),
                "code": drf_serializers.CharField(),
                "message": drf_serializers.CharField(),
                "fields": drf_serializers.DictField(child=drf_serializers.ListField(child=drf_serializers.CharField())),
            },
        )
    },
)
ERRORS = {
    400: OpenApiResponse(ERROR_RESPONSE, description="Invalid input."),
    401: OpenApiResponse(ERROR_RESPONSE, description="Not authenticated."),
    403: OpenApiResponse(ERROR_RESPONSE, description="Not staff."),
    404: OpenApiResponse(ERROR_RESPONSE, description="No such object."),
    409: OpenApiResponse(ERROR_RESPONSE, description="Not possible in the current state."),
}


def _errors(*codes: int) -> dict:
    return {code: ERRORS[code] for code in codes}


def study_or_404(slug: str) -> Study:
    """The study with its settings prefetched; raises a 404 :class:`ApiError`."""
    try:
        return study_get_with_settings(slug=slug)
    except Study.DoesNotExist:
        raise ApiError(status_code=404, code="not_found", message=f"No study with slug '{slug}'.") from None


class StudyScoped(ErrorShapeMixin):
    """Views under ``/api/studies/<slug>/``: ``self.study`` and ``context["study"]``."""

    @cached_property
    def study(self) -> Study:
        """The study named in the URL."""
        return study_or_404(self.kwargs["slug"])

    def get_serializer_context(self) -> dict:
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False):
            context["study"] = self.study
        return context

    def paginated(self, rows: list, serializer_class) -> Response:
        """A page of a plain list (computed rows rather than a query)."""
        page = self.paginate_queryset(rows)
        data = serializer_class(page, many=True, context=self.get_serializer_context()).data
        return self.get_paginated_response(data)


# --- schema ------------------------------------------------------------------------------


class SchemaView(ErrorShapeMixin, SpectacularAPIView):
    """The OpenAPI 3 schema of this API (``?format=json`` for JSON; YAML by default)."""


class DocsView(ErrorShapeMixin, SpectacularSwaggerSplitView):
    """Swagger UI over :class:`SchemaView`, self-hosted (drf-spectacular-sidecar's static files).

    The split view serves its start-up script from ``?script`` instead of inline, so the page
    works under the Content-Security-Policy, which allows no inline script.
    """

    template_name = "api/swagger_ui.html"
    url_name = "api:schema"


# --- studies -----------------------------------------------------------------------------


@extend_schema(tags=["studies"], responses={200: serializers.StudySerializer, **_errors(401, 403, 404)})
class StudyViewSet(ErrorShapeMixin, viewsets.ReadOnlyModelViewSet):
    """Studies: list, one study by slug, and import from a study file."""

    serializer_class = serializers.StudySerializer
    lookup_field = "slug"
    lookup_value_regex = "[-a-zA-Z0-9_]+"
    filterset_class = filters.StudyFilter
    ordering_fields = ["created_at", "slug", "title"]

    def get_queryset(self):
        return Study.objects.annotate(n_participants=Count("participants")).order_by("-created_at", "pk")

    @extend_schema(
        request={
            "application/json": serializers.StudyImportJSONSerializer,
            "multipart/form-data": serializers.StudyImportUploadSerializer,
        },
        responses={201: serializers.StudySerializer, **_errors(400, 401, 403, 409)},
        description="Import a study from a study file: a JSON body `{\"study\": {...}, \"replace\": "
        "false}` or an uploaded YAML/JSON `file`. The whole file is validated first; every bad "
        "field is named in `error.fields` by its path. 409 if the slug exists (without "
        "`replace`) or the study already has participants.",
    )
    @action(detail=False, methods=["post"], url_path="import", parser_classes=[JSONParser, MultiPartParser, FormParser])
    def import_study(self, request):
        """Create (or replace) a study from its study file."""
        if "file" in request.FILES:
            form = serializers.StudyImportUploadSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            upload = form.validated_data["file"]
            suffix = Path(upload.name or "").suffix.lower()
            if suffix not in (".yaml", ".yml", ".json"):
                raise ApiError(status_code=400, code="invalid", message="Upload a .yaml, .yml or .json study file.")
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / f"study{suffix}"
                with path.open("wb") as fh:
                    for chunk in upload.chunks():
                        fh.write(chunk)
                study = study_import_file(path=path, replace=form.validated_data["replace"])
        else:
            form = serializers.StudyImportJSONSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            study = study_import(data=form.validated_data["study"], replace=form.validated_data["replace"])
        study = self.get_queryset().get(pk=study.pk)
        return Response(self.get_serializer(study).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["studies"], responses={200: serializers.SettingSerializer(many=True), **_errors(401, 403, 404)})
class SettingListView(StudyScoped, generics.ListAPIView):
    """The study's settings (training and main) with texts and patterns, in definition order."""

    serializer_class = serializers.SettingSerializer
    filterset_class = filters.SettingFilter
    pagination_class = None
    ordering_fields = ["position"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Setting.objects.none()
        return Setting.objects.filter(study=self.study).prefetch_related("patterns").order_by("kind", "position")


@extend_schema(tags=["studies"], responses={200: serializers.CellSerializer(many=True), **_errors(401, 403, 404)})
class CellListView(StudyScoped, generics.GenericAPIView):
    """The counterbalancing cells with the places each holds for balancing and its participants by state."""

    serializer_class = serializers.CellSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str):
        cells = study_cells(self.study)
        held = cell_counts(study=self.study, n_cells=len(cells))
        dash = {c["index"]: c for c in study_dashboard(study=self.study)["cells"]}
        rows = [
            {
                "index": c.index,
                "label": c.label,
                "tasks": [{"setting": t.setting, "condition": t.condition} for t in c.tasks],
                "places_held": held.get(c.index, 0),
                **{k: dash[c.index][k] for k in ("in_progress", "completed", "abandoned", "ended")},
            }
            for c in cells
        ]
        return Response(serializers.CellSerializer(rows, many=True).data)


@extend_schema(tags=["studies"], responses={200: serializers.DashboardSerializer, **_errors(401, 403, 404)})
class DashboardView(StudyScoped, generics.GenericAPIView):
    """What the researcher page shows: participants per cell, median time per task, flags."""

    serializer_class = serializers.DashboardSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str):
        return Response(serializers.DashboardSerializer(study_dashboard(study=self.study)).data)


# --- participants, responses, survey ------------------------------------------------------


@extend_schema(tags=["data"], responses={200: serializers.ParticipantSerializer(many=True), **_errors(401, 403, 404)})
class ParticipantListView(StudyScoped, generics.ListAPIView):
    """The study's participants, pseudonymized (never the Prolific ID), oldest first."""

    serializer_class = serializers.ParticipantSerializer
    filterset_class = filters.ParticipantFilter
    ordering_fields = ["started_at", "finished_at", "cell_index", "status"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Participant.objects.none()
        return (
            Participant.objects.filter(study=self.study)
            .prefetch_related("prolific_submissions")
            .order_by("started_at", "pk")
        )


@extend_schema(tags=["data"], responses={200: serializers.ResponseSerializer(many=True), **_errors(400, 401, 403, 404)})
class ResponseListView(StudyScoped, generics.ListAPIView):
    """Saved answers (training and main) with their final labels and the export's flags."""

    serializer_class = serializers.ResponseSerializer
    filterset_class = filters.ResponseFilter
    ordering_fields = ["answered_at", "time_on_task_ms", "position"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return TaskResponse.objects.none()
        return (
            TaskResponse.objects.filter(participant__study=self.study, answered_at__isnull=False)
            .select_related("participant", "setting")
            .order_by("participant__started_at", "participant_id", "position")
        )

    @cached_property
    def _label_context(self) -> dict:
        # Pilot rows too: the list shows them with ?include_pilot=true.
        rows = export_rows(study=self.study, include_pilot=True)["responses"]
        return {
            "finals": final_labels_by_response(study=self.study),
            "export_rows": {(r["participant"], r["setting"]): r for r in rows},
        }

    def get_serializer_context(self) -> dict:
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False):
            context.update(self._label_context)
        return context


@extend_schema(tags=["data"], responses={200: serializers.SurveyAnswerSerializer(many=True), **_errors(401, 403, 404)})
class SurveyAnswerListView(StudyScoped, generics.ListAPIView):
    """Survey answers (1..5) per participant, condition (or ``background``) and item."""

    serializer_class = serializers.SurveyAnswerSerializer
    filterset_class = filters.SurveyAnswerFilter
    ordering_fields = ["item", "condition", "response"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return SurveyAnswer.objects.none()
        return (
            SurveyAnswer.objects.filter(participant__study=self.study)
            .select_related("participant")
            .order_by("participant__started_at", "participant_id", "condition", "item")
        )


# --- annotation --------------------------------------------------------------------------


@extend_schema(tags=["annotation"], responses={200: serializers.AnnotationProgressSerializer, **_errors(401, 403, 404)})
class AnnotationProgressView(StudyScoped, generics.GenericAPIView):
    """Annotation progress: items by status, final-label sources, annotators and their labels."""

    serializer_class = serializers.AnnotationProgressSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str):
        annotation_services.items_sync(study=self.study)  # answers saved since the last read
        overview = researcher_overview(study=self.study)
        overview["status"] = {k: overview["status"].get(k, 0) for k in ("final", "needs_adjudication", "in_progress")}
        return Response(serializers.AnnotationProgressSerializer(overview).data)


@extend_schema(tags=["annotation"], responses={200: serializers.AgreementRowSerializer(many=True), **_errors(401, 403, 404)})
class AgreementListView(StudyScoped, generics.GenericAPIView):
    """Agreement per label and scope (percent agreement, Cohen's kappa, Krippendorff's alpha)."""

    serializer_class = serializers.AgreementRowSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema

    def get(self, request, slug: str):
        return self.paginated(annotation_exports.agreement_rows(study=self.study), serializers.AgreementRowSerializer)


@extend_schema(
    tags=["annotation"],
    parameters=[serializers.FinalLabelQuerySerializer],
    responses={200: serializers.FinalLabelSerializer(many=True), **_errors(400, 401, 403, 404)},
)
class FinalLabelListView(StudyScoped, generics.GenericAPIView):
    """One row per annotation item: its status and, once final, its label (``?status=final``)."""

    serializer_class = serializers.FinalLabelSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema

    def get(self, request, slug: str):
        query = serializers.FinalLabelQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        wanted = query.validated_data
        rows = [
            r
            for r in annotation_exports.final_label_rows(study=self.study)
            if all(r.get(k) == v for k, v in wanted.items())
        ]
        return self.paginated(rows, serializers.FinalLabelSerializer)


# --- analysis ----------------------------------------------------------------------------


@extend_schema(tags=["analysis"])
class AnalysisView(StudyScoped, generics.GenericAPIView):
    """The study analysis (the ``analysis`` package): the latest results, or a new run."""

    serializer_class = serializers.AnalysisResultSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    @extend_schema(responses={200: serializers.AnalysisResultSerializer, **_errors(401, 403, 404)})
    def get(self, request, slug: str):
        """The latest ``results.json`` of the study (404 ``no_analysis`` before the first run)."""
        path = latest_report_dir(self.study) / "results.json"
        if not path.exists():
            raise ApiError(status_code=404, code="no_analysis", message="No analysis has been run for this study yet.")
        return Response({"results": json.loads(path.read_text(encoding="utf-8"))})

    @extend_schema(request=None, responses={200: serializers.AnalysisResultSerializer, **_errors(401, 403, 404, 409)})
    def post(self, request, slug: str):
        """Run the analysis on the current data and return ``results.json``.

        409 ``not_analysable`` when the data cannot be analysed yet (e.g. answers without final
        annotation labels). A successful run also becomes the latest report of the study.
        """
        with tempfile.TemporaryDirectory(prefix="spotlight-analysis-") as tmp:
            results = analysis_run(study=self.study, out_dir=tmp)
        return Response({"results": results})


# --- stimuli -----------------------------------------------------------------------------


def _with_progress(job, kind: str):
    job.progress = stimuli_selectors.job_progress(job, kind=kind)
    return job


def _job_or_404(kind: str, pk: int):
    try:
        return stimuli_selectors.job_get(kind=kind, job_id=pk)
    except (GenerationJob.DoesNotExist, MiningJob.DoesNotExist):
        raise ApiError(status_code=404, code="not_found", message=f"No {kind} job {pk}.") from None


@extend_schema(tags=["stimuli"], responses={200: serializers.StimulusSetSerializer(many=True), **_errors(401, 403)})
class StimulusSetListView(ErrorShapeMixin, generics.ListAPIView):
    """Stimulus sets (two groups of LLM outputs), newest first."""

    serializer_class = serializers.StimulusSetSerializer

    def get_queryset(self):
        return stimuli_selectors.stimulus_set_list()


@extend_schema(tags=["stimuli"], responses={200: serializers.StimulusSetSerializer, **_errors(401, 403, 404)})
class StimulusSetDetailView(ErrorShapeMixin, generics.GenericAPIView):
    """One stimulus set."""

    serializer_class = serializers.StimulusSetSerializer
    pagination_class = None

    def get(self, request, pk: int):
        try:
            stimulus_set = stimuli_selectors.stimulus_set_get(pk=pk)
        except StimulusSet.DoesNotExist:
            raise ApiError(status_code=404, code="not_found", message=f"No stimulus set {pk}.") from None
        return Response(serializers.StimulusSetSerializer(stimulus_set).data)


@extend_schema(
    tags=["stimuli"],
    parameters=[OpenApiParameter("group", OpenApiTypes.INT, enum=[1, 2], required=False)],
    responses={200: serializers.OutputSerializer(many=True), **_errors(400, 401, 403)},
)
class OutputListView(ErrorShapeMixin, generics.ListAPIView):
    """The outputs of a stimulus set (the results of a generation job), by group and index."""

    serializer_class = serializers.OutputSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Output.objects.none()
        qs = Output.objects.filter(stimulus_set_id=self.kwargs["pk"]).order_by("group", "index")
        group = self.request.query_params.get("group")
        if group is not None:
            if group not in ("1", "2"):
                raise ApiError(status_code=400, code="invalid", message="group must be 1 or 2.", fields={"group": ["Must be 1 or 2."]})
            qs = qs.filter(group=int(group))
        return qs


@extend_schema(tags=["stimuli"])
class GenerationJobListView(ErrorShapeMixin, generics.ListCreateAPIView):
    """Generation jobs: list (newest first) and create (queued at once, runs in the background)."""

    serializer_class = serializers.GenerationJobSerializer

    def get_queryset(self):
        return GenerationJob.objects.order_by("-created_at", "-pk")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        jobs = [_with_progress(j, "generation") for j in page]
        return self.get_paginated_response(serializers.GenerationJobSerializer(jobs, many=True).data)

    @extend_schema(
        request=serializers.GenerationJobCreateSerializer,
        responses={201: serializers.GenerationJobSerializer, **_errors(400, 401, 403)},
    )
    def post(self, request, *args, **kwargs):
        form = serializers.GenerationJobCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        job = stimuli_services.generation_job_create(**form.validated_data, created_by=request.user)
        job = _with_progress(stimuli_selectors.job_get(kind="generation", job_id=job.pk), "generation")
        return Response(serializers.GenerationJobSerializer(job).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["stimuli"], responses={200: serializers.GenerationJobSerializer, **_errors(401, 403, 404)})
class GenerationJobDetailView(ErrorShapeMixin, generics.GenericAPIView):
    """One generation job with its progress."""

    serializer_class = serializers.GenerationJobSerializer
    pagination_class = None

    def get(self, request, pk: int):
        return Response(serializers.GenerationJobSerializer(_with_progress(_job_or_404("generation", pk), "generation")).data)


@extend_schema(tags=["stimuli"])
class MiningJobListView(ErrorShapeMixin, generics.ListCreateAPIView):
    """Mining jobs: list (newest first) and create on a stimulus set (runs in the background)."""

    serializer_class = serializers.MiningJobSerializer

    def get_queryset(self):
        return MiningJob.objects.order_by("-created_at", "-pk")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        jobs = [_with_progress(j, "mining") for j in page]
        return self.get_paginated_response(serializers.MiningJobSerializer(jobs, many=True).data)

    @extend_schema(
        request=serializers.MiningJobCreateSerializer,
        responses={201: serializers.MiningJobSerializer, **_errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, *args, **kwargs):
        form = serializers.MiningJobCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        try:
            stimulus_set = stimuli_selectors.stimulus_set_get(pk=data.pop("stimulus_set"))
        except StimulusSet.DoesNotExist:
            raise ApiError(status_code=404, code="not_found", message="No such stimulus set.") from None
        job = stimuli_services.mining_job_create(stimulus_set=stimulus_set, created_by=request.user, **data)
        job = _with_progress(stimuli_selectors.job_get(kind="mining", job_id=job.pk), "mining")
        return Response(serializers.MiningJobSerializer(job).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["stimuli"], responses={200: serializers.MiningJobSerializer, **_errors(401, 403, 404)})
class MiningJobDetailView(ErrorShapeMixin, generics.GenericAPIView):
    """One mining job with its progress."""

    serializer_class = serializers.MiningJobSerializer
    pagination_class = None

    def get(self, request, pk: int):
        return Response(serializers.MiningJobSerializer(_with_progress(_job_or_404("mining", pk), "mining")).data)


@extend_schema(tags=["stimuli"], responses={200: serializers.MinedPatternSerializer(many=True), **_errors(401, 403, 404)})
class MinedPatternListView(ErrorShapeMixin, generics.GenericAPIView):
    """The patterns a mining job found (its results), in the method's order."""

    serializer_class = serializers.MinedPatternSerializer
    queryset = MiningJob.objects.none()

    def get(self, request, pk: int):
        job = _job_or_404("mining", pk)
        return self.get_paginated_response(
            serializers.MinedPatternSerializer(self.paginate_queryset(stimuli_selectors.pattern_table(job)), many=True).data
        )


@extend_schema(
    tags=["stimuli"],
    request=None,
    parameters=[OpenApiParameter("kind", OpenApiTypes.STR, OpenApiParameter.PATH, enum=["generation", "mining"])],
    responses={200: serializers.JobProgressSerializer, **_errors(401, 403, 404, 409)},
)
class JobResumeView(ErrorShapeMixin, generics.GenericAPIView):
    """Queue a failed, cancelled or stale job again; it continues where it stopped."""

    serializer_class = serializers.JobProgressSerializer
    pagination_class = None

    def post(self, request, kind: str, pk: int):
        if kind not in ("generation", "mining"):
            raise ApiError(status_code=404, code="not_found", message="No such job kind.")
        _job_or_404(kind, pk)
        job = stimuli_services.job_resume(kind=kind, job_id=pk)
        return Response(stimuli_selectors.job_progress(job, kind=kind))


@extend_schema(tags=["stimuli"], request=None, responses={200: serializers.JobProgressSerializer, **_errors(401, 403, 404, 409)})
class GenerationJobCancelView(ErrorShapeMixin, generics.GenericAPIView):
    """Cancel a queued or running generation job (outputs stored so far are kept)."""

    serializer_class = serializers.JobProgressSerializer
    pagination_class = None

    def post(self, request, pk: int):
        _job_or_404("generation", pk)
        job = stimuli_services.generation_job_cancel(job_id=pk)
        return Response(stimuli_selectors.job_progress(job, kind="generation"))


# --- prolific ----------------------------------------------------------------------------


class ProlificScoped(StudyScoped):
    """Views under ``/api/studies/<slug>/prolific/``."""

    @cached_property
    def prolific_study(self) -> ProlificStudy:
        """The study's Prolific settings; a 404 ``not_on_prolific`` without them."""
        ps = prolific_selectors.prolific_study_for(self.study)
        if ps is None:
            raise ApiError(status_code=404, code="not_on_prolific", message="This study has no Prolific settings yet.")
        return ps


@extend_schema(tags=["prolific"], responses={200: serializers.ProlificStudySerializer, **_errors(401, 403, 404)})
class ProlificStudyView(ProlificScoped, generics.GenericAPIView):
    """The study's Prolific settings and how many submissions review would act on."""

    serializer_class = serializers.ProlificStudySerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str):
        ps = self.prolific_study
        summary = prolific_selectors.review_summary(self.study)
        ps.to_approve, ps.failed_checks, ps.status_counts = (
            summary["to_approve"], summary["failed_checks"], summary["status_counts"],
        )
        return Response(serializers.ProlificStudySerializer(ps).data)


@extend_schema(tags=["prolific"], responses={200: serializers.SubmissionSerializer(many=True), **_errors(401, 403, 404)})
class SubmissionListView(ProlificScoped, generics.ListAPIView):
    """The study's submissions on Prolific as last synced (status, participant pseudonym, review)."""

    serializer_class = serializers.SubmissionSerializer
    filterset_class = filters.SubmissionFilter
    ordering_fields = ["status_at", "created_at", "status"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Submission.objects.none()
        return prolific_selectors.submissions_of(self.prolific_study).order_by("created_at", "pk")


@extend_schema(tags=["prolific"], request=None, responses={200: serializers.SyncReportSerializer, **_errors(401, 403, 404, 409)})
class SyncView(ProlificScoped, generics.GenericAPIView):
    """Pull submission statuses from Prolific now (502 if Prolific fails)."""

    serializer_class = serializers.SyncReportSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def post(self, request, slug: str):
        report = prolific_services.submissions_sync(prolific_study_id=self.prolific_study.pk)
        return Response(serializers.SyncReportSerializer(vars(report)).data)


@extend_schema(
    tags=["prolific"],
    request=serializers.ReviewRequestSerializer,
    responses={200: serializers.ReviewReportSerializer, **_errors(400, 401, 403, 404, 409)},
)
class ApproveView(ProlificScoped, generics.GenericAPIView):
    """Approve in bulk the submissions of participants who completed with the check passed."""

    serializer_class = serializers.ReviewReportSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def post(self, request, slug: str):
        form = serializers.ReviewRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        report = prolific_services.submissions_approve_completed(
            prolific_study_id=self.prolific_study.pk, dry_run=form.validated_data["dry_run"]
        )
        return Response(serializers.ReviewReportSerializer(vars(report)).data)


@extend_schema(
    tags=["prolific"],
    request=serializers.ReviewRequestSerializer,
    responses={200: serializers.ReviewReportSerializer, **_errors(400, 401, 403, 404, 409)},
)
class FailedChecksView(ProlificScoped, generics.GenericAPIView):
    """Ask to return (default) or reject, per the study's setting, the failed instruction checks."""

    serializer_class = serializers.ReviewReportSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def post(self, request, slug: str):
        form = serializers.ReviewRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        report = prolific_services.submissions_review_failed_checks(
            prolific_study_id=self.prolific_study.pk, dry_run=form.validated_data["dry_run"]
        )
        return Response(serializers.ReviewReportSerializer(vars(report)).data)


@extend_schema(tags=["prolific"])
class BonusListView(ProlificScoped, generics.ListCreateAPIView):
    """Bonus payments: list, and the dry run of a CSV (stored as a draft; nothing is sent)."""

    serializer_class = serializers.BonusPaymentSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return BonusPayment.objects.none()
        return BonusPayment.objects.filter(prolific_study=self.prolific_study).order_by("-created_at", "-pk")

    @extend_schema(
        request=serializers.BonusDraftSerializer,
        responses={201: serializers.BonusPaymentSerializer, **_errors(400, 401, 403, 404, 409)},
    )
    def post(self, request, *args, **kwargs):
        form = serializers.BonusDraftSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        payment = prolific_services.bonus_payment_draft(
            prolific_study_id=self.prolific_study.pk, csv_text=form.validated_data["csv"], created_by=request.user
        )
        return Response(serializers.BonusPaymentSerializer(payment).data, status=status.HTTP_201_CREATED)


class _BonusScoped(ProlificScoped):
    def bonus(self, pk: int) -> BonusPayment:
        payment = BonusPayment.objects.filter(pk=pk, prolific_study=self.prolific_study).first()
        if payment is None:
            raise ApiError(status_code=404, code="not_found", message=f"No bonus payment {pk}.")
        return payment


@extend_schema(tags=["prolific"], responses={200: serializers.BonusPaymentSerializer, **_errors(401, 403, 404)})
class BonusDetailView(_BonusScoped, generics.GenericAPIView):
    """One bonus payment."""

    serializer_class = serializers.BonusPaymentSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str, pk: int):
        return Response(serializers.BonusPaymentSerializer(self.bonus(pk)).data)


@extend_schema(
    tags=["prolific"],
    request=None,
    responses={200: serializers.BonusPaymentSerializer, **_errors(401, 403, 404, 409)},
    description="Set up the drafted bonuses on Prolific and pay them, once. A payment whose pay "
    "request was sent is never sent again (409). 502 if Prolific fails; then check on Prolific.",
)
class BonusPayView(_BonusScoped, generics.GenericAPIView):
    """Pay a drafted bonus payment (exactly once)."""

    serializer_class = serializers.BonusPaymentSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def post(self, request, slug: str, pk: int):
        payment = prolific_services.bonus_payment_pay(bonus_payment_id=self.bonus(pk).pk)
        return Response(serializers.BonusPaymentSerializer(payment).data)
