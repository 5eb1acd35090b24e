"""The write of the overview's shared summary (:class:`~..models.OverviewSnapshot`)."""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from spotlight_study.studies.models import Study

from ..models import OverviewSnapshot
from ..overview_snapshot import NotStorable, summary_to_json


def overview_snapshot_store(*, study: Study, is_pilot: bool, key: str, summary: dict) -> bool:
    """Store ``summary`` (see :func:`~..overview_snapshot.summary_to_json`) as the study's
    round's snapshot under ``key``, replacing the one before. Returns whether it was stored.

    Nothing is stored for a summary JSON cannot carry, nor when another process stores the
    round's first snapshot at the same moment (its row wins; a row under another key is never
    read, so either is right).
    """
    try:
        value = summary_to_json(summary)
    except NotStorable:
        return False
    try:
        with transaction.atomic():
            OverviewSnapshot.objects.update_or_create(
                study=study, is_pilot=is_pilot,
                defaults={"key": key, "summary": value, "computed_at": timezone.now()},
            )
    except IntegrityError:
        return False
    return True
