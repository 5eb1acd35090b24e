"""Fields shared by the researcher API's serializers."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import participant_pseudonym


@extend_schema_field(OpenApiTypes.STR)
class PseudonymField(serializers.Field):
    """The participant pseudonym of a participant (read from ``context["study"]``)."""

    def __init__(self, **kwargs):
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, participant: Participant) -> str:
        return participant_pseudonym(study=self.context["study"], prolific_pid=participant.prolific_pid)
