from django.apps import AppConfig


class ProlificConfig(AppConfig):
    """Prolific: the study on Prolific, submission sync and webhook, review and bonuses."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "spotlight_study.prolific"
    label = "prolific"

    def ready(self) -> None:
        # participation cannot import this app; it asks the sources registered here instead.
        from spotlight_study.participation.arrival import expected_study_ids_register

        from .selectors import linked_prolific_study_ids

        expected_study_ids_register(linked_prolific_study_ids)
