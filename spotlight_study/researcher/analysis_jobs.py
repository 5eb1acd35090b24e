"""Analysis runs: recorded in :class:`~.models.AnalysisRun`, outputs kept in the ``analysis`` storage.

Every run goes through here, wherever it was started:

- the study page's "Run analysis" (:func:`analysis_job_create`, ``origin=page``): the run is a
  background job of the shared machinery (:mod:`spotlight_study.stimuli.jobs`), started after
  commit by the ``STIMULI_JOB_RUNNER``: a Celery task in production, a thread of the web process
  in the embedded default (``scripts/serve.sh``); the page polls its progress;
- ``manage.py analyze`` and the API's ``POST .../analysis/``: the same row, run at once in
  their own process (``dispatch=False``, then
  :func:`~.analysis_execution.analysis_job_run` with ``reraise=True``).

A run exports the study's data and runs the analysis package into a temporary directory
(:func:`.services.analysis_run`; ``analysis/`` knows no Django and no storage;
:mod:`.analysis_execution`), then copies the
outputs into the storage (:mod:`.analysis_storage`) under ``analysis/<slug>/<id>/``, so any
server can show them. A second run of a study is refused while one is queued or running and
still reporting (and by a database constraint, whichever server asks).
"""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from spotlight_study.stimuli.jobs.runner import job_dispatch
from spotlight_study.stimuli.models import ACTIVE_STATUSES, JobStatus
from spotlight_study.stimuli.selectors import job_is_stale
from spotlight_study.studies.models import Study

from .analysis_execution import STAGES
from .errors import AnalysisBusyError
from .models import AnalysisRun
from .tasks import ANALYSIS


def analysis_job_create(
    *,
    study: Study,
    origin: str = AnalysisRun.Origin.PAGE,
    created_by=None,
    include_pilot: bool = False,
    use_plan: bool = True,
    margin: float | None = None,
    dispatch: bool = True,
) -> AnalysisRun:
    """Record a new analysis run of ``study`` (queued) and start it after commit.

    ``origin`` is an :class:`~.models.AnalysisRun.Origin`; ``created_by`` the user (``None`` for
    the command line). ``dispatch=False`` leaves the run to the caller, who runs it in its own
    process with :func:`~.analysis_execution.analysis_job_run` (``manage.py analyze``, the API).

    A queued or running run of the study that has not reported for
    ``STIMULI_JOB_STALE_SECONDS`` (its worker died) is marked failed first.

    Raises
    ------
    AnalysisBusyError
        If a run of the study is queued or running and still reporting (nothing is created).
    analysis.AnalysisInputError
        If ``margin`` is outside [0, 1] (nothing is created).
    """
    from analysis import AnalysisInputError

    if margin is not None and not 0 <= margin <= 1:
        raise AnalysisInputError(f"the margin must be between 0 and 1 (kappa units), got {margin}")
    with transaction.atomic():
        # The study row serialises two requests on one database; the partial unique constraint
        # catches the rest (a database without row locks, SQLite).
        Study.objects.select_for_update().filter(pk=study.pk).first()
        busy = AnalysisRun.objects.select_for_update().filter(
            study=study, status__in=ACTIVE_STATUSES).first()
        if busy is not None and not job_is_stale(busy):
            raise AnalysisBusyError(_busy_message(busy))
        if busy is not None:
            AnalysisRun.objects.filter(pk=busy.pk).update(
                status=JobStatus.FAILED, finished_at=timezone.now(),
                error="It stopped reporting (its worker or server stopped); a new run replaced it.")
        run = AnalysisRun(study=study, origin=origin, created_by=created_by,
                          include_pilot=include_pilot, use_plan=use_plan, margin=margin,
                          total=len(STAGES))
        try:
            with transaction.atomic():
                run.save()
        except IntegrityError:
            other = AnalysisRun.objects.filter(study=study, status__in=ACTIVE_STATUSES).first()
            raise AnalysisBusyError(_busy_message(other)) from None
        if dispatch:
            job_dispatch(ANALYSIS, job_id=run.pk)
    return run


def _busy_message(busy: AnalysisRun | None) -> str:
    if busy is None:
        return "Another analysis run of this study has just started; wait for it to finish."
    return (f"Analysis run {busy.pk} of this study is still {busy.status} (started by "
            f"{busy.started_by}); wait for it to finish. Nothing was started.")
