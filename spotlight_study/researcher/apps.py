from django.apps import AppConfig


class ResearcherConfig(AppConfig):
    """Staff-only pages: the study dashboard and the preview of the participant flow."""

    name = "spotlight_study.researcher"
    label = "researcher"
