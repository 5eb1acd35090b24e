from django.apps import AppConfig


class PrivacyConfig(AppConfig):
    """Erasure of one participant and the purge of raw Prolific IDs, with their audit trail."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "spotlight_study.privacy"
    label = "privacy"
    verbose_name = "Privacy (erasure and retention)"
