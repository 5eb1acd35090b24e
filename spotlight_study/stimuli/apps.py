from django.apps import AppConfig


class StimuliConfig(AppConfig):
    """Stimulus preparation: import or generate LLM outputs, mine token patterns, build settings."""

    name = "spotlight_study.stimuli"
    label = "stimuli"
    default_auto_field = "django.db.models.BigAutoField"
