"""Admin for stimulus sets, jobs and mined patterns (mostly for looking; the pages do the work)."""
from django.contrib import admin

from .models import GenerationJob, MinedPattern, MiningJob, Output, SettingSource, StimulusSet


@admin.register(StimulusSet)
class StimulusSetAdmin(admin.ModelAdmin):
    """Stimulus sets (titles, labels, source)."""

    list_display = ["title", "source", "created_at"]
    list_filter = ["source"]
    search_fields = ["title", "group1_label", "group2_label"]


@admin.register(Output)
class OutputAdmin(admin.ModelAdmin):
    """Single outputs, searchable by text."""

    list_display = ["stimulus_set", "group", "index", "tokenizer"]
    list_filter = ["group"]
    search_fields = ["text"]
    raw_id_fields = ["stimulus_set"]


@admin.register(GenerationJob)
class GenerationJobAdmin(admin.ModelAdmin):
    """Generation jobs with their progress; run bookkeeping is read-only."""

    list_display = ["stimulus_set", "model", "status", "done", "total", "created_at"]
    list_filter = ["status"]
    readonly_fields = ["run_id", "heartbeat_at", "started_at", "finished_at", "base_url"]


@admin.register(MiningJob)
class MiningJobAdmin(admin.ModelAdmin):
    """Mining jobs with their progress and stage timings; run bookkeeping is read-only."""

    list_display = ["stimulus_set", "method", "status", "stage", "done", "total", "created_at"]
    list_filter = ["status", "method"]
    readonly_fields = ["run_id", "heartbeat_at", "started_at", "finished_at", "timings_ms"]


@admin.register(MinedPattern)
class MinedPatternAdmin(admin.ModelAdmin):
    """Mined patterns with their counts and p-values."""

    list_display = ["mining_job", "rank", "clauses", "group", "count_group1", "count_group2", "fisher_p"]
    raw_id_fields = ["mining_job"]


@admin.register(SettingSource)
class SettingSourceAdmin(admin.ModelAdmin):
    """How each built setting was made (patterns, seed, outputs)."""

    list_display = ["setting", "mining_job", "selection", "seed", "created_at"]
    raw_id_fields = ["setting", "mining_job", "target_pattern"]
