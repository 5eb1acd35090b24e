"""Writes of an annotator's labels: validating a label against the schema and the codebook,
saving it (every save kept as a revision) and adding new codebook tags. Locking: see
:mod:`.pool`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from spotlight_study.studies.models import Study
from spotlight_study.studies.codebook import option_match
from spotlight_study.studies.schema import normalize_tag

from ..errors import InvalidLabel, StaleLabel
from ..models import Annotation, AnnotationRevision, Assignment, CodebookTag, Exclusion, Item
from ..codebook_labels import is_declared
from ..selectors import codebook
from .codebook_labels import codebook_label_clean
from .final_labels import final_label_resolve
from .pool import pool_lock, seat_ensure
from .queue import assignment_own, assignment_retake_check, pilot_round_check


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
    #: A declared codebook's values, ``{field key: value}`` (``None`` under the default one).
    values: dict | None = None


def label_clean(
    *, label: LabelInput, setting, allow_new_tags: bool = True
) -> tuple[dict, list[str]]:
    """Validate a label against the schema and the setting's codebook.

    Returns ``(fields, tags_to_add)``: the label's model fields (tags normalized and sorted,
    the note stripped) and the new tags not yet in the codebook, in order of first mention.
    Raises :class:`InvalidLabel` naming each bad field. ``allow_new_tags=False`` refuses
    ``new_tags``.
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
    if is_declared(setting.study):
        return codebook_label_clean(
            label=label, setting=setting, errors=errors, note=note, allow_new_tags=allow_new_tags
        )
    known_list = codebook(setting)
    known = set(known_list)
    # Matching ignores case and Unicode form (studies/codebook.py: ß, a decomposed ä).
    tags = [option_match(known_list, t) or normalize_tag(t) for t in label.tags if t.strip()]
    new = [option_match(known_list, t) or normalize_tag(t) for t in label.new_tags if t.strip()]
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


def codebook_tags_add(setting, names: list[str], user) -> None:
    """Add ``names`` (canonical) to the setting's codebook as added by ``user`` (``None`` for
    an import); a tag added concurrently by someone else is not an error."""
    for name in names:
        try:
            with transaction.atomic():
                CodebookTag.objects.get_or_create(
                    setting=setting, name=name, defaults={"created_by": user}
                )
        except IntegrityError:  # added by someone else at the same instant
            pass


def annotation_write(
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
    PilotRoundClosed
        If it is a pilot item and the study's pilot round is closed (nothing is saved).
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
    adjudication (see :func:`.final_labels.final_label_resolve`).
    """
    now = now or timezone.now()
    with transaction.atomic():
        pool_lock(study)
        item, assignment = assignment_own(study, annotator, public_id)
        pilot_round_check(item)
        if base_revision is not None:
            saved = Annotation.objects.filter(item=item, annotator=annotator).first()
            if (saved.revision if saved else 0) != base_revision:
                if saved is None:
                    raise InvalidLabel({"base_revision": "You have no saved label of this item."})
                raise StaleLabel(
                    current=saved.label_dict(), revision=saved.revision, updated_at=saved.updated_at
                )
        fields, to_add = label_clean(label=label, setting=item.setting)
        if assignment.state != Assignment.State.SUBMITTED:
            assignment_retake_check(item, assignment, annotator, study, now)
        seat_ensure(study, annotator)
        codebook_tags_add(item.setting, to_add, annotator)
        annotation = annotation_write(
            item=item, annotator=annotator, fields=fields, source=source, now=now
        )
        if assignment.state != Assignment.State.SUBMITTED:
            assignment.state = Assignment.State.SUBMITTED
            assignment.submitted_at = now
            assignment.save(update_fields=["state", "submitted_at"])
        final_label_resolve(item=item, now=now)
    return annotation
