"""Serializers of stimuli: stimulus sets, outputs, generation and mining jobs, mined patterns."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .strict import StrictInputSerializer


class StimulusSetSerializer(serializers.Serializer):
    """Two groups of LLM outputs (imported or generated) with their sizes."""

    id = serializers.IntegerField()
    title = serializers.CharField()
    source = serializers.CharField()
    group1_label = serializers.CharField()
    group2_label = serializers.CharField()
    source_detail = serializers.CharField()
    n_group1 = serializers.IntegerField()
    n_group2 = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class OutputSerializer(serializers.Serializer):
    """One LLM output of a group (``index`` from 0)."""

    group = serializers.IntegerField()
    index = serializers.IntegerField()
    text = serializers.CharField()


class JobProgressSerializer(serializers.Serializer):
    """A background job's progress: ``done`` of ``total`` units of its current ``stage``."""

    kind = serializers.CharField()
    id = serializers.IntegerField()
    status = serializers.CharField()
    stage = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)
    stale = serializers.BooleanField()
    started_at = serializers.CharField(allow_null=True)
    finished_at = serializers.CharField(allow_null=True)


class GenerationJobSerializer(serializers.Serializer):
    """A generation job: its parameters, stimulus set and progress."""

    id = serializers.IntegerField()
    stimulus_set = serializers.IntegerField(source="stimulus_set_id")
    model = serializers.CharField()
    prompt_group1 = serializers.CharField()
    prompt_group2 = serializers.CharField()
    n_per_group = serializers.IntegerField()
    temperature = serializers.FloatField()
    top_p = serializers.FloatField()
    max_tokens = serializers.IntegerField()
    seed = serializers.IntegerField(allow_null=True)
    base_url = serializers.CharField()
    progress = JobProgressSerializer()


class GenerationJobCreateSerializer(StrictInputSerializer):
    """Generate ``n_per_group`` outputs per group with the configured OpenAI-compatible server."""

    title = serializers.CharField(max_length=200)
    prompt_group1 = serializers.CharField(max_length=20000)
    prompt_group2 = serializers.CharField(max_length=20000)
    model = serializers.CharField(max_length=200)
    n_per_group = serializers.IntegerField(min_value=1, max_value=5000)
    temperature = serializers.FloatField(min_value=0.0, max_value=2.0, default=1.0)
    top_p = serializers.FloatField(min_value=0.0, max_value=1.0, default=1.0)
    max_tokens = serializers.IntegerField(min_value=1, max_value=100_000, default=256)
    seed = serializers.IntegerField(
        required=False, allow_null=True, min_value=-(2**62), max_value=2**62, default=None
    )


class MiningJobSerializer(serializers.Serializer):
    """A mining job: method, parameters, sizes, timings per stage (ms) and progress."""

    id = serializers.IntegerField()
    stimulus_set = serializers.IntegerField(source="stimulus_set_id")
    method = serializers.CharField()
    pipeline = serializers.CharField(allow_blank=True)
    params = serializers.DictField()
    n_group1 = serializers.IntegerField(allow_null=True)
    n_group2 = serializers.IntegerField(allow_null=True)
    n_excluded = serializers.IntegerField()
    timings_ms = serializers.DictField()
    progress = JobProgressSerializer()


@extend_schema_field({"type": "number", "format": "double", "minimum": 0, "exclusiveMinimum": True, "maximum": 1})
class _PValueField(serializers.FloatField):
    """A p-value threshold: more than 0, at most 1."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value <= 0:
            raise serializers.ValidationError("Must be more than 0.")
        return value


class MiningParamsSerializer(StrictInputSerializer):
    """A mining job's parameters, each optional (defaults in docs/stimuli.md). Premise reads
    ``fisher_p_value``, ``clause_max_overlap`` and ``min_overlap``; c-TF-IDF reads ``top_k``;
    a parameter of the other method is not used."""

    fisher_p_value = _PValueField(required=False, max_value=1.0)
    clause_max_overlap = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)
    min_overlap = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)
    top_k = serializers.IntegerField(required=False, min_value=1, max_value=1000)


class MiningJobCreateSerializer(StrictInputSerializer):
    """Mine token patterns in a stimulus set (Premise or c-TF-IDF; see docs/stimuli.md)."""

    stimulus_set = serializers.IntegerField(min_value=1, max_value=2**62)
    method = serializers.ChoiceField(choices=["premise", "ctfidf"], default="premise")
    pipeline = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=100, default=None)
    params = MiningParamsSerializer(
        required=False,
        default=dict,
        help_text="Premise: fisher_p_value, clause_max_overlap, min_overlap; c-TF-IDF: top_k. "
        "A parameter of the other method is not used; an unknown one is refused.",
    )


class MinedPatternSerializer(serializers.Serializer):
    """A mined pattern: ``clauses`` (an "and" of "or"s of tokens), counts per group, statistics."""

    rank = serializers.IntegerField()
    clauses = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    tokens = serializers.ListField(child=serializers.CharField())
    group = serializers.IntegerField()
    count_group1 = serializers.IntegerField()
    count_group2 = serializers.IntegerField()
    mdl_gain = serializers.FloatField(allow_null=True)
    fisher_p = serializers.FloatField(allow_null=True)
    score = serializers.FloatField(allow_null=True)
    label = serializers.CharField()
