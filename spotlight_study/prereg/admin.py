"""Plan versions in the admin: read-only, since a registered plan is never edited or deleted."""
from django.contrib import admin

from .models import PlanVersion


@admin.register(PlanVersion)
class PlanVersionAdmin(admin.ModelAdmin):
    """Lists every version with its hash; new versions come only from ``manage.py preregister``."""

    list_display = ("study", "version", "plan_sha256", "planned_n", "study_status", "created_at")
    list_filter = ("study",)
    readonly_fields = [f.name for f in PlanVersion._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
