"""DRF serializers of the annotator API. Every field is listed: what is not listed is not sent.

The output serializers read a :class:`~.selectors.BlindItem` or an annotation, never the task
response or participant, so nothing outside the whitelist can reach an annotator.
"""

from __future__ import annotations

from rest_framework import serializers

from .models import Exclusion
from .services.labels import LabelInput


class QualityEvidenceSerializer(serializers.Serializer):
    """Neutral quality evidence: pasted characters, three flags and the keys of the
    writing-process flags (no times, no positions, never the condition)."""

    paste_chars = serializers.IntegerField()
    very_short_time = serializers.BooleanField()
    long_time_hidden = serializers.BooleanField()
    identical_answer = serializers.BooleanField()
    writing_flags = serializers.ListField(child=serializers.CharField())


class BlindItemSerializer(serializers.Serializer):
    """An item as an annotator sees it (input: a ``BlindItem``)."""

    id = serializers.CharField()
    setting = serializers.CharField(source="setting_key")
    setting_title = serializers.CharField()
    group1 = serializers.ListField(child=serializers.CharField())
    group2 = serializers.ListField(child=serializers.CharField())
    target_description = serializers.CharField()
    surface_difference = serializers.CharField()
    answer = serializers.CharField()
    quality = serializers.SerializerMethodField()
    codebook = serializers.ListField(child=serializers.CharField())

    def get_quality(self, obj) -> dict:
        """The evidence fields, nested under ``quality``."""
        return QualityEvidenceSerializer(obj).data


class LabelOutSerializer(serializers.Serializer):
    """The requesting annotator's own current label (input: an ``Annotation``)."""

    identified = serializers.BooleanField()
    surface_difference = serializers.BooleanField()
    no_difference = serializers.BooleanField()
    tags = serializers.ListField(child=serializers.CharField())
    exclusion = serializers.CharField()
    exclusion_note = serializers.CharField()
    revision = serializers.IntegerField()
    updated_at = serializers.DateTimeField()
    values = serializers.DictField()
    notes = serializers.DictField()

    def to_representation(self, instance) -> dict:
        """The label; ``values`` and ``notes`` only under a study's declared codebook."""
        data = super().to_representation(instance)
        if not data["values"] and not data["notes"]:
            del data["values"], data["notes"]
        return data


class RequiredBooleanField(serializers.BooleanField):
    """A yes/no field that must be sent in every body shape.

    DRF's ``BooleanField`` reads a field missing from a form or multipart body as ``False``
    (an unticked HTML checkbox sends nothing), so ``identified=1`` alone would store "No" for
    the other two answers. Here a missing field is "This field is required." as in JSON.
    """

    default_empty_html = serializers.empty


class LabelInSerializer(serializers.Serializer):
    """A label sent by an annotator. ``new_tags`` are added to the setting's codebook;
    ``base_revision`` (optional) is the revision the client last read, see ``LabelAPI``.
    The three yes/no fields are required in JSON, form and multipart bodies alike."""

    identified = RequiredBooleanField()
    surface_difference = RequiredBooleanField()
    no_difference = RequiredBooleanField()
    tags = serializers.ListField(
        child=serializers.CharField(max_length=60), required=False, default=list, max_length=100
    )
    new_tags = serializers.ListField(
        child=serializers.CharField(max_length=60), required=False, default=list, max_length=20
    )
    exclusion = serializers.ChoiceField(choices=Exclusion.values, default=Exclusion.NONE)
    exclusion_note = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=1000
    )
    base_revision = serializers.IntegerField(required=False, min_value=0)
    # A declared codebook's values by field key, checked by the label service against it.
    values = serializers.DictField(required=False)

    def __init__(self, *args, declared: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if declared:  # the study's own fields replace the default codebook's three questions
            for name in ("identified", "surface_difference", "no_difference"):
                self.fields[name] = serializers.BooleanField(required=False, default=False)
            self.fields["values"] = serializers.DictField()

    def label_input(self) -> LabelInput:
        """The validated data as a :class:`~.services.labels.LabelInput` (without
        ``base_revision``)."""
        data = {k: v for k, v in self.validated_data.items() if k != "base_revision"}
        return LabelInput(**data)
