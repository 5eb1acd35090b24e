"""A study's codebook as the annotation app reads it: the fields an item asks, the options its
setting adds, and a label's values by field key, whether the default codebook (the label's own
columns) or a declared one (``values`` and ``notes``) is in force.

The codebook itself, its types and option matching are :mod:`spotlight_study.studies.codebook`.
"""
from __future__ import annotations

from typing import Any

from spotlight_study.studies import codebook as cb
from spotlight_study.studies.models import Setting, Study
from spotlight_study.studies.schema_codebook import tags_field_key

from .models import Annotation, CodebookTag

#: The default codebook's fields, each stored in the label column of the same name.
DEFAULT_KEYS = ("identified", "surface_difference", "no_difference", "tags")


def study_codebook(study: Study) -> dict[str, Any]:
    """The codebook in force for ``study``: its declared one, or the default."""
    return cb.resolved(study.annotation_codebook)


def is_declared(study: Study) -> bool:
    """Whether ``study`` declares its own codebook (its labels use ``values``/``notes``)."""
    return not cb.is_default(study.annotation_codebook)


def setting_tags(setting: Setting) -> list[str]:
    """The setting's tags: the study file's, then those added by annotators (alphabetical)."""
    added = [t.name for t in CodebookTag.objects.filter(setting=setting).order_by("name")]
    base = list(setting.annotation_tags)
    return base + [t for t in added if t not in base]


def setting_options(study: Study, setting: Setting) -> dict[str, list[str]]:
    """Options ``setting`` adds to the codebook's fields, by key: its tags, to the field that
    takes them (:func:`~spotlight_study.studies.schema_codebook.tags_field_key`)."""
    key = tags_field_key(study.annotation_codebook)
    return {key: setting_tags(setting)} if key else {}


def item_fields(study: Study, setting: Setting) -> list[dict]:
    """The declared codebook's fields asked on an item of ``setting``, options completed with
    the setting's own (``[]`` under the default codebook, whose form is fixed)."""
    if not is_declared(study):
        return []
    extra = setting_options(study, setting)
    return [
        {**f, "options": cb.field_options(f, extra)} if f["type"] in cb.OPTION_TYPES else dict(f)
        for f in study.annotation_codebook["fields"]
        if cb.applies(f, setting.kind)
    ]


def label_values(label, codebook: dict) -> dict[str, Any]:
    """A label's (annotation, revision, final or machine label) values by codebook field key.

    Under the default codebook: the four columns (tags as a sorted list). Under a declared one:
    ``values`` then ``notes``; a field without a value is ``None``.
    """
    if cb.is_default(codebook) or codebook is cb.DEFAULT_CODEBOOK:
        return {k: (sorted(label.tags) if k == "tags" else getattr(label, k)) for k in DEFAULT_KEYS}
    stored = {**(label.values or {}), **(getattr(label, "notes", None) or {})}
    return {f["key"]: stored.get(f["key"]) for f in codebook["fields"]}


def values_split(codebook: dict, clean: dict[str, Any]) -> tuple[dict, dict]:
    """Cleaned values as ``(values, notes)``: the compared fields, and the ``note`` fields."""
    note_keys = {f["key"] for f in codebook["fields"] if f["type"] == "note"}
    values = {k: v for k, v in clean.items() if k not in note_keys}
    notes = {k: v for k, v in clean.items() if k in note_keys and v}
    return values, notes


def frozen_values(values: dict) -> tuple:
    """A label's ``values`` as a hashable tuple for comparing labels (lists as tuples)."""
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(values.items()))


def form_value(field: dict, value: Any) -> Any:
    """A stored value as the annotator form's initial data (yes/no as "1"/"0")."""
    if field["type"] == "yes_no" and isinstance(value, bool):
        return "1" if value else "0"
    return value


def agreed_values(annotations: list, codebook: dict) -> tuple[dict, set[str]]:
    """Form initial data (``cb_<key>``) of what the annotations agree on under a declared
    codebook, and the keys they disagree on; a multi_choice field starts from the options all
    gave, a disagreed single value from nothing (the adjudicator must choose)."""
    initial: dict = {}
    disagree: set[str] = set()
    for field in codebook["fields"]:
        if field["type"] == "note" or not annotations:
            continue
        key = field["key"]
        seen = [a.values.get(key) for a in annotations]
        if field["type"] == "multi_choice":
            sets = [set(v or []) for v in seen]
            initial[f"cb_{key}"] = [o for o in field.get("options", []) if o in set.intersection(*sets)]
            if any(s != sets[0] for s in sets):
                disagree.add(key)
        elif all(v == seen[0] for v in seen):
            initial[f"cb_{key}"] = form_value(field, seen[0])
        else:
            initial[f"cb_{key}"] = None
            disagree.add(key)
    return initial, disagree


def value_text(field: dict, value: Any) -> str:
    """A value as shown to people: yes/no, options joined by commas, ``-`` for nothing."""
    if value is None or value == [] or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)


def competing_rows(study: Study, competing: list[dict], disagree: set[str]) -> list[dict]:
    """The adjudication table's rows under a declared codebook (``[]`` under the default one):
    ``{"key", "label", "values": [text per competing label], "differs"}`` per codebook field."""
    if not is_declared(study):
        return []
    rows = []
    for field in study.annotation_codebook["fields"]:
        stored = [{**c["label"].get("values", {}), **c["label"].get("notes", {})} for c in competing]
        rows.append({
            "key": field["key"], "label": field["label"],
            "values": [value_text(field, s.get(field["key"])) for s in stored],
            "differs": field["key"] in disagree,
        })
    return rows


def study_label_values(study: Study) -> list[dict[str, Any]]:
    """Every annotation of ``study`` (pilot round included) as ``{field key: value}`` under its
    codebook in force, for :mod:`spotlight_study.studies.codebook_changes`."""
    book = study_codebook(study)
    return [label_values(a, book) for a in Annotation.objects.filter(item__study=study)]
