from django.apps import AppConfig


class StudiesConfig(AppConfig):
    """Study definition: studies, settings, token patterns, conditions and the survey."""

    name = "spotlight_study.studies"
    label = "studies"
    default_auto_field = "django.db.models.BigAutoField"
