"""Writes of the participants' demographics: fetch a study's demographic export from Prolific.

``manage.py prolific_demographics <slug>`` and the button on the Prolific page call
:func:`demographics_fetch`. The export is asked for outside any transaction, then the study's
stored rows are replaced in one transaction. Each row is stored by submission and joined to its
participant by pseudonym; the Prolific ID is turned into the pseudonym at once and is neither
stored, logged nor returned. Rows of people who are not (or no longer, after an erasure)
participants of the study are not kept.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from spotlight_study.participation.selectors import participant_pseudonym

from .. import selectors
from ..client import ProlificClient
from ..models import Demographics
from ..payloads import DEMOGRAPHIC_FIELDS
from .study import client_or_default, linked_prolific_study

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DemographicsReport:
    """What a fetch did: ``rows`` in Prolific's export, ``stored`` (joined to a participant),
    ``unmatched`` (no participant of the study with that pseudonym: not kept), and the
    ``columns`` with at least one value among the stored rows (names of
    :data:`~..payloads.DEMOGRAPHIC_FIELDS`, then the extra columns, sorted)."""

    rows: int
    stored: int
    unmatched: int
    columns: tuple[str, ...]

    def message(self) -> str:
        """One sentence for the page and the command."""
        shown = ", ".join(c.replace("_", " ") for c in self.columns) or "none"
        return (
            f"Demographics of {self.stored} participant(s) stored from {self.rows} row(s) of "
            f"Prolific's export ({self.unmatched} not matching a participant here, not kept). "
            f"Columns with values: {shown}."
        )


def demographics_fetch(
    *, prolific_study_id: int, client: ProlificClient | None = None
) -> DemographicsReport:
    """Fetch the linked study's demographic export and replace the stored demographics.

    Raises :class:`~..errors.NotLinked` if the study is not on Prolific, and
    :class:`~..errors.ProlificError` (API, transport, or an answer that is not the export's CSV)
    if the fetch fails, in which case nothing stored changes.
    """
    ps = linked_prolific_study(prolific_study_id)
    with client_or_default(client, study_id=ps.study_id) as c:
        records = c.study_demographic_export(ps.prolific_id)
    study = ps.study
    known = set(selectors.participant_by_pseudonym(study=study))
    now = timezone.now()
    rows = []
    for r in records:
        pseudonym = participant_pseudonym(study=study, prolific_pid=r.participant_id) if r.participant_id else ""
        if pseudonym not in known:
            continue
        rows.append(
            Demographics(
                prolific_study=ps, submission_id=r.submission_id, pseudonym=pseudonym, age=r.age,
                extra=dict(r.extra), fetched_at=now,
                **{name: getattr(r, name) for name in DEMOGRAPHIC_FIELDS if name != "age"},
            )
        )
    with transaction.atomic():
        Demographics.objects.filter(prolific_study=ps).delete()
        Demographics.objects.bulk_create(rows, batch_size=500)
    filled = [n for n in DEMOGRAPHIC_FIELDS if any(getattr(d, n) not in ("", None) for d in rows)]
    extra = sorted({k for d in rows for k, v in d.extra.items() if v})
    report = DemographicsReport(
        rows=len(records), stored=len(rows), unmatched=len(records) - len(rows),
        columns=tuple(filled + extra),
    )
    logger.info("Study %s: demographics of %d participant(s) stored.", study.slug, report.stored)
    return report
