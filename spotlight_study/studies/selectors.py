"""Reads of study definitions."""
from __future__ import annotations

from spotlight_study.accounts.roles import is_staff_user

from django.db.models import Prefetch, QuerySet
from django.http import Http404

from .design import Cell, build_cells, design_warnings
from .models import Setting, Study, StudyDraft, TokenPattern


def studies_with_settings() -> QuerySet[Study]:
    """Studies with their settings (kind, then position) and patterns (position) prefetched:
    two extra queries for any number of studies."""
    return Study.objects.prefetch_related(
        Prefetch(
            "settings",
            queryset=Setting.objects.order_by("kind", "position").prefetch_related(
                Prefetch("patterns", queryset=TokenPattern.objects.order_by("position"))
            ),
        )
    )


def study_get_with_settings(*, slug: str) -> Study:
    """The study with its settings and patterns prefetched (two extra queries in all).

    Raises ``Study.DoesNotExist`` if there is no study with this slug.
    """
    return studies_with_settings().get(slug=slug)


def study_get(*, slug: str, with_settings: bool = True) -> Study | None:
    """The study with this slug, or ``None``.

    With ``with_settings`` (the default) its settings and patterns come prefetched
    (:func:`study_get_with_settings`, two extra queries); without, one query for the row alone,
    for pages that never read the settings.
    """
    if with_settings:
        try:
            return study_get_with_settings(slug=slug)
        except Study.DoesNotExist:
            return None
    return Study.objects.filter(slug=slug).first()


def study_get_or_404(*, slug: str, with_settings: bool = True) -> Study:
    """The study with this slug (see :func:`study_get`) for a view; the one "study or 404".

    Raises ``Http404`` with the message ``No study with slug '<slug>'.``: pages show their area's
    404 page (:mod:`spotlight_study.errors`), and the researcher API answers its ``not_found``
    error with that message.
    """
    study = study_get(slug=slug, with_settings=with_settings)
    if study is None:
        raise Http404(f"No study with slug '{slug}'.")
    return study


def study_list() -> QuerySet[Study]:
    """All studies, newest first."""
    return Study.objects.order_by("-created_at")


def main_settings(study: Study) -> list[Setting]:
    """The study's main settings in definition order (uses the prefetch cache when present)."""
    return [s for s in study.settings.all() if s.kind == Setting.Kind.MAIN]


def training_setting(study: Study) -> Setting | None:
    """The study's training setting, or ``None`` if it has none."""
    return next((s for s in study.settings.all() if s.kind == Setting.Kind.TRAINING), None)


def study_cells(study: Study) -> list[Cell]:
    """The study's counterbalancing cells (see :func:`spotlight_study.studies.design.build_cells`)."""
    return build_cells([s.key for s in main_settings(study)], list(study.conditions))


def patterns_for_condition(setting: Setting, condition: str) -> list[TokenPattern]:
    """The patterns shown in ``setting`` under ``condition``: none, the targets, or all.

    The order of targets and distractors is the definition order; the caller shuffles if wanted.
    """
    if condition == "no_pattern":
        return []
    patterns = list(setting.patterns.all())
    if condition == "pattern_with_distractors":
        return patterns
    return [p for p in patterns if not p.is_distractor]


def setting_for_key(study: Study, key: str) -> Setting:
    """The study's setting with this key (uses the prefetch cache). Raises ``KeyError``."""
    for setting in study.settings.all():
        if setting.key == key:
            return setting
    raise KeyError(key)


def study_design_warnings(study: Study) -> list[str]:
    """The study's design warnings (:func:`spotlight_study.studies.design.design_warnings`).

    A study without main settings or conditions gets one warning saying so.
    """
    keys = [s.key for s in main_settings(study)]
    if not keys or not study.conditions:
        return ["The study has no main setting or no condition, so it has no cells."]
    return design_warnings(
        setting_keys=keys,
        conditions=list(study.conditions),
        target_sample_size=study.target_sample_size,
        language=study.language,
    )


def drafts_unpublished(*, user):
    """Builder drafts of studies not published yet (no study has their slug) that ``user`` may
    open (instance staff: all; anyone else: the drafts they started), newest first; one query."""
    drafts = StudyDraft.objects.exclude(slug__in=Study.objects.values("slug"))
    if not is_staff_user(user):
        drafts = drafts.filter(created_by=user)
    return drafts.order_by("-updated_at")
