"""kernels.py: values equal sklearn.metrics.pairwise, dtype, sparse, blocks, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

import kernelmaps as km
from kernelmaps.kernels import KERNELS, get_kernel
from tests._rounding import assert_equal_to_rounding

PARAMS = {
    "linear": {},
    "poly": {"gamma": 0.3, "degree": 3, "coef0": 0.5},
    "polynomial": {"degree": 2},
    "rbf": {"gamma": 0.7},
    "laplacian": {"gamma": 0.4},
    "sigmoid": {"gamma": 0.2, "coef0": -0.3},
    "cosine": {},
    "chi2": {"gamma": 0.5},
    "additive_chi2": {},
}
SKLEARN_NAMES = sorted(PARAMS)
EXTRA_PARAMS = {
    "exponential": {"gamma": 0.3},
    "student": {"alpha": 0.5},
    "matern": {"nu": 2.5, "length_scale": 0.8},
    "additive_chi2_psd": {},
    "skewed_chi2": {"skewedness": 0.2},
    "arccos": {"degree": 2},
}
ALL_PARAMS = {**PARAMS, **EXTRA_PARAMS}


def test_every_kernel_has_test_parameters():
    assert set(ALL_PARAMS) == set(KERNELS)


@pytest.mark.parametrize("name", SKLEARN_NAMES)
@pytest.mark.parametrize("sparse", [False, True])
def test_values_equal_sklearn(name, sparse, rng):
    X = rng.uniform(size=(70, 6)) * (rng.uniform(size=(70, 6)) < 0.7)
    Y = rng.uniform(size=(40, 6))
    kernel = get_kernel(name, **PARAMS[name])
    make = sp.csr_matrix if sparse else np.asarray
    expected = pairwise_kernels(X, Y, metric=name, **PARAMS[name])
    np.testing.assert_allclose(kernel(make(X), make(Y)), expected, rtol=1e-10, atol=1e-12)
    expected_sym = pairwise_kernels(X, metric=name, **PARAMS[name])
    np.testing.assert_allclose(kernel(make(X)), expected_sym, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(kernel.diag(make(X)), np.diag(expected_sym), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_float32_preserved_and_sparse_accepted(name, rng):
    X = rng.uniform(size=(20, 4)) * (rng.uniform(size=(20, 4)) < 0.7)
    kernel = get_kernel(name, **ALL_PARAMS[name])
    K64 = kernel(X)
    K32 = kernel(X.astype(np.float32))
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, K64, rtol=1e-4, atol=1e-5 * np.abs(K64).max())
    np.testing.assert_allclose(kernel(sp.csr_matrix(X)), K64, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(kernel.diag(X), np.diag(K64), rtol=1e-10, atol=1e-12)


def test_blocked_evaluation_equals_single_block(rng):
    X = rng.normal(size=(900, 5))
    kernel = get_kernel("rbf", gamma=0.1)
    full = kernel(X)
    with km.config_context(block_bytes=4096):  # forces 128-row blocks
        blocked = kernel(X)
    # Other blocks are other GEMM shapes, whose d=5-term dot products BLAS may sum in another
    # order; the exponent γ(|x|²+|y|²-2x·y) ≤ 0.1·(2·|x|²_max) ≈ 5 then carries a few ulps of
    # its size, and exp passes them on to K ≤ 1: 64 ulps of K's scale bound it with room.
    assert_equal_to_rounding(blocked, full, ulps=64)
    np.testing.assert_array_equal(np.diag(full), 1.0)  # the diagonal is exact by construction


def test_out_is_filled_in_place_with_the_values_of_a_fresh_call(rng):
    from sklearn.metrics.pairwise import rbf_kernel

    from kernelmaps.kernels import resolve_kernel

    X, Y = rng.normal(size=(300, 5)), rng.normal(size=(200, 5))
    kernel = get_kernel("rbf", gamma=0.1)
    out = np.empty((300, 200))
    assert kernel(X, Y, out=out) is out
    # The same rows through the same evaluate_into in the same engine blocks: the same bits.
    np.testing.assert_array_equal(out, kernel(X, Y))
    # A user callable, pairwise (scikit-learn's driver, Y=None) and vectorised.
    X = X[:40]
    for vectorized, function in ((False, lambda a, b: np.exp(-0.1 * np.sum((a - b) ** 2))),
                                 (True, lambda A, B: rbf_kernel(A, B, gamma=0.1))):
        user = resolve_kernel(function, vectorized=vectorized)
        square = np.empty((40, 40))
        assert user(X, out=square) is square
        np.testing.assert_array_equal(square, user(X))
    with pytest.raises(ValueError, match="out must be a C-contiguous"):
        kernel(X, Y, out=np.empty((300, 200), dtype=np.float32))


def test_default_parameters_follow_sklearn(rng):
    X = rng.uniform(size=(10, 4))
    for name in ("rbf", "laplacian", "poly", "sigmoid", "chi2"):
        np.testing.assert_allclose(get_kernel(name)(X), pairwise_kernels(X, metric=name),
                                   rtol=1e-10)


@pytest.mark.parametrize(("name", "params", "error", "match"), [
    ("gausian", {}, ValueError, r"Unknown kernel .gausian. \(did you mean .gaussian.\?\); valid"),
    ("rbf", {"gamma": -1.0}, ValueError, "gamma must be finite and >= 0"),
    ("rbf", {"length_scale": 1.0}, TypeError, "unexpected parameter"),
    ("poly", {"degree": 0}, ValueError, "degree must be >= 1"),
    ("poly", {"coef0": np.nan}, ValueError, "coef0 must be a finite"),
    ("laplacian", {"gamma": "big"}, ValueError, "gamma='big' is not a number, 'scale' or"),
    ("laplacian", {"gamma": [1.0]}, TypeError, "gamma must be a real number"),
])
def test_bad_kernel_parameters(name, params, error, match):
    with pytest.raises(error, match=match):
        get_kernel(name, **params)


def test_chi2_kernels_reject_negative_input():
    X = np.array([[0.1, -0.2]])
    for name in ("chi2", "additive_chi2"):
        with pytest.raises(ValueError, match="negative values"):
            get_kernel(name)(X)


def test_mismatched_features_rejected(rng):
    with pytest.raises(ValueError, match="same number of features"):
        get_kernel("rbf")(rng.normal(size=(3, 2)), rng.normal(size=(3, 4)))


def test_kernel_objects_compare_and_hash():
    assert get_kernel("rbf", gamma=1.0) == km.kernels.RBFKernel(gamma=1.0)
    assert get_kernel("rbf", gamma=1.0) != km.kernels.RBFKernel(gamma=2.0)
    assert len({get_kernel("rbf", gamma=1.0), km.kernels.RBFKernel(gamma=1.0)}) == 1
    expected = "PolynomialKernel(gamma=None, degree=2, coef0=None)"
    assert repr(get_kernel("poly", degree=2)) == expected


@pytest.mark.parametrize("name", ["rbf", "laplacian", "polynomial"])
def test_matmul_sums_in_the_dtype_asked_for(name):
    # accumulate=np.float64: the float32 kernel block widened, then a float64 product — the
    # numbers of K.astype(float64) @ V to float64 rounding; the default sums in float32.
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 5)).astype(np.float32)
    Y = X[:150]
    V = rng.normal(size=(150, 2))  # cancelling coefficients
    kernel = get_kernel(name, gamma=0.5) if name != "polynomial" else get_kernel(name)
    K = kernel(X, Y).astype(np.float64)
    exact = K @ V
    bound = 150 * np.finfo(np.float64).eps * (np.abs(K) @ np.abs(V))
    wide = kernel.matmul(X, Y, V, accumulate=np.float64)
    assert wide.dtype == np.float64
    np.testing.assert_array_less(np.abs(wide - exact), 2 * bound + 1e-300)
    np.testing.assert_array_equal(kernel.matmul(X, Y, V[:, 0], accumulate=np.float64),
                                  kernel.evaluate_matmul(X, Y, V[:, 0], accumulate=np.float64))
    narrow = kernel.matmul(X, Y, V)
    assert narrow.dtype == np.float32
    assert np.abs(narrow - exact).max() > 2 * bound.max()  # float32 sums: far coarser
