from django.apps import AppConfig


class ProlificConfig(AppConfig):
    """Prolific: the study on Prolific, submission sync and webhook, review and bonuses."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "spotlight_study.prolific"
    label = "prolific"
