"""A study's items and labels as plain values, read in two queries, for the pages that count
or compare every label (the researcher's overview, the agreement report).

Model instances cost about 0.1 ms each to build; a study of 10,000 participants has some 30,000
items and 60,000 annotations, so those pages read plain tuples instead (``values_list``'s SQL,
rows straight from the cursor: :func:`fetched_rows`), which is 10 to 20 times cheaper, and
compute from them in one pass. For the agreement statistics, :class:`LabelCodes` turns the rows
into integer arrays (annotators x items) once, which
:func:`analysis.stats.agreement.coded_agreement` takes for every label and scope.

The agreement statistics over all of them take seconds at that size and change only when a
label changes, so :func:`cached_by_content` keeps the result in Django's cache under a digest
of exactly the values they are computed from: an edited, added or deleted label, item, tag or
annotator seat gives another digest, hence a fresh computation, and no stale figure is ever
shown (there is nothing to invalidate). Within a computation, statistics whose inputs did not
change (another setting's labels) come from :mod:`analysis.stats.input_memo`, keyed the same way.

Reading and digesting every label still costs about 0.5 s at 120,000 labels, so the researcher's
overview is kept under :func:`labels_version` instead: a number the database's triggers raise with
every change to the study's items, annotations and final labels (``LabelsVersion``), read in
one query. The digest then only matters when the labels did change.
"""
from __future__ import annotations

import gc
import hashlib
import json
import pickle
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple, TypeVar

import numpy as np
from django.core.cache import cache
from django.db import connections
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast

from spotlight_study.studies.models import Study

from .models import Annotation, FinalLabel, Item, LabelsVersion

T = TypeVar("T")

#: Seconds a cached result is kept (its key changes with the data, so this only bounds memory).
CACHE_SECONDS = 24 * 3600


class FinalValues(NamedTuple):
    """One final label as plain values: its ``source`` and the compared fields."""

    source: str
    identified: bool | None
    surface_difference: bool | None
    no_difference: bool | None
    tags: list | None
    exclusion: str | None

    @property
    def is_human(self) -> bool:
        """Whether people set it (agreement or adjudication), as :attr:`FinalLabel.is_human`."""
        return self.source in FinalLabel.HUMAN_SOURCES


class LabelTable:
    """A study's items in primary-key order, with their labels, from the rows as read.

    ``items[i]`` is ``(item pk, setting id)``; ``finals[i]`` the item's final label (any source)
    or ``None``; ``compared[i]`` the set of the distinct :func:`~.selectors.compared_values` of
    its annotations and ``n_labels[i]`` their number; ``labels_per_annotator`` counts the
    annotations per user id; :attr:`codes` gives the labels as :class:`LabelCodes` (built on
    first use). ``digest`` is the :func:`content_digest` of the rows.
    """

    def __init__(self, *, item_rows: list[tuple], label_rows: list[tuple]) -> None:
        self._decoded: dict[str | None, list | None] = {None: None}
        self.items: list[tuple[int, int]] = []
        self.finals: list[FinalValues | None] = []
        self._index: dict[int, int] = {}
        for pk, setting_id, source, identified, surface, no_difference, exclusion, tags in item_rows:
            self._index[pk] = len(self.items)
            self.items.append((pk, setting_id))
            # ``source`` is never empty on a final label, so None means the item has none.
            self.finals.append(
                None if source is None
                else FinalValues(
                    source, identified, surface, no_difference, self._tags(tags), exclusion
                )
            )
        self._label_rows = label_rows
        self.n_labels = [0] * len(self.items)
        self.compared: list[set[tuple]] = [set() for _ in self.items]
        sorted_tags: dict[str | None, tuple | None] = {}
        index, n_labels, compared = self._index, self.n_labels, self.compared
        for _item, _user, identified, surface, no_difference, tags, exclusion, values in label_rows:
            if tags not in sorted_tags:
                value = self._tags(tags)
                sorted_tags[tags] = None if value is None else tuple(sorted(value))
            i = index[_item]
            n_labels[i] += 1
            # ``values``: a declared codebook's values as JSON text, in codebook order ("{}"
            # under the default codebook, so its comparisons are the columns' alone).
            compared[i].add(
                (identified, surface, no_difference, sorted_tags[tags], exclusion, values)
            )
        self.labels_per_annotator = Counter(row[1] for row in label_rows)
        self.digest = content_digest(item_rows, label_rows)

    def _tags(self, text: str | None) -> list | None:
        # The JSON as the database wrote it, decoded once per distinct text (most are "[]");
        # a copy each, so that changing one label's list changes no other.
        if text not in self._decoded:
            self._decoded[text] = json.loads(text)
        value = self._decoded[text]
        return None if value is None else list(value)

    @cached_property
    def codes(self) -> LabelCodes:
        """The labels as integer codes for :mod:`analysis.stats.agreement` (built on first use:
        the overview needs them only when the agreement is not cached)."""
        return LabelCodes.of(self)


#: The label fields coded one value each by :class:`LabelCodes`, and their column in a label row.
_CODED_COLUMNS = {"identified": 2, "surface_difference": 3, "no_difference": 4, "exclusion": 6}


@dataclass(frozen=True)
class LabelCodes:
    """A :class:`LabelTable`'s labels as arrays of integer codes, annotators x items.

    ``annotators`` are the user ids of the rows (sorted); columns are ``LabelTable.items``.
    ``fields[name]`` is ``(coded, final)`` for each single-value field: ``coded`` of shape
    (n_annotators, n_items), a code per distinct value (``-1``: no rating, i.e. no annotation
    or a ``None`` value), and ``final`` of shape (n_items,) the human final labels
    (:func:`~.selectors.human_final`) coded alike (``-1`` without one). ``tagged`` (same shape,
    bool) is where an annotation with a tag list exists; ``tag_cells[tag]`` the ``(rows,
    columns)`` where that tag was given; ``final_tags[i]`` item ``i``'s human final tags or
    ``None``. Codes stand for values only through equality, as
    :func:`analysis.stats.agreement.coded_agreement` takes them.
    """

    annotators: list[int]
    fields: dict[str, tuple[np.ndarray, np.ndarray]]
    tagged: np.ndarray
    tag_cells: dict[str, tuple[np.ndarray, np.ndarray]]
    final_tags: list[set | None]

    @classmethod
    def of(cls, table: LabelTable) -> LabelCodes:
        """The codes of ``table``'s label rows: one pass per column, no object per label."""
        rows = table._label_rows
        annotators = sorted(table.labels_per_annotator)
        shape = (len(annotators), len(table.items))
        n = len(rows)
        columns = list(zip(*rows)) if rows else [()] * 8
        row_of = {u: r for r, u in enumerate(annotators)}
        at = (
            np.fromiter(map(row_of.__getitem__, columns[1]), np.int64, n),
            np.fromiter(map(table._index.__getitem__, columns[0]), np.int64, n),
        )
        finals = [f if f is not None and f.is_human else None for f in table.finals]
        fields = {}
        for name, column in _CODED_COLUMNS.items():
            codes: dict = {}
            coded = np.full(shape, -1, dtype=np.int64)
            coded[at] = np.fromiter(
                (-1 if v is None else codes.setdefault(v, len(codes)) for v in columns[column]),
                np.int64, n,
            )
            final = np.fromiter(
                (
                    -1 if f is None or getattr(f, name) is None
                    else codes.setdefault(getattr(f, name), len(codes))
                    for f in finals
                ),
                np.int64, len(finals),
            )
            fields[name] = (coded, final)
        decoded = {text: table._tags(text) for text in set(columns[5])}
        tagged = np.zeros(shape, dtype=bool)
        has_list = np.fromiter((decoded[t] is not None for t in columns[5]), bool, n)
        tagged[at[0][has_list], at[1][has_list]] = True
        cells: dict[str, tuple[list, list]] = {}
        for k, text in enumerate(columns[5]):
            for tag in set(decoded[text] or ()):
                r, c = cells.setdefault(tag, ([], []))
                r.append(at[0][k])
                c.append(at[1][k])
        tag_cells = {
            tag: (np.array(r, dtype=np.int64), np.array(c, dtype=np.int64))
            for tag, (r, c) in cells.items()
        }
        final_tags = [None if f is None else set(f.tags) for f in finals]
        return cls(annotators, fields, tagged, tag_cells, final_tags)


def _json_text(field: str) -> Cast:
    # The JSON text as stored, decoded by LabelTable once per distinct value.
    return Cast(field, output_field=TextField())


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (as it was after it).

    Reading and coding 90,000 label rows allocates some million tuples, none of them in a
    cycle; each allocation burst makes the collector scan the whole heap again, which cost
    100-150 ms of a cold overview at 10,000 participants (issue 11). Reference counting still
    frees everything; cycles made in the block are collected at the next collection after it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def label_table(*, study: Study, is_pilot: bool = False) -> LabelTable:
    """The :class:`LabelTable` of ``study``'s real items, or (``is_pilot``) of its pilot
    annotation round's: two queries whatever the number of items."""
    with gc_paused():
        return _label_table(study, is_pilot)


def _label_table(study: Study, is_pilot: bool) -> LabelTable:
    item_rows = fetched_rows(
        Item.objects.filter(study=study, is_pilot=is_pilot)
        .order_by("pk")
        .values_list(
            "pk", "setting_id", "final_label__source", "final_label__identified",
            "final_label__surface_difference", "final_label__no_difference",
            "final_label__exclusion", _json_text("final_label__tags"),
        )
    )
    label_rows = fetched_rows(
        Annotation.objects.filter(item__study=study, item__is_pilot=is_pilot)
        .order_by("pk")
        .values_list(
            "item_id", "annotator_id", "identified", "surface_difference", "no_difference",
            _json_text("tags"), "exclusion", _json_text("values"),
        )
    )
    return LabelTable(item_rows=item_rows, label_rows=label_rows)


def fetched_rows(queryset: QuerySet) -> list[tuple]:
    """The rows of a ``values_list`` queryset of ids, booleans and text, as the cursor gives
    them: Django's SQL, without the per-value converters of its iterator.

    For these columns the converters change nothing (the database driver gives ``bool``:
    psycopg natively, Django's SQLite connection through its ``bool`` column converter), but
    calling one per value cost 50-60 ms of the 90,000 rows at 10,000 participants on SQLite
    (issue 11). ``tests/annotation/test_label_table.py`` checks the rows equal the queryset's.
    """
    sql, params = queryset.query.get_compiler(using=queryset.db).as_sql()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def content_digest(*parts: object) -> str:
    """SHA-256 (hex) of ``parts`` (plain values: numbers, text, tuples, lists, dicts, None),
    equal for equal contents in the same order."""
    return hashlib.sha256(pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)).hexdigest()


def labels_version(*, study: Study) -> tuple[str, int]:
    """``(token, version)`` of the study's :class:`~.models.LabelsVersion`: it changes with every
    change to the study's items, annotations or final labels; ``("", 0)`` if none happened since
    the triggers were installed. One query by primary key.

    Read it before the labels a result is computed from: labels read after it are at least as
    new, so a result kept under it is never older than what it names. (Read after them, a label
    saved in between would leave an old result under the new version.)
    """
    row = LabelsVersion.objects.filter(study_id=study.pk).values_list("token", "version").first()
    return row if row is not None else ("", 0)


def cached_by_content(name: str, inputs: tuple, compute: Callable[[], T]) -> T:
    """``compute()``, kept in Django's cache under ``name`` and the digest of ``inputs``.

    ``inputs`` must hold everything the result depends on (as plain values); the result must
    be picklable. The cache is each process's memory by default (``CACHE_URL`` for a shared
    one); a miss only costs the computation.
    """
    key = f"spotlight:{name}:{content_digest(*inputs)}"
    result = cache.get(key)
    if result is None:
        with gc_paused():
            result = compute()
        cache.set(key, result, CACHE_SECONDS)
    return result
