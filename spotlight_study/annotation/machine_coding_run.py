"""The machine coder's run: label, one by one, the study's items that have no machine label from
the job's model yet.

What a job runner executes (see :mod:`.machine_coding` and
:mod:`spotlight_study.stimuli.jobs.runner`). The claim, heartbeat, finish and the handling of API
errors are the shared job machinery of :mod:`spotlight_study.stimuli.jobs`; this module adds only
what is the machine coder's own: which items, and how a label is stored.

Blinding: the run reads each item through :func:`~.selectors.blind_item`, the annotator page's
allow-list, and hands only that to :mod:`.llm`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction

from spotlight_study.stimuli.jobs.llm import llm_client, llm_run_wrap_up
from spotlight_study.stimuli.jobs.state import job_claim, job_finish, job_report
from spotlight_study.stimuli.models import JobStatus

from . import codebook_labels, llm, llm_codebook
from .models import Item, MachineCodingJob, MachineLabel
from .pilot_round import served_rounds_filter
from .selectors import blind_item, item_queryset
from .services.queue import items_sync

if TYPE_CHECKING:  # openai takes about 0.5 s to import; stimuli.generation imports it
    import openai

logger = logging.getLogger(__name__)


def machine_coding_job_run(*, job_id: int, run_id: str, final_attempt: bool = True) -> None:
    """Label the study's items that have no machine label from this model yet, one by one
    (pilot items only while the pilot annotation round is open).

    Each label is stored as it arrives; progress (``done`` of ``total`` items) and a heartbeat
    are reported after each item, and the job stops there when it was cancelled or taken over.

    Raises
    ------
    TransientGenerationError
        If ``final_attempt`` is false and a 429, 5xx or connection error outlasted the client's
        own retries (the job is queued again for the caller's retry). On the final attempt the
        job is marked failed instead. Any other API error (bad key, unknown model, a server
        without structured outputs) fails the job. Messages never contain the API key.
    """
    job = job_claim(MachineCodingJob, job_id=job_id, run_id=run_id)
    if job is None:
        logger.info("Machine-coding job %s: finished, cancelled or held elsewhere.", job_id)
        return
    items_sync(study=job.study)
    rounds = served_rounds_filter(job.study)  # pilot answers only in an open pilot round
    todo = list(
        item_queryset()
        .filter(rounds, study_id=job.study_id)
        .exclude(machine_labels__model=job.model)
        .order_by("pk")
    )
    total = Item.objects.filter(rounds, study_id=job.study_id).count()
    job_report(MachineCodingJob, job_id=job_id, run_id=run_id, stage="label", done=_done(job), total=total)
    client = llm_client(base_url=job.base_url)
    try:
        stopped, error = _label(job, todo, client=client, run_id=run_id)
    finally:
        client.close()
    done = _done(job)
    if not llm_run_wrap_up(
        MachineCodingJob, job_id=job_id, run_id=run_id, stopped=stopped, error=error,
        final_attempt=final_attempt, done=done,
    ):
        job_finish(
            MachineCodingJob, job_id=job_id, run_id=run_id, status=JobStatus.SUCCEEDED,
            done=done, total=max(total, done), stage="",
        )


def _label(
    job: MachineCodingJob, todo: list[Item], *, client: openai.OpenAI, run_id: str
) -> tuple[bool, BaseException | None]:
    """Code and store the ``todo`` items in order; returns ``(stopped, error)``.

    ``stopped``: the job was cancelled or taken over (seen at the report after an item);
    ``error``: the API error that ended the loop, decided by the caller.
    """
    declared = codebook_labels.is_declared(job.study)
    fields = tuple(job.fields) or llm.validate_fields(None)
    for item in todo:
        asked, book_fields = fields, None
        if declared:
            # The fields the annotator page asks on this item (its kind, its setting's options).
            book_fields = llm_codebook.asked_fields(
                codebook_labels.item_fields(job.study, item.setting), fields
            )
            keys = {f["key"] for f in book_fields}
            asked = tuple(k for k in fields if k in keys or k == "exclusion")
        try:
            coded = llm.code_item(client, model=job.model, blind=blind_item(item), fields=asked,
                                  codebook_fields=book_fields)
        except Exception as exc:  # an API error: decided by the caller
            return False, exc
        _store(job, item, coded)
        if not job_report(MachineCodingJob, job_id=job.pk, run_id=run_id, done=_done(job)):
            return True, None
    return False, None


def _done(job: MachineCodingJob) -> int:
    """Items of the study with a stored label from the job's model (labelled or missing)."""
    return MachineLabel.objects.filter(item__study_id=job.study_id, model=job.model).count()


def _store(job: MachineCodingJob, item: Item, coded: llm.CodedItem) -> None:
    """Store ``coded`` as the item's :class:`~.models.MachineLabel` (missing if it has no
    values); a label another run stored first is kept. Under a declared codebook its fields'
    values go to ``values`` (as an annotation's do), the exclusion to its column."""
    values = dict(coded.values or {})
    if codebook_labels.is_declared(job.study):
        exclusion = values.pop("exclusion", None)
        values = {"values": values if coded.values is not None else None, "exclusion": exclusion}
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
