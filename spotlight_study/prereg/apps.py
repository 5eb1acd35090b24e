from django.apps import AppConfig


class PreregConfig(AppConfig):
    """Preregistered analysis plans: every version, its hash, its time and its reason."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "spotlight_study.prereg"
    label = "prereg"
    verbose_name = "Preregistration"
