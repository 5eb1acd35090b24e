"""Reads for annotation: blind item views, queues, adjudication, agreement and export joins.

Blinding rule: annotator- and adjudicator-facing code receives a :class:`BlindItem` (built by
:func:`blind_item`) and never a model instance that links to the participant. A ``BlindItem``
holds only what an annotator may see.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils import timezone

from spotlight_study.studies.models import Setting, Study

from . import agreement as agreement_stats
from .models import (
    COMPARED_FIELDS,
    Annotation,
    Assignment,
    CodebookTag,
    FinalLabel,
    Item,
    StudyAnnotator,
)


def answer_digest(text: str) -> str:
    """SHA-256 (hex) of an answer with whitespace collapsed and case folded."""
    return hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()


def queue_order_key(*, order_seed: int, public_id: str) -> str:
    """Sort key of an item in one annotator's queue: SHA-256 of ``seed:public_id``.

    Each annotator has their own seed, so each queue has its own random order, which mixes
    settings and conditions; the order of existing items does not change when items are added.
    """
    return hashlib.sha256(f"{order_seed}:{public_id}".encode()).hexdigest()


def codebook(setting: Setting) -> list[str]:
    """The setting's tags: the study file's, then those added by annotators (alphabetical)."""
    added = [t.name for t in CodebookTag.objects.filter(setting=setting).order_by("name")]
    base = list(setting.annotation_tags)
    return base + [t for t in added if t not in base]


@dataclass(frozen=True)
class BlindItem:
    """Everything an annotator may see of an item, and nothing else.

    ``group1``/``group2`` are the setting's texts in definition order (never a participant's
    shuffled order). ``paste_chars`` is the number of characters pasted into the answer box (as
    reported by the browser); ``very_short_time`` is true if the answer came faster than the
    study's ``short_time_flag_seconds`` (the time itself is not shown); ``identical_answer`` is
    true if another answer of the same kind (training or main) has the same text.
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
    identical_answer: bool
    codebook: tuple[str, ...]


def blind_item(item: Item) -> BlindItem:
    """The annotator's view of ``item`` (two extra queries: codebook and identical answers)."""
    response = item.response
    setting = item.setting
    study = item.study
    ms = response.time_on_task_ms
    identical = (
        Item.objects.filter(
            study_id=item.study_id, answer_digest=item.answer_digest, setting__kind=setting.kind
        )
        .exclude(pk=item.pk)
        .exists()
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
        very_short_time=ms is not None and ms < study.short_time_flag_seconds * 1000,
        identical_answer=identical,
        codebook=tuple(codebook(setting)),
    )


def item_queryset() -> QuerySet[Item]:
    """Items with the rows :func:`blind_item` reads joined in."""
    return Item.objects.select_related("response", "setting", "study")


def annotation_studies() -> QuerySet[Study]:
    """Studies with at least one saved answer (items are made from them on demand), by title."""
    return (
        Study.objects.filter(participants__responses__answered_at__isnull=False)
        .distinct()
        .order_by("title")
    )


def own_annotation(*, item: Item, annotator) -> Annotation | None:
    """The annotator's current label of ``item``, or ``None``."""
    return Annotation.objects.filter(item=item, annotator=annotator).first()


def annotator_queue(*, study: Study, annotator, now: datetime | None = None) -> dict:
    """The annotator's queue page.

    Returns
    -------
    dict
        ``open``: public id of the item reserved for them (unexpired), or ``None``;
        ``labeled``: list of ``{"id", "updated_at"}`` of items they labeled, newest first;
        ``available``: number of items that still need an annotator and are not theirs.
    """
    now = now or timezone.now()
    k = study.annotators_per_item
    mine = Assignment.objects.filter(item__study=study, annotator=annotator)
    open_ = (
        mine.filter(state=Assignment.State.RESERVED, expires_at__gt=now)
        .values_list("item__public_id", flat=True)
        .first()
    )
    labeled = [
        {"id": pid, "updated_at": updated}
        for pid, updated in Annotation.objects.filter(item__study=study, annotator=annotator)
        .order_by("-updated_at")
        .values_list("item__public_id", "updated_at")
    ]
    active = Q(assignments__state=Assignment.State.SUBMITTED) | Q(
        assignments__state=Assignment.State.RESERVED, assignments__expires_at__gt=now
    )
    available = (
        Item.objects.filter(study=study)
        .exclude(pk__in=mine.exclude(state=Assignment.State.RELEASED).values("item_id"))
        .annotate(n=Count("assignments", filter=active))
        .filter(n__lt=k)
        .count()
    )
    return {"open": open_, "labeled": labeled, "available": available}


# --- final labels and adjudication -----------------------------------------------------------


def compared_values(label) -> tuple:
    """The compared fields of a label as a tuple (tags as a sorted tuple)."""
    return tuple(
        tuple(sorted(getattr(label, f))) if f == "tags" else getattr(label, f)
        for f in COMPARED_FIELDS
    )


def item_status(*, annotations: list[Annotation], final: FinalLabel | None, k: int) -> str:
    """``final``, ``needs_adjudication`` (k or more labels that disagree) or ``in_progress``."""
    if final is not None:
        return "final"
    if len(annotations) >= k and len({compared_values(a) for a in annotations}) > 1:
        return "needs_adjudication"
    return "in_progress"


def items_with_labels(*, study: Study) -> QuerySet[Item]:
    """The study's items with annotations (and annotators) and final labels prefetched."""
    return (
        Item.objects.filter(study=study)
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


def adjudication_queue(*, study: Study, adjudicator) -> list[str]:
    """Public ids of items awaiting adjudication that ``adjudicator`` did not label themselves.

    Ordered by a hash of the id, i.e. in no meaningful order.
    """
    k = study.annotators_per_item
    ids = []
    for item in items_with_labels(study=study):
        annotations = list(item.annotations.all())
        if any(a.annotator_id == adjudicator.pk for a in annotations):
            continue
        if (
            item_status(annotations=annotations, final=_final_or_none(item), k=k)
            == "needs_adjudication"
        ):
            ids.append(item.public_id)
    return sorted(ids, key=lambda pid: hashlib.sha256(pid.encode()).hexdigest())


def adjudication_item(*, study: Study, public_id: str, adjudicator) -> Item | None:
    """The item if ``adjudicator`` may decide it: it awaits adjudication or was adjudicated, and
    they did not label it themselves. ``None`` otherwise (also for unknown ids)."""
    item = item_queryset().filter(study=study, public_id=public_id).first()
    if item is None:
        return None
    annotations = list(Annotation.objects.filter(item=item))
    if any(a.annotator_id == adjudicator.pk for a in annotations):
        return None
    final = FinalLabel.objects.filter(item=item).first()
    if final is not None and final.source == FinalLabel.Source.ADJUDICATION:
        return item
    status = item_status(annotations=annotations, final=final, k=study.annotators_per_item)
    return item if status == "needs_adjudication" else None


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


# --- researcher overview and agreement ---------------------------------------------------------


@dataclass(frozen=True)
class AgreementRow:
    """Agreement on one label over a scope (``all`` items, or one setting's items)."""

    field: str
    scope: str
    result: agreement_stats.Agreement


def agreement_report(*, study: Study) -> list[AgreementRow]:
    """Agreement per label: the booleans and the exclusion over all items and per setting, and
    each tag of each setting's codebook (present/absent) over that setting's items.

    Raters are the study's annotators; an annotator who did not label an item is a missing
    rating. See :mod:`spotlight_study.annotation.agreement` for the statistics.
    """
    items = list(items_with_labels(study=study))
    annotators = sorted({a.annotator_id for it in items for a in it.annotations.all()})
    if not annotators:
        return []
    by_item = [{a.annotator_id: a for a in it.annotations.all()} for it in items]
    settings = list(Setting.objects.filter(study=study).order_by("kind", "position"))
    rows: list[AgreementRow] = []
    scopes = [("all", list(range(len(items))))] + [
        (s.key, [i for i, it in enumerate(items) if it.setting_id == s.pk]) for s in settings
    ]
    for field in (f for f in COMPARED_FIELDS if f != "tags"):
        for scope, idx in scopes:
            if not idx:
                continue
            ratings = [
                [getattr(by_item[i][u], field) if u in by_item[i] else None for i in idx]
                for u in annotators
            ]
            rows.append(AgreementRow(field, scope, agreement_stats.agreement(ratings)))
    for s in settings:
        idx = [i for i, it in enumerate(items) if it.setting_id == s.pk]
        if not idx:
            continue
        tag_sets = [
            [by_item[i][u].tags if u in by_item[i] else None for i in idx] for u in annotators
        ]
        presence = agreement_stats.tag_presence(tag_sets)
        for tag in codebook(s):
            ratings = presence.get(tag) or [
                [None if ts is None else False for ts in row] for row in tag_sets
            ]
            rows.append(AgreementRow(f"tag:{tag}", s.key, agreement_stats.agreement(ratings)))
        for tag in sorted(set(presence) - set(codebook(s))):
            rows.append(AgreementRow(f"tag:{tag}", s.key, agreement_stats.agreement(presence[tag])))
    return rows


def researcher_overview(*, study: Study) -> dict:
    """Progress figures for the researcher's annotation page.

    Returns
    -------
    dict
        ``items``: total items; ``status``: ``{"final", "needs_adjudication", "in_progress"}``
        counts; ``final_sources``: counts by final-label source; ``annotators``: list of
        ``{"pseudonym", "username", "labels"}``; ``agreement``: :func:`agreement_report`.
    """
    k = study.annotators_per_item
    status: Counter = Counter({"final": 0, "needs_adjudication": 0, "in_progress": 0})
    sources: Counter = Counter()
    labels_per_user: Counter = Counter()
    for item in items_with_labels(study=study):
        annotations = list(item.annotations.all())
        final = _final_or_none(item)
        status[item_status(annotations=annotations, final=final, k=k)] += 1
        if final is not None:
            sources[final.source] += 1
        for a in annotations:
            labels_per_user[a.annotator_id] += 1
    seats = StudyAnnotator.objects.filter(study=study).select_related("user").order_by("number")
    return {
        "items": sum(status.values()),
        "status": dict(status),
        "final_sources": dict(sources),
        "annotators": [
            {
                "pseudonym": s.pseudonym,
                "username": s.user.get_username(),
                "labels": labels_per_user[s.user_id],
            }
            for s in seats
        ],
        "agreement": agreement_report(study=study),
    }


def annotator_pseudonyms(*, study: Study) -> dict[int, str]:
    """``{user_id: "annotator_<n>"}`` for the study's annotators."""
    return {s.user_id: s.pseudonym for s in StudyAnnotator.objects.filter(study=study)}


def final_labels_by_response(*, study: Study) -> dict[int, FinalLabel]:
    """``{task_response_id: FinalLabel}`` for the study's items that have a final label."""
    return {
        f.item.response_id: f
        for f in FinalLabel.objects.filter(item__study=study).select_related("item")
    }


def items_by_status(*, study: Study) -> dict[str, list[Item]]:
    """The study's items grouped by :func:`item_status` (for exports)."""
    k = study.annotators_per_item
    out: dict[str, list[Item]] = defaultdict(list)
    for item in items_with_labels(study=study):
        out[
            item_status(annotations=list(item.annotations.all()), final=_final_or_none(item), k=k)
        ].append(item)
    return out
