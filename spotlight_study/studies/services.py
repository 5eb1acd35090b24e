"""Writes of study definitions."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Q

from .changes import replace_refusal
from .errors import StudyImportError
from .freeze import frozen_message, study_freeze_reason
from .languages import default_task_prompt
from .models import Setting, Study, TokenPattern
from .schema import AnswerFlagsSerializer, parse_study_file, validate_study_data


def _create_setting(
    *, study: Study, data: dict, kind: str, position: int, annotation: dict | None = None
) -> Setting:
    annotation = annotation or {}
    setting = Setting(
        study=study,
        key=data["key"],
        kind=kind,
        position=position,
        title=data["title"],
        group1_texts=list(data["group1"]),
        group2_texts=list(data["group2"]),
        target_description=data.get("target_description", ""),
        check_keywords=list(data.get("check_keywords", [])),
        annotation_tags=list(annotation.get("tags", [])),
        surface_difference=annotation.get("surface_difference", ""),
        provenance=_plain(data.get("provenance")),
    )
    setting.full_clean()
    setting.save()
    patterns = [(p, False) for p in data.get("patterns", [])] + [
        (p, True) for p in data.get("distractor_patterns", [])
    ]
    TokenPattern.objects.bulk_create(
        TokenPattern(
            setting=setting,
            tokens=list(p["tokens"]),
            group=int(p["group"]),
            is_distractor=is_distractor,
            position=i,
            unchecked_reason=p.get("unchecked_reason", "") if p.get("unchecked") else "",
        )
        for i, (p, is_distractor) in enumerate(patterns)
    )
    return setting


def _refuse_if_frozen(study: Study) -> None:
    reason = study_freeze_reason(study=study)
    if reason:
        raise StudyImportError(frozen_message(study=study, reason=reason))


@dataclass(frozen=True)
class StudyImportOutcome:
    """What :func:`study_import_outcome` did: the study, and how many participants a replace
    deleted with the old definition (pilot participants; real arrivals who never consented)."""

    study: Study
    pilot_participants_removed: int = 0
    unconsented_arrivals_removed: int = 0


def _flag_thresholds(section: dict | None) -> dict:
    """Every threshold of the ``answer_flags`` section, its defaults filled in (a study file
    without the section stores the defaults, as its exported file states them)."""
    fields = AnswerFlagsSerializer().fields
    section = section or {}
    return {name: section.get(name, field.default) for name, field in fields.items()}


def study_import(
    *,
    data: dict[str, Any],
    replace: bool = False,
    as_slug: str | None = None,
    drop_missing: bool = False,
) -> Study:
    """Create a study (or replace its definition); :func:`study_import_outcome` without the
    counts of removed participants. Same parameters, returns the study, raises the same."""
    return study_import_outcome(
        data=data, replace=replace, as_slug=as_slug, drop_missing=drop_missing
    ).study


@transaction.atomic
def study_import_outcome(
    *,
    data: dict[str, Any],
    replace: bool = False,
    as_slug: str | None = None,
    drop_missing: bool = False,
) -> StudyImportOutcome:
    """Create a study (or replace its definition) from a parsed study file.

    Parameters
    ----------
    data : dict
        A parsed study file; validated here with
        :func:`spotlight_study.studies.schema.validate_study_data`. Its optional ``annotation``
        section sets ``annotators_per_item``, ``annotation_reservation_minutes`` and each
        setting's ``annotation_tags`` and ``surface_difference`` (defaults: 2, 30, none, empty).
    replace : bool
        Replace the definition of an existing study with the same slug, in place: the study row
        (its Prolific link, annotators and pseudonym salt) stays, its settings and patterns are
        rebuilt, and its pilot participants and arrivals who never consented are deleted with
        the old definition, since their answers refer to it. Refused once the study is frozen
        (:func:`spotlight_study.studies.freeze.study_freeze_reason`: a real participant has
        consented).
    as_slug : str or None
        Import under this slug instead of the file's: the way to copy a frozen study as a new
        version.
    drop_missing : bool
        Let a replace delete the study's settings that the file does not have (for example one
        built on the Stimuli pages). Without it such a replace is refused, naming the settings
        and how to keep them (``export_study`` first).

    Returns
    -------
    StudyImportOutcome
        The study and, for a replace, the number of pilot participants and of unconsented
        arrivals deleted (0 and 0 otherwise).

    Raises
    ------
    StudyFileError
        If the data is invalid (every bad field is named).
    StudyImportError
        If the slug exists and ``replace`` is false, the existing study is frozen, or the file
        lacks one of its settings and ``drop_missing`` is false
        (:func:`~.changes.replace_refusal`); the message says what to do instead. Nothing is
        changed.
    """
    if as_slug is not None:
        data = {**data, "slug": as_slug}
    clean = validate_study_data(data)
    existing = Study.objects.select_for_update().filter(slug=clean["slug"]).first()
    pilots_removed = unconsented_removed = 0
    if existing is not None:
        refusal = replace_refusal(
            study=existing, clean=clean, replace=replace, drop_missing=drop_missing
        )
        if refusal:
            raise StudyImportError(refusal)
        # Pilot data and unconsented arrivals belong to the old definition (and would block
        # deleting its settings). The check runs again after the delete: a consent saved
        # meanwhile keeps its row (it no longer matches the filter) and freezes the study.
        removable = existing.participants.filter(Q(is_pilot=True) | Q(consented_at__isnull=True))
        pilots_removed = removable.filter(is_pilot=True).count()
        unconsented_removed = removable.filter(is_pilot=False).count()
        removable.delete()
        _refuse_if_frozen(existing)
        existing.settings.all().delete()
    codes = clean["completion_codes"]
    annotation = _plain(clean.get("annotation") or {})
    per_setting = annotation.get("settings", {})
    study = existing or Study()
    for field, value in dict(
        slug=clean["slug"],
        title=clean["title"],
        status=clean["status"],
        language=clean["language"],
        consent_text=clean["consent_text"],
        instructions_text=clean["instructions_text"],
        example_answer=clean["example_answer"],
        pattern_intro_text=clean["pattern_intro_text"],
        completion_code=codes["completed"],
        failed_check_code=codes["failed_instruction_check"],
        no_consent_code=codes["no_consent"],
        estimated_minutes=clean["estimated_minutes"],
        maximum_minutes=clean["maximum_minutes"],
        abandonment_timeout_minutes=clean["abandonment_timeout_minutes"],
        target_sample_size=clean["target_sample_size"],
        stop_at_target=clean["stop_at_target"],
        min_answer_chars=clean["min_answer_chars"],
        max_answer_chars=clean["max_answer_chars"],
        short_time_flag_seconds=clean["short_time_flag_seconds"],
        answer_flag_thresholds=_flag_thresholds(clean.get("answer_flags")),
        failed_check_policy=clean["failed_check_policy"],
        instruction_check_attempts=clean["instruction_check_attempts"],
        holding_flags=list(clean["holding_flags"]),
        conditions=list(clean["conditions"]),
        survey=_plain(clean["survey"]),
        pages=_plain(clean.get("pages") or []),
        annotators_per_item=annotation.get("annotators_per_item", 2),
        annotation_reservation_minutes=annotation.get("reservation_minutes", 30),
        annotation_codebook=annotation.get("codebook") or {},
        # Without one in the file, the platform's prompt in the study's language.
        task_prompt=clean.get("task_prompt") or default_task_prompt(clean["language"]),
    ).items():
        setattr(study, field, value)
    study.full_clean()
    study.save()
    training = clean["training"]
    _create_setting(
        study=study,
        data=training,
        kind=Setting.Kind.TRAINING,
        position=0,
        annotation=per_setting.get(training["key"]),
    )
    for position, setting in enumerate(clean["settings"]):
        _create_setting(
            study=study,
            data=setting,
            kind=Setting.Kind.MAIN,
            position=position,
            annotation=per_setting.get(setting["key"]),
        )
    return StudyImportOutcome(
        study=study,
        pilot_participants_removed=pilots_removed,
        unconsented_arrivals_removed=unconsented_removed,
    )


def study_import_file(
    *,
    path: str | Path,
    replace: bool = False,
    as_slug: str | None = None,
    drop_missing: bool = False,
) -> Study:
    """Parse, validate and import a study file. Raises what :func:`study_import` raises."""
    return study_import(
        data=parse_study_file(path), replace=replace, as_slug=as_slug, drop_missing=drop_missing
    )


def _plain(value: Any) -> Any:
    """Serializer output (OrderedDicts, ReturnLists) as plain JSON-ready data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
