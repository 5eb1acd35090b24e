"""Researcher-side actions: running the study analysis on the current data."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from django.conf import settings

from spotlight_study.results.exports import results_export

from .codebook_run import codebook_analysis_write
from spotlight_study.studies.models import Study


PILOT_MARKER = "INCLUDES_PILOT"


def latest_report_dir(study: Study) -> Path:
    """Where the latest report of ``study`` is kept for the researcher page."""
    return Path(settings.ANALYSIS_ROOT) / study.slug


def analysis_run(
    *,
    study: Study,
    out_dir: str | Path,
    include_pilot: bool = False,
    plan: dict | None = None,
    margin: float | None = None,
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
    On success, ``report.html`` (self-contained) and ``results.json`` are also copied to
    :func:`latest_report_dir`, which the researcher page links to.
    """
    from analysis import AnalysisInputError, run_analysis

    from spotlight_study.annotation.machine_agreement import DEFAULT_MARGIN, machine_coder_summary

    margin = DEFAULT_MARGIN if margin is None else margin
    if not 0 <= margin <= 1:
        raise AnalysisInputError(f"the margin must be between 0 and 1 (kappa units), got {margin}")
    out = Path(out_dir)
    data_dir = out / "data"
    results_export(study=study, out_dir=data_dir, include_pilot=include_pilot)
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
    latest = latest_report_dir(study)
    latest.mkdir(parents=True, exist_ok=True)
    for name in ("report.html", "results.json"):
        shutil.copyfile(out / name, latest / name)
    # The researcher page says whether the latest report includes pilot participants.
    marker = latest / PILOT_MARKER
    if include_pilot:
        marker.write_text("This report includes pilot participants.\n", encoding="utf-8")
    else:
        marker.unlink(missing_ok=True)
    return results


def latest_report_exists(study: Study) -> bool:
    """True when ``manage.py analyze`` has written a report of the study (its ``report.html``)."""
    return (latest_report_dir(study) / "report.html").exists()


def latest_report_includes_pilot(study: Study) -> bool:
    """Whether the latest report of ``study`` was made with ``--include-pilot``."""
    return (latest_report_dir(study) / PILOT_MARKER).exists()
