"""Writes of the machine coder: its background job (create, run, cancel, resume).

The job follows the generation job's pattern (``spotlight_study.stimuli``): it is created here,
started after commit by the runner named in ``STIMULI_JOB_RUNNER`` (a Celery task, a thread of
the web process, or nobody: ``manual``), and :func:`machine_coding_job_run` is idempotent. Each
item's :class:`~.models.MachineLabel` is stored as soon as it is known, and the unique
(item, model) constraint makes a rerun after a crash or a cancel continue without duplicates.

Blinding: the run reads each item through :func:`~.selectors.blind_item`, the annotator page's
allow-list, and hands only that to :mod:`.llm`.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import IntegrityError, connections, transaction
from django.utils import timezone

from spotlight_study.stimuli import generation
from spotlight_study.stimuli.models import ACTIVE_STATUSES, JobStatus
from spotlight_study.stimuli.selectors import job_is_stale
from spotlight_study.studies.models import Study

from . import llm
from .models import Item, MachineCodingJob, MachineLabel
from .selectors import blind_item, item_queryset
from .services import items_sync

logger = logging.getLogger(__name__)

#: Whole-run retries after transient errors (429, 5xx, connection) outlasting the client's own.
MAX_TRANSIENT_RETRIES = 5


class MachineCodingError(Exception):
    """A machine-coding action that cannot be done; the message says why."""


def machine_coding_job_create(
    *,
    study: Study,
    model: str,
    fields: list[str] | None = None,
    created_by=None,
    dispatch: bool = True,
) -> MachineCodingJob:
    """Create a job that labels every saved answer of ``study`` with ``model``; queue it after
    commit (see the module docstring).

    ``fields`` are compared label fields (default: all of them). ``dispatch=False`` leaves the
    job to the caller (``llm_annotate --sync`` runs it in its own process).

    Raises
    ------
    ValidationError
        For an empty or too long model name or an unknown field.
    MachineCodingError
        If a job for this study and model is still queued or running (resume or cancel it).
    """
    model = (model or "").strip()
    try:
        chosen = llm.validate_fields(fields)
    except ValueError as exc:
        raise ValidationError({"fields": str(exc)}) from None
    items_sync(study=study)
    with transaction.atomic():
        busy = (
            MachineCodingJob.objects.select_for_update()
            .filter(study=study, model=model, status__in=ACTIVE_STATUSES)
            .first()
        )
        if busy is not None and not job_is_stale(busy):
            raise MachineCodingError(
                f"Machine-coding job {busy.pk} for {model} is still {busy.status}; "
                "cancel it or wait for it to finish."
            )
        job = MachineCodingJob(
            study=study,
            base_url=settings.OPENAI_BASE_URL,
            model=model,
            fields=list(chosen),
            stage="label",
            total=Item.objects.filter(study=study).count(),
            created_by=created_by,
        )
        job.full_clean()
        job.save()
        if dispatch:
            machine_coding_dispatch(job_id=job.pk)
    return job


def machine_coding_job_cancel(*, job_id: int) -> MachineCodingJob:
    """Cancel a queued or running job; labels stored so far are kept.

    A running job stops after the item it is coding. Raises :class:`MachineCodingError` if the
    job has finished, ``MachineCodingJob.DoesNotExist`` for an unknown id.
    """
    with transaction.atomic():
        job = MachineCodingJob.objects.select_for_update().get(pk=job_id)
        if job.status not in ACTIVE_STATUSES:
            raise MachineCodingError(f"Job {job_id} has already finished ({job.status}).")
        job.status = JobStatus.CANCELLED
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "finished_at", "updated_at"])
    return job


def machine_coding_job_resume(*, job_id: int, dispatch: bool = True) -> MachineCodingJob:
    """Queue a failed, cancelled or stale job again; it continues with the unlabelled items.

    ``dispatch=False`` as for :func:`machine_coding_job_create`.

    Raises :class:`MachineCodingError` if it succeeded or is still running and reporting.
    """
    with transaction.atomic():
        job = MachineCodingJob.objects.select_for_update().get(pk=job_id)
        if job.status == JobStatus.SUCCEEDED:
            raise MachineCodingError(f"Job {job_id} has already finished.")
        if job.status in ACTIVE_STATUSES and not job_is_stale(job):
            raise MachineCodingError(
                f"Job {job_id} is still running. It can be resumed once it has not reported "
                f"for {settings.STIMULI_JOB_STALE_SECONDS} seconds."
            )
        job.status = JobStatus.QUEUED
        job.run_id = ""
        job.error = ""
        job.finished_at = None
        job.save(update_fields=["status", "run_id", "error", "finished_at", "updated_at"])
        if dispatch:
            machine_coding_dispatch(job_id=job.pk)
    return job


def machine_coding_dispatch(*, job_id: int) -> None:
    """Start the job once the current transaction commits, with ``STIMULI_JOB_RUNNER``.

    Raises ``ImproperlyConfigured`` for an unknown runner.
    """
    runner = settings.STIMULI_JOB_RUNNER
    if runner == "celery":
        from .tasks import machine_coding_job_run_task

        transaction.on_commit(lambda: machine_coding_job_run_task.delay(job_id), robust=True)
    elif runner == "thread":
        transaction.on_commit(lambda: _start_thread(job_id), robust=True)
    elif runner != "manual":
        raise ImproperlyConfigured(
            f"STIMULI_JOB_RUNNER must be celery, thread or manual, not '{runner}'."
        )


def _start_thread(job_id: int) -> None:
    def main() -> None:
        try:
            machine_coding_run_now(job_id=job_id)
        except Exception:
            logger.exception("Machine-coding job %s failed in its background thread.", job_id)
        finally:
            connections.close_all()

    threading.Thread(target=main, name=f"machine-coding-{job_id}", daemon=True).start()


def machine_coding_run_now(*, job_id: int, run_id: str | None = None) -> None:
    """Run the job in this process until it finishes, fails or is cancelled (``--sync``).

    Transient errors are retried up to :data:`MAX_TRANSIENT_RETRIES` times, waiting 1, 2, 4, ...
    seconds (at most 60), like the Celery task's ``retry_backoff``.
    """
    run_id = run_id or uuid.uuid4().hex
    attempts = MAX_TRANSIENT_RETRIES + 1
    for attempt in range(attempts):
        try:
            machine_coding_job_run(
                job_id=job_id, run_id=run_id, final_attempt=attempt == attempts - 1
            )
            return
        except generation.TransientGenerationError as exc:
            delay = min(2**attempt, 60)
            logger.warning("Machine-coding job %s: %s; trying again in %s s.", job_id, exc, delay)
            time.sleep(delay)


def _claim(job_id: int, run_id: str) -> MachineCodingJob | None:
    now = timezone.now()
    with transaction.atomic():
        job = MachineCodingJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status not in ACTIVE_STATUSES:
            return None
        if job.status == JobStatus.RUNNING and job.run_id not in ("", run_id):
            if not job_is_stale(job, now=now):
                return None
        job.status = JobStatus.RUNNING
        job.run_id = run_id
        job.heartbeat_at = now
        job.started_at = job.started_at or now
        job.error = ""
        job.save(
            update_fields=["status", "run_id", "heartbeat_at", "started_at", "error", "updated_at"]
        )
    return job


def _report(job_id: int, run_id: str, **fields) -> bool:
    """Store progress and a heartbeat; ``False`` if the job was cancelled or taken over."""
    now = timezone.now()
    return (
        MachineCodingJob.objects.filter(
            pk=job_id, run_id=run_id, status=JobStatus.RUNNING
        ).update(heartbeat_at=now, updated_at=now, **fields)
        == 1
    )


def _done(job: MachineCodingJob) -> int:
    return MachineLabel.objects.filter(item__study_id=job.study_id, model=job.model).count()


def _store(job: MachineCodingJob, item: Item, coded: llm.CodedItem) -> None:
    values = coded.values or {}
    row = MachineLabel(
        job=job,
        item=item,
        model=job.model,
        status=MachineLabel.Status.LABELLED if coded.values is not None else MachineLabel.Status.MISSING,
        missing_reason=coded.missing_reason,
        response_model=coded.response_model,
        system_fingerprint=coded.system_fingerprint,
        finish_reason=coded.finish_reason,
        prompt_tokens=coded.prompt_tokens,
        completion_tokens=coded.completion_tokens,
        total_tokens=coded.total_tokens,
        attempts=coded.attempts,
        **values,
    )
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:
        # Another run stored this item meanwhile (a takeover of a stale job): keep the first.
        pass


def machine_coding_job_run(*, job_id: int, run_id: str, final_attempt: bool = True) -> None:
    """Label the study's items that have no machine label from this model yet, one by one.

    Each label is stored as it arrives; progress (``done`` of ``total``) and a heartbeat are
    reported after each item, and the job stops there when it was cancelled or taken over.

    Raises
    ------
    TransientGenerationError
        If ``final_attempt`` is false and a 429, 5xx or connection error outlasted the client's
        own retries (the job is queued again for the caller's retry). On the final attempt the
        job is marked failed instead. Any other API error (bad key, unknown model, a server
        without structured outputs) fails the job. Messages never contain the API key.
    """
    job = _claim(job_id, run_id)
    if job is None:
        logger.info("Machine-coding job %s: finished, cancelled or held elsewhere.", job_id)
        return
    items_sync(study=job.study)
    fields = tuple(job.fields) or llm.validate_fields(None)
    todo = list(
        item_queryset()
        .filter(study_id=job.study_id)
        .exclude(machine_labels__model=job.model)
        .order_by("pk")
    )
    total = Item.objects.filter(study_id=job.study_id).count()
    _report(job_id, run_id, stage="label", done=_done(job), total=total)
    api_key = settings.OPENAI_API_KEY
    client = generation.make_client(
        base_url=job.base_url,
        api_key=api_key,
        max_retries=settings.OPENAI_MAX_RETRIES,
        timeout_s=settings.OPENAI_TIMEOUT_SECONDS,
    )
    error: BaseException | None = None
    try:
        for item in todo:
            try:
                coded = llm.code_item(client, model=job.model, blind=blind_item(item), fields=fields)
            except Exception as exc:  # an API error: decided below, after the loop
                error = exc
                break
            _store(job, item, coded)
            if not _report(job_id, run_id, done=_done(job)):
                MachineCodingJob.objects.filter(pk=job_id).update(done=_done(job))
                return  # cancelled or taken over: the status stays as the canceller set it
    finally:
        client.close()
    done = _done(job)
    if error is not None:
        message = generation.safe_error_message(error, secret=api_key)
        transient = isinstance(error, generation.TRANSIENT_ERRORS)
        if transient and not final_attempt:
            MachineCodingJob.objects.filter(pk=job_id, run_id=run_id).update(
                status=JobStatus.QUEUED,
                done=done,
                error=f"Will try again: {message}",
                heartbeat_at=timezone.now(),
                updated_at=timezone.now(),
            )
            raise generation.TransientGenerationError(message)
        _finish(job_id, run_id, JobStatus.FAILED, done=done, error=(
            f"Gave up after retries: {message}" if transient else message
        ))
        logger.warning("Machine-coding job %s failed: %s", job_id, message)
        return
    _finish(job_id, run_id, JobStatus.SUCCEEDED, done=done, total=max(total, done), stage="")


def _finish(job_id: int, run_id: str, status: str, **fields) -> None:
    now = timezone.now()
    MachineCodingJob.objects.filter(pk=job_id, run_id=run_id, status=JobStatus.RUNNING).update(
        status=status, finished_at=now, heartbeat_at=now, updated_at=now, **fields
    )
