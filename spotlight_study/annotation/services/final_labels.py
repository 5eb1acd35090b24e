"""Writes of final labels by agreement: when an item's k labels agree, their label is final.

Who may set an item's final label, strongest first: an adjudicator
(:func:`.adjudication.adjudication_save`), the agreement of k annotators
(:func:`final_label_resolve`), and the machine coder where the researcher accepted it
(:mod:`.machine_acceptance`). A weaker source never overwrites a stronger one.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from ..models import COMPARED_FIELDS, Annotation, FinalLabel, Item
from ..selectors import compared_values


def final_label_resolve(*, item: Item, now: datetime | None = None) -> FinalLabel | None:
    """Set or clear the item's agreed final label after its labels changed.

    With k or more labels that agree on every compared field, the agreed label becomes the final
    label (source ``agreement``; notes of ``other`` exclusions are joined), replacing an accepted
    machine label. If they no longer agree, an agreement-based final label is removed so the item
    goes to adjudication. An adjudicated final label is kept, and so is an accepted machine
    label until humans agree or an adjudicator decides. Returns the final label, or ``None``.
    """
    now = now or timezone.now()
    final = FinalLabel.objects.filter(item=item).first()
    if final is not None and final.source == FinalLabel.Source.ADJUDICATION:
        return final
    annotations = list(Annotation.objects.filter(item=item).order_by("pk"))
    if len(annotations) < item.study.annotators_per_item:
        return final
    if len({compared_values(a) for a in annotations}) > 1:
        if final is not None and final.source == FinalLabel.Source.AGREEMENT:
            final.delete()
            return None
        return final
    first = annotations[0]
    fields = {f: getattr(first, f) for f in COMPARED_FIELDS}
    fields["exclusion_note"] = " | ".join(
        dict.fromkeys(a.exclusion_note for a in annotations if a.exclusion_note)
    )
    # A declared codebook's compared values agree; its free-text notes are joined as above.
    fields["values"] = dict(first.values)
    fields["notes"] = {
        key: " | ".join(dict.fromkeys(a.notes[key] for a in annotations if a.notes.get(key)))
        for key in dict.fromkeys(k for a in annotations for k in a.notes)
    }
    if final is None:
        final = FinalLabel(item=item, source=FinalLabel.Source.AGREEMENT, decided_at=now, **fields)
    else:
        for name, value in fields.items():
            setattr(final, name, value)
        if final.source == FinalLabel.Source.MACHINE:
            final.source = FinalLabel.Source.AGREEMENT
            final.machine_model, final.machine_fields = "", []
        final.decided_at = now
    final.full_clean(exclude=["item", "adjudicator"])
    final.save()
    return final
