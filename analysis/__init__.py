"""Statistics, figures and report for crowdworker user studies.

Pure Python (pandas, scipy, statsmodels, matplotlib); never imports Django.
The Django side calls :func:`run_analysis` on an export directory, or feeds
DataFrames to :func:`prepare_data` and :func:`compute_results`.

Examples
--------
>>> from analysis import run_analysis
>>> results = run_analysis("export/", "out/")  # doctest: +SKIP

From a shell: ``python -m analysis export/ --out out/``.
"""

from .errors import AnalysisInputError
from .inputs import StudyData, input_sha256, load_export, prepare_data
from .planning import SamplePlan, plan_sample_size
from .simulation import SimulationResult, load_study_design, simulate_power
from .pipeline import (
    DEFAULT_LIKERT_ALTERNATIVES,
    build_tables,
    compute_results,
    run_analysis,
    to_json,
)
from .stats import (
    cohens_h,
    compare_proportions,
    fisher_exact_test,
    holm_correction,
    mann_whitney,
    other_differences,
    sample_size_per_condition,
    time_on_task,
    two_proportion_ztest,
    wilcoxon_paired,
    wilson_ci,
)

__all__ = [
    "DEFAULT_LIKERT_ALTERNATIVES",
    "AnalysisInputError",
    "SamplePlan",
    "SimulationResult",
    "StudyData",
    "build_tables",
    "cohens_h",
    "compare_proportions",
    "compute_results",
    "fisher_exact_test",
    "holm_correction",
    "input_sha256",
    "load_export",
    "load_study_design",
    "mann_whitney",
    "other_differences",
    "plan_sample_size",
    "prepare_data",
    "run_analysis",
    "sample_size_per_condition",
    "simulate_power",
    "time_on_task",
    "to_json",
    "two_proportion_ztest",
    "wilcoxon_paired",
    "wilson_ci",
]
