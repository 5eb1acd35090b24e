"""Reads of the live monitor: one row per participant with step, times, flags and statuses.

The monitor is for watching a study while it runs (oTree's monitor, Prolific's dashboard), so it
has to stay fast with 10,000 participants and a refresh every few seconds. It issues a constant
number of queries whatever the number of participants:

1. the participants of the population, four small columns each (no dates or JSON, whose
   conversion is what costs time at 10,000 rows);
2. the saved main answers of the population, for the flags, which the database computes
   (``identical_answer`` needs all of them: a text is repeated or not only with respect to the
   whole population, and it is decided in Python, see
   :mod:`spotlight_study.participation.flag_queries`);
3. the shown page's participants in full (at most :data:`PAGE_SIZE`);
4. the answers of the shown page's participants, for the time on the current step;
5. the Prolific submissions of the shown page's participants;
6. only with the ``idle`` filter: the participants in progress idle for longer
   (:func:`spotlight_study.participation.ending.idle_participant_ids`).

The step's name and the time on it come from the step's spec (the registry,
:mod:`spotlight_study.participation.steps.lookup`); the idle time from the participant's last
activity (their row's last write, or a task page served or saved later).

Flags come from :mod:`spotlight_study.participation.flags` (the one definition), with the
populations of the export and the researcher page: real participants are compared with real
participants and pilot participants with pilot participants. Participants are shown by their
export pseudonym, never by their Prolific ID.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from spotlight_study.participation import flag_queries
from spotlight_study.participation import flags as quality_flags
from spotlight_study.participation.ending import idle_participant_ids
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.participation.steps.checks import failed_checks
from spotlight_study.participation.steps.lookup import step_label, step_started_at
from spotlight_study.prolific.models import Submission
from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import study_cells

#: Rows per page of the monitor.
PAGE_SIZE = 200
#: Seconds between two refreshes of the rows by the page's script (static/js/monitor.js).
REFRESH_SECONDS = 5

#: Values of the ``pilot`` filter: real participants only (default), pilots too, pilots only.
PILOT_EXCLUDE, PILOT_INCLUDE, PILOT_ONLY = "exclude", "include", "only"
PILOT_CHOICES = (
    (PILOT_EXCLUDE, "Real participants only"),
    (PILOT_INCLUDE, "Real and pilot participants"),
    (PILOT_ONLY, "Pilot participants only"),
)
#: Values of the ``flag`` filter besides the flag keys: any flag at all, no flag.
FLAG_ANY, FLAG_NONE = "any", "none"


@dataclass(frozen=True)
class MonitorFilters:
    """What the monitor shows: ``status`` is a :class:`Participant.Status` value or ``""`` (any);
    ``flag`` a key of :data:`~spotlight_study.participation.flags.FLAG_KEYS`, ``"any"``,
    ``"none"`` or ``""`` (no filter); ``pilot`` one of :data:`PILOT_CHOICES`; ``page`` 1-based;
    ``idle_minutes``: only participants in progress idle for more than that many minutes
    (``None``: no filter)."""

    status: str = ""
    flag: str = ""
    pilot: str = PILOT_EXCLUDE
    page: int = 1
    idle_minutes: int | None = None


@dataclass(frozen=True)
class MonitorRow:
    """One participant as the monitor shows them.

    ``step_seconds`` is the time on the current step and ``total_seconds`` the time so far, in
    whole seconds (``None`` when not meaningful, e.g. the step of a participant who is done);
    ``flags`` are ``(label, answer count)`` pairs in the order of ``FLAG_KEYS``;
    ``prolific_status`` is the latest known Prolific submission status or ``""``;
    ``idle_seconds`` the time since the participant's last activity (whole seconds,
    :mod:`spotlight_study.participation.ending`), ``None`` when not in progress.
    """

    participant: str
    pilot: bool
    cell: int
    cell_label: str
    step: str
    step_seconds: int | None
    total_seconds: int | None
    flags: tuple[tuple[str, int], ...]
    status: str
    status_label: str
    prolific_status: str
    idle_seconds: int | None = None
    #: The check pages failed at their last try (``"attention check (between_tasks): flag"``).
    checks: tuple[str, ...] = ()

    @property
    def idle_time(self) -> str:
        """The time since the last activity for people, or ``""``."""
        return duration_display(self.idle_seconds)

    @property
    def step_time(self) -> str:
        """The time on the current step for people (``"4 min 05 s"``), or ``""``."""
        return duration_display(self.step_seconds)

    @property
    def total_time(self) -> str:
        """The time so far for people, or ``""``."""
        return duration_display(self.total_seconds)


@dataclass(frozen=True)
class MonitorPage:
    """One page of the monitor: ``rows`` of this page, ``total`` rows over all pages, the
    1-based ``page`` (clamped to the last page) of ``pages``, and ``generated_at`` (UTC)."""

    rows: list[MonitorRow]
    total: int
    page: int
    pages: int
    generated_at: datetime


def duration_display(seconds: int | None) -> str:
    """``seconds`` for people: ``"42 s"``, ``"3 min 05 s"``, ``"1 h 02 min"``; ``""`` for None."""
    if seconds is None:
        return ""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _seconds(later: datetime | None, earlier: datetime | None) -> int | None:
    if later is None or earlier is None:
        return None
    return max(0, int((later - earlier).total_seconds()))


def _participant_flags(
    *, study: Study, participants: list[dict], pilot: bool | None
) -> dict[int, Counter]:
    """``{participant_id: Counter(flag key -> number of flagged main answers)}``, for the
    flagged participants only (most are not; a Counter each would cost more than the flags).

    One query over the saved main answers of the shown populations (``pilot``: ``False`` real,
    ``True`` pilot, ``None`` both), their flags computed by the database
    (:func:`~spotlight_study.participation.flag_queries.study_flag_counts`);
    ``identical_answer`` is computed within each population (real, pilot) separately, as in
    the export and the researcher page. ``failed_instruction_check`` counts 1 per participant
    whose check failed.
    """
    counts: dict[int, Counter] = {}
    for population in flag_queries.study_flag_counts(study=study, pilot=pilot).values():
        counts.update(population.by_participant)
    for p in participants:
        if p["instruction_check_passed"] is False:
            # A copy: the query's Counters are not this function's to change.
            mine = counts[p["id"]] = Counter(counts.get(p["id"], ()))
            mine[quality_flags.FAILED_INSTRUCTION_CHECK] = 1
    return counts


_NO_FLAGS: Counter = Counter()


def _has_flag(counts: Counter, flag: str) -> bool:
    if flag == FLAG_ANY:
        return any(counts.values())
    if flag == FLAG_NONE:
        return not any(counts.values())
    return counts[flag] > 0


def _prolific_statuses(*, study: Study, ids: list[int]) -> dict[int, str]:
    """``{participant_id: latest Prolific submission status}`` for the given participants."""
    latest: dict[int, tuple] = {}
    for pid, status, status_at in Submission.objects.filter(
        prolific_study__study=study, participant_id__in=ids
    ).values_list("participant_id", "status", "status_at"):
        if pid not in latest or status_at >= latest[pid][1]:
            latest[pid] = (status, status_at)
    return {pid: status for pid, (status, _at) in latest.items()}


def monitor_page(
    *, study: Study, filters: MonitorFilters, now: datetime | None = None
) -> MonitorPage:
    """One page of the live monitor of ``study`` (newest participants first).

    ``filters`` must hold valid values (the view validates them with its form); a ``page``
    beyond the last is clamped to the last page. ``study`` should come with its settings
    prefetched (``study_get_with_settings``) so the cell labels cost no query.

    The current step is named by its spec (``consent``, ``instructions``, ``training``,
    ``task k of n``, ``survey``, ``done``, or a registered step's key or label:
    :func:`~spotlight_study.participation.steps.lookup.step_label`). The time on the step runs
    from the instant the step was entered (the spec's ``started_at``:
    :func:`~spotlight_study.participation.steps.lookup.step_started_at`) to ``now`` and is shown
    only while the participant is in progress and not on an end page; the time so far runs from arrival (``started_at``) to the end
    (``finished_at``), to ``now`` while in progress, and to the participant's last recorded
    change for those who left without finishing (returned, timed out, rejected).
    """
    now = now or timezone.now()
    pilot = {PILOT_ONLY: True, PILOT_INCLUDE: None}.get(filters.pilot, False)
    pilot_q = Q() if pilot is None else Q(is_pilot=pilot)
    status_q = Q(status=filters.status) if filters.status else Q()
    people = list(
        Participant.objects.filter(pilot_q, status_q, study=study)
        .order_by("-started_at", "-pk")
        .values("id", "is_pilot", "status", "instruction_check_passed")
    )
    flag_counts = _participant_flags(study=study, participants=people, pilot=pilot)
    if filters.flag:
        people = [p for p in people if _has_flag(flag_counts.get(p["id"], _NO_FLAGS), filters.flag)]
    if filters.idle_minutes is not None:
        # One more query, only with this filter: the stalled participants (in progress).
        idle = idle_participant_ids(study=study, idle_minutes=filters.idle_minutes, now=now)
        people = [p for p in people if p["id"] in idle]

    total = len(people)
    pages = max(1, math.ceil(total / PAGE_SIZE))
    page = min(max(1, filters.page), pages)
    ids = [p["id"] for p in people[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]]
    details = {
        p["id"]: p
        for p in Participant.objects.filter(pk__in=ids).values(
            "id", "prolific_pid", "is_pilot", "cell_index", "cell_plan", "status", "step",
            "task_index", "started_at", "consented_at", "finished_at", "updated_at",
        )
    }
    # A participant deleted between the two queries (pilot deletion) is left out.
    shown = [details[i] for i in ids if i in details]

    answers: dict[int, dict[int, tuple]] = defaultdict(dict)
    # The last activity: the row's last write, or a task page served or saved later.
    last_seen = {p["id"]: p["updated_at"] for p in shown}
    for pid, position, served, answered, last_served in TaskResponse.objects.filter(
        participant_id__in=ids
    ).order_by().values_list("participant_id", "position", "served_at", "answered_at", "last_served_at"):
        answers[pid][position] = (served, answered)
        last_seen[pid] = max(t for t in (last_seen[pid], last_served, answered) if t is not None)
    prolific = _prolific_statuses(study=study, ids=ids)
    checks = failed_checks(ids)
    labels = {c.index: c.label for c in study_cells(study)}
    status_labels = dict(Participant.Status.choices)

    rows = []
    for p in shown:
        in_progress = p["status"] == Participant.Status.IN_PROGRESS
        end = p["finished_at"] or (now if in_progress else p["updated_at"])
        counts = flag_counts.get(p["id"], _NO_FLAGS)
        rows.append(
            MonitorRow(
                participant=participant_pseudonym(study=study, prolific_pid=p["prolific_pid"]),
                pilot=p["is_pilot"],
                cell=p["cell_index"],
                cell_label=labels.get(p["cell_index"], ""),
                step=step_label(p["step"], p["task_index"], len(p["cell_plan"])),
                step_seconds=_seconds(now, step_started_at(p, answers[p["id"]]))
                if in_progress
                else None,
                total_seconds=_seconds(end, p["started_at"]),
                flags=tuple(
                    (quality_flags.FLAG_LABELS[key], counts[key])
                    for key in quality_flags.FLAG_KEYS
                    if counts[key]
                ),
                status=p["status"],
                status_label=status_labels.get(p["status"], p["status"]),
                prolific_status=prolific.get(p["id"], ""),
                idle_seconds=_seconds(now, last_seen[p["id"]]) if in_progress else None,
                checks=tuple(
                    f"{step_label(c['step'], 0, 0)} failed: {c['outcome']}"
                    for c in checks.get(p["id"], ())
                ),
            )
        )
    return MonitorPage(rows=rows, total=total, page=page, pages=pages, generated_at=now)
