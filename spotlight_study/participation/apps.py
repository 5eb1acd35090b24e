from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _place_count_triggers(sender, using, **kwargs) -> None:
    """After ``migrate``: SQLite drops a table's triggers when a migration rebuilds it, so the
    cell counts' triggers are re-created (and the counts recounted) when missing."""
    from django.db import connections

    from .place_counts import triggers_ensure

    connection = connections[using]
    if "participation_cellplacecount" in connection.introspection.table_names():
        triggers_ensure(connection)


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

        from . import flags, steps  # noqa: F401 - the page kinds register their study-file keys
        from .language import language_of_study_path
        from .selectors import study_frozen_reason

        freeze_check_register(study_frozen_reason)
        post_migrate.connect(_place_count_triggers, sender=self, dispatch_uid="participation_place_counts")
        flag_keys_register(keys=flags.FLAG_KEYS, holding_defaults=flags.DEFAULT_HOLDING_FLAGS)
        # An error page under /s/<slug>/ that no view reached speaks the study's language.
        path_language_register(language_of_study_path)
