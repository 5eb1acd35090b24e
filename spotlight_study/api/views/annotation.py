"""Annotation of a study: progress, agreement and final labels."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.response import Response

from spotlight_study.annotation import exports as annotation_exports
from spotlight_study.annotation.overview import researcher_overview
from spotlight_study.annotation.services.queue import items_sync
from spotlight_study.studies.models import Study

from ..serializers.annotation import (
    AgreementRowSerializer,
    AnnotationProgressSerializer,
    FinalLabelQuerySerializer,
    FinalLabelSerializer,
)
from .base import StudyScoped, error_responses


@extend_schema(tags=["annotation"], responses={200: AnnotationProgressSerializer, **error_responses(401, 403, 404)})
class AnnotationProgressView(StudyScoped, generics.GenericAPIView):
    """Annotation progress of the real items (never the pilot annotation round's): items by
    status, final-label sources, annotators and their labels."""

    serializer_class = AnnotationProgressSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema
    pagination_class = None

    def get(self, request, slug: str):
        items_sync(study=self.study)  # answers saved since the last read
        overview = researcher_overview(study=self.study, with_agreement=False)
        overview["status"] = {k: overview["status"].get(k, 0) for k in ("final", "needs_adjudication", "in_progress")}
        return Response(AnnotationProgressSerializer(overview).data)


@extend_schema(tags=["annotation"], responses={200: AgreementRowSerializer(many=True), **error_responses(401, 403, 404)})
class AgreementListView(StudyScoped, generics.GenericAPIView):
    """Agreement per label and scope (percent agreement, Cohen's kappa, Krippendorff's alpha);
    the pilot annotation round's rows follow, computed apart (``is_pilot`` true)."""

    serializer_class = AgreementRowSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema

    def get(self, request, slug: str):
        return self.paginated(annotation_exports.agreement_rows(study=self.study), AgreementRowSerializer)


@extend_schema(
    tags=["annotation"],
    parameters=[FinalLabelQuerySerializer],
    responses={200: FinalLabelSerializer(many=True), **error_responses(400, 401, 403, 404)},
)
class FinalLabelListView(StudyScoped, generics.GenericAPIView):
    """One row per annotation item of a real participant: its status and, once final, its label
    (``?status=final``); ``?include_pilot=true`` adds the pilot annotation round's items."""

    serializer_class = FinalLabelSerializer
    queryset = Study.objects.none()  # names the path parameter in the schema

    def get(self, request, slug: str):
        query = FinalLabelQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        wanted = dict(query.validated_data)
        include_pilot = wanted.pop("include_pilot", "false") == "true"
        rows = [
            r
            for r in annotation_exports.final_label_rows(study=self.study, include_pilot=include_pilot)
            if all(r.get(k) == v for k, v in wanted.items())
        ]
        return self.paginated(rows, FinalLabelSerializer)
