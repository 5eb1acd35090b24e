"""Statistics, figures and report for crowdworker user studies.

Pure Python (pandas, scipy, statsmodels, matplotlib); never imports Django.
The Django side calls :func:`run_analysis` on an export directory, or feeds
DataFrames to :func:`prepare_data` and :func:`compute_results`.

Examples
--------
>>> from analysis import run_analysis
>>> results = run_analysis("export/", "out/")  # doctest: +SKIP

From a shell: ``python -m analysis export/ --out out/``.

The names below are imported on first use, so ``import analysis.stats.agreement`` (the
annotation app's import) stays light.
"""

from __future__ import annotations

from ._lazy import lazy_exports

_SOURCES = {
    "DEFAULT_LIKERT_ALTERNATIVES": ".pipeline",
    "AnalysisInputError": ".errors",
    "SamplePlan": ".planning",
    "SimulationResult": ".simulation",
    "StudyData": ".inputs",
    "build_tables": ".tables",
    "cohens_h": ".stats",
    "compare_proportions": ".stats",
    "compute_results": ".pipeline",
    "fisher_exact_test": ".stats",
    "holm_correction": ".stats",
    "input_sha256": ".inputs",
    "load_export": ".inputs",
    "load_study_design": ".design",
    "mann_whitney": ".stats",
    "other_differences": ".stats",
    "plan_sample_size": ".planning",
    "prepare_data": ".inputs",
    "run_analysis": ".run",
    "sample_size_per_condition": ".stats",
    "simulate_power": ".simulation",
    "time_on_task": ".stats",
    "to_json": ".pipeline",
    "two_proportion_ztest": ".stats",
    "wilcoxon_paired": ".stats",
    "wilson_ci": ".stats",
}

__all__ = list(_SOURCES)
__getattr__, __dir__ = lazy_exports(__name__, _SOURCES)
