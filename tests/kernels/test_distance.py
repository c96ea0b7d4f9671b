"""Feature-space distances: kernel_distance (from k alone) and feature_distance (from z(x))."""

from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import Nystroem as SklearnNystroem
from sklearn.metrics.pairwise import (
    euclidean_distances,
    laplacian_kernel,
    pairwise_kernels,
    rbf_kernel,
)

import kernelmaps as km
from kernelmaps import config_context
from kernelmaps.kernels import (
    KERNELS,
    IndefiniteKernelWarning,
    feature_distance,
    get_kernel,
    kernel_distance,
)
from kernelmaps.kernels import distance as distance_module

#: float64 distances are resolved to about sqrt(ε · (k(x,x) + k(y,y))) (module docstring).
SQRT_EPS = np.sqrt(np.finfo(np.float64).eps)


@pytest.fixture
def XY(rng):
    return rng.normal(size=(300, 5)), rng.normal(size=(70, 5))


def explicit(K_xy, diag_x, diag_y):
    """√(k(x,x) + k(y,y) − 2k(x,y)) from full matrices, without clipping tricks."""
    return np.sqrt(np.maximum(diag_x[:, None] + diag_y[None, :] - 2 * K_xy, 0.0))


# ------------------------------------------------------------------ against scikit-learn
def test_linear_kernel_gives_euclidean_distances(XY):
    X, Y = XY
    np.testing.assert_allclose(kernel_distance(X, Y, kernel="linear"),
                               euclidean_distances(X, Y), rtol=1e-10, atol=1e-10)
    D = kernel_distance(X, kernel="linear")
    np.testing.assert_allclose(D, euclidean_distances(X), rtol=1e-10, atol=1e-10)
    assert np.all(np.diag(D) == 0.0)


def test_rbf_and_laplacian_against_sklearn_kernels(XY):
    X, Y = XY
    for gamma in (0.01, 0.3, 2.0):
        expected = np.sqrt(np.maximum(2.0 - 2.0 * rbf_kernel(X, Y, gamma=gamma), 0.0))
        np.testing.assert_allclose(kernel_distance(X, Y, gamma=gamma), expected,
                                   rtol=1e-10, atol=1e-10)
        expected = np.sqrt(np.maximum(2.0 - 2.0 * laplacian_kernel(X, Y, gamma=gamma), 0.0))
        np.testing.assert_allclose(kernel_distance(X, Y, kernel="laplacian", gamma=gamma),
                                   expected, rtol=1e-10, atol=1e-10)


def test_polynomial_kernel_equals_distance_of_its_explicit_feature_map(XY):
    # (γ⟨x,y⟩ + c)² = ⟨φ(x), φ(y)⟩ with φ(x) = [γ vec(x xᵀ), √(2γc) x, c]: the kernel
    # distance is the Euclidean distance between these explicit vectors.
    X, Y = XY
    gamma, coef0 = 0.4, 1.5

    def phi(A):
        outer = gamma * np.einsum("ni,nj->nij", A, A).reshape(A.shape[0], -1)
        return np.hstack([outer, np.sqrt(2 * gamma * coef0) * A,
                          np.full((A.shape[0], 1), coef0)])

    D = kernel_distance(X, Y, kernel="poly", degree=2, gamma=gamma, coef0=coef0)
    expected = euclidean_distances(phi(X), phi(Y))
    np.testing.assert_allclose(D, expected, rtol=1e-9, atol=1e-9 * expected.max())


@pytest.mark.parametrize("name", sorted(set(KERNELS) - {"sigmoid"}))
def test_every_kernel_matches_the_explicit_formula_across_blocks(name, rng):
    X = rng.uniform(0.05, 1.0, size=(300, 4))  # non-negative: valid for histogram kernels
    Y = rng.uniform(0.05, 1.0, size=(40, 4))
    kernel = get_kernel(name)
    expected = explicit(kernel(X, Y), kernel.diag(X), kernel.diag(Y))
    with config_context(block_bytes=4096):  # 128-row blocks: three of them
        D = kernel_distance(X, Y, kernel=kernel)
    scale = np.sqrt(np.abs(kernel.diag(X)).max() + np.abs(kernel.diag(Y)).max())
    np.testing.assert_allclose(D, expected, rtol=1e-9, atol=1e-7 * scale)


def test_precomputed_matrix_gives_the_same_distances(XY):
    X, _ = XY
    K = rbf_kernel(X, gamma=0.2)
    with config_context(block_bytes=4096):
        D = kernel_distance(K, kernel="precomputed")
    np.testing.assert_allclose(D, kernel_distance(X, gamma=0.2), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel_distance(sp.csr_matrix(K), kernel="precomputed"), D,
                               rtol=1e-12, atol=1e-12)


def test_callables_pairwise_and_vectorized_match_the_named_kernel(rng):
    X, Y = rng.normal(size=(30, 3)), rng.normal(size=(8, 3))
    named = kernel_distance(X, Y, kernel="rbf", gamma=0.7)
    pairwise = kernel_distance(X, Y, kernel=lambda x, y, g: np.exp(-g * np.sum((x - y) ** 2)),
                               g=0.7)
    vectorized = kernel_distance(X, Y, kernel=lambda A, B: rbf_kernel(A, B, gamma=0.7),
                                 vectorized=True)
    np.testing.assert_allclose(pairwise, named, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(vectorized, named, rtol=1e-12, atol=1e-12)


def test_sparse_input_equals_dense(XY):
    X, Y = XY
    X = X * (np.abs(X) > 0.8)
    D = kernel_distance(sp.csr_matrix(X), sp.csr_matrix(Y), gamma=0.3)
    np.testing.assert_allclose(D, kernel_distance(X, Y, gamma=0.3), rtol=1e-12, atol=1e-12)


def test_float32_in_float32_out_and_within_its_rounding(XY):
    X, Y = XY
    D32 = kernel_distance(X.astype(np.float32), Y.astype(np.float32), gamma=0.3)
    assert D32.dtype == np.float32
    # Absolute accuracy √(ε₃₂ · 2) ≈ 5e-4 for the normalised rbf kernel (module docstring).
    np.testing.assert_allclose(D32, kernel_distance(X, Y, gamma=0.3), atol=5e-4)


def test_squared_is_the_square_and_threads_give_identical_results(XY):
    X, Y = XY
    with config_context(block_bytes=4096):
        D1 = kernel_distance(X, Y, gamma=0.3, n_jobs=1)
        D2 = kernel_distance(X, Y, gamma=0.3, n_jobs=2)
    np.testing.assert_array_equal(D1, D2)
    np.testing.assert_allclose(kernel_distance(X, Y, gamma=0.3, squared=True), D1 ** 2,
                               rtol=1e-12, atol=1e-15)


def test_rounding_is_clipped_to_zero_for_duplicates(rng):
    # Far from the origin ‖x‖² + ‖x'‖² − 2⟨x, x'⟩ cancels: for duplicate rows x = x' the
    # raw value comes out negative for some pairs (the dot products and the norms are summed
    # in different orders); those become exactly 0.
    X = rng.normal(size=(50, 8)) + 1e4
    X = np.vstack([X, X])
    kernel = get_kernel("linear")
    norms = kernel.diag(X[:50])
    raw = 2 * norms - 2.0 * np.diag(kernel(X[:50], X[50:]))
    assert (raw < 0).any()  # the case this test is about happens
    D = kernel_distance(X, kernel="linear", squared=True)
    assert np.all(D >= 0.0)
    assert np.all(np.diag(D) == 0.0)
    duplicates = np.diag(D, k=50)
    assert np.all(duplicates[raw < 0] == 0.0)
    # what remains is rounding: a few ε·(k(x,x) + k(y,y)), far below the points' spread
    assert duplicates.max() <= 16 * np.finfo(np.float64).eps * 2 * norms.max()
    distinct = D[:50, :50][~np.eye(50, dtype=bool)]
    assert distinct.min() > 0.1


# ------------------------------------------------------------------ from a feature map
def test_feature_distance_of_nystroem_on_all_points_is_the_kernel_distance(XY):
    X, Y = XY
    z = km.Nystroem(gamma=0.3, n_components=X.shape[0], random_state=0).fit(X)
    exact = kernel_distance(X, gamma=0.3)
    np.testing.assert_allclose(feature_distance(z, X), exact, atol=1e-6)
    # New points are approximated (they are off the landmarks' span), and fewer landmarks
    # approximate worse.
    errors = []
    for m in (10, 60, 300):
        z = km.Nystroem(gamma=0.3, n_components=m, random_state=0).fit(X)
        errors.append(np.abs(feature_distance(z, Y, X) - kernel_distance(Y, X, gamma=0.3)).max())
    assert errors[0] > errors[1] > errors[2]
    assert errors[0] > 0.1


def test_feature_distance_of_an_exact_map_equals_the_kernel_distance(XY):
    X, Y = XY
    z = km.PolynomialKernelMap(gamma=0.5, degree=3, coef0=1.0).fit(X)
    D = feature_distance(z, X, Y)
    expected = kernel_distance(X, Y, kernel="poly", gamma=0.5, degree=3, coef0=1.0)
    np.testing.assert_allclose(D, expected, rtol=1e-9, atol=1e-9 * expected.max())


def test_feature_distance_with_sklearn_maps_pipelines_and_sparse_features(rng):
    X = rng.uniform(0, 1, size=(200, 6))
    z = SklearnNystroem(gamma=0.3, n_components=200, random_state=0).fit(X)
    np.testing.assert_allclose(feature_distance(z, X), kernel_distance(X, gamma=0.3),
                               atol=1e-6)
    # AdditiveChi2Sampler gives sparse features for sparse input: same distances.
    Xs = sp.csr_matrix(X * (X > 0.5))
    chi2 = km.AdditiveChi2Sampler().fit(Xs)
    dense = euclidean_distances(chi2.transform(Xs).toarray())
    with config_context(block_bytes=4096):
        np.testing.assert_allclose(feature_distance(chi2, Xs), dense, rtol=1e-9, atol=1e-9)


def test_feature_distance_float32_and_zero_diagonal(XY):
    X, _ = XY
    z = km.RBFSampler(gamma=0.3, n_components=128, random_state=0).fit(X)
    D = feature_distance(z, X.astype(np.float32))
    assert D.dtype == np.float32
    assert np.all(np.diag(D) == 0)
    np.testing.assert_allclose(D, feature_distance(z, X), atol=5e-4)


# ------------------------------------------------------------------ properties
finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)
KERNEL_CASES = [("rbf", {"gamma": 0.5}), ("laplacian", {"gamma": 0.3}), ("linear", {}),
                ("poly", {"degree": 2, "gamma": 0.5, "coef0": 1.0}), ("matern", {})]


@settings(max_examples=40, deadline=None)
@given(X=arrays(np.float64, st.tuples(st.integers(2, 12), st.integers(1, 4)), elements=finite),
       case=st.sampled_from(KERNEL_CASES))
def test_distance_axioms(X, case):
    name, params = case
    D = kernel_distance(X, kernel=name, **params)
    diag = get_kernel(name, **params).diag(X)
    # Rounding of a + b − 2c is a few ε·(a + b); its square root bounds the error in D.
    tol = 8 * SQRT_EPS * np.sqrt(2 * np.abs(diag).max() + 1e-300)
    assert np.all(D >= 0.0)
    assert np.all(np.diag(D) == 0.0)
    np.testing.assert_allclose(D, D.T, atol=tol)
    # triangle inequality d(i, k) <= d(i, j) + d(j, k) for every triple
    excess = D[:, None, :] - (D[:, :, None] + D[None, :, :])
    assert excess.max() <= 3 * tol


@settings(max_examples=25, deadline=None)
@given(X=arrays(np.float64, st.tuples(st.integers(2, 10), st.just(3)), elements=finite))
def test_feature_distance_axioms(X):
    z = km.RBFSampler(gamma=0.5, n_components=32, random_state=0).fit(X)
    D = feature_distance(z, X)
    Z = z.transform(X)
    tol = 8 * SQRT_EPS * np.sqrt(2 * np.einsum("ij,ij->i", Z, Z).max() + 1e-300)
    assert np.all(D >= 0.0) and np.all(np.diag(D) == 0.0)
    np.testing.assert_allclose(D, D.T, atol=tol)
    np.testing.assert_allclose(D, euclidean_distances(Z), atol=tol)
    excess = D[:, None, :] - (D[:, :, None] + D[None, :, :])
    assert excess.max() <= 3 * tol


# ------------------------------------------------------------------ errors
def test_unknown_kernel_parameter_is_named(XY):
    X, _ = XY
    with pytest.raises(TypeError, match=r"unexpected parameter.*\['alpha'\].*gamma"):
        kernel_distance(X, kernel="rbf", alpha=1.0)
    with pytest.raises(TypeError, match="either in the Kernel object or as keywords"):
        kernel_distance(X, kernel=get_kernel("rbf"), gamma=1.0)
    with pytest.raises(ValueError, match=r"Unknown kernel 'gausian' .did you mean 'gaussian'"):
        kernel_distance(X, kernel="gausian")


def test_precomputed_errors(XY):
    X, _ = XY
    K = rbf_kernel(X)
    with pytest.raises(ValueError, match="leave Y=None"):
        kernel_distance(K, K[:5], kernel="precomputed")
    with pytest.raises(ValueError, match="square kernel matrix"):
        kernel_distance(K[:10], kernel="precomputed")
    with pytest.raises(TypeError, match="takes no parameters"):
        kernel_distance(K, kernel="precomputed", gamma=1.0)


def test_bad_inputs_raise_clear_errors(XY):
    X, Y = XY
    with pytest.raises(ValueError, match="X has 5 features but Y has 4"):
        kernel_distance(X, Y[:, :4])
    with pytest.raises(ValueError, match=r"contains negative values.*chi2"):
        kernel_distance(X, kernel="chi2")
    with pytest.raises(ValueError, match="NaN"):
        kernel_distance(np.full((3, 2), np.nan))


def test_indefinite_kernel_warns_instead_of_hiding_negative_squares(rng):
    X = rng.normal(size=(40, 3)) * 3
    with pytest.warns(IndefiniteKernelWarning, match="not positive semi-definite"):
        D = kernel_distance(X, kernel="sigmoid", gamma=1.0, coef0=-2.0)
    assert np.all(D >= 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernel_distance(rng.uniform(0.1, 1, size=(40, 3)), kernel="additive_chi2")  # CPD


def test_feature_distance_needs_a_fitted_transformer(XY):
    X, _ = XY
    with pytest.raises(NotFittedError):
        feature_distance(km.Nystroem(), X)
    with pytest.raises(TypeError, match="fitted transformer with a transform method"):
        feature_distance(pairwise_kernels, X)


def test_docstring_examples_run():
    failures, tried = doctest.testmod(distance_module, verbose=False, report=True)
    assert tried >= 4 and failures == 0
