"""Step 2 of the label import: raw rows to items, annotators and labels, with errors by line.

Checks each row against the study (the item exists), the username rules, the label schema and
the codebook, and the whole file against the k-annotators limit (:func:`capacity_errors`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError

from spotlight_study.studies.models import Study
from spotlight_study.studies.schema import normalize_tag

from ..codebook_labels import is_declared
from ..errors import InvalidLabel
from ..models import Assignment, Exclusion, Item
from ..pilot_round import pilot_round_is_open
from ..selectors import codebook
from ..services.labels import LabelInput, label_clean
from ..services.pool import active_places
from .codebook_columns import row_values
from .parse import RawRow, parse_bool

_BOOL_COLUMNS = ("identified", "surface_difference", "no_difference")


@dataclass(frozen=True)
class ImportRow:
    """A valid row: its ``line``, the ``item``, the annotator's username and the label (all
    its tags as ``new_tags``, added to the codebook on write if missing)."""

    line: int
    item: Item
    annotator: str
    label: LabelInput


@dataclass
class Validation:
    """What :func:`rows_validate` found: the valid ``rows``, ``errors`` as ``(line, message)``
    and the ``new_tags`` per setting pk that the file adds to the codebook."""

    rows: list[ImportRow] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)
    new_tags: dict[int, set[str]] = field(default_factory=dict)


class _Context:
    """What the rows are checked against: the study's items by public id, codebooks (cached
    per setting), the default annotator, whether unknown tags may be added and whether the
    pilot round is open (a pilot item takes labels only then, as on the annotator's pages)."""

    def __init__(self, *, study: Study, annotator_name: str | None, add_tags: bool):
        self.items = {
            i.public_id: i
            for i in Item.objects.filter(study=study).select_related("setting", "study")
        }
        self.codebooks: dict[int, set[str]] = {}
        self.annotator_name = annotator_name or ""
        self.add_tags = add_tags
        self.validator = UnicodeUsernameValidator()
        self.seen: dict[tuple[str, str], int] = {}
        self.pilot_open = pilot_round_is_open(study)
        self.slug = study.slug
        self.study = study
        self.declared = is_declared(study)

    def codebook(self, item: Item) -> set[str]:
        return self.codebooks.setdefault(item.setting_id, set(codebook(item.setting)))


def rows_validate(
    *, study: Study, rows: list[RawRow], annotator_name: str | None, add_tags: bool
) -> Validation:
    """Check every raw row (see the module docstring); never stops at the first bad row.

    A row's problems are joined into one message for its line. The same item labeled twice by
    one annotator in the file is an error on the second line.
    """
    context = _Context(study=study, annotator_name=annotator_name, add_tags=add_tags)
    result = Validation()
    for raw in rows:
        problems, row, unknown_tags = _row_validate(raw, context)
        if row is not None and unknown_tags:
            result.new_tags.setdefault(row.item.setting_id, set()).update(unknown_tags)
        if problems:
            result.errors.append((raw.line, "; ".join(problems)))
        else:
            result.rows.append(row)
    return result


def _row_validate(raw: RawRow, context: _Context) -> tuple[list[str], ImportRow | None, set[str]]:
    """``(problems, row, tags not in the codebook)`` of one raw row; ``row`` is ``None`` when
    the item is unknown."""
    values = raw.values
    problems: list[str] = []
    item = context.items.get(values["item"].strip())
    if item is None:
        problems.append(f"item: no item '{values['item'].strip()}' in this study")
    name = (values.get("annotator") or "").strip() or context.annotator_name
    try:
        context.validator(name)
        if not name:
            raise ValidationError("empty")
    except ValidationError:
        problems.append(f"annotator: '{name}' is not a valid username")
    if context.declared:
        return _codebook_row(raw, context, item, name, problems)
    bools = {}
    for col in _BOOL_COLUMNS:
        b = parse_bool(values[col])
        if b is None:
            problems.append(f"{col}: '{values[col].strip()}' is not 1/0, true/false or yes/no")
        bools[col] = bool(b)
    tags = [normalize_tag(t) for t in (values.get("tags") or "").split(";") if t.strip()]
    label = LabelInput(
        exclusion=values["exclusion"].strip() or Exclusion.NONE,
        exclusion_note=values.get("exclusion_note") or "",
        tags=[],
        new_tags=tags,
        **bools,
    )
    if item is None:
        return problems, None, set()
    unknown = set(tags) - context.codebook(item)
    if unknown and not context.add_tags:
        problems.append(
            f"tags: not in the codebook: {', '.join(sorted(unknown))} (use --add-tags to add them)"
        )
    try:
        label_clean(label=label, setting=item.setting)
    except InvalidLabel as exc:
        problems.extend(f"{k}: {v}" for k, v in exc.errors.items() if k != "tags")
    _item_checks(raw, context, item, name, problems)
    return problems, ImportRow(raw.line, item, name, label), unknown


def _item_checks(raw: RawRow, context: _Context, item: Item, name: str, problems: list[str]) -> None:
    """Add the problems of the row's item: a pilot item while the pilot round is closed, an
    item the same annotator labels on an earlier line."""
    if item.is_pilot and not context.pilot_open:
        problems.append(
            f"item {item.public_id} is a pilot answer and the pilot annotation round is closed "
            f"(open it with manage.py pilot_annotation {context.slug} --open)"
        )
    key = (item.public_id, name)
    if key in context.seen:
        problems.append(
            f"item {item.public_id} is already labeled by '{name}' on line {context.seen[key]}"
        )
    context.seen.setdefault(key, raw.line)


def _codebook_row(raw: RawRow, context: _Context, item: Item | None, name: str,
                  problems: list[str]) -> tuple[list[str], ImportRow | None, set[str]]:
    """:func:`_row_validate` of a row under a declared codebook: the values checked by the label
    service (errors named ``values.<key>``); options are never added by an import."""
    values = raw.values
    label = LabelInput(
        identified=False, surface_difference=False, no_difference=False,
        exclusion=values["exclusion"].strip() or Exclusion.NONE,
        exclusion_note=values.get("exclusion_note") or "",
        values=row_values(context.study, values),
    )
    if item is None:
        return problems, None, set()
    try:
        label_clean(label=label, setting=item.setting)
    except InvalidLabel as exc:
        problems.extend(f"{k}: {v}" for k, v in exc.errors.items())
    _item_checks(raw, context, item, name, problems)
    return problems, ImportRow(raw.line, item, name, label), set()


def capacity_errors(*, study: Study, rows: list[ImportRow], now: datetime) -> list[tuple[int, str]]:
    """Rows that would give an item more than k annotators, as ``(line, message)`` sorted by
    line: the first line naming an annotator new to the item. Annotators holding a place at
    ``now`` (submitted or unexpired reservation) count; re-importing an annotator's label does
    not add a place."""
    errors = []
    by_item: dict[int, list[tuple[int, str]]] = {}
    for row in rows:
        by_item.setdefault(row.item.pk, []).append((row.line, row.annotator))
    for item_pk, lines in by_item.items():
        names = {n for _, n in lines}
        holders = set(
            Assignment.objects.filter(active_places(now), item_id=item_pk).values_list(
                "annotator__username", flat=True
            )
        )
        total = holders | names
        if len(total) > study.annotators_per_item:
            extra = sorted(names - holders)
            first_line = min(line for line, n in lines if n in extra) if extra else lines[0][0]
            errors.append(
                (
                    first_line,
                    f"item {Item.objects.get(pk=item_pk).public_id} would have {len(total)} "
                    f"annotators, more than the study's {study.annotators_per_item}",
                )
            )
    return sorted(errors)
