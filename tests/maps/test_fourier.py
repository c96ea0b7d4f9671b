"""RBFSampler: approximation quality and limits of gamma."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import kernelmaps as km


@pytest.mark.parametrize("D", [200, 3200])
def test_error_shrinks_like_one_over_sqrt_D(D, rng):
    X = rng.normal(size=(40, 3))
    K = rbf_kernel(X, gamma=0.5)
    errors = []
    for seed in range(5):
        Z = km.RBFSampler(gamma=0.5, n_components=D, random_state=seed).fit_transform(X)
        errors.append(np.sqrt(np.mean((Z @ Z.T - K) ** 2)))
    # Monte Carlo error ~ c / sqrt(D) with c ≈ 0.7 for these kernel values.
    assert np.mean(errors) < 1.2 / np.sqrt(D)


def test_gamma_zero_gives_constant_kernel(rng):
    X = rng.normal(size=(10, 3))
    Z = km.RBFSampler(gamma=0.0, n_components=5000, random_state=0).fit_transform(X)
    K = Z @ Z.T
    np.testing.assert_allclose(K, K[0, 0], atol=1e-12)  # all entries equal (cos b_j terms)


def test_overflow_is_an_error_not_nan():
    m = km.RBFSampler(random_state=0, n_components=4).fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"non-finite value.*Rescale"):
        m.transform(np.array([[1e308, 1e308]]))


def test_gamma_scale_constant_data_falls_back_to_one():
    m = km.RBFSampler(gamma="scale", random_state=0).fit(np.ones((4, 3)))
    assert m._gamma == 1.0
