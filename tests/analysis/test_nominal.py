"""The one nominal rule (analysis/stats/nominal.py): chi-square without Yates' correction, or
Fisher's exact test when an expected count is below 5, used by the codebook's outcome and the
survey's choice items alike."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportions_ztest

import analysis.codebook_analysis as codebook_analysis
import analysis.survey_measures as survey_measures
from analysis import AnalysisInputError
from analysis.stats import nominal
from analysis.stats.nominal import FISHER_SEED, nominal_test


def test_codebook_and_survey_analyses_call_the_same_rule():
    """Both analyses hold the one function; the second module is gone."""
    assert codebook_analysis.nominal_test is nominal_test
    assert survey_measures.nominal_test is nominal_test
    with pytest.raises(ImportError):
        __import__("analysis.stats.contingency")


def test_chi_square_without_yates_equals_scipy_and_the_squared_z_test():
    """Large expected counts: scipy's chi-square with correction=False; on a 2 x 2 table it is
    the square of the two-sided two-proportion z-test (statsmodels), which Yates' would not be."""
    big = [[30, 12], [18, 25]]
    r = nominal_test(big)
    ref = stats.chi2_contingency(big, correction=False)
    assert (r.test, r.dof) == ("chi_square", 1)
    assert r.p_val == pytest.approx(ref.pvalue, abs=1e-15) and r.statistic == pytest.approx(ref.statistic)
    z, p = proportions_ztest([30, 18], [42, 43], alternative="two-sided")
    assert r.statistic == pytest.approx(z ** 2) and r.p_val == pytest.approx(p)
    assert r.p_val != pytest.approx(stats.chi2_contingency(big).pvalue)  # Yates' differs
    wide = nominal_test([[30, 10, 10], [10, 20, 20]])
    assert (wide.test, wide.dof) == ("chi_square", 2)
    assert wide.p_val == pytest.approx(stats.chi2_contingency([[30, 10, 10], [10, 20, 20]]).pvalue)


def test_fisher_for_small_counts_and_the_seeded_monte_carlo_on_larger_tables():
    """An expected count below 5: Fisher's exact test (scipy), the classic one on 2 x 2 and the
    Monte Carlo one with the module's seed on 2 x 3; the same table gives the same p each run."""
    small = [[6, 1], [2, 5]]
    r = nominal_test(small)
    assert (r.test, r.dof) == ("fisher_exact", None)
    assert r.p_val == pytest.approx(stats.fisher_exact(small).pvalue, abs=1e-15)
    wide = [[5, 2, 1], [1, 3, 6]]
    print("Fisher seed", FISHER_SEED)
    ref = stats.fisher_exact(wide, method=stats.MonteCarloMethod(
        n_resamples=nominal.FISHER_RESAMPLES, rng=np.random.default_rng(FISHER_SEED)))
    first = nominal_test(wide)
    assert first.test == "fisher_exact" and first.p_val == ref.pvalue == nominal_test(wide).p_val


def test_a_table_with_nothing_to_compare_is_undefined_and_bad_counts_are_refused():
    """One column with answers: no test, NaN, a reason; negative or fractional counts refused."""
    r = nominal_test([[3, 0], [4, 0]])
    assert r.test is None and math.isnan(r.p_val) and r.reason and r.n == 7
    for bad in ([[1, -1], [2, 2]], [[1.5, 1], [2, 2]], [1, 2, 3]):
        with pytest.raises(AnalysisInputError):
            nominal_test(bad)
