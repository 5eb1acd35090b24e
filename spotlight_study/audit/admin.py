"""The audit trail in the admin: read-only, like every append-only record."""
from django.contrib import admin

from spotlight_study.accounts.readonly_admin import ReadOnlyAdmin

from .models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    """Every entry, newest first, filterable by action and study."""

    list_display = ("created_at", "actor_username", "study_slug", "action", "summary")
    list_filter = ("action", "study_slug")
    search_fields = ("actor_username", "study_slug", "summary")
