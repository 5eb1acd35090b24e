"""The run of one analysis job: export, analyse, store, record (the idempotent run of the job kind).

:mod:`.tasks` pairs it with its Celery task; :mod:`.analysis_jobs` creates the rows and starts
them; ``manage.py analyze`` and the API call it in their own process.
"""
from __future__ import annotations

import importlib.metadata
import logging
import platform
import tempfile
from pathlib import Path

from spotlight_study.stimuli.jobs.state import job_claim, job_finish, job_report
from spotlight_study.stimuli.models import JobStatus

from .analysis_storage import outputs_store, run_prefix
from .models import AnalysisRun
from .services import analysis_run

logger = logging.getLogger(__name__)

#: The stages of a run, in order; ``done`` counts those finished (``total`` is their number).
STAGES = ("export", "analyse", "store")


def analysis_job_run(*, job_id: int, run_id: str, out_dir: str | Path | None = None,
                     reraise: bool = False) -> dict | None:
    """Run analysis run ``job_id`` for ``run_id``: export, analyse, store, record.

    Idempotent: a run that already finished, or that another runner holds and is still
    reporting, is left alone (returns ``None``); a run taken over after its worker died starts
    again from the export, and its stored files are replaced (the same input gives the same
    files).

    Parameters
    ----------
    job_id : int
        The :class:`~.models.AnalysisRun`'s id.
    run_id : str
        Names this runner (a Celery task id or a random id).
    out_dir : str or Path, optional
        Also keep the whole output here, the analysed export (``data/``) included
        (``manage.py analyze --out``); by default a temporary directory, removed afterwards.
    reraise : bool
        Raise the error that failed the run after recording it (the command line and the API
        report it their own way); otherwise it is only recorded on the row (``error``).

    Returns
    -------
    dict or None
        The content of ``results.json``, or ``None`` if the run was not this runner's or failed
        (with ``reraise`` False).

    Raises
    ------
    analysis.AnalysisInputError, PlanTamperedError, OSError, Exception
        Only with ``reraise``: what stopped the run. The row is failed with a message for the
        researcher first.
    """
    run = job_claim(AnalysisRun, job_id=job_id, run_id=run_id)
    if run is None:
        return None
    try:
        if out_dir is None:
            with tempfile.TemporaryDirectory(prefix="spotlight-analysis-") as tmp:
                return _execute(run, run_id, Path(tmp))
        return _execute(run, run_id, Path(out_dir))
    except Exception as exc:
        job_finish(AnalysisRun, job_id=job_id, run_id=run_id, status=JobStatus.FAILED,
                   error=_failure_message(exc))
        if reraise:
            raise
        return None


def _execute(run: AnalysisRun, run_id: str, out: Path) -> dict | None:
    """The stages of :func:`analysis_job_run` for a claimed ``run``, writing into ``out``."""
    from spotlight_study.prereg.selectors import plan_checked, plan_latest

    study = run.study
    latest = plan_latest(study=study) if run.use_plan else None
    plan = plan_checked(latest) if latest is not None else None  # PlanTamperedError: cite nothing

    def stage(name: str) -> None:
        job_report(AnalysisRun, job_id=run.pk, run_id=run_id, stage=name, done=STAGES.index(name))

    stage("export")
    results = analysis_run(study=study, out_dir=out, include_pilot=run.include_pilot, plan=plan,
                           margin=run.margin, on_stage=stage)
    stage("store")
    prefix = run_prefix(slug=study.slug, run_id=run.pk)
    files = outputs_store(source_dir=out, prefix=prefix)
    finished = job_finish(
        AnalysisRun, job_id=run.pk, run_id=run_id, status=JobStatus.SUCCEEDED, done=len(STAGES),
        stage="", input_sha256=results.get("input_sha256") or "",
        plan_sha256=latest.plan_sha256 if latest is not None else "",
        plan_version=latest.version if latest is not None else None,
        software=software_versions(results), files=files, storage_prefix=prefix,
    )
    return results if finished else None


def _failure_message(exc: Exception) -> str:
    """What the run's page says about the error that stopped it."""
    from analysis import AnalysisInputError

    from spotlight_study.exceptions import DomainError

    if isinstance(exc, AnalysisInputError):
        return f"The data cannot be analysed yet: {exc}"
    if isinstance(exc, DomainError):  # e.g. a tampered plan (prereg)
        return f"{exc} Nothing was analysed (a run from the command line with --no-plan cites no plan)."
    logger.exception("Analysis run failed.")
    return (f"The analysis stopped with an internal error ({type(exc).__name__}); the server log "
            "has the details.")


def software_versions(results: dict) -> dict[str, str]:
    """``{package: version}`` of what computed a run: the analysis' own list (``results.json``'s
    ``software``: Python, numpy, pandas, scipy, statsmodels, matplotlib) plus this platform,
    Django and NLTK (agreement). A codebook-only run's results have no list of their own; the
    platform's part is given then."""
    versions = dict(results.get("software") or {"python": platform.python_version()})
    for package in ("spotlight-study", "django", "nltk"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "unknown"
    return versions
