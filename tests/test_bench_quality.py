"""The quality benchmark's statistics (benchmarks/bench_quality.py): the default/best ratio's
standard error and the summary of the forms the default's fits took."""

from __future__ import annotations

import numpy as np
from benchmarks.bench_quality import form_counts, ratio_se


def test_ratio_se_of_identical_seeds_is_zero():
    values = [0.004, 0.005, 0.0035, 0.0061]
    ratio, se = ratio_se(values, values)
    assert ratio == 1.0
    assert se < 1e-15


def test_ratio_se_matches_the_spread_of_the_ratio_over_replications():
    # Paired seeds: x = 1.1 y-like errors with correlation 0.5, coefficient of variation 0.2,
    # n = 40 per replication, 4,000 replications. The delta method's bias is of order
    # CV²/n ≈ 1e-3 relative, the estimated SE's mean is low by ≈ 1/(4n) ≈ 0.6 %, and the
    # standard deviation of R over 4,000 replications has a relative standard error of
    # 1/√(2·4000) ≈ 1.1 %; 5 % is over four of those together.
    rng = np.random.default_rng(0)
    n, replications = 40, 4000
    cov = 0.04 * np.array([[1.21, 0.5 * 1.1], [0.5 * 1.1, 1.0]])
    draws = rng.multivariate_normal([1.1, 1.0], cov, size=(replications, n))
    ratios, ses = [], []
    for x, y in draws.transpose(0, 2, 1):
        ratio, se = ratio_se(x, y)
        ratios.append(ratio)
        ses.append(se)
    assert abs(np.mean(ratios) - 1.1) < 0.01
    assert abs(np.mean(ses) / np.std(ratios, ddof=1) - 1.0) < 0.05


def test_ratio_se_counts_the_covariance_of_paired_seeds():
    # Perfectly correlated pairs (x = 1.2 y) have a ratio with no spread at all; an unpaired
    # formula (variances only) would give a standard error of ≈ 1.2·√2·CV/√n > 0.
    y = np.array([0.9, 1.1, 1.0, 1.3, 0.7])
    ratio, se = ratio_se(1.2 * y, y)
    assert abs(ratio - 1.2) < 1e-12
    assert se < 1e-12


def testform_counts_most_taken_first():
    taken = ["principal/cos_sin", "orthogonal/cos_sin", "orthogonal/cos_sin",
             "principal/cos_sin", "orthogonal/cos_sin"]
    assert form_counts(taken) == "orthogonal×3, principal×2 (cos_sin)"
