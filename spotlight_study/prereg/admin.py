"""Plan versions in the admin: read-only, since a registered plan is never edited or deleted."""
from django.contrib import admin

from spotlight_study.accounts.readonly_admin import ReadOnlyAdmin

from .models import PlanVersion


@admin.register(PlanVersion)
class PlanVersionAdmin(ReadOnlyAdmin):
    """Lists every version with its hash; new versions come only from ``manage.py preregister``."""

    list_display = ("study", "version", "plan_sha256", "planned_n", "study_status", "created_at")
    list_filter = ("study",)
