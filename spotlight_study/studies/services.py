"""Writes of study definitions."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import transaction

from .models import Setting, Study, TokenPattern
from .schema import parse_study_file, validate_study_data


class StudyImportError(Exception):
    """A valid study file that cannot be applied to the database in its current state."""


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
        )
        for i, (p, is_distractor) in enumerate(patterns)
    )
    return setting


@transaction.atomic
def study_import(*, data: dict[str, Any], replace: bool = False) -> Study:
    """Create a study (or replace its definition) from a parsed study file.

    Parameters
    ----------
    data : dict
        A parsed study file; validated here with
        :func:`spotlight_study.studies.schema.validate_study_data`. Its optional ``annotation``
        section sets ``annotators_per_item``, ``annotation_reservation_minutes`` and each
        setting's ``annotation_tags`` and ``surface_difference`` (defaults: 2, 30, none, empty).
    replace : bool
        Replace an existing study with the same slug. Refused if it has participants, since their
        answers refer to its settings.

    Returns
    -------
    Study

    Raises
    ------
    StudyFileError
        If the data is invalid (every bad field is named).
    StudyImportError
        If the slug exists and ``replace`` is false, or the existing study has participants.
    """
    clean = validate_study_data(data)
    existing = Study.objects.select_for_update().filter(slug=clean["slug"]).first()
    if existing is not None:
        if not replace:
            raise StudyImportError(
                f"A study with slug '{clean['slug']}' exists. Use --replace to overwrite its "
                "definition (only possible before anyone has taken part)."
            )
        if existing.participants.exists():
            raise StudyImportError(
                f"Study '{clean['slug']}' already has participants; its definition cannot be "
                "replaced. Import it under a new slug instead."
            )
        existing.delete()
    codes = clean["completion_codes"]
    annotation = _plain(clean.get("annotation") or {})
    per_setting = annotation.get("settings", {})
    study = Study(
        slug=clean["slug"],
        title=clean["title"],
        status=clean["status"],
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
        max_answer_chars=clean["max_answer_chars"],
        short_time_flag_seconds=clean["short_time_flag_seconds"],
        failed_check_policy=clean["failed_check_policy"],
        conditions=list(clean["conditions"]),
        survey=_plain(clean["survey"]),
        annotators_per_item=annotation.get("annotators_per_item", 2),
        annotation_reservation_minutes=annotation.get("reservation_minutes", 30),
    )
    if clean.get("task_prompt"):
        study.task_prompt = clean["task_prompt"]
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
    return study


def study_import_file(*, path: str | Path, replace: bool = False) -> Study:
    """Parse, validate and import a study file. Raises what :func:`study_import` raises."""
    return study_import(data=parse_study_file(path), replace=replace)


def _plain(value: Any) -> Any:
    """Serializer output (OrderedDicts, ReturnLists) as plain JSON-ready data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
