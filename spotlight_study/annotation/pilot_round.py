"""Reads of the pilot annotation round: whether it is open, and which items a path may see.

Pilot participants' answers (``manage.py pilot``) are items with ``Item.is_pilot`` set. They are
never part of the real annotation: the real queues, the agreement figures, the final labels, the
machine coder's acceptance and agreement and the overview's figures read ``is_pilot=False`` items
only. A researcher who wants to rehearse annotation opens the *pilot round* on purpose
(:mod:`.services.pilot_round`); while it is open, annotators get the pilot items in a queue of
their own, each marked "pilot", and adjudicators get the pilot items that disagree. Its agreement
is reported apart from the real one, and the exports that hold both kinds mark each row with
``is_pilot``.

A *round* here is a ``bool``: ``False`` the real items, ``True`` the pilot round's.
"""
from __future__ import annotations

from django.db.models import Q

from spotlight_study.participation.models import TaskResponse
from spotlight_study.studies.models import Study

from .models import AnnotationPool, Item


def pilot_round_is_open(study: Study) -> bool:
    """Whether the study's pilot annotation round is open (one query; ``False`` if never opened)."""
    return AnnotationPool.objects.filter(study=study, pilot_round_open=True).exists()


def pilot_round_state(*, study: Study) -> dict:
    """The pilot round for the overview and the command.

    Returns
    -------
    dict
        ``open``: bool; ``changed_at``: when it was last opened or closed, or ``None``;
        ``items``: the study's pilot items, counting the pilot answers not made items yet.
    """
    pool = AnnotationPool.objects.filter(study=study).first()
    return {
        "open": bool(pool and pool.pilot_round_open),
        "changed_at": pool.pilot_round_changed_at if pool else None,
        "items": Item.objects.filter(study=study, is_pilot=True).count()
        # Pilot answers that are not items yet (the overview, which shows this, writes nothing).
        + TaskResponse.objects.filter(
            participant__study=study,
            participant__is_pilot=True,
            answered_at__isnull=False,
            annotation_item__isnull=True,
        ).count(),
    }


def served_rounds_filter(study: Study, prefix: str = "") -> Q:
    """Filter of the items that annotators and the machine coder may be given now: the real
    items, and the pilot items while the pilot round is open. ``prefix`` is the lookup path to
    the item (e.g. ``"item__"``)."""
    if pilot_round_is_open(study):
        return Q()
    return Q(**{f"{prefix}is_pilot": False})


def round_name(is_pilot: bool) -> str:
    """``"pilot"`` or ``"real"``: the word exports and messages use for a round."""
    return "pilot" if is_pilot else "real"


def pilot_round_open_study_ids() -> set[int]:
    """The pks of the studies whose pilot annotation round is open (one query)."""
    return set(
        AnnotationPool.objects.filter(pilot_round_open=True).values_list("study_id", flat=True)
    )


def pilot_item_ids(*, study: Study, ids: list[str]) -> set[str]:
    """Those of the public ``ids`` that are pilot items of ``study`` (to mark them "pilot")."""
    return set(
        Item.objects.filter(study=study, is_pilot=True, public_id__in=ids).values_list(
            "public_id", flat=True
        )
    )
