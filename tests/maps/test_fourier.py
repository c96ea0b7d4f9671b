"""RBFSampler: approximation quality and limits of gamma."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
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


@pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                    reason="Numba (the jit extra) is not installed")
@pytest.mark.parametrize("n_threads", [1, 2])
def test_compiled_cosine_leaves_the_maps_and_ridge_unchanged_bitwise(n_threads):
    # set_config(jit=True) changes the speed of the float64 cosine, never a number: the
    # features of every cosine map and FeatureRidge's coefficients are equal, not close.
    from kernelmaps.models import FeatureRidge

    X, y = load_diabetes(return_X_y=True)  # unscaled
    maps = [km.RBFSampler(gamma=0.5, n_components=300, random_state=0),
            km.RandomFourierFeatures(gamma=0.5, n_components=256, structure="orthogonal",
                                     random_state=0),
            km.RandomFourierFeatures(gamma=0.5, n_components=256, output="cos_sin",
                                     random_state=0),
            km.SkewedChi2Sampler(skewedness=1.0, n_components=200, random_state=0)]
    Xp = np.abs(X)  # SkewedChi2 needs X > -c
    compiled = km._fastmath._compiled_cos_rows.cache_info
    calls = compiled().hits + compiled().misses
    with km.config_context(n_threads=n_threads, block_bytes=16384):  # several blocks
        for feature_map in maps:
            with km.config_context(jit=False):
                plain = feature_map.fit(Xp).transform(Xp)
            with km.config_context(jit=True):
                np.testing.assert_array_equal(feature_map.transform(Xp), plain)
        ridge = FeatureRidge(km.RBFSampler(gamma=0.5, n_components=300, random_state=0))
        with km.config_context(jit=False):
            coef = ridge.fit(X, y).coef_
        with km.config_context(jit=True):
            np.testing.assert_array_equal(ridge.fit(X, y).coef_, coef)
    # every map's blocks and the fit's went through the compiled kernel, on the threads too
    assert compiled().hits + compiled().misses >= calls + 2 * len(maps)
