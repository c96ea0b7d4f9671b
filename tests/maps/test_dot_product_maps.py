"""RandomMaclaurin and TensorSRHT: unbiased random features of dot-product kernels, with the
Monte Carlo rate; their fitted parameters; bad parameters. (The estimator contract is in
tests/test_contract.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import comb

from kernelmaps.evaluate import relative_error
from kernelmaps.kernels import get_kernel
from kernelmaps.maps.dot_product import RandomMaclaurin, TensorSRHT
from tests._helpers import gram, relative_difference

_rng = np.random.RandomState(0)
# Rows of norm < 1: the variance of both maps grows with ‖x‖^(2·degree).
X = _rng.normal(size=(20, 6))
X *= 0.9 / np.linalg.norm(X, axis=1, keepdims=True)

POLY = [dict(gamma=1.0, degree=2, coef0=0.0), dict(gamma=0.5, degree=3, coef0=1.0),
        dict(gamma=2.0, degree=1, coef0=0.5), dict(gamma=1.0, degree=4, coef0=1.0)]
CASES = (
    [pytest.param(RandomMaclaurin, "poly", p, id=f"maclaurin-poly-{i}") for i, p in
     enumerate(POLY)]
    + [pytest.param(RandomMaclaurin, "exponential", dict(gamma=g), id=f"maclaurin-exp-{g}")
       for g in (0.5, 1.5)]
    + [pytest.param(TensorSRHT, "poly", p, id=f"tensorsrht-{i}") for i, p in enumerate(POLY)]
)


def exact(kernel: str, params: dict) -> np.ndarray:
    if kernel == "exponential":  # exp(γ⟨x, y⟩), the Maclaurin series of kernels.py's poly
        return np.exp(params["gamma"] * X @ X.T)
    return get_kernel("poly", **params)(X)


def build(cls, kernel, params, D, seed):
    if cls is RandomMaclaurin:
        return RandomMaclaurin(kernel, n_components=D, random_state=seed, **params)
    return TensorSRHT(n_components=D, random_state=seed, **params)


@pytest.mark.parametrize(("cls", "kernel", "params"), CASES)
def test_error_shrinks_like_one_over_sqrt_D(cls, kernel, params):
    K = exact(kernel, params)
    errors = {D: np.mean([relative_error(K, build(cls, kernel, params, D, s).fit_transform(X))
                          for s in range(6)])
              for D in (100, 1600)}
    if cls is TensorSRHT and params["degree"] == 1:
        # Degree 1 with D a multiple of d_pad samples every coordinate equally often: exact.
        assert errors[1600] < 1e-12
        return
    assert errors[1600] < 8.0 / np.sqrt(1600)
    assert 2.4 < errors[100] / errors[1600] < 7.0


@pytest.mark.parametrize(("cls", "kernel", "params"), CASES)
def test_mean_over_seeds_is_the_exact_kernel(cls, kernel, params):
    K = exact(kernel, params)
    S, D = 64, 200
    mean = np.mean([gram(build(cls, kernel, params, D, 100 + s).fit_transform(X))
                    for s in range(S)], axis=0)
    assert relative_difference(mean, K) < 8.0 / np.sqrt(S * D)


# ---------------------------------------------------------------------------- Maclaurin
def test_maclaurin_orders_follow_the_kernel_support():
    only_top = RandomMaclaurin(degree=3, coef0=0.0, n_components=200, random_state=0).fit(X)
    assert set(only_top.orders_) == {3}  # (γt)^3 has one non-zero coefficient
    full = RandomMaclaurin(degree=3, coef0=1.0, n_components=2000, random_state=0).fit(X)
    assert set(full.orders_) == {0, 1, 2, 3}
    assert np.all(np.diff(full.orders_) >= 0)
    assert full.random_weights_.shape == (X.shape[1], full.orders_.sum())
    assert set(np.unique(full.random_weights_)) == {-1.0, 1.0}
    # q_n ∝ 2^-n on {0, 1, 2, 3}: 8/15, 4/15, 2/15, 1/15.
    frequencies = np.bincount(full.orders_) / 2000
    np.testing.assert_allclose(frequencies, np.array([8, 4, 2, 1]) / 15, atol=0.03)


def test_maclaurin_scales_are_coefficients_over_probabilities():
    gamma, degree, coef0, D = 0.5, 3, 2.0, 400
    rm = RandomMaclaurin(gamma=gamma, degree=degree, coef0=coef0, n_components=D,
                         random_state=0).fit(X)
    n = rm.orders_
    a = comb(degree, n) * gamma ** n * coef0 ** (degree - n)
    q = 2.0 ** -n / np.sum(2.0 ** -np.arange(degree + 1))
    np.testing.assert_allclose(rm.feature_scale_, np.sqrt(a / (q * D)), rtol=1e-12)


def test_maclaurin_exponential_orders_are_geometric():
    rm = RandomMaclaurin("exponential", n_components=4000, order_decay=3.0,
                         random_state=0).fit(X)
    # P(N = n) = (2/3)(1/3)^n: mean 1/2.
    assert abs(rm.orders_.mean() - 0.5) < 0.05
    assert rm.orders_.min() == 0


def test_maclaurin_features_are_products_of_rademacher_projections():
    rm = RandomMaclaurin(degree=2, coef0=1.0, n_components=30, random_state=0).fit(X)
    P = X @ rm.random_weights_
    expected, column = [], 0
    for order in rm.orders_:
        expected.append(np.prod(P[:, column:column + order], axis=1))
        column += order
    np.testing.assert_allclose(rm.transform(X), np.array(expected).T * rm.feature_scale_,
                               rtol=1e-12)


# ---------------------------------------------------------------------------- TensorSRHT
def test_tensorsrht_features_are_products_of_sampled_hadamard_coordinates():
    from scipy.linalg import hadamard

    ts = TensorSRHT(gamma=0.5, degree=3, coef0=1.0, n_components=40, random_state=0).fit(X)
    d_pad = 8  # 6 features + the √coef0 coordinate, padded
    assert ts.signs_.shape == (3, d_pad) and ts.indices_.shape == (3, 40)
    augmented = np.hstack([np.sqrt(0.5) * X, np.ones((len(X), 1)), np.zeros((len(X), 1))])
    expected = np.ones((len(X), 40)) / np.sqrt(40)
    for j in range(3):
        expected *= ((augmented * ts.signs_[j]) @ hadamard(d_pad))[:, ts.indices_[j]]
    np.testing.assert_allclose(ts.transform(X), expected, rtol=1e-10)


def test_tensorsrht_indices_are_balanced_runs():
    ts = TensorSRHT(degree=2, n_components=20, random_state=0).fit(X)  # d_pad = 8
    for row in ts.indices_:
        assert sorted(row[:8]) == list(range(8)) and sorted(row[8:16]) == list(range(8))


# ---------------------------------------------------------------------------- both
@pytest.mark.parametrize("cls", [RandomMaclaurin, TensorSRHT])
def test_negative_coef0_names_the_parameter(cls):
    with pytest.raises(ValueError, match=rf"'coef0' parameter of {cls.__name__}.*\[0(\.0)?, inf\)"):
        cls(coef0=-1.0).fit(X)


def test_maclaurin_order_decay_must_exceed_one():
    with pytest.raises(ValueError, match=r"'order_decay' parameter of RandomMaclaurin"):
        RandomMaclaurin(order_decay=1.0).fit(X)


def test_maclaurin_unknown_kernel_names_the_parameter():
    with pytest.raises(ValueError, match=r"'kernel' parameter of RandomMaclaurin"):
        RandomMaclaurin("rbf").fit(X)
