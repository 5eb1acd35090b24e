"""The mining job's run: tokenize the set's outputs, mine patterns, store them.

What a runner executes (:mod:`.runner`); idempotent: tokens are stored on each output as they are
made, so tokenizing resumes where it stopped, and the job's patterns are replaced as a whole.
Stages (``job.stage``, with ``done``/``total``): ``tokenize`` (outputs), ``mine`` (0/1; Premise
reports no progress of its own), ``store`` (patterns).
"""
from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable, TypeVar

from django.db import transaction

from ..errors import MiningError, TokenizerError
from ..mining import PatternResult, mine_ctfidf, mine_premise
from ..models import JobStatus, MinedPattern, MiningJob, Output
from ..tokenize import tokenize_texts
from .state import HEARTBEAT_SECONDS, job_claim, job_finish, job_report

logger = logging.getLogger(__name__)

#: Outputs tokenized between two progress reports.
TOKENIZE_BATCH = 256

T = TypeVar("T")


class _Lost(Exception):
    """The run lost its job (cancelled or taken over): stop without writing anything more."""


def mining_job_run(*, job_id: int, run_id: str) -> None:
    """Tokenize the set's outputs (stored on each output), mine patterns and store them.

    The patterns of the job are replaced in one transaction, only if this run still holds the
    job. ``timings_ms`` records each stage in milliseconds. A :class:`~..errors.MiningError` or
    :class:`~..errors.TokenizerError` marks the job failed with its message; any other error
    marks it failed with a pointer to the worker log, and is raised again.
    """
    job = job_claim(MiningJob, job_id=job_id, run_id=run_id)
    if job is None:
        logger.info("Mining job %s: finished or held by another run; skipped.", job_id)
        return
    try:
        timings = _mine(job, run_id=run_id)
    except _Lost:
        return
    except (MiningError, TokenizerError) as exc:
        job_finish(MiningJob, job_id=job_id, run_id=run_id, status=JobStatus.FAILED, error=str(exc)[:2000])
        return
    except Exception as exc:
        job_finish(
            MiningJob,
            job_id=job_id,
            run_id=run_id,
            status=JobStatus.FAILED,
            error=f"Unexpected error ({type(exc).__name__}); see the worker log.",
        )
        raise
    logger.info("Mining job %s done: %s", job_id, timings)


def _report(job: MiningJob, run_id: str, **fields) -> None:
    """:func:`~.state.job_report`, raising :class:`_Lost` when the run lost the job."""
    if not job_report(MiningJob, job_id=job.pk, run_id=run_id, **fields):
        raise _Lost


def _mine(job: MiningJob, *, run_id: str) -> dict[str, int]:
    """The three stages; returns ``{stage: milliseconds}``. Raises :class:`_Lost`."""
    timings: dict[str, int] = {}
    start = time.perf_counter()
    outputs = _tokenize(job, run_id=run_id)
    timings["tokenize"] = round((time.perf_counter() - start) * 1000)

    groups = {g: [o.tokens for o in outputs if o.group == g and o.tokens] for g in (1, 2)}
    _report(job, run_id, stage="mine", done=0, total=1)
    start = time.perf_counter()
    if job.method == MiningJob.Method.PREMISE:
        results = _with_heartbeat(lambda: mine_premise(groups[1], groups[2], **job.params), job, run_id)
    else:
        results = mine_ctfidf(groups[1], groups[2], **job.params)
    timings["mine"] = round((time.perf_counter() - start) * 1000)

    _report(job, run_id, stage="store", done=0, total=len(results))
    start = time.perf_counter()
    with transaction.atomic():
        _store(job, results, run_id=run_id)
        timings["store"] = round((time.perf_counter() - start) * 1000)
        job_finish(
            MiningJob,
            job_id=job.pk,
            run_id=run_id,
            status=JobStatus.SUCCEEDED,
            stage="",
            done=len(results),
            n_group1=len(groups[1]),
            n_group2=len(groups[2]),
            n_excluded=sum(1 for o in outputs if not o.tokens),
            timings_ms=timings,
        )
    return timings


def _tokenize(job: MiningJob, *, run_id: str) -> list[Output]:
    """Tokenize the outputs without tokens of ``job.pipeline``, in batches; all outputs, in
    (group, index) order, with their tokens."""
    outputs = list(
        Output.objects.filter(stimulus_set_id=job.stimulus_set_id)
        .order_by("group", "index")
        .only("id", "group", "index", "text", "tokens", "tokenizer")
    )
    todo = [o for o in outputs if o.tokens is None or o.tokenizer != job.pipeline]
    done = len(outputs) - len(todo)
    _report(job, run_id, stage="tokenize", done=done, total=len(outputs))
    for first in range(0, len(todo), TOKENIZE_BATCH):
        batch = todo[first : first + TOKENIZE_BATCH]
        for output, tokens in zip(batch, tokenize_texts([o.text for o in batch], pipeline=job.pipeline)):
            output.tokens = tokens
            output.tokenizer = job.pipeline
        Output.objects.bulk_update(batch, ["tokens", "tokenizer"], batch_size=500)
        done += len(batch)
        _report(job, run_id, done=done)
    return outputs


def _with_heartbeat(fn: Callable[[], T], job: MiningJob, run_id: str) -> T:
    """Run ``fn()`` in a helper thread while this one reports a heartbeat (Premise can take
    minutes)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"mining-{job.pk}") as pool:
        future = pool.submit(fn)
        while True:
            finished, _ = wait([future], timeout=HEARTBEAT_SECONDS)
            if finished:
                return future.result()
            job_report(MiningJob, job_id=job.pk, run_id=run_id)


def _store(job: MiningJob, results: list[PatternResult], *, run_id: str) -> None:
    """Replace the job's patterns by ``results`` (ranked in order). Call inside a transaction.

    Raises :class:`_Lost` if the run no longer holds the job.
    """
    # Lock the job row so that a run that lost the job cannot store patterns next to another.
    holder = MiningJob.objects.select_for_update().filter(pk=job.pk, run_id=run_id, status=JobStatus.RUNNING)
    if not holder.exists():
        raise _Lost
    MinedPattern.objects.filter(mining_job_id=job.pk).delete()
    MinedPattern.objects.bulk_create(
        [
            MinedPattern(
                mining_job_id=job.pk,
                rank=rank,
                clauses=r.clauses,
                group=r.group,
                count_group1=r.count_group1,
                count_group2=r.count_group2,
                mdl_gain=r.mdl_gain,
                fisher_p=r.fisher_p,
                score=r.score,
            )
            for rank, r in enumerate(results)
        ],
        batch_size=500,
    )
