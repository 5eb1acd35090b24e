"""Read-only admin of annotation data for staff (labels change through the annotation pages)."""

from django.contrib import admin

from .models import (
    Annotation,
    AnnotationRevision,
    Assignment,
    CodebookTag,
    FinalLabel,
    Item,
    MachineAcceptance,
)


class _ReadOnly(admin.ModelAdmin):
    """Shows rows but never adds or changes them."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Item)
class ItemAdmin(_ReadOnly):
    """Items by study and setting (staff only)."""

    list_display = ["public_id", "study", "setting", "is_pilot", "created_at"]
    list_filter = ["study", "setting", "is_pilot"]
    search_fields = ["public_id"]


@admin.register(Assignment)
class AssignmentAdmin(_ReadOnly):
    """Places of annotators on items, with reservation times."""

    list_display = ["item", "annotator", "state", "reserved_at", "expires_at", "submitted_at"]
    list_filter = ["state"]


@admin.register(Annotation)
class AnnotationAdmin(_ReadOnly):
    """Current labels per item and annotator."""

    list_display = [
        "item",
        "annotator",
        "identified",
        "no_difference",
        "exclusion",
        "revision",
        "updated_at",
    ]
    list_filter = ["exclusion", "source"]


@admin.register(AnnotationRevision)
class AnnotationRevisionAdmin(_ReadOnly):
    """Every save of every label."""

    list_display = ["annotation", "revision", "source", "saved_at"]


@admin.register(FinalLabel)
class FinalLabelAdmin(_ReadOnly):
    """Agreed, adjudicated or accepted machine labels."""

    list_display = [
        "item", "source", "machine_model", "identified", "no_difference", "exclusion", "decided_at"
    ]
    list_filter = ["source", "exclusion"]


@admin.register(MachineAcceptance)
class MachineAcceptanceAdmin(_ReadOnly):
    """The audit log of accepting the machine coder's labels as final (never edited)."""

    list_display = ["at", "study", "action", "model", "field", "actor", "items"]
    list_filter = ["study", "action", "field"]

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(CodebookTag)
class CodebookTagAdmin(_ReadOnly):
    """Tags added to a setting's codebook by annotators (labels store tag names, so no edits)."""

    list_display = ["name", "setting", "created_at"]
    list_filter = ["setting"]
