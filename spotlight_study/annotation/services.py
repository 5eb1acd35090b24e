"""Writes of annotation: items, the assignment of items to annotators, labels, final labels,
adjudication and the CSV import of labels.

Locking: every write that hands out or takes a place on an item locks the study's
:class:`~.models.AnnotationPool` row (``select_for_update``; on SQLite every transaction is
``BEGIN IMMEDIATE``, which serializes writers), so places are counted and taken one request at a
time and an item never has more than k annotators.
"""

from __future__ import annotations

import csv
import io
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.utils import timezone

from spotlight_study.participation.models import TaskResponse
from spotlight_study.studies.models import Study
from spotlight_study.studies.schema import normalize_tag

from .models import (
    COMPARED_FIELDS,
    Annotation,
    AnnotationPool,
    AnnotationRevision,
    Assignment,
    CodebookTag,
    Exclusion,
    FinalLabel,
    Item,
    StudyAnnotator,
)
from .selectors import answer_digest, codebook, compared_values, item_status, queue_order_key


class AnnotationError(Exception):
    """Base class of annotation errors; ``str()`` is safe to show to annotators."""


class ItemNotFound(AnnotationError):
    """No such item in the user's queue (the same answer whether it exists or not)."""

    def __init__(self, message: str = "This item is not in your queue."):
        super().__init__(message)


class ReservationLost(AnnotationError):
    """The annotator's reservation expired and the item went to other annotators meanwhile."""


class InvalidLabel(AnnotationError):
    """A label that breaks the schema; ``errors`` maps a field to its message."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


class StaleLabel(AnnotationError):
    """The label was changed (e.g. in another tab) since the page that sent this save was opened.

    ``current`` is the saved label (``label_dict()``), ``revision`` its revision number and
    ``updated_at`` when it was saved; nothing was changed.
    """

    def __init__(self, *, current: dict, revision: int, updated_at: datetime):
        self.current = current
        self.revision = revision
        self.updated_at = updated_at
        super().__init__(
            f"You saved this label again (save {revision}) after this page was opened, "
            "for example in another tab. Nothing was overwritten."
        )


class NotAllowed(AnnotationError):
    """An action the user may not take on this item (e.g. adjudicating their own label)."""


class LabelImportError(AnnotationError):
    """A label file with bad rows; ``errors`` is a list of ``(line, message)``; nothing changed."""

    def __init__(self, errors: list[tuple[int, str]]):
        self.errors = errors
        super().__init__("\n".join(f"line {n}: {m}" for n, m in errors))


@dataclass(frozen=True)
class LabelInput:
    """A label as submitted. ``tags`` must be in the setting's codebook; ``new_tags`` are added
    to the codebook first. Tag names are normalized (lower case, single spaces)."""

    identified: bool
    surface_difference: bool
    no_difference: bool
    exclusion: str = Exclusion.NONE
    exclusion_note: str = ""
    tags: list[str] = field(default_factory=list)
    new_tags: list[str] = field(default_factory=list)


# --- items ---------------------------------------------------------------------------------


def items_sync(*, study: Study) -> int:
    """Create an :class:`Item` for every answered task response (training and main) of ``study``
    that has none yet. Idempotent; safe to run concurrently (the response is unique per item).

    Returns the number of items it tried to create (a concurrent call may have made some).

    Notes
    -----
    Participation does not know about annotation (the dependency points the other way), so items
    are not made when a participant saves an answer. Instead every path that reads the study's
    items calls this first: the annotator's queue and *Next item*, the researcher's overview,
    ``final_labels.csv`` (web, CLI and API) and the label import. It costs one query when
    nothing is missing (an anti-join of the answers on their items) and one bulk insert more
    otherwise, whatever the number of answers, and adds nothing to a participant's request.
    """
    missing = TaskResponse.objects.filter(
        participant__study=study, answered_at__isnull=False, annotation_item__isnull=True
    ).values_list("pk", "setting_id", "answer")
    new = [
        Item(
            study=study, response_id=pk, setting_id=setting_id, answer_digest=answer_digest(answer)
        )
        for pk, setting_id, answer in missing
    ]
    if not new:
        return 0
    with transaction.atomic():
        Item.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)


# --- locking, seats ------------------------------------------------------------------------


def _lock_pool(study: Study) -> None:
    """Lock the study's pool row for the current transaction (created on first use)."""
    AnnotationPool.objects.get_or_create(study=study)
    AnnotationPool.objects.select_for_update().get(study=study)


def _seat(study: Study, user) -> StudyAnnotator:
    """The user's seat in the study (pseudonym number and order seed), created on first use.

    Call with the pool lock held: numbers are handed out as max + 1.
    """
    seat = StudyAnnotator.objects.filter(study=study, user=user).first()
    if seat is None:
        number = (
            StudyAnnotator.objects.filter(study=study).aggregate(m=Max("number"))["m"] or 0
        ) + 1
        seat = StudyAnnotator.objects.create(
            study=study, user=user, number=number, order_seed=secrets.randbits(62)
        )
    return seat


def _active(now: datetime) -> Q:
    return Q(state=Assignment.State.SUBMITTED) | Q(
        state=Assignment.State.RESERVED, expires_at__gt=now
    )


def _release_expired(study: Study, now: datetime) -> None:
    Assignment.objects.filter(
        item__study=study, state=Assignment.State.RESERVED, expires_at__lte=now
    ).update(state=Assignment.State.RELEASED)


def _places_taken_by_others(item: Item, user, now: datetime) -> int:
    return Assignment.objects.filter(_active(now), item=item).exclude(annotator=user).count()


# --- assignment ----------------------------------------------------------------------------


def assignment_next(*, study: Study, annotator, now: datetime | None = None) -> Item | None:
    """The annotator's next item: the one reserved for them, or a new reservation.

    Parameters
    ----------
    study : Study
    annotator : User
        A member of ``annotators`` (the view checks the role).
    now : datetime, optional
        For tests; defaults to the current time.

    Returns
    -------
    Item or None
        ``None`` when no item needs this annotator. An annotator holds at most one open
        reservation; calling again (refresh, a second tab) returns the same item.

    Notes
    -----
    Under the pool lock: new answers become items (:func:`items_sync`), expired reservations are
    released, and among the items with fewer than k places taken (submitted or reserved and
    unexpired) that the annotator has not taken, the first in the annotator's own random order
    (:func:`~.selectors.queue_order_key` with their stored seed) is reserved for
    ``study.annotation_reservation_minutes``; items the annotator skipped come after all others.
    A released or skipped item may come back to the same annotator (on the same assignment row),
    never to a (k+1)-th one.
    """
    now = now or timezone.now()
    items_sync(study=study)
    with transaction.atomic():
        _lock_pool(study)
        _release_expired(study, now)
        seat = _seat(study, annotator)
        mine = Assignment.objects.filter(item__study=study, annotator=annotator)
        current = (
            mine.filter(state=Assignment.State.RESERVED, expires_at__gt=now)
            .select_related("item")
            .first()
        )
        if current is not None:
            return current.item
        free_again = (Assignment.State.RELEASED, Assignment.State.SKIPPED)
        taken_by_me = mine.exclude(state__in=free_again).values("item_id")
        skipped = set(
            mine.filter(state=Assignment.State.SKIPPED).values_list("item_id", flat=True)
        )
        full = (
            Assignment.objects.filter(_active(now), item__study=study).values("item_id").order_by()
        )
        counts: dict[int, int] = {}
        for row in full:
            counts[row["item_id"]] = counts.get(row["item_id"], 0) + 1
        candidates = [
            (pk, public_id)
            for pk, public_id in Item.objects.filter(study=study)
            .exclude(pk__in=taken_by_me)
            .values_list("pk", "public_id")
            if counts.get(pk, 0) < study.annotators_per_item
        ]
        if not candidates:
            return None
        pk, _ = min(
            candidates,
            key=lambda c: (
                c[0] in skipped,
                queue_order_key(order_seed=seat.order_seed, public_id=c[1]),
            ),
        )
        expires = now + timedelta(minutes=study.annotation_reservation_minutes)
        Assignment.objects.update_or_create(
            item_id=pk,
            annotator=annotator,
            defaults={
                "state": Assignment.State.RESERVED,
                "reserved_at": now,
                "expires_at": expires,
            },
        )
        return Item.objects.get(pk=pk)


def item_open(*, study: Study, annotator, public_id: str, now: datetime | None = None) -> Item:
    """The item as opened by its annotator; renews an open or lapsed reservation.

    Returns the item (with response, setting and study joined).

    Raises
    ------
    ItemNotFound
        If the item does not exist or was never given to this annotator.
    ReservationLost
        If their reservation lapsed and k other annotators have taken the item since.
    """
    now = now or timezone.now()
    with transaction.atomic():
        _lock_pool(study)
        item, assignment = _own(study, annotator, public_id)
        if assignment.state != Assignment.State.SUBMITTED:
            _retake(item, assignment, annotator, study, now)
            assignment.state = Assignment.State.RESERVED
            assignment.expires_at = now + timedelta(minutes=study.annotation_reservation_minutes)
            assignment.save(update_fields=["state", "expires_at"])
    return item


def assignment_skip(*, study: Study, annotator, public_id: str) -> bool:
    """Give back the annotator's reservation of an item without labeling it.

    The place is free for other annotators at once, and :func:`assignment_next` offers the item
    to this annotator again only when nothing else is open to them. An item they already
    labeled keeps its label (skipping it just moves on). Returns whether a reservation was
    given back.

    Raises
    ------
    ItemNotFound
        If the item was never given to this annotator.
    """
    with transaction.atomic():
        _lock_pool(study)
        _item, assignment = _own(study, annotator, public_id)
        if assignment.state == Assignment.State.SUBMITTED:
            return False
        assignment.state = Assignment.State.SKIPPED
        assignment.save(update_fields=["state"])
    return True


def _own(study: Study, annotator, public_id: str) -> tuple[Item, Assignment]:
    item = (
        Item.objects.select_related("response", "setting", "study")
        .filter(study=study, public_id=public_id)
        .first()
    )
    assignment = Assignment.objects.filter(item=item, annotator=annotator).first() if item else None
    if assignment is None:
        raise ItemNotFound()
    return item, assignment


def _retake(item: Item, assignment: Assignment, annotator, study: Study, now: datetime) -> None:
    """Check that a reserved or released item can still be the annotator's."""
    lapsed = (
        assignment.state in (Assignment.State.RELEASED, Assignment.State.SKIPPED)
        or assignment.expires_at <= now
    )
    if lapsed and _places_taken_by_others(item, annotator, now) >= study.annotators_per_item:
        raise ReservationLost(
            f"This item was open for more than {study.annotation_reservation_minutes} minutes "
            "and has gone to other annotators meanwhile. Your label for it was not saved."
        )


# --- labels --------------------------------------------------------------------------------


def _clean_label(
    *, label: LabelInput, setting, allow_new_tags: bool = True
) -> tuple[dict, list[str]]:
    """Validate a label against the schema; return ``(fields, tags_to_add)``.

    Raises ``InvalidLabel`` naming each bad field.
    """
    errors: dict[str, str] = {}
    if label.exclusion not in Exclusion.values:
        errors["exclusion"] = (
            f"Unknown value '{label.exclusion}'; use one of {', '.join(Exclusion.values)}."
        )
    note = (label.exclusion_note or "").strip()
    if label.exclusion == Exclusion.OTHER and not note:
        errors["exclusion_note"] = "Explain the exclusion 'other' in the note."
    if len(note) > 1000:
        errors["exclusion_note"] = "At most 1000 characters."
    known = set(codebook(setting))
    tags = [normalize_tag(t) for t in label.tags if t.strip()]
    new = [normalize_tag(t) for t in label.new_tags if t.strip()]
    unknown = sorted(set(tags) - known)
    if unknown:
        errors["tags"] = f"Not in the codebook: {', '.join(unknown)}."
    if new and not allow_new_tags:
        errors["new_tags"] = "New tags are not allowed here."
    if any(len(t) > 60 for t in new):
        errors["new_tags"] = "A tag has at most 60 characters."
    if label.no_difference and (label.identified or label.surface_difference or tags or new):
        # Claiming "no difference" while naming one is contradictory: ask the annotator to choose.
        errors["no_difference"] = "Cannot be set together with a named difference or a tag."
    if errors:
        raise InvalidLabel(errors)
    to_add = [t for t in dict.fromkeys(new) if t not in known]
    fields = {
        "identified": bool(label.identified),
        "surface_difference": bool(label.surface_difference),
        "no_difference": bool(label.no_difference),
        "tags": sorted(set(tags) | set(new)),
        "exclusion": label.exclusion,
        "exclusion_note": note,
    }
    return fields, to_add


def _add_tags(setting, names: list[str], user) -> None:
    for name in names:
        try:
            with transaction.atomic():
                CodebookTag.objects.get_or_create(
                    setting=setting, name=name, defaults={"created_by": user}
                )
        except IntegrityError:  # added by someone else at the same instant
            pass


def _write_annotation(
    *, item: Item, annotator, fields: dict, source: str, now: datetime
) -> Annotation:
    """Upsert the current annotation and append a revision (caller holds the pool lock)."""
    annotation = Annotation.objects.filter(item=item, annotator=annotator).first()
    if annotation is None:
        annotation = Annotation(item=item, annotator=annotator, revision=1, source=source, **fields)
    else:
        for name, value in fields.items():
            setattr(annotation, name, value)
        annotation.revision += 1
        annotation.source = source
    annotation.full_clean(exclude=["item", "annotator"])
    annotation.save()
    revision = AnnotationRevision(
        annotation=annotation, revision=annotation.revision, source=source, saved_at=now, **fields
    )
    revision.full_clean(exclude=["annotation"])
    revision.save()
    return annotation


def label_save(
    *,
    study: Study,
    annotator,
    public_id: str,
    label: LabelInput,
    source: str = Annotation.Source.WEB,
    base_revision: int | None = None,
    now: datetime | None = None,
) -> Annotation:
    """Save the annotator's label of an item; the last save wins and every save is kept.

    Parameters
    ----------
    study : Study
    annotator : User
    public_id : str
        The item's opaque id.
    label : LabelInput
    source : str
        ``web`` or ``api`` (recorded with the revision).
    base_revision : int, optional
        The revision of the annotator's label that the sending page showed (0: none yet). If
        given and the label has been saved since (another tab, another device), nothing is saved
        and :class:`StaleLabel` is raised. ``None`` skips the check (last save wins).

    Returns
    -------
    Annotation
        The annotator's one current annotation of the item (unique per item x annotator, so a
        refresh or a second tab updates it instead of adding one).

    Raises
    ------
    ItemNotFound
        If the item was never given to this annotator.
    ReservationLost
        If their reservation lapsed and the item is now full.
    InvalidLabel
        If the label breaks the schema (nothing is saved).
    StaleLabel
        If ``base_revision`` is older than the saved label (nothing is saved).

    Notes
    -----
    Once k annotators have labeled the item, the labels are compared: if they all agree on the
    compared fields, the agreed label becomes the item's final label; if not, the item waits for
    adjudication (see :func:`final_label_resolve`).
    """
    now = now or timezone.now()
    with transaction.atomic():
        _lock_pool(study)
        item, assignment = _own(study, annotator, public_id)
        if base_revision is not None:
            saved = Annotation.objects.filter(item=item, annotator=annotator).first()
            if (saved.revision if saved else 0) != base_revision:
                if saved is None:
                    raise InvalidLabel({"base_revision": "You have no saved label of this item."})
                raise StaleLabel(
                    current=saved.label_dict(), revision=saved.revision, updated_at=saved.updated_at
                )
        fields, to_add = _clean_label(label=label, setting=item.setting)
        if assignment.state != Assignment.State.SUBMITTED:
            _retake(item, assignment, annotator, study, now)
        _seat(study, annotator)
        _add_tags(item.setting, to_add, annotator)
        annotation = _write_annotation(
            item=item, annotator=annotator, fields=fields, source=source, now=now
        )
        if assignment.state != Assignment.State.SUBMITTED:
            assignment.state = Assignment.State.SUBMITTED
            assignment.submitted_at = now
            assignment.save(update_fields=["state", "submitted_at"])
        final_label_resolve(item=item, now=now)
    return annotation


def final_label_resolve(*, item: Item, now: datetime | None = None) -> FinalLabel | None:
    """Set or clear the item's agreed final label after its labels changed.

    With k or more labels that agree on every compared field, the agreed label becomes the final
    label (source ``agreement``; notes of ``other`` exclusions are joined). If they no longer
    agree, an agreement-based final label is removed so the item goes to adjudication. An
    adjudicated final label is kept. Returns the final label, or ``None``.
    """
    now = now or timezone.now()
    final = FinalLabel.objects.filter(item=item).first()
    if final is not None and final.source == FinalLabel.Source.ADJUDICATION:
        return final
    annotations = list(Annotation.objects.filter(item=item).order_by("pk"))
    if len(annotations) < item.study.annotators_per_item:
        return final
    if len({compared_values(a) for a in annotations}) > 1:
        if final is not None:
            final.delete()
        return None
    first = annotations[0]
    fields = {f: getattr(first, f) for f in COMPARED_FIELDS}
    fields["exclusion_note"] = " | ".join(
        dict.fromkeys(a.exclusion_note for a in annotations if a.exclusion_note)
    )
    if final is None:
        final = FinalLabel(item=item, source=FinalLabel.Source.AGREEMENT, decided_at=now, **fields)
    else:
        for name, value in fields.items():
            setattr(final, name, value)
        final.decided_at = now
    final.full_clean(exclude=["item", "adjudicator"])
    final.save()
    return final


def adjudication_save(
    *, study: Study, adjudicator, public_id: str, label: LabelInput, now: datetime | None = None
) -> FinalLabel:
    """Set the final label of an item whose k labels disagree (or change an earlier decision).

    Raises
    ------
    ItemNotFound
        If there is no such item in the study, or it does not await adjudication.
    NotAllowed
        If the adjudicator labeled the item themselves.
    InvalidLabel
        If the label breaks the schema.
    """
    now = now or timezone.now()
    with transaction.atomic():
        _lock_pool(study)
        item = (
            Item.objects.select_related("setting", "study")
            .filter(study=study, public_id=public_id)
            .first()
        )
        if item is None:
            raise ItemNotFound("No such item awaits adjudication.")
        annotations = list(Annotation.objects.filter(item=item))
        final = FinalLabel.objects.filter(item=item).first()
        adjudicated = final is not None and final.source == FinalLabel.Source.ADJUDICATION
        if (
            not adjudicated
            and item_status(annotations=annotations, final=final, k=study.annotators_per_item)
            != "needs_adjudication"
        ):
            raise ItemNotFound("No such item awaits adjudication.")
        if any(a.annotator_id == adjudicator.pk for a in annotations):
            raise NotAllowed(
                "You labeled this item yourself, so another adjudicator must decide it."
            )
        fields, to_add = _clean_label(label=label, setting=item.setting)
        _add_tags(item.setting, to_add, adjudicator)
        if final is None:
            final = FinalLabel(item=item)
        for name, value in fields.items():
            setattr(final, name, value)
        final.source = FinalLabel.Source.ADJUDICATION
        final.adjudicator = adjudicator
        final.decided_at = now
        final.full_clean(exclude=["item", "adjudicator"])
        final.save()
    return final


# --- CSV import ----------------------------------------------------------------------------

IMPORT_REQUIRED = ("item", "identified", "surface_difference", "no_difference", "exclusion")
IMPORT_OPTIONAL = ("tags", "exclusion_note", "annotator")
_TRUE = {"1", "true", "yes", "y"}
_FALSE = {"0", "false", "no", "n"}


@dataclass(frozen=True)
class ImportReport:
    """What a clean import did: ``created`` and ``updated`` annotations, ``tags_added``."""

    created: int
    updated: int
    tags_added: list[str]


def _parse_bool(value: str) -> bool | None:
    v = value.strip().lower()
    return True if v in _TRUE else False if v in _FALSE else None


def labels_import(
    *,
    study: Study,
    text: str,
    annotator_name: str | None = None,
    add_tags: bool = False,
    now: datetime | None = None,
) -> ImportReport:
    """Import labels made elsewhere (e.g. in a spreadsheet) as annotations of ``study``.

    Parameters
    ----------
    text : str
        CSV with a header: ``item`` (the opaque item id), ``identified``, ``surface_difference``,
        ``no_difference`` (1/0, true/false, yes/no), ``exclusion`` (see
        :class:`~.models.Exclusion`; empty means ``none``), optional ``tags`` (``;``-separated),
        ``exclusion_note`` and ``annotator`` (a username; else ``annotator_name``).
    annotator_name : str, optional
        Username for rows without an ``annotator`` value. Unknown usernames become users
        without a password (they cannot log in).
    add_tags : bool
        Add tags that are not in the codebook instead of reporting them as errors.

    Returns
    -------
    ImportReport

    Raises
    ------
    LabelImportError
        With every bad row by line number (the header is line 1), or the line of a NUL
        character. Nothing is changed then.

    Notes
    -----
    Imported labels count as submitted places: an item may not end with more than k annotators.
    An annotator's existing label of an item is replaced (last save wins; the history is kept).
    Agreement and adjudication then work as for labels made on the site.
    """
    now = now or timezone.now()
    items_sync(study=study)  # answers nobody has opened yet can be labeled too
    errors: list[tuple[int, str]] = []
    if "\x00" in text:  # PostgreSQL cannot store NUL; refused on every database alike
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise LabelImportError([(line, "a NUL character (byte 0x00) is not text; remove it")])
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in IMPORT_REQUIRED if c not in header]
    if missing:
        raise LabelImportError([(1, f"missing column(s): {', '.join(missing)}")])
    unknown_cols = [c for c in header if c not in IMPORT_REQUIRED + IMPORT_OPTIONAL]
    if unknown_cols:
        raise LabelImportError([(1, f"unknown column(s): {', '.join(unknown_cols)}")])
    if "annotator" not in header and not annotator_name:
        raise LabelImportError([(1, "no 'annotator' column: name the annotator with --annotator")])
    items = {
        i.public_id: i for i in Item.objects.filter(study=study).select_related("setting", "study")
    }
    codebooks: dict[int, set[str]] = {}
    validator = UnicodeUsernameValidator()
    parsed: list[tuple[int, Item, str, LabelInput]] = []
    seen: dict[tuple[str, str], int] = {}
    new_tags: dict[int, set[str]] = {}
    while True:
        line = reader.line_num + 1  # where the row starts (a quoted value may span lines)
        try:
            raw = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            errors.append((line, f"not valid CSV: {exc}"))
            break
        row = {(k or "").strip(): (v or "") for k, v in raw.items() if k is not None}
        if None in raw:
            errors.append((line, "more values than columns"))
            continue
        problems = []
        item = items.get(row["item"].strip())
        if item is None:
            problems.append(f"item: no item '{row['item'].strip()}' in this study")
        name = (row.get("annotator") or "").strip() or (annotator_name or "")
        try:
            validator(name)
            if not name:
                raise ValidationError("empty")
        except ValidationError:
            problems.append(f"annotator: '{name}' is not a valid username")
        bools = {}
        for col in ("identified", "surface_difference", "no_difference"):
            b = _parse_bool(row[col])
            if b is None:
                problems.append(f"{col}: '{row[col].strip()}' is not 1/0, true/false or yes/no")
            bools[col] = bool(b)
        exclusion = row["exclusion"].strip() or Exclusion.NONE
        tags = [normalize_tag(t) for t in (row.get("tags") or "").split(";") if t.strip()]
        label = LabelInput(
            exclusion=exclusion,
            exclusion_note=row.get("exclusion_note") or "",
            tags=[],
            new_tags=tags,
            **bools,
        )
        if item is not None:
            known = codebooks.setdefault(item.setting_id, set(codebook(item.setting)))
            unknown = sorted(set(tags) - known)
            if unknown and not add_tags:
                problems.append(
                    f"tags: not in the codebook: {', '.join(unknown)} (use --add-tags to add them)"
                )
            try:
                _clean_label(label=label, setting=item.setting)
            except InvalidLabel as exc:
                problems.extend(f"{k}: {v}" for k, v in exc.errors.items() if not (k == "tags"))
            key = (item.public_id, name)
            if key in seen:
                problems.append(
                    f"item {item.public_id} is already labeled by '{name}' on line {seen[key]}"
                )
            seen.setdefault(key, line)
            new_tags.setdefault(item.setting_id, set()).update(set(tags) - known)
        if problems:
            errors.append((line, "; ".join(problems)))
        else:
            parsed.append((line, item, name, label))
    if not errors:
        errors.extend(_capacity_errors(study, parsed, now))
    if errors:
        raise LabelImportError(errors)

    User = get_user_model()
    created = updated = 0
    with transaction.atomic():
        _lock_pool(study)
        if _capacity_errors(study, parsed, now):  # changed since the check: refuse, change nothing
            raise LabelImportError(_capacity_errors(study, parsed, now))
        users: dict[str, object] = {}
        for _line, item, name, label in parsed:
            user = users.get(name)
            if user is None:
                user = User.objects.filter(username=name).first()
                if user is None:
                    user = User(username=name)
                    user.set_unusable_password()
                    user.save()
                users[name] = user
            _seat(study, user)
            fields, to_add = _clean_label(label=label, setting=item.setting)
            _add_tags(item.setting, to_add, None)
            exists = Annotation.objects.filter(item=item, annotator=user).exists()
            _write_annotation(
                item=item, annotator=user, fields=fields, source=Annotation.Source.IMPORT, now=now
            )
            Assignment.objects.update_or_create(
                item=item,
                annotator=user,
                defaults={
                    "state": Assignment.State.SUBMITTED,
                    "reserved_at": now,
                    "expires_at": now,
                    "submitted_at": now,
                },
            )
            updated += exists
            created += not exists
        for item in {it.pk: it for _, it, _, _ in parsed}.values():
            final_label_resolve(item=item, now=now)
    added = sorted({t for tags in new_tags.values() for t in tags})
    return ImportReport(created=created, updated=updated, tags_added=added)


def _capacity_errors(study: Study, parsed: list, now: datetime) -> list[tuple[int, str]]:
    """Rows that would give an item more than k annotators."""
    errors = []
    by_item: dict[int, list[tuple[int, str]]] = {}
    for line, item, name, _ in parsed:
        by_item.setdefault(item.pk, []).append((line, name))
    for item_pk, rows in by_item.items():
        names = {n for _, n in rows}
        holders = set(
            Assignment.objects.filter(_active(now), item_id=item_pk).values_list(
                "annotator__username", flat=True
            )
        )
        total = holders | names
        if len(total) > study.annotators_per_item:
            extra = sorted(names - holders)
            first_line = min(line for line, n in rows if n in extra) if extra else rows[0][0]
            errors.append(
                (
                    first_line,
                    f"item {Item.objects.get(pk=item_pk).public_id} would have {len(total)} "
                    f"annotators, more than the study's {study.annotators_per_item}",
                )
            )
    return sorted(errors)


def labels_import_file(*, study: Study, path: str | Path, **kwargs) -> ImportReport:
    """Read a UTF-8 CSV file and :func:`labels_import` it. Raises ``LabelImportError`` also for
    a missing or undecodable file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LabelImportError([(0, f"no such file: {path}")]) from None
    except UnicodeDecodeError as exc:
        raise LabelImportError([(0, f"not UTF-8 text: {exc}")]) from None
    return labels_import(study=study, text=text, **kwargs)
