"""Property-based tests (hypothesis): determinism, symmetry, PSD, exactness, unbiasedness."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics.pairwise import rbf_kernel

import kernelmaps as km

finite = st.floats(min_value=-10, max_value=10, allow_nan=False, allow_infinity=False)
non_negative = st.floats(min_value=0, max_value=10, allow_nan=False, allow_infinity=False)


def data(elements=finite, max_rows=12, max_cols=5):
    shape = st.tuples(st.integers(2, max_rows), st.integers(1, max_cols))
    return shape.flatmap(lambda s: arrays(np.float64, s, elements=elements))


@settings(max_examples=40, deadline=None)
@given(X=data(), seed=st.integers(0, 2**31 - 1), D=st.integers(1, 64))
def test_rbf_sampler_deterministic_and_bounded(X, seed, D):
    a = km.RBFSampler(n_components=D, random_state=seed).fit_transform(X)
    b = km.RBFSampler(n_components=D, random_state=seed).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    assert np.all(np.abs(a) <= np.sqrt(2.0 / D) + 1e-12)
    # ... and the seed decides it: another seed draws other frequencies and offsets.
    other = km.RBFSampler(n_components=D, random_state=seed + 1).fit(X)
    first = km.RBFSampler(n_components=D, random_state=seed).fit(X)
    assert not np.array_equal(other.random_offset_, first.random_offset_)


@settings(max_examples=40, deadline=None)
@given(X=data(), seed=st.integers(0, 1000), gamma=st.floats(1e-3, 10))
def test_nystroem_gram_is_symmetric_psd_and_exact_on_landmarks(X, seed, gamma):
    ny = km.Nystroem(gamma=gamma, n_components=X.shape[0], random_state=seed).fit(X)
    Z = ny.transform(X)
    G = Z @ Z.T
    np.testing.assert_allclose(G, G.T, atol=1e-12)
    assert np.linalg.eigvalsh(G).min() > -1e-8
    # All points are landmarks: the Nyström approximation is exact (up to conditioning).
    np.testing.assert_allclose(G, rbf_kernel(X, gamma=gamma), atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(X=data(non_negative), steps=st.integers(1, 3))
def test_additive_chi2_features_finite_and_zero_preserving(X, steps):
    Z = km.AdditiveChi2Sampler(sample_steps=steps).fit_transform(X)
    assert np.isfinite(Z).all()
    zero_rows = ~X.any(axis=1)
    assert not Z[zero_rows].any()


@settings(max_examples=25, deadline=None)
@given(X=data(max_rows=4, max_cols=3), degree=st.integers(1, 3))
def test_count_sketch_unbiased_over_seeds(X, degree):
    X = X / (1 + np.linalg.norm(X, axis=1, keepdims=True))
    K = (X @ X.T + 1.0) ** degree
    estimates = np.array([
        (lambda Z: Z @ Z.T)(km.PolynomialCountSketch(degree=degree, coef0=1.0, n_components=32,
                                                      random_state=s).fit_transform(X))
        for s in range(300)
    ])
    stderr = estimates.std(axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - K) <= 5 * stderr + 1e-9)
