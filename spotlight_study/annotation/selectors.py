"""Reads for annotation: blind item views, queues, adjudication, agreement and export joins.

Blinding rule: annotator- and adjudicator-facing code receives a :class:`BlindItem` (built by
:func:`blind_item`) and never a model instance that links to the participant. A ``BlindItem``
holds only what an annotator may see.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils import timezone

from spotlight_study.participation import flags as quality_flags
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.accounts.roles import ADJUDICATING, ANNOTATING
from spotlight_study.studies.access import studies_visible_to
from spotlight_study.studies.models import Study

from .codebook_labels import agreed_values, frozen_values, is_declared
from .codebook_labels import setting_tags as codebook  # the setting's tags, its old name here
from .models import (
    COMPARED_FIELDS,
    Annotation,
    Assignment,
    FinalLabel,
    Item,
    MachineAcceptance,
    StudyAnnotator,
)
from .pilot_round import pilot_round_is_open


def answer_digest(text: str) -> str:
    """SHA-256 (hex) of an answer in the form that counts for ``identical_answer``
    (:func:`spotlight_study.participation.flags.normalize_answer`)."""
    return hashlib.sha256(quality_flags.normalize_answer(text).encode()).hexdigest()


def queue_order_key(*, order_seed: int, public_id: str) -> str:
    """Sort key of an item in one annotator's queue: SHA-256 of ``seed:public_id``.

    Each annotator has their own seed, so each queue has its own random order, which mixes
    settings and conditions; the order of existing items does not change when items are added.
    """
    return hashlib.sha256(f"{order_seed}:{public_id}".encode()).hexdigest()


@dataclass(frozen=True)
class BlindItem:
    """Everything an annotator may see of an item, and nothing else.

    ``group1``/``group2`` are the setting's texts in definition order (never a participant's
    shuffled order). ``paste_chars`` is the number of characters pasted into the answer box (as
    reported by the browser). ``very_short_time``, ``long_time_hidden`` and ``identical_answer``
    are the answer's flags as defined in :mod:`spotlight_study.participation.flags` (the times
    themselves are not shown); the participant-level ``failed_instruction_check`` is never shown.
    ``writing_flags``: keys of the answer's writing-process flags (``flags.WRITING_FLAG_KEYS``).
    ``is_pilot``: the item belongs to the pilot annotation round (pages mark it "pilot"); it says
    nothing about the condition.
    """

    id: str
    setting_key: str
    setting_title: str
    group1: tuple[str, ...]
    group2: tuple[str, ...]
    target_description: str
    surface_difference: str
    answer: str
    paste_chars: int
    very_short_time: bool
    long_time_hidden: bool
    identical_answer: bool
    codebook: tuple[str, ...]
    is_pilot: bool = False
    writing_flags: tuple[str, ...] = ()
    @property
    def writing_flag_labels(self) -> tuple[str, ...]:
        """The writing-process flags in words, for the pages."""
        return tuple(quality_flags.FLAG_LABELS[key] for key in self.writing_flags)


def blind_item(item: Item) -> BlindItem:
    """The annotator's view of ``item`` (two extra queries: codebook and identical answers).

    ``identical_answer`` compares the item with the other items of the same kind (training or
    main) in the same population (pilot items with pilot items, real with real), as the export
    does with its rows.
    """
    response = item.response
    setting = item.setting
    study = item.study
    same_population = Participant.objects.filter(pk=response.participant_id).values("is_pilot")[:1]
    identical = (
        Item.objects.filter(
            study_id=item.study_id,
            answer_digest=item.answer_digest,
            setting__kind=setting.kind,
            response__participant__is_pilot=same_population,
        )
        .exclude(pk=item.pk)
        .exists()
    )
    flags = quality_flags.answer_flags(
        quality_flags.evidence_of(response),
        short_time_flag_seconds=study.short_time_flag_seconds,
        identical=identical,
        include_instruction_check=False,
        thresholds=quality_flags.thresholds_of(study),
    )
    return BlindItem(
        id=item.public_id,
        setting_key=setting.key,
        setting_title=setting.title,
        group1=tuple(setting.group1_texts),
        group2=tuple(setting.group2_texts),
        target_description=setting.target_description,
        surface_difference=setting.surface_difference,
        answer=response.answer,
        paste_chars=response.paste_chars,
        very_short_time=quality_flags.VERY_SHORT_TIME in flags,
        long_time_hidden=quality_flags.LONG_TIME_HIDDEN in flags,
        identical_answer=quality_flags.IDENTICAL_ANSWER in flags,
        codebook=tuple(codebook(setting)),
        is_pilot=item.is_pilot,
        writing_flags=tuple(f for f in flags if f in quality_flags.WRITING_FLAG_KEYS),
    )


def item_queryset() -> QuerySet[Item]:
    """Items with the rows :func:`blind_item` reads joined in."""
    return Item.objects.select_related("response", "setting", "study")


def annotation_studies(*, user) -> QuerySet[Study]:
    """The studies ``user`` annotates or adjudicates (``studies.access.studies_visible_to``) with
    at least one saved answer (each becomes an item when a queue, export or import reads the
    study: :func:`~.services.queue.items_sync`), by title."""
    return (
        studies_visible_to(user, ANNOTATING + ADJUDICATING).filter(participants__responses__answered_at__isnull=False)
        .distinct()
        .order_by("title")
    )


def own_annotation(*, item: Item, annotator) -> Annotation | None:
    """The annotator's current label of ``item``, or ``None``."""
    return Annotation.objects.filter(item=item, annotator=annotator).first()


def annotator_queue(
    *, study: Study, annotator, now: datetime | None = None, pilot: bool = False
) -> dict:
    """The annotator's queue page, of the real items or (``pilot``) of the pilot round's.

    Returns
    -------
    dict
        ``open``: public id of the item reserved for them (unexpired), or ``None``;
        ``labeled``: list of ``{"id", "updated_at"}`` of items they labeled, newest first;
        ``available``: number of items that still need an annotator and are not theirs.
    """
    now = now or timezone.now()
    mine = Assignment.objects.filter(item__study=study, item__is_pilot=pilot, annotator=annotator)
    open_ = (
        mine.filter(state=Assignment.State.RESERVED, expires_at__gt=now)
        .values_list("item__public_id", flat=True)
        .first()
    )
    labeled = [
        {"id": pid, "updated_at": updated}
        for pid, updated in Annotation.objects.filter(
            item__study=study, item__is_pilot=pilot, annotator=annotator
        )
        .order_by("-updated_at")
        .values_list("item__public_id", "updated_at")
    ]
    return {
        "open": open_,
        "labeled": labeled,
        "available": _available_to(study, annotator, now, pilot),
    }


def _available_to(study: Study, annotator, now: datetime, pilot: bool) -> int:
    """Items with a free place that the annotator does not hold (skipped ones count as open).

    The annotator's own expired reservation counts as open too: ``assignment_next`` releases it
    before choosing, so the queue page's "Next item" would offer the item again.
    """
    active = Q(assignments__state=Assignment.State.SUBMITTED) | Q(
        assignments__state=Assignment.State.RESERVED, assignments__expires_at__gt=now
    )
    held = (
        Assignment.objects.filter(item__study=study, item__is_pilot=pilot, annotator=annotator)
        .exclude(state__in=(Assignment.State.RELEASED, Assignment.State.SKIPPED))
        .exclude(state=Assignment.State.RESERVED, expires_at__lte=now)
    )
    items = (
        Item.objects.filter(study=study, is_pilot=pilot)
        .exclude(pk__in=held.values("item_id"))
        .annotate(n=Count("assignments", filter=active))
        .filter(n__lt=study.annotators_per_item)
        .count()
    )
    return items + answers_without_item(study=study, pilot=pilot)


def answers_without_item(*, study: Study, pilot: bool = False) -> int:
    """The saved answers of the round (real, or ``pilot`` participants') that are not an item
    yet: open to every annotator, each with all k places free. One query (an anti-join).

    The pages that only read (the queue, the item page's progress, the overview) count them so
    that they write nothing; *Next item* makes them items
    (:func:`.services.queue.items_sync`) before it hands one out.
    """
    return TaskResponse.objects.filter(
        participant__study=study,
        participant__is_pilot=pilot,
        answered_at__isnull=False,
        annotation_item__isnull=True,
    ).count()


def annotator_progress(
    *, study: Study, annotator, now: datetime | None = None, pilot: bool = False
) -> dict:
    """The annotator's progress in one round (real, or ``pilot``) for the item page, e.g.
    ``{"labeled": 12, "total": 80}``.

    ``labeled``: items they labeled; ``total``: ``labeled`` plus their open reservations plus
    the items still open to them (as on the queue page). ``total`` can shrink while others label.
    """
    now = now or timezone.now()
    labeled = Annotation.objects.filter(
        item__study=study, item__is_pilot=pilot, annotator=annotator
    ).count()
    reserved = (
        Assignment.objects.filter(
            item__study=study,
            item__is_pilot=pilot,
            annotator=annotator,
            state=Assignment.State.RESERVED,
            expires_at__gt=now,
        )
        .exclude(item__annotations__annotator=annotator)
        .count()
    )
    total = labeled + reserved + _available_to(study, annotator, now, pilot)
    return {"labeled": labeled, "total": total}


# --- final labels and adjudication -----------------------------------------------------------


def compared_values(label) -> tuple:
    """The compared fields of a label as a tuple (tags as a sorted tuple), then a declared
    codebook's compared values (:func:`.codebook_labels.frozen_values`; empty by default)."""
    return tuple(
        tuple(sorted(getattr(label, f))) if f == "tags" else getattr(label, f)
        for f in COMPARED_FIELDS
    ) + (frozen_values(label.values),)


def item_status(
    *, annotations: list, final: FinalLabel | None, k: int, compared: set | None = None
) -> str:
    """``final``, ``needs_adjudication`` (k or more labels that disagree) or ``in_progress``.

    ``compared`` is the set of the annotations' :func:`compared_values` when the caller has it
    already (:class:`~.label_table.LabelTable`); it is computed otherwise. With ``compared``
    given, only the number of ``annotations`` is used.
    """
    if final is not None:
        return "final"
    if compared is None and len(annotations) >= k:
        compared = {compared_values(a) for a in annotations}
    if len(annotations) >= k and len(compared) > 1:
        return "needs_adjudication"
    return "in_progress"


def items_with_labels(*, study: Study, is_pilot: bool | None = False) -> QuerySet[Item]:
    """The study's items with annotations (and annotators) and final labels prefetched.

    ``is_pilot``: ``False`` (default) the real items only, ``True`` the pilot round's, ``None``
    both.
    """
    rounds = Q() if is_pilot is None else Q(is_pilot=is_pilot)
    return (
        Item.objects.filter(rounds, study=study)
        .select_related("setting", "final_label")
        .prefetch_related(
            Prefetch(
                "annotations",
                queryset=Annotation.objects.select_related("annotator").order_by("pk"),
            )
        )
        .order_by("pk")
    )


def _final_or_none(item: Item) -> FinalLabel | None:
    try:
        return item.final_label
    except FinalLabel.DoesNotExist:
        return None


def human_final(final: FinalLabel | None) -> FinalLabel | None:
    """``final`` if people set it (agreement or adjudication), else ``None``.

    An accepted machine label is final for the analysis but not a human decision: the item
    still awaits adjudication if its labels disagree, and agreement against "the final labels"
    (of annotators and of the machine coder) is measured against human final labels only, so
    the machine is never compared with its own labels.
    """
    return final if final is not None and final.is_human else None


def adjudication_queue(*, study: Study, adjudicator) -> list[str]:
    """Public ids of items awaiting adjudication that ``adjudicator`` did not label themselves:
    the real items, and the pilot round's while it is open
    (:func:`~.pilot_round.pilot_item_ids` tells them apart).

    Ordered by a hash of the id, i.e. in no meaningful order.
    """
    k = study.annotators_per_item
    ids = []
    rounds = None if pilot_round_is_open(study) else False
    for item in items_with_labels(study=study, is_pilot=rounds):
        annotations = list(item.annotations.all())
        if any(a.annotator_id == adjudicator.pk for a in annotations):
            continue
        if (
            item_status(annotations=annotations, final=human_final(_final_or_none(item)), k=k)
            == "needs_adjudication"
        ):
            ids.append(item.public_id)
    return sorted(ids, key=lambda pid: hashlib.sha256(pid.encode()).hexdigest())


def adjudication_item(*, study: Study, public_id: str, adjudicator) -> Item | None:
    """The item if ``adjudicator`` may decide it: it awaits adjudication or was adjudicated, and
    they did not label it themselves; a pilot item only while the pilot round is open. ``None``
    otherwise (also for unknown ids)."""
    item = item_queryset().filter(study=study, public_id=public_id).first()
    if item is None or (item.is_pilot and not pilot_round_is_open(study)):
        return None
    annotations = list(Annotation.objects.filter(item=item))
    if any(a.annotator_id == adjudicator.pk for a in annotations):
        return None
    final = FinalLabel.objects.filter(item=item).first()
    if final is not None and final.source == FinalLabel.Source.ADJUDICATION:
        return item
    status = item_status(
        annotations=annotations, final=human_final(final), k=study.annotators_per_item
    )
    return item if status == "needs_adjudication" else None


def agreed_initial(*, item: Item) -> tuple[dict, set[str]]:
    """What the item's annotators agree on, to pre-fill the adjudication form.

    Returns
    -------
    (dict, set)
        Form initial data in the shape of :meth:`~.forms.LabelForm.initial_from`, holding only
        the compared fields on which every annotation has the same value, and ``tags`` set to
        the tags every annotator gave (a tag nobody gave stays unticked, which is agreement too);
        a field they disagree on is ``None`` (left blank, so the adjudicator must choose). The
        set names the compared fields they disagree on (``tags``: as sets).
    """
    annotations = list(Annotation.objects.filter(item=item))
    initial: dict = {}
    disagree: set[str] = set()
    if not annotations:
        return initial, disagree
    if is_declared(item.study):
        return agreed_values(annotations, item.study.annotation_codebook)
    for name in COMPARED_FIELDS:
        if name == "tags":
            sets = [set(a.tags) for a in annotations]
            initial["tags"] = sorted(set.intersection(*sets))
            if any(s != sets[0] for s in sets):
                disagree.add("tags")
            continue
        values = {getattr(a, name) for a in annotations}
        if len(values) == 1:
            value = values.pop()
            initial[name] = ("1" if value else "0") if isinstance(value, bool) else value
        else:
            initial[name] = None
            disagree.add(name)
    return initial, disagree


def competing_labels(*, item: Item) -> list[dict]:
    """The item's annotations without annotator names, in a random but stable order.

    Returns ``[{"letter": "A", "label": {...}}, ...]``; the order is a hash of the item id and the
    annotation's row id, so it says nothing about who labeled first.
    """
    annotations = sorted(
        Annotation.objects.filter(item=item),
        key=lambda a: hashlib.sha256(f"{item.public_id}:{a.pk}".encode()).hexdigest(),
    )
    return [
        {"letter": chr(ord("A") + i), "label": a.label_dict()} for i, a in enumerate(annotations)
    ]


def annotator_pseudonyms(*, study: Study) -> dict[int, str]:
    """``{user_id: "annotator_<n>"}`` for the study's annotators."""
    return {s.user_id: s.pseudonym for s in StudyAnnotator.objects.filter(study=study)}


def final_labels_by_response(*, study: Study, include_pilot: bool = False) -> dict[int, FinalLabel]:
    """``{task_response_id: FinalLabel}`` for the study's items that have a final label: the
    real items, and with ``include_pilot`` the pilot round's too (for pilot participants' rows)."""
    rounds = Q() if include_pilot else Q(item__is_pilot=False)
    return {
        f.item.response_id: f
        for f in FinalLabel.objects.filter(rounds, item__study=study).select_related("item")
    }


def machine_accepted_fields(*, study: Study) -> dict[str, str]:
    """``{field: model}`` of the study's current acceptances of machine labels as final labels
    (a field's latest :class:`~.models.MachineAcceptance` entry is ``accept``)."""
    current: dict[str, str] = {}
    for entry in MachineAcceptance.objects.filter(study=study).order_by("at", "pk"):
        if entry.action == MachineAcceptance.Action.ACCEPT:
            current[entry.field] = entry.model
        else:
            current.pop(entry.field, None)
    return current


def machine_acceptance_log(*, study: Study) -> list[MachineAcceptance]:
    """The study's accept and revoke entries, oldest first, with their users."""
    return list(
        MachineAcceptance.objects.filter(study=study).select_related("user").order_by("at", "pk")
    )
