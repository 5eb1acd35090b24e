from django.apps import AppConfig


class StudiesConfig(AppConfig):
    """Study definition: studies, settings, token patterns, conditions and the survey."""

    name = "spotlight_study.studies"
    label = "studies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every edit of a definition changes its version, which retires the compiled plans
        # of the participant pages in every process (studies/plan.py).
        from django.db.models.signals import post_delete, post_save, pre_save

        from . import plan
        from .models import Setting, Study, TokenPattern

        pre_save.connect(plan.on_study_pre_save, sender=Study, dispatch_uid="study_version_pre")
        post_save.connect(plan.on_study_post_save, sender=Study, dispatch_uid="study_version_post")
        for model in (Setting, TokenPattern):
            handler = plan.on_setting_changed if model is Setting else plan.on_pattern_changed
            for signal in (post_save, post_delete):
                signal.connect(handler, sender=model, dispatch_uid=f"{model.__name__}_version_{id(signal)}")

        # Before uWSGI forks: the tokenizer of the definition check (studies/definition_check.py).
        from spotlight_study.middleware.warmup import warm_up_register

        from .content import tokenizer_warm

        warm_up_register(tokenizer_warm)
