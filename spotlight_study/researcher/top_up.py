"""Places topped up after exclusions: how many more participants each cell needs, and the raise.

``manage.py prolific_top_up <slug> [--dry-run]`` calls :func:`top_up`. Per counterbalancing cell:

- ``quota``: the cell's share of ``target_sample_size`` (``target // cells``; the remainder goes
  to the cells that already have the most usable participants, so nothing is recruited twice);
- ``usable``: completed real participants whose answers are not excluded (the export's
  ``exclusion_reason``: failed instruction check, annotation exclusions);
- ``pending``: participants in progress who still hold a place (started within the study's
  abandonment timeout); they may still complete;
- ``excluded`` (ended here without usable answers: excluded answers, a failed check under the
  ``end`` policy, no consent) and ``ended`` (``Participant.Status.ENDED``: returned, timed out,
  rejected, ended by the researcher), for information;
- ``needed`` = max(0, quota - usable - pending).

Open places on Prolific (its ``total_available_places`` minus the submissions that hold one:
every submission not returned, timed out or rejected) will bring new participants anyway, so the
raise is max(0, sum(needed) - open). Computed from Prolific's current number, so a second run
right after adds nothing, and it never asks for more than the cells need (never over-recruits).
The statuses are synced from Prolific first.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.utils import timezone

from spotlight_study.participation.models import Participant
from spotlight_study.participation.selectors import holding_filter
from spotlight_study.prolific import selectors as prolific_selectors
from spotlight_study.prolific.client import ProlificClient
from spotlight_study.prolific.errors import NotLinked
from spotlight_study.prolific.models import Submission
from spotlight_study.prolific.services.places import prolific_study_places, prolific_study_places_raise
from spotlight_study.prolific.services.submissions import submissions_sync
from spotlight_study.results.exports import export_rows
from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import study_cells

# Prolific statuses whose submission no longer holds a place on Prolific (it reopens it).
PLACE_FREEING = ("RETURNED", "TIMED-OUT", "REJECTED")


@dataclass(frozen=True)
class CellNeed:
    """One cell's numbers (participants); see the module docstring."""

    cell: int
    quota: int
    usable: int
    pending: int
    excluded: int
    ended: int

    @property
    def needed(self) -> int:
        """Participants the cell still needs to reach its quota."""
        return max(0, self.quota - self.usable - self.pending)


@dataclass(frozen=True)
class TopUp:
    """A top-up: the ``cells``, Prolific's ``places`` before, its ``open`` places, the ``add``
    (places raised, or to raise on a dry run) and ``places_after``."""

    cells: tuple[CellNeed, ...]
    places: int
    open: int
    add: int
    places_after: int
    dry_run: bool

    @property
    def needed(self) -> int:
        """Participants all cells still need."""
        return sum(c.needed for c in self.cells)

    def lines(self) -> list[str]:
        """The per-cell table and the outcome, as printed by the command."""
        out = ["cell  quota  usable  pending  excluded  ended  needed"]
        out += [f"{c.cell:>4}  {c.quota:>5}  {c.usable:>6}  {c.pending:>7}  {c.excluded:>8}  {c.ended:>5}  {c.needed:>6}"
                for c in self.cells]
        verb = "would raise" if self.dry_run else "raised"
        out.append(
            f"Needed {self.needed}; {self.open} place(s) still open on Prolific; "
            + (f"{verb} places from {self.places} to {self.places_after} (+{self.add})."
               if self.add else f"no places added ({self.places} on Prolific).")
        )
        return out


def _quotas(target: int, usable: list[int]) -> list[int]:
    """``target`` split over the cells as evenly as possible; the remainder goes to the cells
    with the most usable participants (ties: lower index)."""
    n = len(usable)
    base, extra = divmod(target, n)
    favoured = sorted(range(n), key=lambda i: (-usable[i], i))[:extra]
    return [base + (1 if i in favoured else 0) for i in range(n)]


def cell_needs(study: Study) -> tuple[CellNeed, ...]:
    """Per-cell numbers of the study now (no network; see the module docstring)."""
    n_cells = len(study_cells(study))
    rows = export_rows(study=study)
    excluded_people = {r["participant"] for r in rows["responses"] if r["excluded"]}
    usable, excluded, ended = Counter(), Counter(), Counter()
    for p in rows["participants"]:
        cell = p["cell"]
        if p["status"] == Participant.Status.COMPLETED and p["participant"] not in excluded_people:
            usable[cell] += 1
        elif p["status"] in Participant.Status.ENDED:
            ended[cell] += 1
        elif p["status"] != Participant.Status.IN_PROGRESS:
            excluded[cell] += 1
    pending = Counter(
        Participant.objects.filter(study=study, is_pilot=False, status=Participant.Status.IN_PROGRESS)
        .filter(holding_filter(study=study, now=timezone.now()))
        .values_list("cell_index", flat=True)
    )
    quotas = _quotas(study.target_sample_size, [usable[i] for i in range(n_cells)])
    return tuple(
        CellNeed(cell=i, quota=quotas[i], usable=usable[i], pending=pending[i], excluded=excluded[i],
                 ended=ended[i])
        for i in range(n_cells)
    )


def top_up(*, study: Study, dry_run: bool = False, client: ProlificClient | None = None) -> TopUp:
    """Sync, compute the cells' needs and raise the Prolific study's places by what they need.

    Raises :class:`~spotlight_study.prolific.errors.NotLinked` if the study is not on Prolific,
    and the Prolific errors of the sync, the read or the ``PATCH``
    (:func:`~spotlight_study.prolific.services.places.prolific_study_places_raise`).
    """
    ps = prolific_selectors.prolific_study_for(study)
    if ps is None or not ps.prolific_id:
        raise NotLinked("Create the study on Prolific (or link it) first.")
    submissions_sync(prolific_study_id=ps.pk, client=client)
    cells = cell_needs(study)
    places = prolific_study_places(prolific_study_id=ps.pk, client=client)
    holding = Submission.objects.filter(prolific_study=ps).exclude(status__in=PLACE_FREEING).count()
    open_places = max(0, places - holding)
    add = max(0, sum(c.needed for c in cells) - open_places)
    after = places + add
    if not dry_run and add:
        after = prolific_study_places_raise(
            prolific_study_id=ps.pk, add=add, expected_current=places, client=client
        )
    return TopUp(cells=cells, places=places, open=open_places, add=add, places_after=after, dry_run=dry_run)
