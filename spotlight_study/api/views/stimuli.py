"""Stimuli: stimulus sets and their outputs, generation and mining jobs, mined patterns."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from spotlight_study.accounts.roles import IsStaff
from spotlight_study.stimuli import selectors as stimuli_selectors
from spotlight_study.stimuli import services as stimuli_services
from spotlight_study.stimuli.models import GenerationJob, MiningJob, Output, StimulusSet

from ..errors import InvalidInput, NotFound
from ..serializers.stimuli import (
    GenerationJobCreateSerializer,
    GenerationJobSerializer,
    JobProgressSerializer,
    MinedPatternSerializer,
    MiningJobCreateSerializer,
    MiningJobSerializer,
    OutputSerializer,
    StimulusSetSerializer,
)
from .base import error_responses


def _with_progress(job, kind: str):
    """``job`` with ``progress`` set (what the job serializers read), ``kind`` ``generation`` or ``mining``."""
    job.progress = stimuli_selectors.job_progress(job, kind=kind)
    return job


def _job_or_404(kind: str, pk: int):
    """The job of ``kind`` with this id; raises :class:`~..errors.NotFound` (404)."""
    try:
        return stimuli_selectors.job_get(kind=kind, job_id=pk)
    except (GenerationJob.DoesNotExist, MiningJob.DoesNotExist):
        raise NotFound(f"No {kind} job {pk}.") from None


@extend_schema(tags=["stimuli"], responses={200: StimulusSetSerializer(many=True), **error_responses(401, 403)})
class StimulusSetListView(generics.ListAPIView):
    """Stimulus sets (two groups of LLM outputs), newest first."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = StimulusSetSerializer

    def get_queryset(self):
        return stimuli_selectors.stimulus_set_list()


@extend_schema(tags=["stimuli"], responses={200: StimulusSetSerializer, **error_responses(401, 403, 404)})
class StimulusSetDetailView(generics.GenericAPIView):
    """One stimulus set."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = StimulusSetSerializer
    pagination_class = None

    def get(self, request, pk: int):
        try:
            stimulus_set = stimuli_selectors.stimulus_set_get(pk=pk)
        except StimulusSet.DoesNotExist:
            raise NotFound(f"No stimulus set {pk}.") from None
        return Response(StimulusSetSerializer(stimulus_set).data)


@extend_schema(
    tags=["stimuli"],
    parameters=[OpenApiParameter("group", OpenApiTypes.INT, enum=[1, 2], required=False)],
    responses={200: OutputSerializer(many=True), **error_responses(400, 401, 403, 404)},
)
class OutputListView(generics.ListAPIView):
    """The outputs of a stimulus set (the results of a generation job), by group and index; 404
    for a set that does not exist (not an empty list)."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = OutputSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Output.objects.none()
        if not StimulusSet.objects.filter(pk=self.kwargs["pk"]).exists():
            raise NotFound(f"No stimulus set {self.kwargs['pk']}.")
        qs = Output.objects.filter(stimulus_set_id=self.kwargs["pk"]).order_by("group", "index")
        group = self.request.query_params.get("group")
        if group is not None:
            if group not in ("1", "2"):
                raise InvalidInput("group must be 1 or 2.", fields={"group": ["Must be 1 or 2."]})
            qs = qs.filter(group=int(group))
        return qs


@extend_schema(tags=["stimuli"])
class GenerationJobListView(generics.ListCreateAPIView):
    """Generation jobs: list (newest first) and create (queued at once, runs in the background)."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = GenerationJobSerializer

    def get_queryset(self):
        return GenerationJob.objects.order_by("-created_at", "-pk")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        jobs = [_with_progress(j, "generation") for j in page]
        return self.get_paginated_response(GenerationJobSerializer(jobs, many=True).data)

    @extend_schema(
        request=GenerationJobCreateSerializer,
        responses={201: GenerationJobSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request, *args, **kwargs):
        form = GenerationJobCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        job = stimuli_services.generation_job_create(**form.validated_data, created_by=request.user)
        job = _with_progress(stimuli_selectors.job_get(kind="generation", job_id=job.pk), "generation")
        return Response(GenerationJobSerializer(job).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["stimuli"], responses={200: GenerationJobSerializer, **error_responses(401, 403, 404)})
class GenerationJobDetailView(generics.GenericAPIView):
    """One generation job with its progress."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = GenerationJobSerializer
    pagination_class = None

    def get(self, request, pk: int):
        return Response(GenerationJobSerializer(_with_progress(_job_or_404("generation", pk), "generation")).data)


@extend_schema(tags=["stimuli"])
class MiningJobListView(generics.ListCreateAPIView):
    """Mining jobs: list (newest first) and create on a stimulus set (runs in the background)."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = MiningJobSerializer

    def get_queryset(self):
        return MiningJob.objects.order_by("-created_at", "-pk")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        jobs = [_with_progress(j, "mining") for j in page]
        return self.get_paginated_response(MiningJobSerializer(jobs, many=True).data)

    @extend_schema(
        request=MiningJobCreateSerializer,
        responses={201: MiningJobSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, *args, **kwargs):
        form = MiningJobCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        try:
            stimulus_set = stimuli_selectors.stimulus_set_get(pk=data.pop("stimulus_set"))
        except StimulusSet.DoesNotExist:
            raise NotFound("No such stimulus set.") from None
        job = stimuli_services.mining_job_create(stimulus_set=stimulus_set, created_by=request.user, **data)
        job = _with_progress(stimuli_selectors.job_get(kind="mining", job_id=job.pk), "mining")
        return Response(MiningJobSerializer(job).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["stimuli"], responses={200: MiningJobSerializer, **error_responses(401, 403, 404)})
class MiningJobDetailView(generics.GenericAPIView):
    """One mining job with its progress."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = MiningJobSerializer
    pagination_class = None

    def get(self, request, pk: int):
        return Response(MiningJobSerializer(_with_progress(_job_or_404("mining", pk), "mining")).data)


@extend_schema(tags=["stimuli"], responses={200: MinedPatternSerializer(many=True), **error_responses(401, 403, 404)})
class MinedPatternListView(generics.GenericAPIView):
    """The patterns a mining job found (its results), in the method's order."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = MinedPatternSerializer
    queryset = MiningJob.objects.none()

    def get(self, request, pk: int):
        job = _job_or_404("mining", pk)
        return self.get_paginated_response(
            MinedPatternSerializer(self.paginate_queryset(stimuli_selectors.pattern_table(job)), many=True).data
        )


@extend_schema(
    tags=["stimuli"],
    request=None,
    parameters=[OpenApiParameter("kind", OpenApiTypes.STR, OpenApiParameter.PATH, enum=["generation", "mining"])],
    responses={200: JobProgressSerializer, **error_responses(401, 403, 404, 409)},
)
class JobResumeView(generics.GenericAPIView):
    """Queue a failed, cancelled or stale job again; it continues where it stopped."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = JobProgressSerializer
    pagination_class = None

    def post(self, request, kind: str, pk: int):
        if kind not in ("generation", "mining"):
            raise NotFound("No such job kind.")
        _job_or_404(kind, pk)
        job = stimuli_services.job_resume(kind=kind, job_id=pk)
        return Response(stimuli_selectors.job_progress(job, kind=kind))


@extend_schema(tags=["stimuli"], request=None, responses={200: JobProgressSerializer, **error_responses(401, 403, 404, 409)})
class GenerationJobCancelView(generics.GenericAPIView):
    """Cancel a queued or running generation job (outputs stored so far are kept)."""

    permission_classes = [IsStaff]  # stimulus sets belong to no study: instance staff only

    serializer_class = JobProgressSerializer
    pagination_class = None

    def post(self, request, pk: int):
        _job_or_404("generation", pk)
        job = stimuli_services.generation_job_cancel(job_id=pk)
        return Response(stimuli_selectors.job_progress(job, kind="generation"))
