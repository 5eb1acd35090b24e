"""Each statistic against values computed independently (by hand, stdlib only)."""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from analysis import (
    AnalysisInputError,
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

PHI = NormalDist()


def pooled_z(k1, n1, k2, n2):
    p = (k1 + k2) / (n1 + n2)
    return (k1 / n1 - k2 / n2) / math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))


# ---------------------------------------------------------------- z-test
def test_ztest_matches_hand_pooled_formula():
    """proportions_ztest result equals the hand-computed pooled z and its upper-tail p."""
    r = two_proportion_ztest(15, 20, 6, 20)
    z = pooled_z(15, 20, 6, 20)
    assert r.z_val == pytest.approx(z, rel=1e-12)
    assert r.z_val == pytest.approx(2.8496, abs=1e-4)
    assert r.p_val == pytest.approx(1 - PHI.cdf(z), rel=1e-9)
    assert r.alternative == "larger"


def test_ztest_unequal_groups_matches_hand_formula():
    """The pooled z is right for unequal group sizes too (pooling weights by n)."""
    r = two_proportion_ztest(9, 12, 4, 17)
    assert r.z_val == pytest.approx(pooled_z(9, 12, 4, 17), rel=1e-12)


def test_ztest_swapping_alternative_changes_p_as_expected():
    """two-sided p = 2 x one-sided, 'smaller' p = 1 - 'larger' p, and swapping groups flips the sign."""
    larger = two_proportion_ztest(15, 20, 6, 20, alternative="larger")
    smaller = two_proportion_ztest(15, 20, 6, 20, alternative="smaller")
    two = two_proportion_ztest(15, 20, 6, 20, alternative="two-sided")
    assert two.p_val == pytest.approx(2 * larger.p_val, rel=1e-9)
    assert smaller.p_val == pytest.approx(1 - larger.p_val, rel=1e-9)
    assert larger.p_val < 0.01
    assert smaller.p_val > 0.99
    swapped = two_proportion_ztest(6, 20, 15, 20, alternative="larger")
    assert swapped.z_val == pytest.approx(-larger.z_val)
    assert swapped.p_val == pytest.approx(smaller.p_val)


@pytest.mark.parametrize("k", [0, 10])
def test_ztest_undefined_when_pooled_rate_is_0_or_1(k):
    """All-0 or all-1 outcomes give a NaN z and p instead of a warning or an exception."""
    r = two_proportion_ztest(k, 10, k, 10)
    assert math.isnan(r.z_val) and math.isnan(r.p_val)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((11, 10, 3, 10), {}, "k must be between 0 and n=10, got 11"),
        ((1, 0, 3, 10), {}, "n must be at least 1"),
        ((1.5, 10, 3, 10), {}, "k must be a whole number"),
        ((1, 10, 3, 10), {"alternative": "greater"}, "alternative must be one of larger, smaller, two-sided"),
    ],
)
def test_ztest_rejects_bad_arguments(args, kwargs, message):
    """Invalid counts or alternatives raise AnalysisInputError with a specific message."""
    with pytest.raises(AnalysisInputError, match=message):
        two_proportion_ztest(*args, **kwargs)


# ---------------------------------------------------------------- Wilson, h, Fisher
@pytest.mark.parametrize(("k", "n"), [(15, 20), (0, 7), (7, 7), (1, 3)])
def test_wilson_ci_matches_hand_formula(k, n):
    """The Wilson interval equals the closed-form score interval."""
    z = PHI.inv_cdf(0.975)
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    lo, hi = wilson_ci(k, n)
    assert lo == pytest.approx(max(0.0, centre - half), abs=1e-12)
    assert hi == pytest.approx(min(1.0, centre + half), abs=1e-12)


def test_wilson_ci_alpha_widens_interval():
    """A 99% interval (alpha=0.01) contains the 95% one."""
    lo95, hi95 = wilson_ci(15, 20)
    lo99, hi99 = wilson_ci(15, 20, alpha=0.01)
    assert lo99 < lo95 < 0.75 < hi95 < hi99


def test_cohens_h_matches_arcsine_formula():
    """Cohen's h equals 2 asin sqrt(p1) - 2 asin sqrt(p2) and is positive when the pattern rate is higher."""
    h = cohens_h(0.75, 0.30)
    assert h == pytest.approx(2 * math.asin(math.sqrt(0.75)) - 2 * math.asin(math.sqrt(0.30)), rel=1e-12)
    assert cohens_h(0.30, 0.75) == pytest.approx(-h)
    with pytest.raises(AnalysisInputError, match=r"rate_pattern must be in \[0, 1\]"):
        cohens_h(1.2, 0.3)


def hypergeom_p(k1, n1, k2, n2, tail):
    """Fisher p by summing hypergeometric probabilities with math.comb."""
    total, successes = n1 + n2, k1 + k2
    lo, hi = max(0, successes - n2), min(n1, successes)

    def prob(a):
        return math.comb(n1, a) * math.comb(n2, successes - a) / math.comb(total, successes)

    if tail == "greater":
        return sum(prob(a) for a in range(k1, hi + 1))
    if tail == "less":
        return sum(prob(a) for a in range(lo, k1 + 1))
    observed = prob(k1)
    return sum(prob(a) for a in range(lo, hi + 1) if prob(a) <= observed * (1 + 1e-7))


@pytest.mark.parametrize(("alternative", "tail"), [("larger", "greater"), ("smaller", "less"),
                                                   ("two-sided", "two-sided")])
def test_fisher_matches_hypergeometric_sum(alternative, tail):
    """Fisher's p equals the hand-summed hypergeometric tail for each alternative."""
    r = fisher_exact_test(15, 20, 6, 20, alternative=alternative)
    assert r.p_val == pytest.approx(hypergeom_p(15, 20, 6, 20, tail), rel=1e-9)
    assert r.odds_ratio == pytest.approx((15 * 14) / (5 * 6))


def test_compare_proportions_bundles_consistent_values():
    """compare_proportions reports rates, CIs, z, h and Fisher p that match the single functions."""
    c = compare_proportions(15, 20, 6, 20)
    assert (c.rate_pattern, c.rate_no_pattern) == (0.75, 0.30)
    assert c.ci_pattern == wilson_ci(15, 20) and c.ci_no_pattern == wilson_ci(6, 20)
    assert c.z_val == pytest.approx(pooled_z(15, 20, 6, 20))
    assert c.cohens_h == pytest.approx(cohens_h(0.75, 0.30))
    assert c.fisher_p == pytest.approx(hypergeom_p(15, 20, 6, 20, "greater"))


# ---------------------------------------------------------------- Mann-Whitney
PATTERN = [5, 4, 4, 3, 5, 4]
NO_PATTERN = [2, 3, 3, 4, 1]


def hand_u(x, y):
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)


def hand_mwu_normal_p(x, y, alternative):
    """Normal approximation with tie correction and continuity correction, by hand."""
    n1, n2 = len(x), len(y)
    n = n1 + n2
    u = hand_u(x, y)
    counts = pd.Series(list(x) + list(y)).value_counts()
    ties = sum(t**3 - t for t in counts)
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    mu = n1 * n2 / 2
    if alternative == "greater":
        return 1 - PHI.cdf((u - mu - 0.5) / sigma)
    return PHI.cdf((u - mu + 0.5) / sigma)


def test_mann_whitney_u_and_rbc_match_hand_count():
    """U counts pattern-wins (ties one half) over all pairs; rbc = 2U/(n1 n2) - 1."""
    r = mann_whitney(PATTERN, NO_PATTERN, alternative="greater")
    u = hand_u(PATTERN, NO_PATTERN)
    assert u == 26.5
    assert r.u_val == u
    assert r.rbc == pytest.approx(2 * u / 30 - 1)
    assert (r.n_pattern, r.n_no_pattern) == (6, 5)


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_mann_whitney_p_matches_hand_normal_approximation(alternative):
    """With ties, the p-value equals the tie- and continuity-corrected normal approximation."""
    r = mann_whitney(PATTERN, NO_PATTERN, alternative=alternative)
    assert r.p_val == pytest.approx(hand_mwu_normal_p(PATTERN, NO_PATTERN, alternative), rel=1e-9)
    assert r.alternative == alternative


def test_mann_whitney_direction_is_pattern_versus_no_pattern():
    """x is the pattern sample: 'greater' is small when pattern answers are higher, and swapping flips rbc."""
    greater = mann_whitney(PATTERN, NO_PATTERN, alternative="greater")
    less = mann_whitney(PATTERN, NO_PATTERN, alternative="less")
    assert greater.p_val < 0.05
    assert less.p_val > 0.95
    swapped = mann_whitney(NO_PATTERN, PATTERN, alternative="less")
    assert swapped.rbc == pytest.approx(-greater.rbc)
    assert swapped.p_val == pytest.approx(greater.p_val)


def test_mann_whitney_exact_p_without_ties():
    """Small samples without ties use the exact null: complete separation of 3 vs 3 gives p = 1/20."""
    r = mann_whitney([6, 7, 8], [1, 2, 3], alternative="greater")
    assert r.u_val == 9.0 and r.rbc == 1.0
    assert r.p_val == pytest.approx(1 / math.comb(6, 3))


@pytest.mark.parametrize(
    ("x", "y", "kwargs", "message"),
    [
        ([], [1, 2], {"alternative": "greater"}, "pattern responses is empty"),
        ([1, np.nan], [1, 2], {"alternative": "greater"}, "pattern responses contains missing values"),
        ([1, 2], [1, 2], {"alternative": "larger"}, "alternative must be one of greater, less, two-sided"),
    ],
)
def test_mann_whitney_rejects_bad_input(x, y, kwargs, message):
    """Empty or missing samples and statsmodels-style alternatives are refused with a message."""
    with pytest.raises(AnalysisInputError, match=message):
        mann_whitney(x, y, **kwargs)


# ---------------------------------------------------------------- Wilcoxon
def exact_signed_rank(diffs, alternative):
    """W+ and its exact p by enumerating all 2^n sign patterns of the (average) ranks."""
    ranks = pd.Series(np.abs(diffs)).rank().to_numpy()
    w_plus = ranks[np.asarray(diffs) > 0].sum()
    null = [sum(r for r, s in zip(ranks, signs) if s) for signs in itertools.product([0, 1], repeat=len(ranks))]
    if alternative == "greater":
        p = sum(w >= w_plus for w in null) / len(null)
    else:
        p = sum(w <= w_plus for w in null) / len(null)
    return w_plus, p


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_wilcoxon_matches_exact_enumeration(alternative):
    """W (positive rank sum) and p match a brute-force enumeration of sign flips, with tied |d| and a zero."""
    pattern = [5, 4, 5, 2, 5, 3, 4]
    no_pattern = [1, 1, 2, 3, 4, 1, 4]  # differences 4, 3, 3, -1, 1, 2 and one zero (dropped)
    diffs = [a - b for a, b in zip(pattern, no_pattern) if a != b]
    w_plus, p = exact_signed_rank(diffs, alternative)
    r = wilcoxon_paired(pattern, no_pattern, alternative=alternative)
    assert r.n_pairs == 7 and r.n_nonzero == 6
    assert w_plus == 19.5
    assert r.w_val == w_plus
    assert r.p_val == pytest.approx(p)


def test_wilcoxon_exact_without_ties():
    """Five distinct positive differences: W+ = 15 and p = 1/32 for 'greater', 1 for 'less'."""
    r = wilcoxon_paired([2, 3, 4, 5, 6], [1, 1, 1, 1, 1], alternative="greater")
    assert (r.w_val, r.p_val) == (15.0, pytest.approx(1 / 32))
    assert wilcoxon_paired([2, 3, 4, 5, 6], [1, 1, 1, 1, 1], alternative="less").p_val == pytest.approx(1.0)


def test_wilcoxon_all_ties_is_undefined_and_lengths_must_match():
    """All-zero differences give NaN (not scipy's p = 1); unequal pair lengths are refused."""
    r = wilcoxon_paired([3, 4], [3, 4], alternative="greater")
    assert math.isnan(r.w_val) and math.isnan(r.p_val) and r.n_nonzero == 0
    with pytest.raises(AnalysisInputError, match="paired samples differ in length: 2 pattern vs 3"):
        wilcoxon_paired([1, 2], [1, 2, 3], alternative="greater")


# ---------------------------------------------------------------- Holm and planning
def test_holm_matches_hand_step_down():
    """Holm: sorted p times (m - i + 1), made monotone; NaN entries stay out of the family."""
    r = holm_correction([0.01, 0.04, 0.03])
    assert r.p_adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert r.reject.tolist() == [True, False, False]
    r = holm_correction([0.01, None, 0.04])
    assert r.p_adjusted[0] == pytest.approx(0.02) and math.isnan(r.p_adjusted[1])
    assert r.p_adjusted[2] == pytest.approx(0.04)
    with pytest.raises(AnalysisInputError, match=r"p-values must be in \[0, 1\]"):
        holm_correction([0.2, 1.5])


def test_sample_size_matches_closed_form():
    """One-sided n per group = ceil(2 ((z_{1-a} + z_power) / h)^2) with h from the arcsine transform."""
    h = 2 * math.asin(math.sqrt(0.6)) - 2 * math.asin(math.sqrt(0.3))
    expected = math.ceil(2 * ((PHI.inv_cdf(0.95) + PHI.inv_cdf(0.8)) / h) ** 2)
    assert sample_size_per_condition(0.6, 0.3) == expected == 33
    # two-sided needs more participants, close to the formula with alpha/2
    two = sample_size_per_condition(0.6, 0.3, alternative="two-sided")
    assert two == math.ceil(2 * ((PHI.inv_cdf(0.975) + PHI.inv_cdf(0.8)) / h) ** 2)
    assert sample_size_per_condition(0.6, 0.3, power=0.9) > expected


def test_sample_size_rejects_impossible_plans():
    """Equal rates or an alternative pointing the other way raise a clear error."""
    with pytest.raises(AnalysisInputError, match="the two rates are equal"):
        sample_size_per_condition(0.4, 0.4)
    with pytest.raises(AnalysisInputError, match="alternative 'larger' contradicts the expected rates"):
        sample_size_per_condition(0.2, 0.5)
    with pytest.raises(AnalysisInputError, match="power must be between 0 and 1"):
        sample_size_per_condition(0.6, 0.3, power=1.0)


# ---------------------------------------------------------------- descriptives
def test_time_on_task_in_seconds_matches_hand_values():
    """Mean, median and sample SD are computed per setting x condition and converted from ms to s."""
    df = pd.DataFrame({
        "setting": ["doctor"] * 4 + ["farming"],
        "condition": ["pattern", "pattern", "pattern", "no_pattern", "pattern"],
        "time_on_task_ms": [60_000, 90_000, 150_000, 42_500, 10_000],
    })
    out = time_on_task(df).set_index(["setting", "condition"])
    row = out.loc[("doctor", "pattern")]
    assert row["n"] == 3 and row["mean_s"] == 100.0 and row["median_s"] == 90.0
    assert row["sd_s"] == pytest.approx(math.sqrt(((60 - 100) ** 2 + (90 - 100) ** 2 + (150 - 100) ** 2) / 2))
    assert out.loc[("doctor", "no_pattern"), "mean_s"] == 42.5
    assert math.isnan(out.loc[("farming", "pattern"), "sd_s"])  # n = 1


def test_time_on_task_rejects_negative_times():
    """A negative duration is an input error, not a silent outlier."""
    df = pd.DataFrame({"setting": ["a"], "condition": ["pattern"], "time_on_task_ms": [-1]})
    with pytest.raises(AnalysisInputError, match="time_on_task_ms must hold non-negative numbers"):
        time_on_task(df)


def test_other_differences_share_matches_hand_count():
    """The share is k/n of participants with other_difference = 1 per setting x condition."""
    df = pd.DataFrame({
        "setting": ["farming"] * 5,
        "condition": ["no_pattern"] * 4 + ["pattern"],
        "other_difference": [1, 0, 1, 1, 0],
    })
    out = other_differences(df).set_index("condition")
    assert out.loc["no_pattern", ["n", "k", "share"]].tolist() == [4, 3, 0.75]
    assert out.loc["pattern", "share"] == 0.0
    with pytest.raises(AnalysisInputError, match="other_difference must be 0 or 1"):
        other_differences(df.assign(other_difference=[1, 0, 2, 1, 0]))


def test_docstring_examples_run():
    """The Examples sections of the statistics functions execute and print what they claim."""
    import doctest

    import analysis.pipeline
    import analysis.plan_hash
    from analysis.stats import agreement, descriptive, multicomp, power, proportion, rank

    for module in (proportion, rank, multicomp, power, descriptive, agreement, analysis.pipeline,
                   analysis.plan_hash):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, module.__name__
