"""The generation job's run: ask the LLM for the missing outputs and store each as it arrives.

What a runner executes (:mod:`.runner`); idempotent: only the (group, index) pairs without an
output are requested, so a rerun after a crash, a cancel or an error continues without
duplicates (also guaranteed by the unique constraint on outputs).
"""
from __future__ import annotations

import logging
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Callable

from django.conf import settings

from .. import generation
from ..models import GenerationJob, JobStatus, Output
from .llm import llm_client, llm_run_wrap_up
from .state import HEARTBEAT_SECONDS, job_claim, job_finish, job_report

if TYPE_CHECKING:  # openai takes about 0.5 s to import; stimuli.generation imports it
    import openai

logger = logging.getLogger(__name__)

def generation_job_run(*, job_id: int, run_id: str, final_attempt: bool = True) -> None:
    """Generate the missing outputs of a job, storing each as it arrives.

    At most ``settings.STIMULI_GENERATION_CONCURRENCY`` requests are in flight. The job stops
    when it is cancelled or another run takes it over; it succeeds when all
    ``2 * n_per_group`` outputs are stored.

    Parameters
    ----------
    job_id : int
    run_id : str
        Identifies this run (the Celery task id, or a random id).
    final_attempt : bool
        If false, a transient error (429, 5xx, connection) after the client's own retries raises
        :class:`~..errors.TransientGenerationError` so that the caller retries later; if true,
        the job is marked failed.

    Raises
    ------
    TransientGenerationError
        See ``final_attempt``. The message never contains the API key.
    """
    job = job_claim(GenerationJob, job_id=job_id, run_id=run_id)
    if job is None:
        logger.info("Generation job %s: finished, cancelled or held by another run; skipped.", job_id)
        return
    n = job.n_per_group
    existing = set(
        Output.objects.filter(stimulus_set_id=job.stimulus_set_id, index__lt=n).values_list("group", "index")
    )
    missing = [(g, i) for g in (1, 2) for i in range(n) if (g, i) not in existing]
    job_report(GenerationJob, job_id=job_id, run_id=run_id, stage="generate", done=len(existing), total=2 * n)
    client = llm_client(base_url=job.base_url)
    try:
        stopped, error = _generate(job, missing, request=_requester(client, job), run_id=run_id)
    finally:
        client.close()

    done = _output_count(job)
    if llm_run_wrap_up(
        GenerationJob, job_id=job_id, run_id=run_id, stopped=stopped, error=error,
        final_attempt=final_attempt, done=done,
    ):
        return
    if done == 2 * n:
        job_finish(GenerationJob, job_id=job_id, run_id=run_id, status=JobStatus.SUCCEEDED, done=done, stage="")
    else:
        job_finish(
            GenerationJob, job_id=job_id, run_id=run_id, status=JobStatus.FAILED, done=done, stage="",
            error=f"Only {done} of {2 * n} outputs.",
        )


def _output_count(job: GenerationJob) -> int:
    return Output.objects.filter(stimulus_set_id=job.stimulus_set_id, index__lt=job.n_per_group).count()


def _requester(client: openai.OpenAI, job: GenerationJob) -> Callable[[int, int], str]:
    """``request(group, index)``: the text of one Chat Completion with the job's parameters;
    the seed of output ``index`` is ``job.seed + index``."""
    prompts = {1: job.prompt_group1, 2: job.prompt_group2}

    def request(group: int, index: int) -> str:
        return generation.complete(
            client,
            model=job.model,
            prompt=prompts[group],
            temperature=job.temperature,
            top_p=job.top_p,
            max_tokens=job.max_tokens,
            seed=None if job.seed is None else job.seed + index,
        )

    return request


def _generate(
    job: GenerationJob, missing: list[tuple[int, int]], *, request: Callable[[int, int], str], run_id: str
) -> tuple[bool, BaseException | None]:
    """Request the ``missing`` (group, index) pairs in a thread pool, storing each output.

    Returns ``(stopped, error)``: ``stopped`` if the job was cancelled or taken over, ``error``
    the first failed request's exception. Either ends the submitting; the requests already in
    flight are completed and stored first.
    """
    concurrency = max(1, int(settings.STIMULI_GENERATION_CONCURRENCY))
    queue = iter(missing)
    pending: dict[Future, tuple[int, int]] = {}
    error: BaseException | None = None
    stopped = False
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"generation-{job.pk}")
    try:
        while True:
            # Keep at most `concurrency` requests in flight, so a cancel takes effect quickly.
            while not stopped and error is None and len(pending) < concurrency:
                item = next(queue, None)
                if item is None:
                    break
                pending[pool.submit(request, *item)] = item
            if not pending:
                break
            finished, _ = wait(pending, timeout=HEARTBEAT_SECONDS, return_when=FIRST_COMPLETED)
            for future in finished:
                failure = _store(job, pending.pop(future), future)
                error = error or failure  # the first error is the one reported
            if not job_report(GenerationJob, job_id=job.pk, run_id=run_id, done=_output_count(job)):
                stopped = True
            if stopped or error is not None:
                for future in pending:
                    future.cancel()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return stopped, error


def _store(job: GenerationJob, item: tuple[int, int], future: Future) -> BaseException | None:
    """Store the output of a finished request; returns its exception instead if it failed."""
    if future.cancelled():
        return None
    try:
        text = future.result()
    except Exception as exc:  # kept, and raised once the requests in flight are stored
        return exc
    group, index = item
    Output.objects.bulk_create(
        [Output(stimulus_set_id=job.stimulus_set_id, group=group, index=index, text=text)],
        ignore_conflicts=True,
    )
    return None
