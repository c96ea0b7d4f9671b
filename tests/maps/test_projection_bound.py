"""The argument bound that lets the cosine of a feature map skip its range check
(:func:`kernelmaps.maps._projection.argument_bound`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelmaps._fastmath import MAX_FAST_ARG
from kernelmaps.maps._projection import argument_bound, cos_features_into, project_into


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), magnitude=st.floats(1e-3, 1e4),
       rows=st.integers(1, 40), d=st.integers(1, 30), D=st.integers(1, 50))
def test_bound_holds_for_the_computed_projection(seed: int, magnitude: float, rows: int,
                                                 d: int, D: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(0.0, magnitude, (rows, d))
    W = rng.normal(0.0, 1.0, (d, D))
    b = rng.uniform(0.0, 2 * np.pi, D)
    # Cauchy–Schwarz bounds the exact projection; the computed one may exceed it by
    # d·ε relative (the cosine keeps a factor 2 of margin for that, not this test).
    slack = 1.0 + 4 * d * np.finfo(np.float64).eps
    assert np.abs(X @ W + b).max() <= argument_bound(X, W, b) * slack


def test_bound_is_unknown_for_sparse_rows_and_nonfinite_input() -> None:
    W, b = np.ones((3, 4)), np.zeros(4)
    assert argument_bound(sp.csr_matrix(np.ones((2, 3))), W, b) is None
    assert np.isnan(argument_bound(np.array([[np.nan, 0.0, 1.0]]), W, b))
    assert argument_bound(np.array([[np.inf, 0.0, 1.0]]), W, b) == np.inf


def test_features_beyond_the_fast_range_are_np_cos() -> None:
    # Rows large enough that the bound exceeds the fast range: the checked path runs and
    # the projections beyond it are np.cos's, as without a bound.
    rng = np.random.default_rng(3)
    X = rng.normal(0.0, 1.0, (30, 5))
    X[4] *= 1e7
    W = rng.normal(0.0, 1.0, (5, 64))
    b = rng.uniform(0.0, 2 * np.pi, 64)
    assert argument_bound(X, W, b) > MAX_FAST_ARG
    out = np.empty((30, 64))
    cos_features_into(project_into, X, W, b, 0.25, out)
    expected = 0.25 * np.cos(X @ W + b)
    np.testing.assert_allclose(out, expected, rtol=0, atol=(4e-16 + 2.0**-53) * 0.25
                               + 0.25 * np.abs(X @ W + b).max() * 5 * 2.0**-53)
