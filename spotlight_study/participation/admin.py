"""Read-mostly admin for participants; answers are changed only through the flow."""
from django.contrib import admin

from .models import Participant, ParticipantEnding, SurveyAnswer, TaskResponse


class TaskResponseInline(admin.TabularInline):
    model = TaskResponse
    extra = 0
    can_delete = False
    fields = ["position", "setting", "condition", "answer", "time_on_task_ms", "paste_count", "hidden_ms"]
    readonly_fields = fields


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ["id", "study", "cell_index", "status", "step", "instruction_check_passed", "started_at"]
    list_filter = ["study", "status", "step", "cell_index"]
    readonly_fields = [
        "study", "prolific_pid", "prolific_study_id", "prolific_session_id", "cell_index",
        "cell_plan", "assignment_counts", "assignment_seed", "shuffle_seed", "step", "task_index",
        "consented_at", "instruction_check_passed", "comment", "started_at", "finished_at",
    ]
    inlines = [TaskResponseInline]

    def has_add_permission(self, request):
        return False


@admin.register(SurveyAnswer)
class SurveyAnswerAdmin(admin.ModelAdmin):
    list_display = ["participant", "condition", "item", "response"]
    list_filter = ["condition", "item"]

    def has_add_permission(self, request):
        return False


@admin.register(ParticipantEnding)
class ParticipantEndingAdmin(admin.ModelAdmin):
    """The researchers' endings of stalled participants: read-only, the record of a decision."""

    list_display = ["participant", "ended_at", "ended_by", "ended_via", "step", "idle_seconds"]
    readonly_fields = [f.name for f in ParticipantEnding._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
