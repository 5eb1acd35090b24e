"""Reads for the participant flow, the researcher page and the export."""
from __future__ import annotations

import hashlib
import random
import statistics
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings as django_settings
from django.db.models import BooleanField, Count, ExpressionWrapper, F, Q, QuerySet
from django.utils import timezone

from spotlight_study.identifiers import PSEUDONYM_RE
from spotlight_study.studies.models import Setting, Study, TokenPattern
from spotlight_study.studies.plan import PatternPlan, SettingPlan, StudyPlan
from spotlight_study.studies.selectors import patterns_for_condition, study_cells

from . import flag_queries
from . import flags as quality_flags
from .models import CellPlaceCount, Participant, TaskResponse
from spotlight_study.compiled_sql import SENTINEL_DATETIME, SENTINEL_INT, SENTINEL_STR, PreparedQuery


def participant_pseudonym(*, study: Study, prolific_pid: str) -> str:
    """The export pseudonym of a Prolific ID: ``p_`` + 16 hex digits of SHA-256(salt:PID).

    The per-study salt is secret and never exported, so a pseudonym cannot be turned back into a
    PID by hashing candidate IDs. A value that already is a pseudonym (a PID replaced by
    ``manage.py purge_identifiers``; real PIDs are 24 hex digits) is returned unchanged, so the
    exports keep their participant column after a purge.
    """
    if PSEUDONYM_RE.fullmatch(prolific_pid):
        return prolific_pid
    digest = hashlib.sha256(f"{study.pseudonym_salt}:{prolific_pid}".encode()).hexdigest()
    return f"p_{digest[:16]}"


def holding_filter(*, study: Study | StudyPlan, now: datetime) -> Q:
    """Participants who hold a place in their cell at ``now``.

    Completed participants, and in-progress participants who started within the study's
    abandonment timeout. Returned, timed-out, rejected, no-consent and failed-check participants
    hold no place.
    """
    return _holding(cutoff=now - timedelta(minutes=study.abandonment_timeout_minutes))


def _holding(*, cutoff: datetime) -> Q:
    return Q(status=Participant.Status.COMPLETED) | Q(
        status=Participant.Status.IN_PROGRESS, started_at__gte=cutoff
    )


def cell_counts(
    *, study: Study | StudyPlan, n_cells: int, now: datetime | None = None
) -> dict[int, int]:
    """Places held per cell, ``{cell_index: count}`` for every cell ``0..n_cells-1``.

    Pilot participants (``is_pilot``) never hold a place: a pilot does not change real
    counterbalancing. Two reads whose cost does not grow with the study (issue 39): the
    completed participants per cell, which the database keeps in
    :class:`~.models.CellPlaceCount` (one row per cell, :mod:`.place_counts`), and the
    in-progress participants who started within the abandonment timeout, a range of the index
    on (study, status, started_at). Together exactly :func:`holding_filter`'s count.
    """
    now = now or timezone.now()
    counts = {i: 0 for i in range(n_cells)}
    cutoff = now - timedelta(minutes=study.abandonment_timeout_minutes)
    for rows in (_COMPLETED_COUNTS.fetch(study_id=study.pk),
                 _IN_PROGRESS_COUNTS.fetch(study_id=study.pk, cutoff=cutoff)):
        for cell_index, n in rows:
            if cell_index in counts:
                counts[cell_index] += n
    return counts


def _in_progress_counts_queryset(study_id: int, cutoff: datetime) -> QuerySet:
    # The second half of holding_filter(), with the cutoff as a prepared parameter.
    return (
        Participant.objects.filter(
            study_id=study_id, is_pilot=False, status=Participant.Status.IN_PROGRESS,
            started_at__gte=cutoff,
        )
        .order_by()
        .values("cell_index")
        .annotate(n=Count("pk"))
        .values_list("cell_index", "n")
    )


_IN_PROGRESS_COUNTS = PreparedQuery(
    _in_progress_counts_queryset, study_id=SENTINEL_INT, cutoff=SENTINEL_DATETIME
)
_COMPLETED_COUNTS = PreparedQuery(
    lambda study_id: CellPlaceCount.objects.filter(study_id=study_id).values_list("cell_index", "completed"),
    study_id=SENTINEL_INT,
)


#: Columns the participant pages never read (audit and export data, times they only write):
#: left out of the participant's read on every request, which saves parsing two JSON values and
#: four timestamps. Reading one of them later costs a query (tests/participation/test_query_counts.py
#: would notice); writing one does not.
PAGE_DEFERRED = (
    "prolific_pid", "prolific_study_id", "prolific_session_id", "assignment_counts",
    "assignment_seed", "comment", "consented_at", "started_at", "finished_at", "updated_at",
)


def participant_for_page(*, participant_id: int, slug: str) -> Participant | None:
    """The participant ``participant_id`` of the study ``slug``, or ``None``: one query.

    The row carries ``definition_version``, its study's current definition version (a join on
    the study's primary key), so the caller can check its compiled plan
    (:func:`spotlight_study.studies.plan.study_plan`) without loading the study.
    """
    rows = _PAGE_READ.fetch(participant_id=participant_id, slug=slug)
    return rows[0] if rows else None


_PAGE_READ = PreparedQuery(
    lambda participant_id, slug: Participant.objects.filter(pk=participant_id, study__slug=slug)
    .defer(*PAGE_DEFERRED)
    .annotate(definition_version=F("study__definition_version"))[:1],
    participant_id=SENTINEL_INT,
    slug=SENTINEL_STR,
)


def participant_exists(*, study: Study | StudyPlan, prolific_pid: str) -> bool:
    """Whether this PID already took part in the study (an arrival with it is a resume)."""
    return bool(_PID_EXISTS.fetch(study_id=study.pk, prolific_pid=prolific_pid))


_PID_EXISTS = PreparedQuery(
    lambda study_id, prolific_pid: Participant.objects.filter(
        study_id=study_id, prolific_pid=prolific_pid
    ).values_list("pk")[:1],
    study_id=SENTINEL_INT,
    prolific_pid=SENTINEL_STR,
)


def text_order(*, shuffle_seed: int, setting_key: str, n: int) -> list[int]:
    """The shown order of a group's ``n`` texts: a permutation of ``0..n-1``.

    Deterministic in the participant's recorded ``shuffle_seed`` and the setting key (Python's
    ``random.Random`` seeded with a string, which is stable across runs and platforms).
    """
    order = list(range(n))
    random.Random(f"{shuffle_seed}:{setting_key}").shuffle(order)
    return order


@dataclass(frozen=True)
class TaskPage:
    """What a task page shows: the two groups' texts in order and the pattern box labels."""

    setting: Setting | SettingPlan
    condition: str
    group1: list[str]
    group2: list[str]
    group1_order: list[int]
    group2_order: list[int]
    patterns: list[TokenPattern | PatternPlan]


def task_page(*, setting: Setting | SettingPlan, condition: str, shuffle_seed: int) -> TaskPage:
    """Build the task page of ``setting`` for a participant with ``shuffle_seed``.

    Text order is shuffled per group with :func:`text_order`; under
    ``pattern_with_distractors`` the target and distractor patterns are shuffled together.
    A compiled setting (the participant pages) gives its prepared pattern box; a ``Setting``
    (the researcher's preview) reads its prefetched patterns. Call it once per request: the
    page serves both the response row (:func:`.steps.task.task_serve`) and the template.
    """
    order1 = text_order(shuffle_seed=shuffle_seed, setting_key=f"{setting.key}:1", n=len(setting.group1_texts))
    order2 = text_order(shuffle_seed=shuffle_seed, setting_key=f"{setting.key}:2", n=len(setting.group2_texts))
    if isinstance(setting, SettingPlan):
        patterns = list(setting.patterns_for(condition))
    else:
        patterns = patterns_for_condition(setting, condition)
    if condition == "pattern_with_distractors":
        random.Random(f"{shuffle_seed}:{setting.key}:patterns").shuffle(patterns)
    return TaskPage(
        setting=setting,
        condition=condition,
        group1=[setting.group1_texts[i] for i in order1],
        group2=[setting.group2_texts[i] for i in order2],
        group1_order=order1,
        group2_order=order2,
        patterns=patterns,
    )


def participant_conditions(participant: Participant) -> list[str]:
    """The conditions the participant worked in, in order of first appearance."""
    seen: list[str] = []
    for task in participant.cell_plan:
        if task["condition"] not in seen:
            seen.append(task["condition"])
    return seen


def completion_code(participant: Participant, plan: StudyPlan | None = None) -> str | None:
    """The Prolific completion code for the participant's final status, or ``None``.

    The codes come from ``plan`` (the participant pages) or else from ``participant.study``.
    """
    study = plan or participant.study
    return {
        Participant.Status.COMPLETED: study.completion_code,
        Participant.Status.FAILED_CHECK: study.failed_check_code,
        Participant.Status.NO_CONSENT: study.no_consent_code,
    }.get(participant.status)


def completion_url(code: str) -> str:
    """Prolific's completion URL for ``code``."""
    return f"{django_settings.PROLIFIC_COMPLETE_URL}?{urlencode({'cc': code})}"


# --- researcher page -------------------------------------------------------------------------


@dataclass(frozen=True)
class PilotCounts:
    """Pilot participants by final state, as the ``pilot`` command, the pilot button's message
    and the researcher page's pilot line all report them (:func:`pilot_counts`).

    ``ended`` is every other status (no consent, ended at a failed instruction check);
    ``failed_check`` counts the failed instruction checks under either policy, so a pilot
    whose study ended at the check is both ``ended`` and ``failed_check``.
    """

    participants: int
    completed: int
    in_progress: int
    ended: int
    failed_check: int

    def summary(self) -> str:
        """``"9 completed, 1 dropped out, 0 ended early; 1 of the 10 failed the instruction
        check"`` (no final full stop; a simulated participant still in progress dropped out)."""
        return (
            f"{self.completed} completed, {self.in_progress} dropped out, {self.ended} ended "
            f"early; {self.failed_check} of the {self.participants} failed the instruction check"
        )


def pilot_counts(rows) -> PilotCounts:
    """Count pilot participants given as ``(status, instruction_check_passed)`` pairs.

    One definition for every place that reports a pilot, so their figures cannot disagree: a
    check that failed counts whether the study went on (``continue``) or ended there (``end``,
    status ``failed_check``). Pure: the caller has read the rows (no query here).
    """
    rows = list(rows)
    statuses = Counter(status for status, _check in rows)
    completed = statuses[Participant.Status.COMPLETED]
    in_progress = statuses[Participant.Status.IN_PROGRESS]
    return PilotCounts(
        participants=len(rows),
        completed=completed,
        in_progress=in_progress,
        ended=len(rows) - completed - in_progress,
        failed_check=sum(
            1 for status, check in rows
            if check is False or status == Participant.Status.FAILED_CHECK
        ),
    )



def study_pilot_counts(*, study: Study) -> PilotCounts:
    """:func:`pilot_counts` over all pilot participants of ``study`` (one query)."""
    return pilot_counts(
        Participant.objects.filter(study=study, is_pilot=True).values_list(
            "status", "instruction_check_passed"
        )
    )


def _flag_summary(
    *, study: Study, participants: list[tuple], counts: flag_queries.FlagCounts, limit: int | None
) -> dict:
    """Flag counts and the flagged participants of one population (real or pilot).

    ``participants`` are the population's rows of :data:`_DASHBOARD_COLUMNS`, oldest first;
    ``counts`` its :func:`.flag_queries.study_flag_counts`. ``failed_instruction_check``
    counts each saved main answer of a participant whose check failed, as in ``responses.csv``.
    At most ``limit`` flagged participants are listed (all with ``None``); ``flagged`` is
    their number either way.
    """
    failed_key = quality_flags.FAILED_INSTRUCTION_CHECK
    per_participant = dict(counts.by_participant)
    failed = []
    rows = []
    n_flagged = 0
    status_labels = dict(Participant.Status.choices)
    for pid, _pilot, status, cell_index, check, prolific_pid, _fresh in participants:
        mine = per_participant.get(pid)
        if check is False:
            failed.append(pid)
            if counts.answers[pid]:
                mine = per_participant[pid] = Counter(mine or ())
                mine[failed_key] = counts.answers[pid]
        if not mine and check is not False:
            continue
        n_flagged += 1
        if limit is not None and len(rows) >= limit:
            continue
        mine = mine or Counter()
        words = [
            quality_flags.FLAG_LABELS[key] if mine[key] < 2 else
            f"{quality_flags.FLAG_LABELS[key]} ({mine[key]} answers)"
            for key in quality_flags.FLAG_KEYS
            if mine[key] and key != failed_key
        ]
        if check is False:
            words.append(quality_flags.FLAG_LABELS[failed_key])
        rows.append(
            {
                "participant": participant_pseudonym(study=study, prolific_pid=prolific_pid),
                "cell": cell_index,
                "status": status_labels.get(status, status),
                "flags": words,
            }
        )
    return {
        "flag_counts": quality_flags.flag_counts(per_participant, failed_check=failed),
        "flags": rows,
        "flagged": n_flagged,
    }


#: The participant columns the researcher page reads (``fresh``: started within the
#: abandonment timeout), as tuples: model instances cost 50 µs each at 10,000 participants.
_DASHBOARD_COLUMNS = (
    "id", "is_pilot", "status", "cell_index", "instruction_check_passed", "prolific_pid", "fresh",
)


def _progress_state(status: str, fresh: bool) -> str:
    if status == Participant.Status.COMPLETED:
        return "completed"
    if status == Participant.Status.IN_PROGRESS:
        return "in_progress" if fresh else "abandoned"
    return "ended"


def _median_times(study: Study) -> list[dict]:
    """``{"setting", "condition", "n", "median_s"}`` per setting and condition of the real
    participants' saved main answers with a known time, sorted; one query of three small
    columns (ranking in the database, with window functions, measured slower: it sorts by
    text keys).
    """
    times: dict[tuple[str, str], list[int]] = defaultdict(list)
    for key, condition, ms in (
        TaskResponse.objects.filter(
            participant__study=study, participant__is_pilot=False, answered_at__isnull=False,
            setting__kind=Setting.Kind.MAIN, time_on_task_ms__isnull=False,
        )
        .exclude(condition="")
        .order_by()
        .values_list("setting__key", "condition", "time_on_task_ms")
    ):
        times[(key, condition)].append(ms)
    return [
        {"setting": s, "condition": c, "n": len(v), "median_s": round(statistics.median(v) / 1000, 1)}
        for (s, c), v in sorted(times.items())
    ]


def study_dashboard(
    *, study: Study, now: datetime | None = None, flag_rows: int | None = None
) -> dict:
    """Figures for the researcher page of ``study``, over every participant so far.

    Three queries whatever the number of participants: the participants (plain tuples), the
    saved main answers with their flags computed by the database
    (:func:`.flag_queries.study_flag_counts`), and the times on task for the medians.
    ``flag_rows`` caps the flagged participants listed (the page shows 200; the API lists all
    with ``None``); the counts are over all of them either way. Raises nothing of its own.

    Returns
    -------
    dict
        ``cells``: list of ``{"index", "label", "in_progress", "completed", "abandoned",
        "ended"}``; ``totals``: the same counts summed; ``median_times``: list of
        ``{"setting", "condition", "n", "median_s"}`` over saved main-task answers;
        ``flag_counts``: one ``{"flag", "label", "answers", "participants"}`` per flag of
        :mod:`.flags` (main answers, as in ``responses.csv``; participants of every status,
        in progress included); ``flags``: the flagged participants, oldest first, list of
        ``{"participant", "cell", "status", "flags"}`` (flags in words), at most
        ``flag_rows``; ``flagged``: the number of flagged participants.
        ``pilot``: the fields of :class:`PilotCounts` (``participants``, ``completed``,
        ``in_progress``, ``ended``, ``failed_check``), its ``summary`` sentence, and
        ``"flag_counts", "flags", "flagged"`` for the pilot participants, who are counted
        nowhere else. "Abandoned" means in progress
        for longer than the abandonment timeout; "ended" covers failed check, no consent,
        returned, timed out and rejected.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=study.abandonment_timeout_minutes)
    cells = study_cells(study)
    per_cell = {c.index: Counter() for c in cells}
    everyone = list(
        Participant.objects.filter(study=study)
        .annotate(fresh=ExpressionWrapper(Q(started_at__gte=cutoff), output_field=BooleanField()))
        .order_by("started_at", "pk")
        .values_list(*_DASHBOARD_COLUMNS)
    )
    participants = [p for p in everyone if not p[1]]
    pilots = [p for p in everyone if p[1]]
    for _pid, _pilot, status, cell_index, _check, _pid_text, fresh in participants:
        per_cell.setdefault(cell_index, Counter())[_progress_state(status, fresh)] += 1
    states = ("in_progress", "completed", "abandoned", "ended")
    cell_rows = [
        {"index": c.index, "label": c.label, **{s: per_cell[c.index][s] for s in states}}
        for c in cells
    ]
    totals = {s: sum(row[s] for row in cell_rows) for s in states}
    counts = flag_queries.study_flag_counts(study=study, pilot=None)
    real = _flag_summary(study=study, participants=participants, counts=counts[False], limit=flag_rows)
    pilot = _flag_summary(study=study, participants=pilots, counts=counts[True], limit=None)
    pilot_tally = pilot_counts((status, check) for _id, _p, status, _c, check, _t, _f in pilots)
    return {
        "cells": cell_rows,
        "totals": totals,
        "median_times": _median_times(study),
        "flag_counts": real["flag_counts"],
        "flags": real["flags"],
        "flagged": real["flagged"],
        "pilot": {
            **asdict(pilot_tally),
            "summary": pilot_tally.summary(),
            **pilot,
        },
    }


def participants_for_export(*, study: Study, include_pilot: bool = False) -> QuerySet[Participant]:
    """The study's participants with answers and survey answers prefetched, oldest first.

    Pilot participants only with ``include_pilot``.
    """
    pilot = Q() if include_pilot else Q(is_pilot=False)
    return (
        Participant.objects.filter(pilot, study=study)
        .order_by("started_at", "pk")
        .prefetch_related("responses__setting", "survey_answers")
    )


def study_frozen_reason(study: Study) -> str | None:
    """Why ``study``'s definition is frozen, or ``None``: real participants have consented.

    Pilot participants (``is_pilot``) never freeze a study, so deleting them leaves it editable
    again. Registered with :func:`spotlight_study.studies.freeze.freeze_check_register` in
    ``ParticipationConfig.ready``.
    """
    consented = Participant.objects.filter(study=study, is_pilot=False, consented_at__isnull=False)
    n = consented.count()
    if not n:
        return None
    return f"{n} real participant{'s have' if n != 1 else ' has'} consented to it."
