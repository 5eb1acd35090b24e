"""Serializers of studies: the definition, import, settings, cells and the dashboard."""
from __future__ import annotations

from rest_framework import serializers

from spotlight_study.studies.models import Setting, Study, TokenPattern

from .strict import StrictInputSerializer


class CompletionCodesSerializer(serializers.Serializer):
    """The study's Prolific completion codes."""

    completed = serializers.CharField(source="completion_code")
    failed_instruction_check = serializers.CharField(source="failed_check_code")
    no_consent = serializers.CharField(source="no_consent_code")


class StudySerializer(serializers.ModelSerializer):
    """A study definition (times in minutes; ``max_answer_chars`` in characters)."""

    completion_codes = CompletionCodesSerializer(source="*", read_only=True)
    n_participants = serializers.IntegerField(read_only=True, help_text="Participants who arrived.")

    class Meta:
        model = Study
        fields = [
            "slug", "title", "status", "conditions", "completion_codes", "estimated_minutes",
            "maximum_minutes", "abandonment_timeout_minutes", "target_sample_size",
            "min_answer_chars", "max_answer_chars", "short_time_flag_seconds",
            "failed_check_policy", "annotators_per_item", "annotation_reservation_minutes",
            "task_prompt", "n_participants", "created_at", "updated_at",
        ]
        read_only_fields = fields


class StudyImportJSONSerializer(StrictInputSerializer):
    """Import a study from its file's content as JSON (same fields as the YAML file)."""

    study = serializers.DictField(help_text="The study file as a JSON object (see fixtures/).")
    replace = serializers.BooleanField(
        default=False, help_text="Replace the study with this slug (only before anyone took part)."
    )
    drop_missing = serializers.BooleanField(
        default=False,
        help_text="With replace: delete the study's settings the file lacks (otherwise refused).",
    )


class StudyImportUploadSerializer(StrictInputSerializer):
    """Import a study from an uploaded YAML (``.yaml``/``.yml``) or JSON (``.json``) file."""

    file = serializers.FileField()
    replace = serializers.BooleanField(default=False)
    drop_missing = serializers.BooleanField(default=False)


class TokenPatternSerializer(serializers.ModelSerializer):
    """A token pattern: ``tokens``, ``group`` (1 or 2, where it is more frequent)."""

    label = serializers.CharField(read_only=True)

    class Meta:
        model = TokenPattern
        fields = ["tokens", "group", "is_distractor", "position", "label"]
        read_only_fields = fields


class SettingSerializer(serializers.ModelSerializer):
    """A setting: its two groups of texts, patterns and annotation codebook."""

    group1 = serializers.ListField(source="group1_texts", child=serializers.CharField(), read_only=True)
    group2 = serializers.ListField(source="group2_texts", child=serializers.CharField(), read_only=True)
    patterns = TokenPatternSerializer(many=True, read_only=True)

    class Meta:
        model = Setting
        fields = [
            "key", "kind", "position", "title", "group1", "group2", "patterns",
            "target_description", "check_keywords", "surface_difference", "annotation_tags",
        ]
        read_only_fields = fields


class CellTaskSerializer(serializers.Serializer):
    """One task of a cell: a main setting with its condition."""

    setting = serializers.CharField()
    condition = serializers.CharField()


class CellSerializer(serializers.Serializer):
    """A counterbalancing cell and its counts.

    ``places_held`` is what balancing uses (completed plus in progress within the abandonment
    timeout); the other counts split the cell's participants by state.
    """

    index = serializers.IntegerField()
    label = serializers.CharField()
    tasks = CellTaskSerializer(many=True)
    places_held = serializers.IntegerField()
    in_progress = serializers.IntegerField()
    completed = serializers.IntegerField()
    abandoned = serializers.IntegerField()
    ended = serializers.IntegerField()


class DashboardCellSerializer(serializers.Serializer):
    """A cell on the researcher page: participants by state."""

    index = serializers.IntegerField()
    label = serializers.CharField()
    in_progress = serializers.IntegerField()
    completed = serializers.IntegerField()
    abandoned = serializers.IntegerField()
    ended = serializers.IntegerField()


class MedianTimeSerializer(serializers.Serializer):
    """Median time on task of a setting and condition, in seconds."""

    setting = serializers.CharField()
    condition = serializers.CharField()
    n = serializers.IntegerField()
    median_s = serializers.FloatField()


class FlagSerializer(serializers.Serializer):
    """A flagged participant (pseudonym)."""

    participant = serializers.CharField()
    cell = serializers.IntegerField()
    status = serializers.CharField()
    flags = serializers.ListField(child=serializers.CharField())


class TotalsSerializer(serializers.Serializer):
    """Participants by state over all cells."""

    in_progress = serializers.IntegerField()
    completed = serializers.IntegerField()
    abandoned = serializers.IntegerField()
    ended = serializers.IntegerField()


class DashboardSerializer(serializers.Serializer):
    """The researcher page's figures (``study_dashboard``)."""

    cells = DashboardCellSerializer(many=True)
    totals = TotalsSerializer()
    median_times = MedianTimeSerializer(many=True)
    flags = FlagSerializer(many=True)
