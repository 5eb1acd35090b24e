"""The study's data, pseudonymized: participants, saved answers and survey answers."""
from __future__ import annotations

from functools import cached_property

from drf_spectacular.utils import extend_schema
from rest_framework import generics

from spotlight_study.annotation.selectors import final_labels_by_response
from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.results.exports import export_rows

from .. import filters
from ..serializers.data import ParticipantSerializer, ResponseSerializer, SurveyAnswerSerializer
from .base import StudyScoped, error_responses


@extend_schema(tags=["data"], responses={200: ParticipantSerializer(many=True), **error_responses(401, 403, 404)})
class ParticipantListView(StudyScoped, generics.ListAPIView):
    """The study's participants, pseudonymized (never the Prolific ID), oldest first."""

    serializer_class = ParticipantSerializer
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


@extend_schema(tags=["data"], responses={200: ResponseSerializer(many=True), **error_responses(400, 401, 403, 404)})
class ResponseListView(StudyScoped, generics.ListAPIView):
    """Saved answers (training and main) with their final labels and the export's flags."""

    serializer_class = ResponseSerializer
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
        # Pilot rows too: the list shows them with ?include_pilot=true, with the pilot annotation
        # round's labels (a real answer's item is never a pilot item).
        rows = export_rows(study=self.study, include_pilot=True)["responses"]
        return {
            "finals": final_labels_by_response(study=self.study, include_pilot=True),
            "export_rows": {(r["participant"], r["setting"]): r for r in rows},
        }

    def get_serializer_context(self) -> dict:
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False):
            context.update(self._label_context)
        return context


@extend_schema(tags=["data"], responses={200: SurveyAnswerSerializer(many=True), **error_responses(401, 403, 404)})
class SurveyAnswerListView(StudyScoped, generics.ListAPIView):
    """Survey answers (1..5) per participant, condition (or ``background``) and item."""

    serializer_class = SurveyAnswerSerializer
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
