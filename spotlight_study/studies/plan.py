"""The compiled plan of a study: everything the participant pages read, built once per process.

A participant request used to load the study, its settings and their patterns (three queries and
a third of the request's CPU) to show one page. The definition only changes while a researcher
edits it, so each process compiles it once into an immutable :class:`StudyPlan` and keeps it
until the study's ``definition_version`` changes. The version travels with the participant's
row (one join in the query that reads the participant anyway), so checking that the plan is
current costs no query of its own.

Every edit changes the version: saving or deleting a study, a setting or a token pattern (the
admin, the study import, the stimuli app's setting build) goes through Django's model signals,
connected in ``StudiesConfig.ready``. ``QuerySet.update()`` and ``bulk_create()`` send no
signals: code that edits a definition that way calls :func:`study_definition_changed` (a
setting's ``save()`` before its patterns' ``bulk_create`` already changes it, in the same
transaction).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from spotlight_study.compiled_sql import SENTINEL_STR, PreparedQuery

from .definition_check import participant_blocking, problem_lines, stored_definition_problems
from .design import Cell, build_cells
from .errors import StudyUnavailable
from .languages import pattern_label
from .models import Setting, Study, TokenPattern, new_definition_version


def _frozen(value: Any) -> Any:
    """JSON data made read-only: dicts become ``MappingProxyType``, lists become tuples."""
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


@dataclass(frozen=True, slots=True)
class PatternPlan:
    """A token pattern as shown: ``label`` is e.g. ``maize, beans (more often in group 1)``."""

    id: int
    tokens: tuple[str, ...]
    group: int
    is_distractor: bool

    @property
    def label(self) -> str:
        """The pattern box's line in the active language (the study's on its pages)."""
        return pattern_label(self.tokens, self.group)

    @property
    def pk(self) -> int:
        """The ``TokenPattern`` id (as on the model)."""
        return self.id


@dataclass(frozen=True, slots=True)
class SettingPlan:
    """One setting: its texts in definition order, its patterns (position order) and check."""

    id: int
    key: str
    kind: str
    position: int
    title: str
    group1_texts: tuple[str, ...]
    group2_texts: tuple[str, ...]
    check_keywords: tuple[str, ...]
    patterns: tuple[PatternPlan, ...]
    target_patterns: tuple[PatternPlan, ...]

    @property
    def pk(self) -> int:
        """The ``Setting`` id (as on the model)."""
        return self.id

    def patterns_for(self, condition: str) -> tuple[PatternPlan, ...]:
        """The box under ``condition``: none, the targets, or targets and distractors (in
        definition order; the page shuffles them), as
        :func:`spotlight_study.studies.selectors.patterns_for_condition`."""
        if condition == "no_pattern":
            return ()
        if condition == "pattern_with_distractors":
            return self.patterns
        return self.target_patterns


@dataclass(frozen=True, slots=True)
class StudyPlan:
    """A study's definition, read-only, as the participant pages and services use it.

    The attribute names are the model's (``study.consent_text``, ``study.min_answer_chars``,
    ...), so the participant templates read a plan and a ``Study`` alike. ``survey`` is the
    survey definition with dicts as read-only mappings and lists as tuples. ``settings`` holds
    the training setting first, then the main settings in definition order; ``cells`` are
    :func:`spotlight_study.studies.design.build_cells` of the main settings and conditions
    (empty for a study without either). ``status`` is the status at compile time, for display
    only: arrivals read the locked row's status.
    """

    id: int
    version: int
    slug: str
    title: str
    status: str
    language: str
    consent_text: str
    instructions_text: str
    example_answer: str
    pattern_intro_text: str
    task_prompt: str
    completion_code: str
    failed_check_code: str
    no_consent_code: str
    estimated_minutes: int
    maximum_minutes: int
    abandonment_timeout_minutes: int
    target_sample_size: int
    stop_at_target: bool
    min_answer_chars: int
    max_answer_chars: int
    short_time_flag_seconds: int
    failed_check_policy: str
    instruction_check_attempts: int
    holding_flags: tuple[str, ...]
    conditions: tuple[str, ...]
    survey: Mapping
    settings: tuple[SettingPlan, ...]
    training: SettingPlan | None
    main: tuple[SettingPlan, ...]
    cells: tuple[Cell, ...]
    _by_key: Mapping = field(repr=False)
    #: What ``import_study`` would refuse in this definition, as ``"path: message"`` lines
    #: (:mod:`.definition_check`); set by :func:`study_plan`, empty on a plan compiled
    #: otherwise. Participant pages refuse a plan that has any (``StudyUnavailable``).
    definition_problems: tuple[str, ...] = ()
    #: The study file's inserted pages (``studies/pages.py``), read-only mappings.
    pages: tuple = ()

    @property
    def pk(self) -> int:
        """The ``Study`` id (as on the model)."""
        return self.id

    def setting(self, key: str) -> SettingPlan:
        """The setting with this key. Raises ``KeyError``."""
        return self._by_key[key]


def _pattern_plan(p: TokenPattern) -> PatternPlan:
    return PatternPlan(
        id=p.pk, tokens=tuple(p.tokens), group=p.group, is_distractor=p.is_distractor
    )


def _setting_plan(s: Setting) -> SettingPlan:
    patterns = tuple(_pattern_plan(p) for p in s.patterns.all())
    return SettingPlan(
        id=s.pk,
        key=s.key,
        kind=s.kind,
        position=s.position,
        title=s.title,
        group1_texts=tuple(s.group1_texts),
        group2_texts=tuple(s.group2_texts),
        check_keywords=tuple(s.check_keywords or ()),
        patterns=patterns,
        target_patterns=tuple(p for p in patterns if not p.is_distractor),
    )


def plan_compile(study: Study) -> StudyPlan:
    """Compile ``study`` (settings and patterns prefetched, as
    :func:`spotlight_study.studies.selectors.studies_with_settings` does) into a plan.

    No query when the prefetch is there; pure otherwise. The plan carries the instance's
    ``definition_version``.
    """
    settings = sorted(
        (_setting_plan(s) for s in study.settings.all()),
        key=lambda s: (s.kind != Setting.Kind.TRAINING, s.position),
    )
    main = tuple(s for s in settings if s.kind == Setting.Kind.MAIN)
    conditions = tuple(study.conditions or ())
    cells = tuple(build_cells([s.key for s in main], list(conditions))) if main and conditions else ()
    return StudyPlan(
        id=study.pk,
        version=study.definition_version,
        slug=study.slug,
        title=study.title,
        status=study.status,
        language=study.language,
        consent_text=study.consent_text,
        instructions_text=study.instructions_text,
        example_answer=study.example_answer,
        pattern_intro_text=study.pattern_intro_text,
        task_prompt=study.task_prompt,
        completion_code=study.completion_code,
        failed_check_code=study.failed_check_code,
        no_consent_code=study.no_consent_code,
        estimated_minutes=study.estimated_minutes,
        maximum_minutes=study.maximum_minutes,
        abandonment_timeout_minutes=study.abandonment_timeout_minutes,
        target_sample_size=study.target_sample_size,
        stop_at_target=study.stop_at_target,
        min_answer_chars=study.min_answer_chars,
        max_answer_chars=study.max_answer_chars,
        short_time_flag_seconds=study.short_time_flag_seconds,
        failed_check_policy=study.failed_check_policy,
        instruction_check_attempts=study.instruction_check_attempts,
        holding_flags=tuple(study.holding_flags or ()),
        conditions=conditions,
        survey=_frozen(study.survey or {}),
        pages=_frozen(study.pages or []),
        settings=tuple(settings),
        training=next((s for s in settings if s.kind == Setting.Kind.TRAINING), None),
        main=main,
        cells=cells,
        _by_key=MappingProxyType({s.key: s for s in settings}),
    )


# One plan per study in this process: {study id: plan}. Plans are immutable, so threads share
# them; two threads compiling the same new version at once only do the work twice.
_PLANS: dict[int, StudyPlan] = {}


def study_plan(*, study_id: int, version: int) -> StudyPlan:
    """The plan of study ``study_id`` at ``version``: from this process's cache, or compiled.

    A cached plan of another version is replaced by the definition as it is now (three queries:
    the study, its settings, their patterns), whose version may be newer than ``version`` if
    an edit landed in between. A compiled plan carries its ``definition_problems``. Raises
    ``Study.DoesNotExist`` if the study is gone, and :class:`~.errors.StudyUnavailable` if the
    stored definition cannot even be compiled (a value of the wrong type).
    """
    plan = _PLANS.get(study_id)
    if plan is not None and plan.version == version:
        return plan
    from .selectors import studies_with_settings

    study = studies_with_settings().get(pk=study_id)
    # The definition is checked as an import would check it, once per version and process
    # (about 10 ms for the reference study, no query: the settings are prefetched).
    problems = tuple(problem_lines(participant_blocking(stored_definition_problems(study))))
    try:
        plan = plan_compile(study)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        # A stored value of a shape no page can show (a row edited outside the import).
        raise StudyUnavailable(
            slug=study.slug,
            problems=problems or (f"(definition): {type(exc).__name__}: {exc}",),
            language=study.language,
        ) from exc
    if problems:
        plan = replace(plan, definition_problems=problems)
    _PLANS[study_id] = plan
    return plan


def plan_usable(plan: StudyPlan) -> StudyPlan:
    """``plan`` itself, for a participant page; raises :class:`~.errors.StudyUnavailable` when
    its definition is one ``import_study`` would refuse (``plan.definition_problems``)."""
    if plan.definition_problems:
        raise StudyUnavailable(
            slug=plan.slug, problems=plan.definition_problems, language=plan.language
        )
    return plan


def study_plan_of(study: Study | StudyPlan) -> StudyPlan:
    """The plan of a ``Study`` instance (a plan is returned as it is).

    The cached plan when its version is the instance's; otherwise compiled from the instance if
    its settings are prefetched (not cached: the instance may hold unsaved changes), else
    loaded as :func:`study_plan` does.
    """
    if isinstance(study, StudyPlan):
        return study
    plan = _PLANS.get(study.pk)
    if plan is not None and plan.version == study.definition_version:
        return plan
    if "settings" in getattr(study, "_prefetched_objects_cache", {}):
        return plan_compile(study)
    return study_plan(study_id=study.pk, version=study.definition_version)


def plan_cache_clear() -> None:
    """Forget every compiled plan of this process (tests; the next request compiles again)."""
    _PLANS.clear()


def study_definition_changed(*, study_id: int) -> None:
    """Give study ``study_id`` a new definition version, so every process compiles it again.

    For writes that send no model signal (``QuerySet.update()``, ``bulk_create()``); saves and
    deletes of studies, settings and patterns call it (or its equivalent) already.
    """
    Study.objects.filter(pk=study_id).update(definition_version=new_definition_version())


# --- signal receivers (connected in StudiesConfig.ready) -------------------------------------


def on_study_pre_save(sender, instance: Study, raw: bool = False, **kwargs) -> None:
    """Draw a new version for the row being saved (written by the same INSERT or UPDATE)."""
    if not raw:
        instance.definition_version = new_definition_version()
        _RECENT.clear()


def on_study_post_save(sender, instance: Study, raw: bool = False, update_fields=None, **kwargs) -> None:
    """A save limited to ``update_fields`` leaves the version out: write it separately."""
    if not raw and update_fields is not None and "definition_version" not in update_fields:
        Study.objects.filter(pk=instance.pk).update(definition_version=instance.definition_version)


def on_setting_changed(sender, instance: Setting, raw: bool = False, **kwargs) -> None:
    """A setting saved or deleted changes its study's definition."""
    if not raw and instance.study_id:
        study_definition_changed(study_id=instance.study_id)
        _RECENT.clear()


def on_pattern_changed(sender, instance: TokenPattern, raw: bool = False, **kwargs) -> None:
    """A token pattern saved or deleted changes its setting's study's definition."""
    if not raw and instance.setting_id:
        Study.objects.filter(settings__pk=instance.setting_id).update(
            definition_version=new_definition_version()
        )
        _RECENT.clear()


# Asked by every arrival: compiled once per process (spotlight_study.compiled_sql).
_ID_AND_VERSION = PreparedQuery(
    lambda slug: Study.objects.filter(slug=slug).values_list("pk", "definition_version")[:1],
    slug=SENTINEL_STR,
)


def study_plan_for_slug(slug: str) -> StudyPlan | None:
    """The current plan of the study ``slug``, or ``None`` if there is none.

    One query for the study's id and version (the definition itself only when this process has
    no plan of that version yet). For the pages that start from the slug alone: arrivals, and
    participant pages without a participant.
    """
    rows = _ID_AND_VERSION.fetch(slug=slug)
    if not rows:
        return None
    row = rows[0]
    try:
        return study_plan(study_id=row[0], version=row[1])
    except Study.DoesNotExist:  # deleted in between
        return None


#: How long (s) :func:`study_plan_for_slug_recent` may answer without asking the database.
RECENT_PLAN_MAX_AGE_S = 5.0
_RECENT: dict[str, tuple[float, StudyPlan]] = {}
_MAX_RECENT = 256


def study_plan_for_slug_recent(slug: str, *, max_age_s: float = RECENT_PLAN_MAX_AGE_S) -> StudyPlan | None:
    """The plan of the study ``slug`` as :func:`study_plan_for_slug` gave it at most
    ``max_age_s`` seconds ago in this process (no query then), or ``None`` if there is none.

    For requests that need the study's limits but must not spend a query on them (a typed
    draft: one ``UPDATE``, nothing else): a plan edited by another process within the last
    seconds may show its previous version (an edit in this process forgets every recent plan).
    An unknown slug is asked again every time.
    """
    now = time.monotonic()
    cached = _RECENT.get(slug)
    if cached is not None and now - cached[0] <= max_age_s:
        return cached[1]
    plan = study_plan_for_slug(slug)
    if plan is not None:
        if len(_RECENT) >= _MAX_RECENT:
            _RECENT.clear()
        _RECENT[slug] = (now, plan)
    return plan
