from django.apps import AppConfig


class ParticipationConfig(AppConfig):
    """Participants: balanced assignment at arrival, the flow, timing, answers and the export."""

    name = "spotlight_study.participation"
    label = "participation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # studies cannot import this app; it asks the checks registered here instead.
        from spotlight_study.errors import path_language_register
        from spotlight_study.studies.freeze import freeze_check_register
        from spotlight_study.studies.quality_flags import flag_keys_register

        from . import flags
        from .language import language_of_study_path
        from .selectors import study_frozen_reason

        freeze_check_register(study_frozen_reason)
        flag_keys_register(keys=flags.FLAG_KEYS, holding_defaults=flags.DEFAULT_HOLDING_FLAGS)
        # An error page under /s/<slug>/ that no view reached speaks the study's language.
        path_language_register(language_of_study_path)
