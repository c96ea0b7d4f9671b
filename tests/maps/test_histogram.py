"""Additive and skewed chi² maps: approximation quality, domains, sparse paths."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.kernel_approximation import AdditiveChi2Sampler

import kernelmaps as km

# Every test on both cosines: NumPy's passes and the compiled kernel (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("jit_path")


def additive_chi2(X, Y):
    X_, Y_ = X[:, None, :], Y[None, :, :]
    with np.errstate(invalid="ignore"):
        terms = np.where(X_ + Y_ > 0, 2 * X_ * Y_ / (X_ + Y_), 0.0)
    return terms.sum(axis=2)


def skewed_chi2(X, Y, c):
    Xc, Yc = (X + c)[:, None, :], (Y + c)[None, :, :]
    return np.prod(2 * np.sqrt(Xc * Yc) / (Xc + Yc), axis=2)


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_additive_chi2_approximates_the_kernel(steps, rng):
    X = rng.dirichlet(np.ones(10), size=40)
    Y = rng.dirichlet(np.ones(10), size=30)
    Z_x = km.AdditiveChi2Sampler(sample_steps=steps).fit_transform(X)
    Z_y = km.AdditiveChi2Sampler(sample_steps=steps).fit_transform(Y)
    error = np.abs(Z_x @ Z_y.T - additive_chi2(X, Y)).max()
    # More sampling steps, better approximation (measured: 0.18, 0.089, 0.042).
    assert error < {1: 0.22, 2: 0.11, 3: 0.055}[steps]


# Dense blocks with at most 75 % positive values are mapped through their positive values
# only (as CSR data is); denser ones element by element: the same arithmetic either way.
@pytest.mark.parametrize("density", [0.4, 0.9])
def test_additive_chi2_dense_and_sparse_bit_identical(density, rng):
    X = rng.uniform(size=(50, 8)) * (rng.uniform(size=(50, 8)) < density)
    dense = km.AdditiveChi2Sampler(sample_steps=3).fit_transform(X)
    sparse = km.AdditiveChi2Sampler(sample_steps=3).fit_transform(sp.csr_array(X))
    np.testing.assert_array_equal(dense, sparse.toarray())
    # Stored-entry count: every step keeps the input's sparsity pattern.
    assert sparse.nnz <= 5 * np.count_nonzero(X)


def test_additive_chi2_on_digits_equals_sklearn():
    # Real, unscaled histograms with 49 % zeros (the positive-values-only path).
    X = load_digits().data
    ours = km.AdditiveChi2Sampler().fit_transform(X)
    theirs = AdditiveChi2Sampler().fit_transform(X)
    # The same formulas but the trigonometry: kernelmaps' cos is within 4e-16 of np.cos, and
    # its sin is cos(a − π/2), whose argument rounds by ≤ 3.3e-16 more (|a| ≤ L·log 16 < 1.4);
    # times the factor sqrt(2xL/cosh(πL)) ≤ 2.6 for x ≤ 16, L = 0.5.
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=(4e-16 + 3.3e-16) * 2.6)


def test_additive_chi2_zero_rows_give_zero_features():
    Z = km.AdditiveChi2Sampler().fit_transform(np.zeros((3, 4)))
    np.testing.assert_array_equal(Z, 0.0)


@pytest.mark.parametrize("make", [np.asarray, sp.csr_matrix])
def test_additive_chi2_negative_values_rejected(make):
    X = np.array([[0.5, -0.1], [0.2, 0.3]])
    with pytest.raises(ValueError, match="Negative values in data passed to X in AdditiveChi2"):
        km.AdditiveChi2Sampler().fit(make(X))
    with pytest.raises(ValueError, match="non-negative"):
        km.AdditiveChi2Sampler().transform(make(X))


def test_skewed_chi2_is_unbiased_over_seeds(rng):
    c = 0.5
    X = rng.dirichlet(np.ones(5), size=30)
    Y = rng.dirichlet(np.ones(5), size=20)
    K = skewed_chi2(X, Y, c)
    estimates = []
    for seed in range(20):
        m = km.SkewedChi2Sampler(skewedness=c, n_components=5000, random_state=seed).fit(X)
        estimates.append(m.transform(X) @ m.transform(Y).T)
    # One seed is off by up to ~0.016 (heavy-tailed sech frequencies); the mean converges.
    assert np.abs(np.mean(estimates, axis=0) - K).mean() < 0.007
    assert np.abs(estimates[0] - K).max() < 0.05


def test_skewed_chi2_values_at_or_below_minus_c_rejected():
    m = km.SkewedChi2Sampler(skewedness=0.1, random_state=0).fit(np.ones((2, 2)))
    with pytest.raises(ValueError, match="smaller than -skewedness"):
        m.transform(np.array([[-0.1, 0.5]]))
    m.transform(np.array([[-0.0999, 0.5]]))  # just inside the domain is fine


def test_skewed_chi2_sparse_needs_zero_in_domain(rng):
    X = sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
    m = km.SkewedChi2Sampler(skewedness=-0.5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="implicit zeros"):
        m.transform(X)


def test_skewed_chi2_sparse_float32_matches_dense(rng):
    X = (rng.uniform(size=(40, 6)) * (rng.uniform(size=(40, 6)) < 0.3)).astype(np.float32)
    m = km.SkewedChi2Sampler(skewedness=0.7, n_components=50, random_state=0).fit(X)
    Z_sparse = m.transform(sp.csr_matrix(X))
    assert Z_sparse.dtype == np.float32
    np.testing.assert_allclose(Z_sparse, m.transform(X), atol=1e-5)


@pytest.mark.parametrize("make", [np.asarray, sp.csr_matrix, sp.csr_array])
def test_additive_chi2_float32_stays_float32(make, rng):
    X = (rng.uniform(size=(20, 5)) * (rng.uniform(size=(20, 5)) < 0.5)).astype(np.float32)
    Z = km.AdditiveChi2Sampler(sample_steps=3).fit_transform(make(X))
    assert Z.dtype == np.float32
    Z64 = km.AdditiveChi2Sampler(sample_steps=3).fit_transform(X.astype(np.float64))
    dense = Z.toarray() if sp.issparse(Z) else Z
    np.testing.assert_allclose(dense, Z64, rtol=1e-5, atol=1e-6)


def test_additive_chi2_sums_duplicates_without_touching_the_input():
    # (0, 1) stored twice: the matrix holds 0.5 there.
    X = sp.csr_matrix((np.array([0.2, 0.3, 0.4]), np.array([1, 1, 0]), np.array([0, 2, 3])),
                      shape=(2, 2))
    data_before = X.data.copy()
    Z = km.AdditiveChi2Sampler().fit_transform(X)
    np.testing.assert_allclose(Z.toarray(),
                               km.AdditiveChi2Sampler().fit_transform(X.toarray()))
    np.testing.assert_array_equal(X.data, data_before)
