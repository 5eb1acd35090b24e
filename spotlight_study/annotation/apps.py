from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    """Blind annotation: item queues, labels, agreement, adjudication and their exports."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "spotlight_study.annotation"
    label = "annotation"

    def ready(self) -> None:
        # The Prolific review cannot import this app; it asks the sources registered here.
        from spotlight_study.participation.review_evidence import exclusion_source_register

        from .exclusions import participant_final_exclusions

        exclusion_source_register(participant_final_exclusions)
        # A study-file replace may not drop a codebook field or option that labels hold.
        from spotlight_study.studies.codebook_changes import label_source_register

        from .codebook_labels import study_label_values

        label_source_register(study_label_values)
