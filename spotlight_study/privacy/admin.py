"""The audit trail, read-only in the admin (entries are written by the commands only)."""
from django.contrib import admin

from spotlight_study.accounts.readonly_admin import ReadOnlyAdmin

from .models import PrivacyAction


@admin.register(PrivacyAction)
class PrivacyActionAdmin(ReadOnlyAdmin):
    """Lists erasures and purges; nothing can be added, changed or deleted here."""

    list_display = ("created_at", "study", "kind", "reference", "cell_index", "participant_status")
    list_filter = ("kind", "study")
