"""Edits of a stored definition outside the import (the admin), checked by the study file's
validation: the one gate of a definition (issue 35).

An edit is a set of values at study-file paths (``completion_codes.no_consent``,
``annotation.settings.doctor.tags``). :func:`definition_edit_check` writes the stored study as its
study file (:func:`.export.study_file_data`), puts the values at their paths and validates the
result with :func:`.schema.validate_study_data`, so an edit is refused with the import's own
messages, and what is saved is the value the import would store (stripped texts, normalized
tags). The tables below say which model field is at which path.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .errors import StudyFileError
from .export import study_file_data
from .models import Setting, Study
from .schema import validate_study_data

Path = tuple[str | int, ...]

#: The study fields a researcher may edit outside the study file (running and annotating a
#: study), and their paths in the study file.
STUDY_FIELD_PATHS: dict[str, Path] = {
    "status": ("status",),
    "target_sample_size": ("target_sample_size",),
    "stop_at_target": ("stop_at_target",),
    "estimated_minutes": ("estimated_minutes",),
    "maximum_minutes": ("maximum_minutes",),
    "abandonment_timeout_minutes": ("abandonment_timeout_minutes",),
    "completion_code": ("completion_codes", "completed"),
    "failed_check_code": ("completion_codes", "failed_instruction_check"),
    "no_consent_code": ("completion_codes", "no_consent"),
    "annotators_per_item": ("annotation", "annotators_per_item"),
    "annotation_reservation_minutes": ("annotation", "reservation_minutes"),
}

#: The setting fields editable outside the study file: what annotators read.
SETTING_FIELDS = ("target_description", "annotation_tags", "surface_difference")


def path_text(path: Path) -> str:
    """``("settings", 1, "title")`` as the validation names it: ``settings[1].title``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def setting_field_paths(setting: Setting, data: dict[str, Any]) -> dict[str, Path]:
    """The paths of :data:`SETTING_FIELDS` of ``setting`` in ``data`` (the study's file as
    :func:`.export.study_file_data` writes it). ``{}`` for a setting the file does not hold
    (neither training nor main)."""
    if setting.kind == Setting.Kind.TRAINING:
        where: Path = ("training",)
    else:
        keys = [s.get("key") for s in data.get("settings") or [] if isinstance(s, dict)]
        if setting.key not in keys:
            return {}
        where = ("settings", keys.index(setting.key))
    codebook = ("annotation", "settings", setting.key)
    return {
        "target_description": (*where, "target_description"),
        "annotation_tags": (*codebook, "tags"),
        "surface_difference": (*codebook, "surface_difference"),
    }


@dataclass(frozen=True)
class DefinitionEdit:
    """The outcome of :func:`definition_edit_check`.

    ``problems`` maps a path to the validation's messages (empty: the edit may be saved);
    ``values`` maps each edited path to the value the import would store there (stripped,
    normalized), or to the value as given when the stored study is already invalid elsewhere.
    """

    problems: dict[str, list[str]] = field(default_factory=dict)
    values: dict[Path, Any] = field(default_factory=dict)


def _validate(data: dict[str, Any]) -> tuple[dict[str, list[str]], Any]:
    try:
        return {}, validate_study_data(copy.deepcopy(data))
    except StudyFileError as exc:
        return exc.errors, None


def _put(data: Any, path: Path, value: Any) -> None:
    for part in path[:-1]:
        data = data.setdefault(part, {}) if isinstance(data, dict) else data[part]
    data[path[-1]] = value


def _get(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


def _under(problem: str, edited: str) -> bool:
    return problem == edited or problem.startswith((f"{edited}.", f"{edited}["))


def definition_edit_check(*, study: Study, edits: dict[Path, Any]) -> DefinitionEdit:
    """Validate ``study``'s stored definition with ``edits`` (``{path: value}``) applied.

    Refused (``problems``) is every message at or under an edited path, and every message the
    edit adds elsewhere (a rule across fields, e.g. ``maximum_minutes`` below the estimate); a
    problem the stored study already had elsewhere does not block an edit of another field (a
    study can be paused whatever else is wrong with it; ``launch_check`` lists those). Reads the
    study's settings and patterns from the database; writes nothing.
    """
    try:
        data = study_file_data(study)
    except ValueError as exc:  # no training setting
        return DefinitionEdit(problems={"training": [str(exc)]})
    before, _ = _validate(data)
    for path, value in edits.items():
        _put(data, path, copy.deepcopy(value))
    after, clean = _validate(data)
    edited = [path_text(p) for p in edits]
    problems: dict[str, list[str]] = {}
    for where, messages in after.items():
        new = [m for m in messages if any(_under(where, e) for e in edited) or m not in before.get(where, [])]
        if new:
            problems[where] = new
    if problems:
        return DefinitionEdit(problems=problems)
    values = {}
    for path, value in edits.items():
        try:
            values[path] = _get(clean, path) if clean is not None else value
        except (KeyError, IndexError, TypeError):  # a default the validation left out
            values[path] = value
    return DefinitionEdit(values=values)


def field_for_problem(problem_path: str, paths: dict[str, Path]) -> str | None:
    """The model field whose path holds ``problem_path`` (``annotation.settings.doctor.tags[2]``
    is ``annotation_tags``), or ``None`` for a path of no field in ``paths``."""
    for name, path in paths.items():
        if _under(problem_path, path_text(path)):
            return name
    return None
