"""Validation of a label under a study's declared codebook (:mod:`spotlight_study.studies.codebook`):
the label's values checked field by field, new tags added to the field that takes tags."""
from __future__ import annotations

from spotlight_study.studies import codebook as cb
from spotlight_study.studies.schema_codebook import tags_field_key

from ..codebook_labels import setting_options, values_split
from ..errors import InvalidLabel


def codebook_label_clean(
    *, label, setting, errors: dict[str, str], note: str, allow_new_tags: bool = True
) -> tuple[dict, list[str]]:
    """A label under the study's declared codebook as model fields, and the new tags to add.

    ``label`` is a :class:`~.labels.LabelInput` whose ``values`` hold the codebook's fields by
    key; ``errors`` are the platform fields' errors found so far (exclusion, its note), and
    ``note`` the stripped exclusion note. New tags (``label.new_tags``) go to the field that
    takes tags, when the codebook has one.

    Returns ``(fields, tags_to_add)`` as :func:`~.labels.label_clean` does: ``values`` and
    ``notes`` filled, the default codebook's columns left empty (no, no, no, no tags).

    Raises
    ------
    InvalidLabel
        Naming each bad field as ``values.<key>`` (and the platform fields); nothing is saved.
    """
    study = setting.study
    book = study.annotation_codebook
    extra = setting_options(study, setting)
    tag_key = tags_field_key(book)
    new = [cb.normalize_tag(t) for t in label.new_tags if t.strip()]
    if new and (not allow_new_tags or tag_key is None):
        errors["new_tags"] = "New tags are not allowed here."
    if any(len(t) > 60 for t in new):
        errors["new_tags"] = "A tag has at most 60 characters."
    known = extra.get(tag_key, []) if tag_key else []
    to_add = [t for t in dict.fromkeys(new) if cb.option_match(known, t) is None]
    if to_add and tag_key:
        extra = {**extra, tag_key: [*known, *to_add]}
    values = dict(label.values or {})
    if new and tag_key:
        sent = values.get(tag_key) or []
        values[tag_key] = [*(sent if isinstance(sent, list) else [sent]), *new]
    try:
        clean = cb.values_clean(book, values, kind=setting.kind, setting_options=extra)
    except cb.LabelValueError as exc:
        errors.update({f"values.{k}": v for k, v in exc.errors.items()})
        clean = {}
    if errors:
        raise InvalidLabel(errors)
    kept, notes = values_split(book, clean)
    fields = {
        "identified": False, "surface_difference": False, "no_difference": False, "tags": [],
        "exclusion": label.exclusion, "exclusion_note": note, "values": kept, "notes": notes,
    }
    return fields, to_add
