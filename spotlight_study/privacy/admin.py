"""The audit trail, read-only in the admin (entries are written by the commands only)."""
from django.contrib import admin

from .models import PrivacyAction


@admin.register(PrivacyAction)
class PrivacyActionAdmin(admin.ModelAdmin):
    """Lists erasures and purges; nothing can be added, changed or deleted here."""

    list_display = ("created_at", "study", "kind", "reference", "cell_index", "participant_status")
    list_filter = ("kind", "study")
    readonly_fields = [f.name for f in PrivacyAction._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
