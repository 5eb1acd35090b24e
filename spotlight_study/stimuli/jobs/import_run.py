"""The import job's run: read uploaded output files kept in the job and store their outputs.

What a runner executes (:mod:`.runner`) for a file too large to read inside a request
(``STIMULI_INLINE_IMPORT_BYTES``). Idempotent: outputs are stored with ``ignore_conflicts`` on
the unique (set, group, index), so a rerun after a crash continues without duplicates. Stages
(``job.stage``, with ``done``/``total``): ``read`` (0/1: decoding and parsing the files),
``store`` (outputs stored, of all). The files' bytes are emptied when the job ends.
"""
from __future__ import annotations

import logging

from django.db import transaction

from ..errors import OutputImportError
from ..importers import ImportOptions, read_outputs
from ..models import ImportJob, JobStatus, Output, StimulusSet
from .state import job_claim, job_finish, job_report

logger = logging.getLogger(__name__)

#: Outputs stored between two progress reports (and per INSERT statement batch).
STORE_BATCH = 5000


def import_job_run(*, job_id: int, run_id: str) -> None:
    """Read the job's files and store every output in its stimulus set.

    A problem with the files (:class:`~..errors.OutputImportError`: not UTF-8, a missing
    column, an empty group, more outputs than the limit...) marks the job failed with the
    message and stores nothing; any other error marks it failed with a pointer to the worker log
    and is raised again. A run that loses its job (cancelled, taken over) stops at its next
    report.
    """
    job = job_claim(ImportJob, job_id=job_id, run_id=run_id)
    if job is None:
        logger.info("Import job %s: finished or held by another run; skipped.", job_id)
        return
    try:
        _import(job, run_id=run_id)
    except OutputImportError as exc:
        _end(job, run_id=run_id, status=JobStatus.FAILED, error=f"{exc} Nothing was imported.")
    except Exception as exc:
        _end(job, run_id=run_id, status=JobStatus.FAILED,
             error=f"Unexpected error ({type(exc).__name__}); see the worker log.")
        raise


def _end(job: ImportJob, *, run_id: str, status: str, **fields) -> None:
    """Finish the job and empty its files (they are not needed any more)."""
    with transaction.atomic():
        if job_finish(ImportJob, job_id=job.pk, run_id=run_id, status=status, stage="", **fields):
            ImportJob.objects.filter(pk=job.pk).update(file1_data=b"", file2_data=None)


def _import(job: ImportJob, *, run_id: str) -> None:
    if not job_report(ImportJob, job_id=job.pk, run_id=run_id, stage="read", done=0, total=1):
        return
    options = ImportOptions(**job.options)
    second = (job.file2_name, bytes(job.file2_data)) if job.file2_data is not None else None
    groups = read_outputs(file1=(job.file1_name, bytes(job.file1_data)), file2=second, options=options)
    rows = [(group, i, text) for group, texts in ((1, groups.group1), (2, groups.group2))
            for i, text in enumerate(texts)]
    if not job_report(ImportJob, job_id=job.pk, run_id=run_id, stage="store", done=0, total=len(rows)):
        return
    for start in range(0, len(rows), STORE_BATCH):
        Output.objects.bulk_create(
            [Output(stimulus_set_id=job.stimulus_set_id, group=g, index=i, text=t)
             for g, i, t in rows[start:start + STORE_BATCH]],
            ignore_conflicts=True,
        )
        done = min(start + STORE_BATCH, len(rows))
        if not job_report(ImportJob, job_id=job.pk, run_id=run_id, done=done):
            return
    StimulusSet.objects.filter(pk=job.stimulus_set_id).update(
        group1_label=groups.group1_label, group2_label=groups.group2_label, source_detail=groups.detail[:500]
    )
    _end(job, run_id=run_id, status=JobStatus.SUCCEEDED, done=len(rows))
    logger.info("Import job %s stored %s outputs.", job.pk, len(rows))
