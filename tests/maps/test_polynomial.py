"""PolynomialCountSketch: unbiasedness, sparse input with coef0, domain of coef0."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import polynomial_kernel

import kernelmaps as km


@pytest.mark.parametrize(("degree", "coef0"), [(2, 0.0), (3, 1.0)])
def test_unbiased_over_seeds(degree, coef0, rng):
    X = rng.normal(size=(6, 5)) / np.sqrt(5)
    K = polynomial_kernel(X, degree=degree, coef0=coef0, gamma=1.0)
    estimates = [
        (lambda Z: Z @ Z.T)(km.PolynomialCountSketch(degree=degree, coef0=coef0,
                                                      n_components=64, random_state=s)
                            .fit_transform(X))
        for s in range(400)
    ]
    mean = np.mean(estimates, axis=0)
    stderr = np.std(estimates, axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(mean - K) < 5 * stderr + 1e-12)


def test_sparse_matches_dense_with_coef0(rng):
    X = rng.uniform(size=(25, 9)) * (rng.uniform(size=(25, 9)) < 0.3)
    est = km.PolynomialCountSketch(degree=3, coef0=0.5, n_components=40, random_state=1).fit(X)
    np.testing.assert_allclose(est.transform(sp.csr_array(X)), est.transform(X), atol=1e-12)
    np.testing.assert_allclose(est.transform(sp.csc_matrix(X)), est.transform(X), atol=1e-12)


def test_negative_coef0_is_rejected_not_nan(rng):
    with pytest.raises(ValueError, match="coef0 must be >= 0"):
        km.PolynomialCountSketch(coef0=-0.5).fit(rng.uniform(size=(5, 2)))


def test_degree_one_is_a_count_sketch(rng):
    X = rng.uniform(size=(10, 3))
    est = km.PolynomialCountSketch(degree=1, gamma=4.0, n_components=16, random_state=0).fit(X)
    expected = np.zeros((10, 16))
    for j in range(3):
        expected[:, est.indexHash_[0, j]] += est.bitHash_[0, j] * 2.0 * X[:, j]
    np.testing.assert_allclose(est.transform(X), expected, atol=1e-12)
