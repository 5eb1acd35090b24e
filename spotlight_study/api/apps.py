from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The researcher REST API (Django REST framework) under ``/api/``; see ``docs/api.md``."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "spotlight_study.api"
    label = "api"
