"""Researcher-side actions: the study analysis on the current data, into a directory.

Where a run's outputs are kept (the ``analysis`` storage) and how runs are recorded and started
in the background is :mod:`.analysis_jobs`.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from spotlight_study.results.exports import results_export

from .codebook_run import codebook_analysis_write
from spotlight_study.studies.models import Study


def analysis_run(
    *,
    study: Study,
    out_dir: str | Path,
    include_pilot: bool = False,
    plan: dict | None = None,
    margin: float | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> dict:
    """Export the study's current data and run :func:`analysis.run_analysis` on it.

    Parameters
    ----------
    study : Study
    out_dir : str or Path
        Receives ``data/`` (the export that was analysed: ``responses.csv``, ``survey.csv``,
        ``participants.csv``) and the analysis output (``results.json``, ``tables/``,
        ``figures/``, ``report.md``, ``report.html``).
    include_pilot : bool
        Analyse the pilot participants too (``manage.py pilot``); they are left out by default.
    plan : dict, optional
        A preregistered plan (``manage.py analyze`` passes the study's latest version): the
        report cites its hash and lists the deviations from it (:func:`analysis.run_analysis`).
    margin : float, optional
        Non-inferiority margin of the machine coder's decision, in kappa units (default
        ``machine_agreement.DEFAULT_MARGIN``, 0.1). The report's section "Machine coder" gives
        the machine coder's agreement and decision per label
        (:func:`~spotlight_study.annotation.machine_agreement.machine_coder_summary`), or says
        that there are no machine labels.
    on_stage : callable, optional
        Called with ``"analyse"`` once the export is written (the job's progress).

    Returns
    -------
    dict
        The content of ``results.json``.

    Raises
    ------
    analysis.AnalysisInputError
        If the data cannot be analysed yet (e.g. answers not annotated), or ``margin`` is
        outside [0, 1]; nothing is published.
    OSError
        If a directory cannot be written.

    Notes
    -----
    Only ``out_dir`` is written: :func:`.analysis_jobs.analysis_job_run` copies it to the
    ``analysis`` storage and records the run.
    """
    from analysis import AnalysisInputError, run_analysis

    from spotlight_study.annotation.machine_agreement import DEFAULT_MARGIN, machine_coder_summary

    margin = DEFAULT_MARGIN if margin is None else margin
    if not 0 <= margin <= 1:
        raise AnalysisInputError(f"the margin must be between 0 and 1 (kappa units), got {margin}")
    out = Path(out_dir)
    data_dir = out / "data"
    results_export(study=study, out_dir=data_dir, include_pilot=include_pilot)
    if on_stage is not None:
        on_stage("analyse")
    codebook = None
    if study.annotation_codebook:  # a declared codebook: its own report (researcher/codebook_run.py)
        codebook = codebook_analysis_write(study=study, data_dir=data_dir, out=out,
                                           include_pilot=include_pilot, plan=plan)
    if codebook is not None:
        # A declared codebook's report is the study's report: its outcome tested by its type
        # (a proportion by the reference z-test), agreement per field, the survey. The
        # reference pipeline needs the default codebook's three yes/no outcome columns.
        shutil.copyfile(out / "codebook_report.html", out / "report.html")
        (out / "results.json").write_text(json.dumps({"codebook": codebook}, indent=2,
                                                     ensure_ascii=False, sort_keys=True) + "\n",
                                          encoding="utf-8")
        results = {"codebook": codebook, "input_sha256": codebook["input_sha256"]}
    else:
        machine_coder = machine_coder_summary(study=study, margin=margin, include_pilot=include_pilot)
        results = run_analysis(data_dir, out, plan=plan, machine_coder=machine_coder)
    return results
