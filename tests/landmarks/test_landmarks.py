"""Landmark selection: Rényi entropy subsets, ridge leverage sampling, k-means, uniform."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import rbf_kernel

import kernelmaps as km
from kernelmaps.kernels import Kernel, RBFKernel, get_kernel
from kernelmaps.landmarks import (
    kmeans_landmarks,
    quadratic_renyi_entropy,
    renyi_entropy_subset,
    ridge_leverage_subset,
    select_landmarks,
    strategy_options,
    uniform_subset,
)
from kernelmaps.landmarks._gram import _Gram
from kernelmaps.landmarks.leverage import _recursive_rls, _ridge_leverage_scores
from kernelmaps.landmarks.renyi import _RenyiWorkingSet
from tests._helpers import mixture


class ScaledRBF(Kernel):
    """c · exp(−γ‖x−y‖²): a kernel with k(x, x) = c ≠ 1."""

    name = "scaled_rbf"
    param_names = ("gamma", "scale")

    def __init__(self, gamma: float, scale: float) -> None:
        self.gamma = gamma
        self.scale = scale

    def evaluate_into(self, X, Y, out):
        RBFKernel(self.gamma).evaluate_into(X, Y, out)
        out *= self.scale

    def _diag(self, X):
        return np.full(X.shape[0], self.scale, dtype=X.dtype)


# ---------------------------------------------------------------- quadratic Rényi entropy
def test_entropy_is_minus_log_mean_kernel(rng):
    X = rng.normal(size=(70, 3))
    K = rbf_kernel(X, gamma=0.4)
    expected = -np.log(K.mean())
    assert quadratic_renyi_entropy(X, RBFKernel(0.4)) == pytest.approx(expected, rel=1e-12)
    assert quadratic_renyi_entropy(K, "precomputed") == pytest.approx(expected, rel=1e-12)
    assert quadratic_renyi_entropy(sp.csr_matrix(X), RBFKernel(0.4)) == pytest.approx(expected)
    # The blocked double sum does not depend on the block size.
    with km.config_context(block_bytes=4096):
        assert quadratic_renyi_entropy(X, RBFKernel(0.4)) == pytest.approx(expected, rel=1e-12)


def test_entropy_needs_positive_mean_kernel():
    X = np.array([[1.0, 0.0], [-1.0, 0.0]])  # linear kernel: mean 0
    with pytest.raises(ValueError, match="positive mean kernel value"):
        quadratic_renyi_entropy(X, "linear")


# ---------------------------------------------------------------- Rényi subset
def test_renyi_subset_beats_20_random_subsets_on_clustered_data():
    X, _ = mixture(n_big=500)
    kernel = RBFKernel(0.5)
    m = 30
    chosen = renyi_entropy_subset(X, kernel, m, random_state=0)
    entropy = quadratic_renyi_entropy(X[chosen], kernel)
    rng = np.random.RandomState(1)
    random_entropies = [quadratic_renyi_entropy(X[rng.choice(len(X), m, replace=False)], kernel)
                        for _ in range(20)]
    assert entropy > max(random_entropies)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 25), n_passes=st.integers(1, 3))
def test_renyi_subset_improves_its_uniform_start(seed, m, n_passes):
    X = np.random.RandomState(seed).normal(size=(60, 2))
    kernel = RBFKernel(1.0)
    chosen = renyi_entropy_subset(X, kernel, m, random_state=seed, n_passes=n_passes)
    assert chosen.shape == (m,)
    assert np.unique(chosen).size == m
    assert chosen.min() >= 0 and chosen.max() < 60
    # The search starts from scikit-learn's uniform draw and only accepts improvements.
    start = uniform_subset(X, m, random_state=seed)
    if m > 1:
        assert (quadratic_renyi_entropy(X[chosen], kernel)
                >= quadratic_renyi_entropy(X[start], kernel) - 1e-12)


@pytest.mark.parametrize("kernel", [RBFKernel(0.7), get_kernel("laplacian", gamma=0.5),
                                    get_kernel("poly", degree=2, gamma=0.3, coef0=1.0),
                                    ScaledRBF(0.7, 3.5)], ids=repr)
def test_working_set_row_sums_exact_after_swaps(kernel, rng):
    X = rng.normal(size=(150, 3))
    gram = _Gram(X, kernel)
    ws = _RenyiWorkingSet(gram, rng.permutation(150)[:12], duplicate_rtol=1e-8)
    swapped_out = ws.members.copy()
    outside = np.setdiff1d(np.arange(150), ws.members)
    swaps = ws.scan(rng.permutation(outside))
    assert swaps >= 3  # the premise: several swaps happened
    assert not np.array_equal(ws.members, swapped_out)
    # Every member's row sum (not only the swapped ones) equals a from-scratch sum, with
    # the true k(x, x) on the diagonal (poly and scaled kernels: k(x, x) != 1).
    K = kernel(X[ws.members])
    np.fill_diagonal(K, kernel.diag(X[ws.members]))
    np.testing.assert_allclose(ws.row_sums, K.sum(axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ws.kernel_matrix, K, rtol=1e-12, atol=1e-12)
    assert ws.total == pytest.approx(K.sum(), rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n_swaps=st.integers(1, 15))
def test_any_sequence_of_swaps_keeps_row_sums_exact(seed, n_swaps):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(40, 2))
    kernel = get_kernel("poly", degree=3, gamma=0.5, coef0=0.5)  # k(x, x) varies
    gram = _Gram(X, kernel)
    ws = _RenyiWorkingSet(gram, rng.permutation(40)[:8], duplicate_rtol=1e-8)
    for _ in range(n_swaps):
        slot = rng.randint(8)
        candidate = rng.choice(np.setdiff1d(np.arange(40), ws.members))
        ws.swap(slot, int(candidate), kernel(X[[candidate]], X[ws.members])[0])
    K = kernel(X[ws.members])
    np.testing.assert_allclose(ws.row_sums, K.sum(axis=1), rtol=1e-11)
    assert np.unique(ws.members).size == 8


def test_renyi_never_admits_duplicates():
    rng = np.random.RandomState(3)
    distinct = rng.normal(size=(40, 2))
    X = np.repeat(distinct, 5, axis=0)  # every point five times
    chosen = renyi_entropy_subset(X, RBFKernel(1.0), 12, random_state=0)
    assert np.unique(chosen).size == 12
    assert np.unique(X[chosen], axis=0).shape[0] == 12  # distinct points, not only indices


def test_renyi_rejects_a_duplicate_even_when_it_would_lower_the_sum():
    # A tight cluster of 50 points and one far point stored 10 times. With m = 5, a second
    # copy of the far point would lower Σ k (2² + 3² < 1 + 4²), so only the duplicate guard
    # keeps the copies out.
    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(scale=0.01, size=(50, 2)), np.full((10, 2), 10.0)])
    for seed in range(3):
        chosen = renyi_entropy_subset(X, RBFKernel(1.0), 5, random_state=seed)
        assert np.unique(X[chosen], axis=0).shape[0] == 5
        assert (X[chosen] == 10.0).all(axis=1).sum() == 1


def test_renyi_handles_kernels_with_non_unit_diagonal():
    # Scaling the kernel scales T_S and every Δ alike: the subset must not change. An
    # implementation assuming k(x, x) = 1 (as the reference does) changes its decisions.
    X, _ = mixture(n_big=300)
    a = renyi_entropy_subset(X, ScaledRBF(0.5, 1.0), 25, random_state=0)
    b = renyi_entropy_subset(X, ScaledRBF(0.5, 7.0), 25, random_state=0)
    np.testing.assert_array_equal(a, b)


def test_renyi_precomputed_and_sparse_agree_with_coordinates():
    X, _ = mixture(n_big=300)
    kernel = RBFKernel(0.5)
    ref = renyi_entropy_subset(X, kernel, 20, random_state=4)
    np.testing.assert_array_equal(
        renyi_entropy_subset(kernel(X), "precomputed", 20, random_state=4), ref)
    np.testing.assert_array_equal(
        renyi_entropy_subset(sp.csr_matrix(X), kernel, 20, random_state=4), ref)


def test_renyi_all_points_and_float32():
    X = np.random.RandomState(0).normal(size=(30, 2))
    assert sorted(renyi_entropy_subset(X, "rbf", 30, random_state=0)) == list(range(30))
    chosen = renyi_entropy_subset(X.astype(np.float32), "rbf", 10, random_state=0)
    assert np.unique(chosen).size == 10


# ---------------------------------------------------------------- ridge leverage
def test_leverage_scores_equal_exact_ridge_leverage(rng):
    # With the whole set as the "sample" and unit weights, the estimator is exact:
    # τ_i(λ) = (K (K + λI)⁻¹)_ii.
    X = rng.normal(size=(80, 3))
    kernel = RBFKernel(0.5)
    K = kernel(X)
    gram = _Gram(X, kernel)
    everything = np.arange(80)
    ridge = 0.3
    scores = _ridge_leverage_scores(gram, everything, gram.columns(everything), K,
                                    np.ones(80), ridge, kernel.diag(X))
    exact = np.diag(K @ np.linalg.inv(K + ridge * np.eye(80)))
    np.testing.assert_allclose(scores, exact, rtol=1e-8, atol=1e-10)
    # Weights enter as W⁻² on the diagonal: τ̃_i = (K − K(K + λW⁻²)⁻¹K)_ii / λ.
    weights = rng.uniform(0.5, 2.0, size=80)
    scores_w = _ridge_leverage_scores(gram, everything, gram.columns(everything), K,
                                      weights, ridge, kernel.diag(X))
    expected_w = np.diag(K - K @ np.linalg.solve(K + np.diag(ridge / weights**2), K)) / ridge
    np.testing.assert_allclose(scores_w, expected_w, rtol=1e-8, atol=1e-10)


def _nystroem_errors(K: np.ndarray, idx: np.ndarray) -> tuple[float, float]:
    """Spectral and relative Frobenius error of the Nyström approximation on rows idx."""
    C = K[:, idx]
    residual = K - C @ np.linalg.pinv(K[np.ix_(idx, idx)], rcond=1e-10, hermitian=True) @ C.T
    # The Nyström residual is PSD: its spectral norm is its largest eigenvalue.
    n = K.shape[0]
    largest = scipy.linalg.eigvalsh(residual, subset_by_index=[n - 1, n - 1])[0]
    return float(largest), float(np.linalg.norm(residual) / np.linalg.norm(K))


def test_leverage_beats_uniform_in_spectral_error_on_clustered_data():
    # Ridge leverage sampling targets K − K̃ ⪯ λI (spectral norm). On the 100:10:1 mixture
    # with m = 50 the mean over seeds 0-4 is about half of uniform's (measured over 20
    # seeds in groups of 5: ratios 0.34-0.60), so a 0.75 bound is a robust margin.
    X, _ = mixture(n_big=1000)
    kernel = RBFKernel(0.5)
    K = kernel(X)
    leverage = np.mean([_nystroem_errors(K, ridge_leverage_subset(X, kernel, 50,
                                                                  random_state=s))[0]
                        for s in range(5)])
    uniform = np.mean([_nystroem_errors(K, uniform_subset(X, 50, random_state=s))[0]
                       for s in range(5)])
    assert leverage < 0.75 * uniform


@pytest.mark.parametrize("accelerated", [False, True])
def test_leverage_subset_distinct_and_deterministic(accelerated, rng):
    X = rng.normal(size=(500, 3))
    a = ridge_leverage_subset(X, "rbf", 40, random_state=7, accelerated=accelerated)
    b = ridge_leverage_subset(X, "rbf", 40, random_state=7, accelerated=accelerated)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (40,) and np.unique(a).size == 40
    # The seed is what decides: another one draws another subset (a sampler that ignored
    # random_state would pass the equality above too).
    other = ridge_leverage_subset(X, "rbf", 40, random_state=8, accelerated=accelerated)
    assert set(other) != set(a)


def test_leverage_low_rank_kernel_fills_up_without_nan():
    # A linear kernel in 2-D has rank 2: all but two residuals vanish, the scores of the
    # rest are 0 and the sample is filled up uniformly instead of failing.
    X = np.random.RandomState(0).normal(size=(200, 2))
    chosen = _recursive_rls(_Gram(X, get_kernel("linear")), 30, np.random.RandomState(0),
                            False)
    assert np.unique(chosen).size == 30


def test_leverage_precomputed_agrees_with_coordinates():
    X, _ = mixture(n_big=300)
    kernel = RBFKernel(0.5)
    np.testing.assert_array_equal(
        ridge_leverage_subset(kernel(X), "precomputed", 25, random_state=2),
        ridge_leverage_subset(X, kernel, 25, random_state=2))


def test_leverage_rejects_indefinite_kernel(rng):
    X = rng.normal(size=(300, 4))
    with pytest.raises(ValueError, match="positive semi-definite kernel"):
        ridge_leverage_subset(X, get_kernel("sigmoid", gamma=1.0, coef0=-1.0), 20,
                              random_state=0)


# ---------------------------------------------------------------- k-means and uniform
def test_kmeans_landmarks_are_kmeans_centres(rng):
    from sklearn.cluster import KMeans

    X = rng.normal(size=(300, 3))
    centres = kmeans_landmarks(X, 10, random_state=0)
    expected = KMeans(10, n_init=1, max_iter=100, random_state=np.random.RandomState(0)).fit(X)
    np.testing.assert_allclose(centres, expected.cluster_centers_)
    assert kmeans_landmarks(X.astype(np.float32), 10, random_state=0).dtype == np.float32
    mini = kmeans_landmarks(X, 10, random_state=0, minibatch=True)
    assert mini.shape == (10, 3) and np.isfinite(mini).all()


def test_uniform_subset_is_sklearns_draw():
    from sklearn.kernel_approximation import Nystroem as SkNystroem

    X = np.random.RandomState(0).uniform(size=(50, 4))
    ours = uniform_subset(X, 12, random_state=5)
    theirs = SkNystroem(n_components=12, random_state=5).fit(X).component_indices_
    np.testing.assert_array_equal(ours, theirs)


# ---------------------------------------------------------------- dispatch and bad input
def test_select_landmarks_returns_points_and_indices(rng):
    X = rng.normal(size=(100, 3))
    for strategy in ("uniform", "leverage", "renyi"):
        points, indices = select_landmarks(strategy, X, RBFKernel(0.5), 10, random_state=0)
        np.testing.assert_array_equal(points, X[indices])
    points, indices = select_landmarks("kmeans", X, RBFKernel(0.5), 10, random_state=0)
    assert indices is None and points.shape == (10, 3)
    assert strategy_options("renyi") == ("n_passes",)
    assert strategy_options("kmeans") == ("minibatch", "max_iter")


def test_select_landmarks_bad_input(rng):
    X = rng.normal(size=(50, 3))
    with pytest.raises(ValueError, match="Unknown landmark strategy 'random'"):
        select_landmarks("random", X, "rbf", 5)
    with pytest.raises(TypeError, match=r"landmark_params \['passes'\].*accepts \['n_passes'\]"):
        select_landmarks("renyi", X, "rbf", 5, options={"passes": 2})
    with pytest.raises(ValueError, match=r"kmeans.*coordinates"):
        select_landmarks("kmeans", rbf_kernel(X), "precomputed", 5)


@pytest.mark.parametrize("function", [renyi_entropy_subset, ridge_leverage_subset])
def test_subset_functions_bad_input(function, rng):
    X = rng.normal(size=(20, 3))
    with pytest.raises(ValueError, match="n_components=21 exceeds the number of rows"):
        function(X, "rbf", 21)
    with pytest.raises(ValueError, match="n_components must be a positive int"):
        function(X, "rbf", 0)
    with pytest.raises(TypeError, match="kernel must be a kernel name"):
        function(X, 3.0, 5)
    with pytest.raises(ValueError, match="Unknown kernel"):
        function(X, "gausian", 5)
    with pytest.raises(ValueError, match="square kernel matrix"):
        function(X, "precomputed", 5)
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        function(X_nan, "rbf", 5)


def test_renyi_bad_n_passes_and_non_finite_kernel(rng):
    X = rng.normal(size=(20, 3))
    with pytest.raises(ValueError, match="n_passes must be a positive int"):
        renyi_entropy_subset(X, "rbf", 5, n_passes=0)
    with pytest.raises(ValueError, match="non-finite values on X while selecting"):
        renyi_entropy_subset(X, get_kernel("poly", degree=2.5, coef0=0.0), 5, random_state=0)
