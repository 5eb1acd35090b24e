"""Admin views of the Prolific records (read-mostly; review happens on the review page)."""
from django.contrib import admin

from .models import BonusPayment, ProlificStudy, Submission, WebhookEvent


@admin.register(ProlificStudy)
class ProlificStudyAdmin(admin.ModelAdmin):
    """The link of a study to Prolific and the settings sent there."""

    list_display = ("study", "prolific_id", "prolific_status", "reward_minor_units", "last_synced_at")
    readonly_fields = ("prolific_id", "prolific_status", "external_study_url", "last_synced_at")


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    """Mirrored submission statuses; the Prolific ID is not listed (pages show pseudonyms)."""

    list_display = ("submission_id", "prolific_study", "status", "status_at", "review_action")
    list_filter = ("status", "review_action", "prolific_study")
    exclude = ("prolific_pid",)
    readonly_fields = [f.name for f in Submission._meta.fields if f.name != "prolific_pid"]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(WebhookEvent)
class WebhookEventAdmin(admin.ModelAdmin):
    """Received webhook events (one per X-Event-ID and scope: the instance URL or a study's)."""

    list_display = ("event_id", "scope_study", "event_type", "resource_id", "status", "sent_at", "outcome")
    list_filter = ("event_type", "outcome")
    readonly_fields = [f.name for f in WebhookEvent._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(BonusPayment)
class BonusPaymentAdmin(admin.ModelAdmin):
    """Bonus payments; never editable, so a sent payment cannot be reset and paid again."""

    list_display = ("pk", "prolific_study", "status", "total_minor_units", "pay_sent_at", "paid_at")
    list_filter = ("status",)
    readonly_fields = [f.name for f in BonusPayment._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
