"""ArcCosineSampler: unbiased random sign / ReLU / squared-ReLU features of the arc-cosine
kernels of kernels.py, with the Monte Carlo rate; bad parameters. (The estimator contract is
in tests/test_contract.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from kernelmaps.evaluate import relative_error
from kernelmaps.kernels import get_kernel
from kernelmaps.maps.arccos import ArcCosineSampler
from tests._helpers import gram, relative_difference

X = np.random.RandomState(0).normal(size=(20, 5)) * 0.7


@pytest.mark.parametrize("degree", [0, 1, 2])
def test_error_shrinks_like_one_over_sqrt_D(degree):
    K = get_kernel("arccos", degree=degree)(X)
    errors = {
        D: np.mean([relative_error(K, ArcCosineSampler(degree=degree, n_components=D,
                                                       random_state=s).fit_transform(X))
                    for s in range(6)])
        for D in (100, 1600)
    }
    # c/√D with c ≈ 2, 3, 6 for degrees 0, 1, 2 (higher powers, heavier tails).
    assert errors[1600] < {0: 4.0, 1: 5.0, 2: 9.0}[degree] / np.sqrt(1600)
    assert 2.4 < errors[100] / errors[1600] < 7.0


@pytest.mark.parametrize("degree", [0, 1, 2])
def test_mean_over_seeds_is_the_exact_kernel(degree):
    K = get_kernel("arccos", degree=degree)(X)
    S, D = 64, 200
    mean = np.mean([gram(ArcCosineSampler(degree=degree, n_components=D, random_state=100 + s)
                         .fit_transform(X)) for s in range(S)], axis=0)
    assert relative_difference(mean, K) < 5.0 / np.sqrt(S * D)


def test_features_are_the_documented_units():
    sampler = ArcCosineSampler(degree=0, n_components=50, random_state=0).fit(X)
    projection = X @ sampler.random_weights_
    scale = np.sqrt(2.0 / 50)
    np.testing.assert_array_equal(sampler.transform(X), scale * (projection > 0))
    for degree in (1, 2):
        Z = ArcCosineSampler(degree=degree, n_components=50, random_state=0).fit_transform(X)
        np.testing.assert_allclose(Z, scale * np.maximum(projection, 0) ** degree, rtol=1e-12)


@pytest.mark.parametrize("degree", [0, 1, 2])
def test_positively_homogeneous_of_degree_n(degree):
    sampler = ArcCosineSampler(degree=degree, random_state=0).fit(X)
    np.testing.assert_allclose(sampler.transform(3.0 * X), 3.0 ** degree * sampler.transform(X),
                               rtol=1e-12)


def test_kernel_attribute_is_the_approximated_kernel():
    assert ArcCosineSampler(degree=2).fit(X).kernel_ == get_kernel("arccos", degree=2)


@pytest.mark.parametrize("degree", [3, -1, 0.5])
def test_invalid_degree_names_the_parameter(degree):
    with pytest.raises(ValueError, match=r"'degree' parameter of ArcCosineSampler.*0, 1, 2"):
        ArcCosineSampler(degree=degree).fit(X)
