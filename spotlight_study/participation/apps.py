from django.apps import AppConfig


class ParticipationConfig(AppConfig):
    """Participants: balanced assignment at arrival, the flow, timing, answers and the export."""

    name = "spotlight_study.participation"
    label = "participation"
    default_auto_field = "django.db.models.BigAutoField"
