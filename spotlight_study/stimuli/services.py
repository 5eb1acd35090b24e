"""Writes of the stimuli app: importing outputs, generation and mining jobs, building settings.

Jobs are created here and handed to :func:`spotlight_study.stimuli.runner.job_dispatch` after
commit. The ``*_run`` functions are what a job runner executes (a Celery task, a background
thread of the embedded default, or ``manage.py run_stimulus_jobs``); they take ids, re-fetch the
rows, are idempotent (a rerun continues) and keep progress in the database.
"""
from __future__ import annotations

import logging
import random
import secrets
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from spotlight_study.studies.models import Setting, Study, TokenPattern

from . import generation
from .importers import ImportedGroups, ImportOptions, OutputImportError, check_size, read_outputs
from .mining import MiningError, mine_ctfidf, mine_premise
from .models import (
    ACTIVE_STATUSES,
    GenerationJob,
    JobStatus,
    MinedPattern,
    MiningJob,
    Output,
    SettingSource,
    StimulusSet,
)
from .runner import job_dispatch
from .selectors import job_is_stale
from .tokenize import TokenizerError, tokenize_texts

logger = logging.getLogger(__name__)

# Same limits as a study file (spotlight_study/studies/schema.py), so that a built setting could
# also be written as a study file.
MAX_TEXT_CHARS = 2000
MAX_TEXTS_PER_GROUP = 100
MAX_PATTERN_TOKENS = 20
HEARTBEAT_SECONDS = 5
TOKENIZE_BATCH = 256


class StimuliError(Exception):
    """An action the researcher asked for that cannot be done; the message says why."""


class JobStateError(StimuliError):
    """A job cannot be cancelled or resumed in its current state."""


class SettingBuildError(StimuliError):
    """A setting cannot be built (study has participants, key taken, too few outputs, ...)."""


# --- importing ------------------------------------------------------------------------------


@transaction.atomic
def stimulus_set_import(
    *, title: str, groups: ImportedGroups, created_by=None
) -> StimulusSet:
    """Store two groups of outputs read by :mod:`spotlight_study.stimuli.importers`.

    Returns the new :class:`StimulusSet`; ``Output.index`` is the position in each group.
    Raises ``ValidationError`` for a bad title.
    """
    stimulus_set = StimulusSet(
        title=title,
        source=StimulusSet.Source.IMPORTED,
        group1_label=groups.group1_label,
        group2_label=groups.group2_label,
        source_detail=groups.detail[:500],
        created_by=created_by,
    )
    stimulus_set.full_clean()
    stimulus_set.save()
    Output.objects.bulk_create(
        [
            Output(stimulus_set=stimulus_set, group=group, index=i, text=text)
            for group, texts in ((1, groups.group1), (2, groups.group2))
            for i, text in enumerate(texts)
        ],
        batch_size=500,
    )
    return stimulus_set


def _read_upload(upload, *, max_bytes: int) -> tuple[str, bytes]:
    """``(name, bytes)`` of an uploaded file or a path, refusing it before reading if too big."""
    if isinstance(upload, (str, Path)):
        path = Path(upload)
        check_size(name=path.name, size=path.stat().st_size, max_bytes=max_bytes)
        return path.name, path.read_bytes()
    name = Path(upload.name or "upload").name
    check_size(name=name, size=upload.size, max_bytes=max_bytes)
    return name, upload.read()


def stimulus_set_import_files(
    *,
    title: str,
    file1: Any,
    file2: Any | None,
    options: ImportOptions | None = None,
    created_by=None,
) -> StimulusSet:
    """Read and store outputs from one or two files (uploads or paths).

    Parameters
    ----------
    title : str
    file1, file2 : UploadedFile or path
        Group 1 and group 2; ``file2`` is ``None`` when ``file1`` holds both groups.
    options : ImportOptions, optional
        Defaults to ``ImportOptions(max_bytes=settings.STIMULI_MAX_UPLOAD_BYTES)``.

    Raises
    ------
    OutputImportError
        For any problem with the files (nothing is stored).
    """
    options = options or ImportOptions(max_bytes=settings.STIMULI_MAX_UPLOAD_BYTES)
    first = _read_upload(file1, max_bytes=options.max_bytes)
    second = _read_upload(file2, max_bytes=options.max_bytes) if file2 is not None else None
    groups = read_outputs(file1=first, file2=second, options=options)
    return stimulus_set_import(title=title, groups=groups, created_by=created_by)


# --- job bookkeeping -----------------------------------------------------------------------


def _job_claim(model, *, job_id: int, run_id: str):
    """Mark the job running for ``run_id``; ``None`` if it is finished or another live run holds it."""
    now = timezone.now()
    with transaction.atomic():
        job = model.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status not in ACTIVE_STATUSES:
            return None
        if (
            job.status == JobStatus.RUNNING
            and job.run_id
            and job.run_id != run_id
            and not job_is_stale(job, now=now)
        ):
            return None
        job.status = JobStatus.RUNNING
        job.run_id = run_id
        job.heartbeat_at = now
        job.started_at = job.started_at or now
        job.error = ""
        job.save(update_fields=["status", "run_id", "heartbeat_at", "started_at", "error", "updated_at"])
    return job


def _job_report(model, *, job_id: int, run_id: str, **fields) -> bool:
    """Store progress and a heartbeat; ``False`` if the job was cancelled or taken over."""
    now = timezone.now()
    updated = model.objects.filter(pk=job_id, run_id=run_id, status=JobStatus.RUNNING).update(
        heartbeat_at=now, updated_at=now, **fields
    )
    return updated == 1


def _job_finish(model, *, job_id: int, run_id: str, status: str, **fields) -> bool:
    now = timezone.now()
    updated = model.objects.filter(pk=job_id, run_id=run_id, status=JobStatus.RUNNING).update(
        status=status, finished_at=now, heartbeat_at=now, updated_at=now, **fields
    )
    return updated == 1


def _job_model(kind: str):
    try:
        return {"generation": GenerationJob, "mining": MiningJob}[kind]
    except KeyError:
        raise ValueError(f"Unknown job kind '{kind}'.") from None


def job_resume(*, kind: str, job_id: int):
    """Queue a failed, cancelled or stale job again; it continues where it stopped.

    Raises
    ------
    JobStateError
        If the job succeeded, or is still running and reporting.
    """
    model = _job_model(kind)
    with transaction.atomic():
        job = model.objects.select_for_update().get(pk=job_id)
        if job.status == JobStatus.SUCCEEDED:
            raise JobStateError("This job has already finished.")
        if job.status in ACTIVE_STATUSES and not job_is_stale(job):
            raise JobStateError(
                "This job is still running. It can be resumed if it stops reporting for "
                f"{settings.STIMULI_JOB_STALE_SECONDS} seconds."
            )
        job.status = JobStatus.QUEUED
        job.run_id = ""
        job.error = ""
        job.finished_at = None
        job.save(update_fields=["status", "run_id", "error", "finished_at", "updated_at"])
        job_dispatch(kind=kind, job_id=job.pk)
    return job


# --- generation ----------------------------------------------------------------------------


def generation_job_create(
    *,
    title: str,
    prompt_group1: str,
    prompt_group2: str,
    model: str,
    n_per_group: int,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_tokens: int = 256,
    seed: int | None = None,
    created_by=None,
) -> GenerationJob:
    """Create a stimulus set and a generation job for it, and queue the job after commit.

    ``n_per_group`` outputs are generated per group from one user message each
    (``prompt_group1``, ``prompt_group2``) on the server at ``settings.OPENAI_BASE_URL``.

    Raises ``ValidationError`` naming the bad field.
    """
    with transaction.atomic():
        stimulus_set = StimulusSet(
            title=title,
            source=StimulusSet.Source.GENERATED,
            group1_label=prompt_group1,
            group2_label=prompt_group2,
            source_detail=f"{model} at {settings.OPENAI_BASE_URL}"[:500],
            created_by=created_by,
        )
        stimulus_set.full_clean()
        stimulus_set.save()
        job = GenerationJob(
            stimulus_set=stimulus_set,
            base_url=settings.OPENAI_BASE_URL,
            model=model,
            prompt_group1=prompt_group1,
            prompt_group2=prompt_group2,
            n_per_group=n_per_group,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed=seed,
            stage="generate",
            total=2 * n_per_group if n_per_group and n_per_group > 0 else 0,
            created_by=created_by,
        )
        job.full_clean()
        job.save()
        job_dispatch(kind="generation", job_id=job.pk)
    return job


def generation_job_cancel(*, job_id: int) -> GenerationJob:
    """Cancel a queued or running generation job. Outputs stored so far are kept.

    A running job stops at its next report (requests already sent are completed and stored).
    Raises :class:`JobStateError` if the job has finished.
    """
    with transaction.atomic():
        job = GenerationJob.objects.select_for_update().get(pk=job_id)
        if job.status not in ACTIVE_STATUSES:
            raise JobStateError(f"This job has already finished ({job.get_status_display().lower()}).")
        job.status = JobStatus.CANCELLED
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "finished_at", "updated_at"])
    return job


def _output_count(stimulus_set_id: int, n: int) -> int:
    return Output.objects.filter(stimulus_set_id=stimulus_set_id, index__lt=n).count()


def generation_job_run(*, job_id: int, run_id: str, final_attempt: bool = True) -> None:
    """Generate the missing outputs of a job, storing each as it arrives.

    Only the (group, index) pairs without an output are requested, so a rerun after a crash,
    a cancel or an error continues without duplicates (also guaranteed by the unique constraint).
    At most ``settings.STIMULI_GENERATION_CONCURRENCY`` requests are in flight. The job stops
    when it is cancelled or another run takes it over.

    Parameters
    ----------
    job_id : int
    run_id : str
        Identifies this run (the Celery task id, or a random id).
    final_attempt : bool
        If false, a transient error (429, 5xx, connection) after the client's own retries raises
        :class:`~spotlight_study.stimuli.generation.TransientGenerationError` so that the caller
        retries later; if true, the job is marked failed.

    Raises
    ------
    TransientGenerationError
        See ``final_attempt``. The message never contains the API key.
    """
    job = _job_claim(GenerationJob, job_id=job_id, run_id=run_id)
    if job is None:
        logger.info("Generation job %s: finished, cancelled or held by another run; skipped.", job_id)
        return
    n, set_id = job.n_per_group, job.stimulus_set_id
    existing = set(
        Output.objects.filter(stimulus_set_id=set_id, index__lt=n).values_list("group", "index")
    )
    missing = [(g, i) for g in (1, 2) for i in range(n) if (g, i) not in existing]
    _job_report(
        GenerationJob, job_id=job_id, run_id=run_id, stage="generate", done=len(existing), total=2 * n
    )
    api_key = settings.OPENAI_API_KEY
    client = generation.make_client(
        base_url=job.base_url,
        api_key=api_key,
        max_retries=settings.OPENAI_MAX_RETRIES,
        timeout_s=settings.OPENAI_TIMEOUT_SECONDS,
    )
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

    concurrency = max(1, int(settings.STIMULI_GENERATION_CONCURRENCY))
    queue = iter(missing)
    pending: dict = {}
    error: BaseException | None = None
    stopped = False
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=f"generation-{job_id}")
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
                group, index = pending.pop(future)
                if future.cancelled():
                    continue
                try:
                    text = future.result()
                except Exception as exc:  # kept, and raised once the requests in flight are stored
                    error = error or exc
                    continue
                Output.objects.bulk_create(
                    [Output(stimulus_set_id=set_id, group=group, index=index, text=text)],
                    ignore_conflicts=True,
                )
            alive = _job_report(
                GenerationJob, job_id=job_id, run_id=run_id, done=_output_count(set_id, n)
            )
            if not alive:
                stopped = True
            if stopped or error is not None:
                for future in pending:
                    future.cancel()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        client.close()

    done = _output_count(set_id, n)
    if stopped:
        # Cancelled or taken over: record the final count, leave the status to whoever changed it.
        GenerationJob.objects.filter(pk=job_id).update(done=done, updated_at=timezone.now())
        return
    if error is not None:
        message = generation.safe_error_message(error, secret=api_key)
        if isinstance(error, generation.TRANSIENT_ERRORS) and not final_attempt:
            GenerationJob.objects.filter(pk=job_id, run_id=run_id).update(
                status=JobStatus.QUEUED,
                done=done,
                error=f"Will try again: {message}",
                heartbeat_at=timezone.now(),
                updated_at=timezone.now(),
            )
            raise generation.TransientGenerationError(message)
        if isinstance(error, generation.TRANSIENT_ERRORS):
            message = f"Gave up after retries: {message}"
        _job_finish(
            GenerationJob, job_id=job_id, run_id=run_id, status=JobStatus.FAILED, done=done, error=message
        )
        logger.warning("Generation job %s failed: %s", job_id, message)
        return
    status = JobStatus.SUCCEEDED if done == 2 * n else JobStatus.FAILED
    extra = {} if status == JobStatus.SUCCEEDED else {"error": f"Only {done} of {2 * n} outputs."}
    _job_finish(GenerationJob, job_id=job_id, run_id=run_id, status=status, done=done, stage="", **extra)


# --- mining --------------------------------------------------------------------------------

PREMISE_DEFAULTS = {"fisher_p_value": 0.01, "clause_max_overlap": 0.05, "min_overlap": 0.3}
CTFIDF_DEFAULTS = {"top_k": 25}


def _mining_params(method: str, params: dict | None) -> dict:
    params = dict(params or {})
    if method == MiningJob.Method.PREMISE:
        clean = {k: float(params.get(k, v)) for k, v in PREMISE_DEFAULTS.items()}
        if not 0 < clean["fisher_p_value"] <= 1:
            raise ValidationError({"fisher_p_value": "Must be in (0, 1]."})
        for k in ("clause_max_overlap", "min_overlap"):
            if not 0 <= clean[k] <= 1:
                raise ValidationError({k: "Must be between 0 and 1."})
        return clean
    if method == MiningJob.Method.CTFIDF:
        top_k = int(params.get("top_k", CTFIDF_DEFAULTS["top_k"]))
        if not 1 <= top_k <= 1000:
            raise ValidationError({"top_k": "Must be between 1 and 1000."})
        return {"top_k": top_k}
    raise ValidationError({"method": f"Unknown method '{method}'."})


def mining_job_create(
    *,
    stimulus_set: StimulusSet,
    method: str = MiningJob.Method.PREMISE,
    pipeline: str | None = None,
    params: dict | None = None,
    created_by=None,
) -> MiningJob:
    """Queue a mining job on a stimulus set (after commit).

    ``pipeline`` names the spaCy pipeline (``None``: the ``STIMULI_SPACY_PIPELINE`` setting; empty:
    ``spacy.blank("en")``). ``params`` are the
    method's parameters (defaults in ``PREMISE_DEFAULTS``/``CTFIDF_DEFAULTS``).

    Raises
    ------
    ValidationError
        For bad parameters.
    StimuliError
        If the set has no outputs in a group, or its outputs are still being generated.
    """
    clean = _mining_params(method, params)
    with transaction.atomic():
        generation_job = GenerationJob.objects.filter(stimulus_set=stimulus_set).first()
        if generation_job is not None and generation_job.status in ACTIVE_STATUSES:
            raise StimuliError("The outputs are still being generated; mine them when generation has finished.")
        counts = {
            g: Output.objects.filter(stimulus_set=stimulus_set, group=g).count() for g in (1, 2)
        }
        for g, count in counts.items():
            if count == 0:
                raise StimuliError(f"Group {g} has no outputs to mine.")
        job = MiningJob(
            stimulus_set=stimulus_set,
            method=method,
            pipeline=(settings.STIMULI_SPACY_PIPELINE if pipeline is None else pipeline).strip(),
            params=clean,
            stage="tokenize",
            total=counts[1] + counts[2],
            created_by=created_by,
        )
        job.full_clean()
        job.save()
        job_dispatch(kind="mining", job_id=job.pk)
    return job


def _run_with_heartbeat(fn, *, job_id: int, run_id: str):
    """Run ``fn()`` in a helper thread while this one reports a heartbeat (Premise can take minutes)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"mining-{job_id}") as pool:
        future = pool.submit(fn)
        while True:
            finished, _ = wait([future], timeout=HEARTBEAT_SECONDS)
            if finished:
                return future.result()
            _job_report(MiningJob, job_id=job_id, run_id=run_id)


def mining_job_run(*, job_id: int, run_id: str) -> None:
    """Tokenize the set's outputs (stored on each output), mine patterns and store them.

    Tokenization resumes where it stopped; the patterns of the job are replaced as a whole, in
    one transaction, only if this run still holds the job. ``timings_ms`` records each stage.
    A :class:`MiningError` or :class:`TokenizerError` marks the job failed with its message.
    """
    job = _job_claim(MiningJob, job_id=job_id, run_id=run_id)
    if job is None:
        logger.info("Mining job %s: finished or held by another run; skipped.", job_id)
        return
    try:
        timings = _mine(job, run_id=run_id)
    except (MiningError, TokenizerError) as exc:
        _job_finish(MiningJob, job_id=job_id, run_id=run_id, status=JobStatus.FAILED, error=str(exc)[:2000])
        return
    except Exception as exc:
        _job_finish(
            MiningJob,
            job_id=job_id,
            run_id=run_id,
            status=JobStatus.FAILED,
            error=f"Unexpected error ({type(exc).__name__}); see the worker log.",
        )
        raise
    if timings is not None:
        logger.info("Mining job %s done: %s", job_id, timings)


def _mine(job: MiningJob, *, run_id: str) -> dict | None:
    job_id = job.pk
    timings: dict[str, int] = {}
    outputs = list(
        Output.objects.filter(stimulus_set_id=job.stimulus_set_id)
        .order_by("group", "index")
        .only("id", "group", "index", "text", "tokens", "tokenizer")
    )
    todo = [o for o in outputs if o.tokens is None or o.tokenizer != job.pipeline]
    done = len(outputs) - len(todo)
    if not _job_report(
        MiningJob, job_id=job_id, run_id=run_id, stage="tokenize", done=done, total=len(outputs)
    ):
        return None
    start = time.perf_counter()
    for first in range(0, len(todo), TOKENIZE_BATCH):
        batch = todo[first : first + TOKENIZE_BATCH]
        batch_tokens = tokenize_texts([o.text for o in batch], pipeline=job.pipeline)
        for output, tokens in zip(batch, batch_tokens):
            output.tokens = tokens
            output.tokenizer = job.pipeline
        Output.objects.bulk_update(batch, ["tokens", "tokenizer"], batch_size=500)
        done += len(batch)
        if not _job_report(MiningJob, job_id=job_id, run_id=run_id, done=done):
            return None
    timings["tokenize"] = round((time.perf_counter() - start) * 1000)

    groups = {g: [o.tokens for o in outputs if o.group == g and o.tokens] for g in (1, 2)}
    excluded = sum(1 for o in outputs if not o.tokens)
    if not _job_report(MiningJob, job_id=job_id, run_id=run_id, stage="mine", done=0, total=1):
        return None
    start = time.perf_counter()
    if job.method == MiningJob.Method.PREMISE:
        results = _run_with_heartbeat(
            lambda: mine_premise(groups[1], groups[2], **job.params), job_id=job_id, run_id=run_id
        )
    else:
        results = mine_ctfidf(groups[1], groups[2], **job.params)
    timings["mine"] = round((time.perf_counter() - start) * 1000)

    if not _job_report(
        MiningJob, job_id=job_id, run_id=run_id, stage="store", done=0, total=len(results)
    ):
        return None
    start = time.perf_counter()
    with transaction.atomic():
        # Lock the job row so that a run that lost the job cannot store patterns next to another.
        holder = MiningJob.objects.select_for_update().filter(pk=job_id, run_id=run_id, status=JobStatus.RUNNING)
        if not holder.exists():
            return None
        MinedPattern.objects.filter(mining_job_id=job_id).delete()
        MinedPattern.objects.bulk_create(
            [
                MinedPattern(
                    mining_job_id=job_id,
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
        timings["store"] = round((time.perf_counter() - start) * 1000)
        _job_finish(
            MiningJob,
            job_id=job_id,
            run_id=run_id,
            status=JobStatus.SUCCEEDED,
            stage="",
            done=len(results),
            n_group1=len(groups[1]),
            n_group2=len(groups[2]),
            n_excluded=excluded,
            timings_ms=timings,
        )
    return timings


# --- building a setting --------------------------------------------------------------------


@dataclass(frozen=True)
class SettingChoice:
    """What a researcher chose for a new setting (see :func:`setting_create_from_patterns`)."""

    key: str
    title: str
    target_pattern_id: int
    distractor_pattern_ids: tuple[int, ...] = ()
    target_description: str = ""
    selection: str = SettingSource.Selection.RANDOM
    n_per_group: int = 10
    seed: int | None = None
    max_chars: int | None = None
    picked_output_ids: tuple[int, ...] = ()


def _sample_outputs(outputs: list[Output], *, choice: SettingChoice, seed: int) -> dict[int, list[Output]]:
    limit = min(choice.max_chars or MAX_TEXT_CHARS, MAX_TEXT_CHARS)
    rng = random.Random(seed)
    chosen = {}
    for group in (1, 2):
        eligible = [o for o in outputs if o.group == group and len(o.text) <= limit]
        if len(eligible) < choice.n_per_group:
            raise SettingBuildError(
                f"Group {group} has only {len(eligible)} outputs of at most {limit} characters; "
                f"{choice.n_per_group} are needed."
            )
        chosen[group] = rng.sample(eligible, choice.n_per_group)
    return chosen


def _picked_outputs(outputs: list[Output], *, choice: SettingChoice) -> dict[int, list[Output]]:
    by_id = {o.pk: o for o in outputs}
    unknown = [pk for pk in choice.picked_output_ids if pk not in by_id]
    if unknown:
        raise SettingBuildError("Some picked outputs do not belong to this stimulus set.")
    limit = min(choice.max_chars or MAX_TEXT_CHARS, MAX_TEXT_CHARS)
    chosen = {1: [], 2: []}
    for pk in dict.fromkeys(choice.picked_output_ids):
        output = by_id[pk]
        if len(output.text) > limit:
            raise SettingBuildError(
                f"Output {output.index + 1} of group {output.group} has {len(output.text)} "
                f"characters; the limit is {limit}."
            )
        chosen[output.group].append(output)
    return chosen


def setting_create_from_patterns(
    *, mining_job: MiningJob, study: Study, choice: SettingChoice, created_by=None
) -> Setting:
    """Add a main setting to ``study`` from a mining job's outputs and patterns.

    The target pattern (and the distractors, shown only in the ``pattern_with_distractors``
    condition) become the setting's token patterns: the tokens of all clauses, with the
    pattern's group. The texts are ``choice.n_per_group`` outputs per group sampled with
    ``random.Random(seed)`` (a new seed is drawn and recorded if none is given), or the outputs
    picked by hand. Outputs longer than ``max_chars`` (and than 2,000 characters, the study-file
    limit) are not used. A :class:`SettingSource` records all of it.

    Raises
    ------
    SettingBuildError
        If the study has participants (a new main setting changes its counterbalancing cells,
        and the cells of people who took part must not change), the key is taken, the mining job
        has not succeeded, a pattern is not from this job, or there are too few outputs.
    ValidationError
        For a bad key or title.
    """
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        if study.participants.exists():
            if study.participants.filter(is_pilot=False).exists():
                hint = "Add the setting to a study nobody has taken yet."
            else:
                hint = (
                    "They are all pilot participants: delete the pilot "
                    f"(`manage.py pilot {study.slug} --delete` or the researcher page), then build."
                )
            raise SettingBuildError(
                f"Study '{study.slug}' already has participants, so its settings cannot change: a new "
                f"main setting would change the counterbalancing cells they were assigned to. {hint}"
            )
        if mining_job.status != JobStatus.SUCCEEDED:
            raise SettingBuildError("The mining job has not finished successfully.")
        if study.settings.filter(key=choice.key).exists():
            raise SettingBuildError(f"Study '{study.slug}' already has a setting with the key '{choice.key}'.")
        if study.settings.filter(kind=Setting.Kind.MAIN).count() >= 12:
            raise SettingBuildError("A study can have at most 12 main settings.")
        ids = [choice.target_pattern_id, *choice.distractor_pattern_ids]
        if len(set(ids)) != len(ids):
            raise SettingBuildError(
                "The target pattern cannot also be a distractor, and distractors must not repeat."
            )
        patterns = {p.pk: p for p in mining_job.patterns.filter(pk__in=ids)}
        if len(patterns) != len(ids):
            raise SettingBuildError("Some chosen patterns are not from this mining job.")
        for p in patterns.values():
            if len(p.tokens) > MAX_PATTERN_TOKENS:
                raise SettingBuildError(f"The pattern {p.clauses_text} has more than {MAX_PATTERN_TOKENS} tokens.")

        outputs = list(
            Output.objects.filter(stimulus_set_id=mining_job.stimulus_set_id).order_by("group", "index")
        )
        seed = None
        if choice.selection == SettingSource.Selection.RANDOM:
            if not 1 <= choice.n_per_group <= MAX_TEXTS_PER_GROUP:
                raise SettingBuildError(f"Outputs per group must be between 1 and {MAX_TEXTS_PER_GROUP}.")
            seed = choice.seed if choice.seed is not None else secrets.randbelow(2**31)
            chosen = _sample_outputs(outputs, choice=choice, seed=seed)
        elif choice.selection == SettingSource.Selection.HAND:
            chosen = _picked_outputs(outputs, choice=choice)
        else:
            raise SettingBuildError(f"Unknown selection '{choice.selection}'.")
        for group in (1, 2):
            if not chosen[group]:
                raise SettingBuildError(f"Pick at least one output of group {group}.")
            if len(chosen[group]) > MAX_TEXTS_PER_GROUP:
                raise SettingBuildError(f"Pick at most {MAX_TEXTS_PER_GROUP} outputs of group {group}.")

        last = study.settings.filter(kind=Setting.Kind.MAIN).aggregate(m=Max("position"))["m"]
        position = (last or 0) + 1
        setting = Setting(
            study=study,
            key=choice.key,
            kind=Setting.Kind.MAIN,
            position=position,
            title=choice.title,
            group1_texts=[o.text for o in chosen[1]],
            group2_texts=[o.text for o in chosen[2]],
            target_description=choice.target_description,
        )
        setting.full_clean()
        setting.save()
        TokenPattern.objects.bulk_create(
            TokenPattern(
                setting=setting,
                tokens=patterns[pk].tokens,
                group=patterns[pk].group,
                is_distractor=i > 0,
                position=i,
            )
            for i, pk in enumerate(ids)
        )
        SettingSource.objects.create(
            setting=setting,
            mining_job=mining_job,
            target_pattern=patterns[choice.target_pattern_id],
            distractor_pattern_ids=list(choice.distractor_pattern_ids),
            selection=choice.selection,
            seed=seed,
            max_chars=choice.max_chars,
            group1_output_ids=[o.pk for o in chosen[1]],
            group2_output_ids=[o.pk for o in chosen[2]],
            created_by=created_by,
        )
    return setting


__all__ = [
    "OutputImportError",
    "StimuliError",
    "JobStateError",
    "SettingBuildError",
    "SettingChoice",
    "stimulus_set_import",
    "stimulus_set_import_files",
    "generation_job_create",
    "generation_job_cancel",
    "generation_job_run",
    "mining_job_create",
    "mining_job_run",
    "job_resume",
    "setting_create_from_patterns",
]
