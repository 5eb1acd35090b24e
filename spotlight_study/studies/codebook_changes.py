"""A replace of a study file that would drop a codebook field or option already holding labels
is refused, naming the count; adding fields and options is allowed.

The labels live in the annotation app, a layer above this one, so it registers a source here
when Django starts (as ``freeze.py``'s checks): ``source(study)`` gives the study's labels'
codebook values, one mapping per label (``{field key: value}``; the default codebook's columns
under the default codebook).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from . import codebook as cb
from .models import Study

LabelSource = Callable[[Study], Iterable[dict[str, Any]]]
_SOURCES: list[LabelSource] = []


def label_source_register(source: LabelSource) -> None:
    """Add a source of a study's label values; registering one twice has no effect."""
    if source not in _SOURCES:
        _SOURCES.append(source)


def _uses(value: Any, option: str) -> bool:
    return option in value if isinstance(value, list) else value == option


def codebook_refusal(*, study: Study, new_codebook: dict | None, setting_tags: Iterable[str] = ()) -> str | None:
    """Why replacing ``study``'s codebook with ``new_codebook`` (``None``/``{}``: the default)
    would lose labels, or ``None``.

    A field of the stored codebook missing from the new one is refused when a label has a value
    for it; an option of a choice, ordinal or multi_choice field missing from the new field's
    options (matched ignoring case and Unicode form; ``setting_tags``: the options the file's
    settings add) when a label chose it; a field whose type changes, when a label has it.
    """
    old = cb.resolved(study.annotation_codebook)
    new = cb.resolved(new_codebook)
    if old == new or not _SOURCES:
        return None
    labels = [values for source in _SOURCES for values in source(study)]
    if not labels:
        return None
    new_fields = {f["key"]: f for f in new["fields"]}
    problems = []
    for field in old["fields"]:
        key = field["key"]
        held = [v[key] for v in labels if v.get(key) not in (None, "", [])]
        if not held:
            continue
        if key not in new_fields:
            problems.append(f"field `{key}` is removed but {len(held)} label(s) hold it")
            continue
        if new_fields[key]["type"] != field["type"]:
            problems.append(f"field `{key}` changes its type but {len(held)} label(s) hold it")
            continue
        if field["type"] not in cb.OPTION_TYPES:
            continue
        kept = [*new_fields[key].get("options", []), *setting_tags]
        used = dict.fromkeys(o for v in held for o in (v if isinstance(v, list) else [v]))
        for option in used:
            if cb.option_match(kept, option) is None:
                n = sum(_uses(v, option) for v in held)
                problems.append(f"option `{option}` of `{key}` is removed but {n} label(s) chose it")
    if not problems:
        return None
    return (
        "The new codebook would lose labels: " + "; ".join(problems) + ". Keep those fields and "
        "options (adding new ones is fine), or import the file as a new study with --as-slug."
    )
