"""Writes of adjudication: an adjudicator sets the final label of an item whose k labels
disagree (or changes an earlier decision). Locking: see :mod:`.pool`."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from spotlight_study.studies.models import Study

from ..errors import ItemNotFound, NotAllowed
from ..models import Annotation, FinalLabel, Item
from ..selectors import human_final, item_status
from .labels import LabelInput, codebook_tags_add, label_clean
from .pool import pool_lock
from .queue import pilot_round_check


def adjudication_save(
    *, study: Study, adjudicator, public_id: str, label: LabelInput, now: datetime | None = None
) -> FinalLabel:
    """Set the final label of an item whose k labels disagree (or change an earlier decision).

    An accepted machine label of the item (source ``machine``) is replaced: a human decision
    always wins over the machine coder.

    Raises
    ------
    ItemNotFound
        If there is no such item in the study, or it does not await adjudication.
    PilotRoundClosed
        If it is a pilot item and the study's pilot round is closed.
    NotAllowed
        If the adjudicator labeled the item themselves.
    InvalidLabel
        If the label breaks the schema.
    """
    now = now or timezone.now()
    with transaction.atomic():
        pool_lock(study)
        item = (
            Item.objects.select_related("setting", "study")
            .filter(study=study, public_id=public_id)
            .first()
        )
        if item is None:
            raise ItemNotFound("No such item awaits adjudication.")
        pilot_round_check(item)
        annotations = list(Annotation.objects.filter(item=item))
        final = FinalLabel.objects.filter(item=item).first()
        adjudicated = final is not None and final.source == FinalLabel.Source.ADJUDICATION
        status = item_status(
            annotations=annotations, final=human_final(final), k=study.annotators_per_item
        )
        if not adjudicated and status != "needs_adjudication":
            raise ItemNotFound("No such item awaits adjudication.")
        if any(a.annotator_id == adjudicator.pk for a in annotations):
            raise NotAllowed(
                "You labeled this item yourself, so another adjudicator must decide it."
            )
        fields, to_add = label_clean(label=label, setting=item.setting)
        codebook_tags_add(item.setting, to_add, adjudicator)
        if final is None:
            final = FinalLabel(item=item)
        for name, value in fields.items():
            setattr(final, name, value)
        final.source = FinalLabel.Source.ADJUDICATION
        final.machine_model, final.machine_fields = "", []
        final.adjudicator = adjudicator
        final.decided_at = now
        final.full_clean(exclude=["item", "adjudicator"])
        final.save()
    return final
