"""The admin rule for append-only records (audit trails, registered plans): look, never touch.

Their rows are written by services and management commands only; in the admin nobody, not even
a superuser, may add, change or delete one, so the record stays what was logged.
"""
from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """A ModelAdmin that lists and shows every field of its model and allows no add, change or
    delete. Subclasses set ``list_display``, ``list_filter`` and the like."""

    def get_readonly_fields(self, request, obj=None):
        """Every field of the model (the change page is only ever a view)."""
        return [f.name for f in self.model._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
