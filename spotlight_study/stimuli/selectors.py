"""Reads of the stimuli app: lists, job progress, the pattern table and its examples."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from .mining import contains_pattern
from .models import (
    ACTIVE_STATUSES,
    WAITING_FOR_BROKER,
    GenerationJob,
    ImportJob,
    JobStatus,
    MinedPattern,
    MiningJob,
    Output,
    StimulusSet,
)
from .tokenize import token_spans

#: The job kinds of this app by the name their URLs and ``run_stimulus_jobs`` use.
JOB_MODELS = {"generation": GenerationJob, "mining": MiningJob, "import": ImportJob}


def _job_rows(model):
    """``model``'s rows; an import job's without its files' bytes (up to 2 x 20 MB), which
    only its run reads."""
    rows = model.objects.all()
    return rows.defer("file1_data", "file2_data") if model is ImportJob else rows


PATTERN_SORT_FIELDS = ("rank", "group", "count_group1", "count_group2", "mdl_gain", "fisher_p", "score")


def job_is_stale(job, *, now=None) -> bool:
    """Whether an unfinished job has not reported for ``STIMULI_JOB_STALE_SECONDS``.

    A stale job's runner has most likely died (worker killed, server restarted); it can be resumed.
    """
    if job.status not in ACTIVE_STATUSES:
        return False
    now = now or timezone.now()
    last = job.heartbeat_at or job.updated_at
    return last is None or now - last > timedelta(seconds=settings.STIMULI_JOB_STALE_SECONDS)


def job_is_waiting_for_broker(job) -> bool:
    """Whether a queued job could not be sent to the broker (``jobs/runner.py:job_send``)."""
    return job.status == JobStatus.QUEUED and job.error == WAITING_FOR_BROKER


def jobs_to_run(*, now=None) -> list[tuple[str, int]]:
    """``(kind, id)`` of jobs waiting for a runner: queued, or running but stale. Oldest first."""
    now = now or timezone.now()
    found = []
    for kind, model in JOB_MODELS.items():
        for job in _job_rows(model).filter(status__in=ACTIVE_STATUSES):
            if job.status == JobStatus.QUEUED or job_is_stale(job, now=now):
                found.append((job.created_at, kind, job.pk))
    return [(kind, pk) for _, kind, pk in sorted(found)]


def job_progress(job, *, kind: str) -> dict:
    """A job's progress as plain data (the JSON progress view returns exactly this).

    Keys: ``kind``, ``id``, ``status``, ``stage``, ``done``, ``total``, ``error``, ``stale``
    (see :func:`job_is_stale`), ``waiting_for_broker`` (:func:`job_is_waiting_for_broker`),
    ``started_at``, ``finished_at`` (ISO 8601 or ``None``).
    """
    return {
        "kind": kind,
        "id": job.pk,
        "status": job.status,
        "stage": job.stage,
        "done": job.done,
        "total": job.total,
        "error": job.error,
        "stale": job_is_stale(job),
        "waiting_for_broker": job_is_waiting_for_broker(job),
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
    }


def active_jobs() -> list[dict]:
    """The queued and running generation, mining and import jobs of every set, oldest first.

    Each entry is ``{"kind": "generation" | "mining" | "import", "job": the job (its ``stimulus_set``
    joined), "progress": job_progress(job)}``; the stimulus list shows them. One query per job kind.
    """
    found = []
    for kind, model in JOB_MODELS.items():
        for job in _job_rows(model).filter(status__in=ACTIVE_STATUSES).select_related("stimulus_set"):
            found.append((job.created_at, kind, job.pk, job))
    return [
        {"kind": kind, "job": job, "progress": job_progress(job, kind=kind)}
        for _, kind, _, job in sorted(found, key=lambda f: f[:3])
    ]


def job_get(*, kind: str, job_id: int):
    """The generation, mining or import job; raises ``DoesNotExist`` (or ``ValueError`` for a
    bad kind)."""
    if kind not in JOB_MODELS:
        raise ValueError(f"Unknown job kind '{kind}'.")
    return _job_rows(JOB_MODELS[kind]).select_related("stimulus_set").get(pk=job_id)


def stimulus_set_list() -> QuerySet[StimulusSet]:
    """All stimulus sets, newest first, with ``n_group1``/``n_group2`` output counts annotated."""
    return StimulusSet.objects.annotate(
        n_group1=Count("outputs", filter=Q(outputs__group=1)),
        n_group2=Count("outputs", filter=Q(outputs__group=2)),
    ).order_by("-created_at")


def stimulus_set_get(*, pk: int) -> StimulusSet:
    """One stimulus set with its counts annotated (see :func:`stimulus_set_list`)."""
    return stimulus_set_list().get(pk=pk)


def import_job_for(stimulus_set: StimulusSet) -> ImportJob | None:
    """The set's background import job (a large upload), or ``None``; without the files' bytes."""
    return _job_rows(ImportJob).filter(stimulus_set=stimulus_set).first()


def generation_job_for(stimulus_set: StimulusSet) -> GenerationJob | None:
    """The set's generation job, or ``None`` for an imported set."""
    return GenerationJob.objects.filter(stimulus_set=stimulus_set).first()


def mining_jobs_for(stimulus_set: StimulusSet) -> QuerySet[MiningJob]:
    """The set's mining jobs, newest first, with ``n_patterns`` annotated."""
    return (
        MiningJob.objects.filter(stimulus_set=stimulus_set)
        .annotate(n_patterns=Count("patterns"))
        .order_by("-created_at")
    )


def outputs_preview(stimulus_set: StimulusSet, *, per_group: int = 3) -> dict[int, list[Output]]:
    """The first ``per_group`` outputs of each group."""
    return {
        g: list(Output.objects.filter(stimulus_set=stimulus_set, group=g).order_by("index")[:per_group])
        for g in (1, 2)
    }


def pattern_table(job: MiningJob, *, sort: str = "rank", descending: bool = False) -> list[MinedPattern]:
    """The job's patterns sorted by one of :data:`PATTERN_SORT_FIELDS` (empty values last).

    An unknown ``sort`` falls back to ``rank`` (the order the method reported).
    """
    if sort not in PATTERN_SORT_FIELDS:
        sort, descending = "rank", False
    order = F(sort).desc(nulls_last=True) if descending else F(sort).asc(nulls_last=True)
    return list(job.patterns.order_by(order, "rank"))


def highlight(text: str, tokens: list[str] | None, pattern_tokens: set[str]) -> SafeString:
    """``text`` as HTML with the tokens in ``pattern_tokens`` wrapped in ``<mark>``.

    Everything is escaped; only the ``<mark>`` tags are markup. ``tokens`` are the text's own
    tokens in order (as stored by tokenization); without them the text is returned escaped.
    """
    if not tokens or not pattern_tokens:
        return escape(text)
    parts, pos = [], 0
    for start, end, token in token_spans(text, tokens):
        if token in pattern_tokens:
            parts.append(escape(text[pos:start]))
            parts.append(f"<mark>{escape(text[start:end])}</mark>")
            pos = end
    parts.append(escape(text[pos:]))
    return mark_safe("".join(parts))


@dataclass
class PatternRow:
    """A pattern with up to ``per_group`` highlighted example outputs per group."""

    pattern: MinedPattern
    examples: dict[int, list[SafeString]] = field(default_factory=dict)


def pattern_rows(
    job: MiningJob, patterns: list[MinedPattern], *, per_group: int = 2, seed: int = 0
) -> list[PatternRow]:
    """Rows for the pattern table: each pattern with example outputs that contain it.

    Examples are drawn with ``random.Random(seed)`` among the outputs of each group containing the
    pattern, so that they do not always show the first outputs. One query loads the outputs.
    """
    outputs = list(
        Output.objects.filter(stimulus_set_id=job.stimulus_set_id, tokens__isnull=False)
        .order_by("group", "index")
        .only("id", "group", "index", "text", "tokens")
    )
    token_sets = [(o, set(o.tokens or [])) for o in outputs]
    rows = []
    for pattern in patterns:
        wanted = set(pattern.tokens)
        row = PatternRow(pattern=pattern)
        for group in (1, 2):
            matching = [
                o for o, toks in token_sets if o.group == group and contains_pattern(toks, pattern.clauses)
            ]
            rng = random.Random(f"{seed}:{pattern.pk}:{group}")
            picked = sorted(rng.sample(matching, min(per_group, len(matching))), key=lambda o: o.index)
            row.examples[group] = [highlight(o.text, o.tokens, wanted) for o in picked]
        rows.append(row)
    return rows


def outputs_for_picking(job: MiningJob) -> dict[int, list[Output]]:
    """All outputs of the job's stimulus set per group, in index order (for picking by hand)."""
    outputs = Output.objects.filter(stimulus_set_id=job.stimulus_set_id).order_by("group", "index").only(
        "id", "group", "index", "text"
    )
    grouped: dict[int, list[Output]] = {1: [], 2: []}
    for o in outputs:
        grouped[o.group].append(o)
    return grouped


def stimulus_set_texts(*, pk: int, per_group: int) -> tuple[list[str], list[str]]:
    """The first ``per_group`` outputs' texts of each group of stimulus set ``pk`` (index
    order), for the study builder's "take the groups from the Stimuli pages"; empty lists for an
    unknown set. Two queries."""
    return tuple(  # type: ignore[return-value]
        list(
            Output.objects.filter(stimulus_set_id=pk, group=g)
            .order_by("index")
            .values_list("text", flat=True)[:per_group]
        )
        for g in (1, 2)
    )
