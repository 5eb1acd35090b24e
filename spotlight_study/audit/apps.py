from django.apps import AppConfig


class AuditConfig(AppConfig):
    """The audit trail: one append-only row per decision (membership, credentials, review,
    ending participants, exports, erasures), with its author and time."""

    name = "spotlight_study.audit"
    label = "audit"
    default_auto_field = "django.db.models.BigAutoField"
