"""Writes of the machine coder: its background job (create, cancel, resume, run here).

The job is one more kind of the shared background jobs (:mod:`spotlight_study.stimuli.jobs`):
it is created here, started after commit by the runner named in ``STIMULI_JOB_RUNNER`` (a Celery
task, a thread of the web process, or nobody: ``manual``), and its run
(:func:`~.machine_coding_run.machine_coding_job_run`) is idempotent. Each item's
:class:`~.models.MachineLabel` is stored as soon as it is known, and the unique (item, model)
constraint makes a rerun after a crash or a cancel continue without duplicates.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from spotlight_study.stimuli.jobs.runner import job_dispatch, job_run_now
from spotlight_study.stimuli.jobs.state import job_cancel, job_reopen
from spotlight_study.stimuli.models import ACTIVE_STATUSES
from spotlight_study.stimuli.selectors import job_is_stale
from spotlight_study.studies import codebook as cb
from spotlight_study.studies.models import Study

from . import codebook_labels, llm
from .errors import MachineCodingError
from .models import COMPARED_FIELDS, Item, MachineCodingJob
from .pilot_round import served_rounds_filter
from .services.queue import items_sync
from .tasks import MACHINE_CODING


def machine_coding_job_create(
    *,
    study: Study,
    model: str,
    fields: list[str] | None = None,
    created_by=None,
    dispatch: bool = True,
) -> MachineCodingJob:
    """Create a job that labels every saved answer of ``study`` with ``model``; queue it after
    commit (see the module docstring). Pilot participants' answers are labelled only while the
    pilot annotation round is open (:mod:`.pilot_round`), as annotators get them.

    ``fields`` are compared label fields (default: all of them): under the default codebook
    those of :data:`~.models.COMPARED_FIELDS`, under a study's declared codebook its compared
    field keys and ``exclusion`` (:func:`coder_fields`). ``dispatch=False`` leaves the job to
    the caller (``llm_annotate --sync`` runs it in its own process).

    Raises
    ------
    ValidationError
        For an empty or too long model name or an unknown field.
    MachineCodingError
        If a job for this study and model is still queued or running (resume or cancel it).
    """
    model = (model or "").strip()
    try:
        chosen = llm.validate_fields(fields, coder_fields(study))
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
            total=Item.objects.filter(served_rounds_filter(study), study=study).count(),
            created_by=created_by,
        )
        job.full_clean()
        job.save()
        if dispatch:
            job_dispatch(MACHINE_CODING, job_id=job.pk)
    return job


def coder_fields(study: Study) -> tuple[str, ...]:
    """The label fields the machine coder can code in ``study``, in codebook order: the default
    codebook's :data:`~.models.COMPARED_FIELDS`, or the declared codebook's compared fields (all
    but ``note``) and the platform field ``exclusion``."""
    if not codebook_labels.is_declared(study):
        return COMPARED_FIELDS
    return (*(f["key"] for f in cb.compared_fields(study.annotation_codebook)), "exclusion")


def machine_coding_job_cancel(*, job_id: int) -> MachineCodingJob:
    """Cancel a queued or running job; labels stored so far are kept.

    A running job stops after the item it is coding. Raises :class:`~.errors.MachineCodingError`
    if the job has finished, ``MachineCodingJob.DoesNotExist`` for an unknown id.
    """
    return job_cancel(MachineCodingJob, job_id=job_id, error=MachineCodingError)


def machine_coding_job_resume(*, job_id: int, dispatch: bool = True) -> MachineCodingJob:
    """Queue a failed, cancelled or stale job again; it continues with the unlabelled items.

    ``dispatch=False`` as for :func:`machine_coding_job_create`.

    Raises :class:`~.errors.MachineCodingError` if it succeeded or is still running and
    reporting; ``MachineCodingJob.DoesNotExist`` for an unknown id.
    """
    with transaction.atomic():
        job = job_reopen(MachineCodingJob, job_id=job_id, error=MachineCodingError)
        if dispatch:
            job_dispatch(MACHINE_CODING, job_id=job.pk)
    return job


def machine_coding_run_now(*, job_id: int, run_id: str | None = None) -> None:
    """Run the job in this process until it finishes, fails or is cancelled (``--sync``).

    Transient errors are retried on the schedule of :mod:`spotlight_study.stimuli.jobs.retry`,
    the one the Celery task uses.
    """
    job_run_now(MACHINE_CODING, job_id=job_id, run_id=run_id)
