"""Would ``import_study`` accept the definition a study holds now?

A stored definition can drift from what its file allowed: rows edited outside the import (an old
admin form, a shell, a migration, a setting built on the Stimuli pages). The one gate of a
definition is the study file's validation (:func:`.schema.validate_study_data`), so this module
writes the stored study as its study file (:func:`.export.study_file_data`, what ``export_study``
writes) and runs that validation on it. The launch check and the participant pages' compiled
plan (:mod:`.plan`) ask it; both see the same messages, by the same paths, as an import would
give.
"""
from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .export import study_file_data, study_file_problems
from .models import Study
from .schema import StudyFileSerializer


def stored_definition_problems(study: Study) -> dict[str, list[str]]:
    """What ``import_study`` would refuse in the stored definition of ``study``, by path.

    ``{}`` when the definition would import. Paths are the study file's
    (``settings[0].patterns[1].tokens``, ``survey.condition_items``); a stored value of the
    wrong type is named at its path (the export writes it as null). Reads the study's settings
    and patterns (no query when they are prefetched, as
    :func:`.selectors.studies_with_settings` does). Never raises for a malformed definition.
    """
    try:
        data = study_file_data(study)
    except ValueError as exc:  # no training setting: the file cannot be written at all
        return {"training": [str(exc)]}
    problems = study_file_problems(data)
    for path, message in _non_text(StudyFileSerializer(), data, "").items():
        problems.setdefault(path, []).append(message)
    return problems


#: Paths of the study file whose problems never close a study's participant pages: the title is
#: shown only as text (escaped, in the page's ``<title>``), so a stored title the import would
#: refuse today (one of only invisible characters, refused since that rule came in) is listed
#: for the researcher and stops the launch check, but a study already running keeps its
#: participants instead of answering them 503.
NOT_BLOCKING_PARTICIPANTS = frozenset({"title"})


def participant_blocking(problems: dict[str, list[str]]) -> dict[str, list[str]]:
    """The problems of :func:`stored_definition_problems` that close the participant pages:
    all but those at :data:`NOT_BLOCKING_PARTICIPANTS`. Same shape as its argument."""
    return {path: messages for path, messages in problems.items() if path not in NOT_BLOCKING_PARTICIPANTS}


def _non_text(field: serializers.Field, value: Any, path: str) -> dict[str, str]:
    """Values stored where the schema reads text but that are not text, by path.

    The validation reads a number as text (a YAML file's ``code: 12345``) and the import stores
    the text, so a stored number (``tokens: [1, 2]``) never came from an import, and the pages
    that join texts would fail on it. Walks the data alongside the serializer tree, as
    :func:`.schema._unknown_key_errors` does.
    """
    out: dict[str, str] = {}
    if isinstance(field, (serializers.ListSerializer, serializers.ListField)):
        if isinstance(value, list):
            for i, item in enumerate(value):
                out.update(_non_text(field.child, item, f"{path}[{i}]"))
    elif isinstance(field, serializers.DictField):
        if isinstance(value, dict):
            for key, item in value.items():
                out.update(_non_text(field.child, item, f"{path}.{key}" if path else str(key)))
    elif isinstance(field, serializers.Serializer):
        if isinstance(value, dict):
            for name, child in field.fields.items():
                if name in value:
                    out.update(_non_text(child, value[name], f"{path}.{name}" if path else name))
    elif isinstance(field, serializers.CharField) and value is not None and not isinstance(value, str):
        out[path] = f"Stored as {type(value).__name__}, not text: an import stores text here."
    return out


def problems_added(before: dict[str, list[str]], after: dict[str, list[str]]) -> dict[str, list[str]]:
    """The messages of ``after`` that ``before`` did not have at the same path: what a write
    broke, as opposed to what was broken already."""
    added = {path: [m for m in msgs if m not in before.get(path, [])] for path, msgs in after.items()}
    return {path: msgs for path, msgs in added.items() if msgs}


def problem_lines(problems: dict[str, list[str]]) -> list[str]:
    """``problems`` as sorted ``"path: message message"`` lines, for a report or a log."""
    return [f"{path}: {' '.join(msgs)}" for path, msgs in sorted(problems.items())]
