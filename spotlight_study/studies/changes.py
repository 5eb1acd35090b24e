"""What importing a study file would change: ``import_study FILE --replace --dry-run``, and the
refusals the import and the dry run share (the slug exists, the study is frozen, a setting would
be dropped).

Both sides are compared in the study file's form: the stored study through
:func:`~.export.study_file_data`, the file through :func:`file_in_export_form` (the validated
file with the defaults the import fills in), so a file exported from the study shows no change.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from .codebook_changes import codebook_refusal
from .export import study_file_data
from .freeze import frozen_message, study_freeze_reason
from .models import Study

#: Longest text shown for an old or new value (longer ones are cut with "…").
SHORT_CHARS = 60
_MISSING = object()


def file_in_export_form(clean: dict[str, Any]) -> dict[str, Any]:
    """Validated study-file data (:func:`~.schema.validate_study_data`) with the import's
    defaults filled in, in the form :func:`~.export.study_file_data` writes."""
    data = json.loads(json.dumps(clean))  # plain dicts and lists, a private copy
    if not data.get("task_prompt"):
        data["task_prompt"] = Study._meta.get_field("task_prompt").default
    settings = [data["training"], *data["settings"]]
    for setting in settings:
        if setting.get("provenance") is None:
            setting.pop("provenance", None)
        for kind in ("patterns", "distractor_patterns"):
            for pattern in setting[kind]:
                if not pattern.get("unchecked"):
                    pattern.pop("unchecked", None)
                    pattern.pop("unchecked_reason", None)
    annotation = data.get("annotation") or {}
    per_setting = annotation.get("settings", {})
    data["annotation"] = {
        "annotators_per_item": annotation.get("annotators_per_item", 2),
        "reservation_minutes": annotation.get("reservation_minutes", 30),
        "settings": {
            s["key"]: {
                "tags": per_setting.get(s["key"], {}).get("tags", []),
                "surface_difference": per_setting.get(s["key"], {}).get("surface_difference", ""),
            }
            for s in settings
        },
    }
    if annotation.get("codebook"):
        data["annotation"]["codebook"] = annotation["codebook"]
    return data


def _short(value: Any, *, start: int = 0) -> str:
    """``value`` for one line: a text quoted, from ``start`` (marked "…"), cut at
    :data:`SHORT_CHARS`; a list with its length; anything else as JSON."""
    if value is _MISSING:
        return "(none)"
    if isinstance(value, str):
        text = ("…" if start else "") + " ".join(value[start:].split())
    else:
        text = json.dumps(value, ensure_ascii=False)
    if len(text) > SHORT_CHARS:
        text = text[: SHORT_CHARS - 1] + "…"
    if isinstance(value, list):
        text = f"{_items(len(value))} {text}"
    return f'"{text}"' if isinstance(value, str) else text


def _items(n: int) -> str:
    return f"{n} item{'s' if n != 1 else ''}"


def _list_change(old: list, new: list) -> str:
    """``3 items → 2 items (removed: …; added: …)``: the items only one side has."""
    removed = [item for item in old if item not in new]
    added = [item for item in new if item not in old]
    parts = [f"removed: {', '.join(_short(i) for i in removed)}"] if removed else []
    parts += [f"added: {', '.join(_short(i) for i in added)}"] if added else []
    detail = f" ({'; '.join(parts)})" if parts else " (reordered)"
    return f"{_items(len(old))} → {_items(len(new))}{detail}"


def _first_difference(old: str, new: str) -> int:
    """Where two texts start to differ, less some context, so a change late in a long text
    shows."""
    same = 0
    for a, b in zip(old, new):
        if a != b:
            break
        same += 1
    return 0 if same < SHORT_CHARS // 2 else same - 15


@dataclass(frozen=True)
class FieldChange:
    """One changed value: its path in the file (``title``, ``group1[3]``) and both values."""

    path: str
    old: Any
    new: Any

    def __str__(self) -> str:
        if isinstance(self.old, list) and isinstance(self.new, list):
            return f"{self.path}: {_list_change(self.old, self.new)}"
        start = 0
        if isinstance(self.old, str) and isinstance(self.new, str):
            start = _first_difference(self.old, self.new)
        return f"{self.path}: {_short(self.old, start=start)} → {_short(self.new, start=start)}"


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _diff(old: Any, new: Any, path: str = "") -> list[FieldChange]:
    """Changed leaves between two values of the file's form; a list of another length, or a
    value of another type, is one change."""
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        keys = [*old, *[k for k in new if k not in old]]
        return [c for k in keys for c in _diff(old.get(k, _MISSING), new.get(k, _MISSING), _join(path, k))]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [c for i, (a, b) in enumerate(zip(old, new)) for c in _diff(a, b, _join(path, i))]
    return [FieldChange(path, old, new)]


def _settings_by_key(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each setting of the file form by key, with its kind, its place among the main settings
    (which decides the cells) and its annotation schema."""
    annotation = data["annotation"]["settings"]
    out = {data["training"]["key"]: {"kind": "training", **data["training"]}}
    for position, setting in enumerate(data["settings"]):
        out[setting["key"]] = {"kind": "main", "position": position, **setting}
    for key, entry in out.items():
        entry["annotation"] = annotation.get(key, {})
    return out


@dataclass(frozen=True)
class StudyChanges:
    """The differences between a stored study and a study file, in the file's terms."""

    fields: list[FieldChange]
    added: list[str]
    removed: list[str]
    changed: dict[str, list[FieldChange]]
    built_on_stimuli: frozenset[str] = frozenset()

    @property
    def any(self) -> bool:
        """Whether anything differs."""
        return bool(self.fields or self.added or self.removed or self.changed)

    def lines(self) -> list[str]:
        """The changes for the command line: study fields, then settings added, removed and
        changed, by key, each changed field as ``path: old → new``."""
        out = [f"  {change}" for change in self.fields]
        out += [f"  setting '{key}': added" for key in self.added]
        for key in self.removed:
            note = " (built on the Stimuli pages)" if key in self.built_on_stimuli else ""
            out.append(f"  setting '{key}'{note}: removed (not in the file)")
        for key, changes in self.changed.items():
            out.append(f"  setting '{key}': changed")
            out += [f"    {change}" for change in changes]
        return out or ["  no changes"]


def study_changes(*, study: Study, clean: dict[str, Any]) -> StudyChanges:
    """What replacing ``study``'s definition with the validated file ``clean`` would change.

    The slug is not compared (an ``--as-slug`` copy differs by it alone).
    """
    old = study_file_data(study)
    new = file_in_export_form(clean)
    top = [name for name in new if name not in ("slug", "training", "settings", "annotation")]
    fields = [c for name in top for c in _diff(old.get(name, _MISSING), new[name], name)]
    for name in ("annotators_per_item", "reservation_minutes", "codebook"):
        fields += _diff(
            old["annotation"].get(name, _MISSING), new["annotation"].get(name, _MISSING),
            f"annotation.{name}",
        )
    old_settings, new_settings = _settings_by_key(old), _settings_by_key(new)
    changed = {}
    for key in new_settings:
        if key in old_settings:
            diff = _diff(old_settings[key], new_settings[key])
            if diff:
                changed[key] = diff
    return StudyChanges(
        fields=fields,
        added=[k for k in new_settings if k not in old_settings],
        removed=[k for k in old_settings if k not in new_settings],
        changed=changed,
        built_on_stimuli=frozenset(s.key for s in study.settings.all() if s.provenance),
    )


def missing_settings_message(*, study: Study, keys: list[str], built_on_stimuli: frozenset[str]) -> str:
    """The refusal of a replace that would drop ``keys``: names them and how to keep them."""
    names = ", ".join(
        f"'{k}'" + (" (built on the Stimuli pages)" if k in built_on_stimuli else "") for k in keys
    )
    what, it = ("setting", "it") if len(keys) == 1 else ("settings", "them")
    return (
        f"--replace would delete the {what} {names} of study '{study.slug}': the file does not "
        f"have {it}. To keep {it}, write the study's file first (`manage.py export_study "
        f"{study.slug} --out FILE`, or \"Download study file\" on the study page), make your "
        f"changes in that file and import it. To delete {it}, add --drop-missing. Nothing was "
        "changed."
    )


def replace_refusal(
    *, study: Study, clean: dict[str, Any], replace: bool, drop_missing: bool
) -> str | None:
    """Why importing ``clean`` over the existing ``study`` is refused, or ``None``.

    Refused without ``replace``; when the study is frozen
    (:func:`~.freeze.study_freeze_reason`); and when the file lacks a setting of the study,
    unless ``drop_missing``.
    """
    if not replace:
        return (
            f"A study with slug '{study.slug}' exists. Use --replace to overwrite its "
            "definition (only possible before a real participant has consented), or "
            "--as-slug NEW-SLUG to import the file as a new study."
        )
    reason = study_freeze_reason(study=study)
    if reason:
        return frozen_message(study=study, reason=reason)
    if not drop_missing:
        keys = {clean["training"]["key"], *(s["key"] for s in clean["settings"])}
        stored = list(study.settings.order_by("kind", "position").values_list("key", "provenance"))
        missing = [key for key, _ in stored if key not in keys]
        if missing:
            built = frozenset(key for key, provenance in stored if provenance)
            return missing_settings_message(study=study, keys=missing, built_on_stimuli=built)
    annotation = clean.get("annotation") or {}
    tags = [t for s in (annotation.get("settings") or {}).values() for t in s.get("tags", [])]
    return codebook_refusal(study=study, new_codebook=annotation.get("codebook"), setting_tags=tags)


@dataclass(frozen=True)
class ImportPreview:
    """What ``import_study`` would do with a file, changing nothing (``--dry-run``).

    ``study`` is the existing study with the file's slug (``None``: it would be created);
    ``refusal`` says why the import would be refused (``None``: it would go ahead).
    """

    slug: str
    study: Study | None
    clean: dict[str, Any]
    refusal: str | None = None
    changes: StudyChanges | None = None
    pilots_removed: int = 0
    unconsented_removed: int = 0

    def lines(self) -> list[str]:
        """The report for the command line (without the refusal, which the command raises)."""
        if self.study is None:
            keys = ", ".join(s["key"] for s in self.clean["settings"])
            return [
                f"Dry run: would create study '{self.slug}' with the training setting "
                f"'{self.clean['training']['key']}' and the main settings {keys}. Nothing was changed."
            ]
        out = [f"Dry run: importing the file over study '{self.slug}' would change:"]
        out += self.changes.lines() if self.changes else []
        if self.refusal is None:
            out.append(
                f"It would delete with the old definition {self.pilots_removed} pilot "
                f"participant(s) and {self.unconsented_removed} arrival(s) who never consented."
            )
        out.append("Nothing was changed.")
        return out


def study_import_preview(
    *, clean: dict[str, Any], replace: bool = False, drop_missing: bool = False
) -> ImportPreview:
    """What importing the validated file ``clean`` would do (reads only; see
    :class:`ImportPreview`). The slug is the file's (apply ``--as-slug`` before validating)."""
    study = Study.objects.filter(slug=clean["slug"]).first()
    if study is None:
        return ImportPreview(slug=clean["slug"], study=None, clean=clean)
    removable = study.participants.filter(Q(is_pilot=True) | Q(consented_at__isnull=True))
    pilots = removable.filter(is_pilot=True).count()
    return ImportPreview(
        slug=clean["slug"],
        study=study,
        clean=clean,
        refusal=replace_refusal(study=study, clean=clean, replace=replace, drop_missing=drop_missing),
        changes=study_changes(study=study, clean=clean),
        pilots_removed=pilots,
        unconsented_removed=removable.count() - pilots,
    )
