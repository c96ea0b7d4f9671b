"""Kernel-error intervals fit a positive quantity: log scale, never below zero."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from kernelmaps.evaluate.error import _t_interval


def test_issue_case_few_seeds_spread_errors_stay_positive():
    # Three seeds with spread errors: the plain t-interval went below zero (issue 12).
    errors = np.array([0.0001, 0.0005, 0.0061])
    plain_low = errors.mean() - stats.t.ppf(0.975, 2) * errors.std(ddof=1) / np.sqrt(3)
    assert plain_low < 0
    mean, low, high = _t_interval(errors, 0.95)
    assert mean == np.mean(errors)
    assert 0 < low < errors.min() and high > errors.max()
    logs = np.log(errors)
    half = stats.t.ppf(0.975, 2) * logs.std(ddof=1) / np.sqrt(3)
    np.testing.assert_allclose([low, high], np.exp([logs.mean() - half, logs.mean() + half]))
    # Symmetric on a log axis around the geometric mean.
    assert np.isclose(np.log(high) - np.log(stats.gmean(errors)),
                      np.log(stats.gmean(errors)) - np.log(low))


def test_collapses_without_spread_and_handles_exact_zero():
    assert _t_interval([0.3, 0.3, 0.3], 0.95) == (0.3, 0.3, 0.3)
    mean, low, high = _t_interval([0.0, 1e-3, 2e-3], 0.95)
    assert low == 0 and mean < high < 1e-2 and mean == 1e-3


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=1e-12, max_value=1e3, allow_nan=False), min_size=2,
                max_size=12),
       st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_interval_never_negative_and_ordered(values, confidence):
    _, low, high = _t_interval(values, confidence)
    assert low >= 0
    assert low <= high
    assert low <= stats.gmean(values) * (1 + 1e-9) and stats.gmean(values) <= high * (1 + 1e-9)
