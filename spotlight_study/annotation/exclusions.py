"""The exclusions the final labels give a participant's answers, for the Prolific review.

Registered with :mod:`spotlight_study.participation.review_evidence` by ``AnnotationConfig``, so
that the review (in the Prolific app, independent of this one) can hold back a submission whose
answer a final label excludes.
"""
from __future__ import annotations

from spotlight_study.studies.models import Study

from .models import Exclusion, FinalLabel


def participant_final_exclusions(study: Study, participant_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
    """``{participant id: [(setting key, exclusion)]}``: the final labels of those participants'
    real answers (training and main) that exclude the answer (``exclusion`` not ``none``; a
    machine final label without the field excludes nothing). Participants without one are left
    out. One query. Registered with ``participation.review_evidence`` (``AnnotationConfig``)."""
    out: dict[int, list[tuple[str, str]]] = {}
    rows = (
        FinalLabel.objects.filter(
            item__study=study, item__is_pilot=False, item__response__participant_id__in=participant_ids
        )
        .exclude(exclusion__isnull=True)
        .exclude(exclusion=Exclusion.NONE)
        .order_by("item__response__participant_id", "item__response__position")
        .values_list("item__response__participant_id", "item__setting__key", "exclusion")
    )
    for pid, setting_key, exclusion in rows:
        out.setdefault(pid, []).append((setting_key, exclusion))
    return out
