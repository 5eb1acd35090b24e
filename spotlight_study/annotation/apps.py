from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    """Blind annotation: item queues, labels, agreement, adjudication and their exports."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "spotlight_study.annotation"
    label = "annotation"
