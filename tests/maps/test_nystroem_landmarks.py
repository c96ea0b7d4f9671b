"""Nystroem(landmarks=..., basis=..., eigen_tol=...): strategies, bases, truncation, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelmaps._linalg import inverse_sqrt_psd
from kernelmaps.evaluate import relative_error
from kernelmaps.kernels import IndefiniteKernelWarning, RBFKernel
from kernelmaps.landmarks import kmeans_landmarks, renyi_entropy_subset
from kernelmaps.maps.nystroem import Nystroem
from tests._helpers import mixture

STRATEGIES = ["uniform", "kmeans", "leverage", "renyi"]
ROW_STRATEGIES = ["uniform", "leverage", "renyi"]


# ---------------------------------------------------------------- the estimator contract
# (Rényi + eigen basis and leverage are registry entries of tests/test_contract.py.)
@parametrize_with_checks([
    Nystroem(n_components=10, landmarks="kmeans", basis="eigen", random_state=0),
    Nystroem(n_components=20, basis="eigen", eigen_tol=1e-6, random_state=0),
])
def test_check_estimator_with_new_parameters(estimator, check):
    with warnings.catch_warnings():
        # k-means on the checks' tiny or constant data finds fewer distinct clusters.
        warnings.filterwarnings("ignore", message="Number of distinct clusters")
        check(estimator)


def test_defaults_are_sklearns():
    ny = Nystroem()
    assert (ny.landmarks, ny.landmark_params, ny.basis, ny.eigen_tol) == (
        "uniform", None, "symmetric", None)
    X = np.random.RandomState(0).uniform(size=(60, 4))
    a = Nystroem(n_components=30, random_state=1).fit(X)
    b = Nystroem(n_components=30, random_state=1, landmarks="uniform").fit(X)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    assert a.n_features_out_ == 30


# ---------------------------------------------------------------- strategies
@pytest.mark.parametrize("landmarks", STRATEGIES)
def test_every_strategy_reproduces_the_kernel_on_its_landmarks(landmarks):
    X = mixture(n_big=200)[0]
    ny = Nystroem(gamma=0.5, n_components=25, landmarks=landmarks, random_state=0).fit(X)
    C = ny.components_
    assert C.shape == (25, 2)
    Zc = ny.transform(C)
    np.testing.assert_allclose(Zc @ Zc.T, rbf_kernel(C, gamma=0.5), atol=1e-8)
    if landmarks in ROW_STRATEGIES:
        np.testing.assert_array_equal(C, X[ny.component_indices_])
        assert np.unique(ny.component_indices_).size == 25
    else:
        assert not hasattr(ny, "component_indices_")
        np.testing.assert_allclose(C, kmeans_landmarks(X, 25, random_state=0))


def test_renyi_landmarks_are_renyi_entropy_subset():
    X = mixture(n_big=200)[0]
    ny = Nystroem(gamma=0.5, n_components=15, landmarks="renyi",
                  landmark_params={"n_passes": 1}, random_state=3).fit(X)
    expected = renyi_entropy_subset(X, RBFKernel(0.5), 15, random_state=3, n_passes=1)
    np.testing.assert_array_equal(ny.component_indices_, expected)


def test_leverage_and_kmeans_error_below_uniform_on_clustered_imbalanced_data():
    # 100:10:1 mixture, m = 50, mean over seeds 0-4. Measured over 20 seeds in groups of
    # five: uniform 0.037-0.054, leverage 0.021-0.035 (ratio <= 0.65), k-means 0.007-0.008.
    X = mixture(n_big=1000)[0]
    K = rbf_kernel(X, gamma=0.5)

    def mean_error(landmarks):
        return np.mean([relative_error(K, Nystroem(gamma=0.5, n_components=50,
                                                   landmarks=landmarks,
                                                   random_state=s).fit_transform(X))
                        for s in range(5)])

    uniform = mean_error("uniform")
    assert mean_error("leverage") < 0.8 * uniform
    assert mean_error("kmeans") < 0.5 * uniform


def test_refit_with_kmeans_drops_stale_component_indices():
    X = mixture(n_big=100)[0]
    ny = Nystroem(n_components=10, random_state=0).fit(X)
    assert hasattr(ny, "component_indices_")
    ny.set_params(landmarks="kmeans").fit(X)
    assert not hasattr(ny, "component_indices_")


def test_user_landmarks_are_used_as_given(rng):
    X = rng.uniform(size=(80, 3))
    points = rng.uniform(size=(7, 3))
    ny = Nystroem(gamma=2.0, landmarks=points, n_components=50).fit(X)  # n_components ignored
    np.testing.assert_array_equal(ny.components_, points)
    assert not hasattr(ny, "component_indices_")
    assert ny.transform(X).shape == (80, 7)
    Zp = ny.transform(points)
    np.testing.assert_allclose(Zp @ Zp.T, rbf_kernel(points, gamma=2.0), atol=1e-10)
    # float32 data: landmarks cast to float32, output float32.
    ny32 = Nystroem(gamma=2.0, landmarks=points).fit(X.astype(np.float32))
    assert ny32.components_.dtype == np.float32
    assert ny32.transform(X.astype(np.float32)).dtype == np.float32
    # A list of lists and a sparse matrix work too; clone keeps the array parameter.
    Z = ny.transform(X)
    from_list = Nystroem(gamma=2.0, landmarks=points.tolist()).fit(X)
    np.testing.assert_allclose(from_list.transform(X), Z)
    np.testing.assert_allclose(
        Nystroem(gamma=2.0, landmarks=sp.csr_matrix(points)).fit(X).transform(X), Z)
    np.testing.assert_array_equal(clone(ny).fit(X).transform(X), Z)


@pytest.mark.parametrize("landmarks", ["leverage", "renyi"])
def test_precomputed_kernel_with_kernel_only_strategies(landmarks, rng):
    X = rng.uniform(size=(150, 3))
    X_new = rng.uniform(size=(20, 3))
    params = dict(n_components=20, landmarks=landmarks, random_state=5)
    pre = Nystroem(kernel="precomputed", **params).fit(rbf_kernel(X, gamma=0.5))
    raw = Nystroem(kernel="rbf", gamma=0.5, **params).fit(X)
    np.testing.assert_array_equal(pre.component_indices_, raw.component_indices_)
    np.testing.assert_allclose(pre.transform(rbf_kernel(X_new, X, gamma=0.5)),
                               raw.transform(X_new), atol=1e-10)


def test_callable_kernel_with_renyi(rng):
    X = rng.uniform(size=(60, 2))

    def kernel(x, y, gamma):
        return float(np.exp(-gamma * np.sum((x - y) ** 2)))

    ny = Nystroem(kernel=kernel, kernel_params={"gamma": 0.5}, n_components=10,
                  landmarks="renyi", random_state=0).fit(X)
    ref = Nystroem(gamma=0.5, n_components=10, landmarks="renyi", random_state=0).fit(X)
    np.testing.assert_array_equal(ny.component_indices_, ref.component_indices_)
    np.testing.assert_allclose(ny.transform(X), ref.transform(X), atol=1e-10)


@pytest.mark.parametrize("landmarks", STRATEGIES)
def test_sparse_input_gives_dense_results(landmarks, rng):
    X = rng.uniform(size=(120, 5)) * (rng.uniform(size=(120, 5)) < 0.5)
    dense = Nystroem(n_components=15, landmarks=landmarks, random_state=0).fit(X)
    sparse = Nystroem(n_components=15, landmarks=landmarks, random_state=0).fit(
        sp.csr_matrix(X))
    np.testing.assert_allclose(sparse.transform(sp.csr_matrix(X)), dense.transform(X),
                               atol=1e-8)


@pytest.mark.parametrize("landmarks", STRATEGIES)
@pytest.mark.parametrize("basis", ["symmetric", "eigen"])
def test_float32_in_float32_out(landmarks, basis, rng):
    X = rng.uniform(size=(100, 4))
    ny = Nystroem(n_components=20, landmarks=landmarks, basis=basis, random_state=0)
    Z32 = ny.fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and np.isfinite(Z32).all()
    Z64 = clone(ny).fit_transform(X)
    K = rbf_kernel(X, gamma=0.25)
    assert abs(relative_error(K, Z32.astype(np.float64)) - relative_error(K, Z64)) < 1e-3


# ---------------------------------------------------------------- the eigen basis
def test_eigen_basis_gives_the_same_kernel_approximation(rng):
    X = rng.normal(size=(150, 3))
    sym = Nystroem(n_components=40, random_state=0).fit(X)
    eig = Nystroem(n_components=40, random_state=0, basis="eigen").fit(X)
    assert eig.n_features_out_ == 40  # well conditioned: nothing truncated
    Zs, Ze = sym.transform(X), eig.transform(X)
    np.testing.assert_allclose(Ze @ Ze.T, Zs @ Zs.T, atol=1e-10)
    assert list(eig.get_feature_names_out()) == [f"nystroem{i}" for i in range(40)]


def test_eigen_features_ordered_and_first_k_are_best_rank_k(rng):
    X = rng.normal(size=(200, 3))
    ny = Nystroem(gamma=0.3, n_components=30, random_state=0, basis="eigen").fit(X)
    C = ny.components_
    K_mm = rbf_kernel(C, gamma=0.3)
    eigenvalues = np.linalg.eigvalsh(K_mm)[::-1]
    Zc = ny.transform(C)  # = U Λ^{1/2}: column i has squared norm λ_i
    np.testing.assert_allclose((Zc**2).sum(axis=0), eigenvalues, rtol=1e-8)
    choice = np.random.RandomState(1)
    for k in (1, 3, 8):
        first = np.linalg.norm(K_mm - Zc[:, :k] @ Zc[:, :k].T)
        # Eckart–Young: the best rank-k error is the norm of the trailing eigenvalues.
        assert first == pytest.approx(np.sqrt((eigenvalues[k:] ** 2).sum()), rel=1e-6)
        for _ in range(20):
            cols = choice.choice(30, k, replace=False)
            assert first <= np.linalg.norm(K_mm - Zc[:, cols] @ Zc[:, cols].T) + 1e-12


def test_eigen_basis_is_deterministic_in_sign(rng):
    X = rng.normal(size=(80, 3))
    W = Nystroem(n_components=20, random_state=0, basis="eigen").fit(X).normalization_
    peaks = np.abs(W).argmax(axis=1)
    assert np.all(W[np.arange(W.shape[0]), peaks] > 0)


def test_duplicate_landmarks_are_truncated_without_nan(rng):
    distinct = rng.uniform(size=(10, 3))
    points = np.vstack([distinct] * 3)  # 30 landmarks, rank 10
    X = rng.uniform(size=(50, 3))
    eig = Nystroem(gamma=1.0, landmarks=points, basis="eigen").fit(X)
    assert eig.n_features_out_ == 10
    assert len(eig.get_feature_names_out()) == 10
    assert eig.normalization_.shape == (10, 30)
    Z = eig.transform(X)
    assert Z.shape == (50, 10) and np.isfinite(Z).all()
    # The same features as the 10 distinct landmarks alone.
    ref = Nystroem(gamma=1.0, landmarks=distinct, basis="eigen").fit(X).transform(X)
    np.testing.assert_allclose(Z @ Z.T, ref @ ref.T, atol=1e-8)
    sym = Nystroem(gamma=1.0, landmarks=points).fit(X)  # symmetric: width stays 30
    assert sym.n_features_out_ == 30
    Zs = sym.transform(X)
    assert np.isfinite(Zs).all()
    np.testing.assert_allclose(Zs @ Zs.T, ref @ ref.T, atol=1e-8)


def test_eigen_tol_truncates_at_the_relative_threshold(rng):
    X = rng.uniform(size=(100, 3))
    eigenvalues = np.linalg.eigvalsh(rbf_kernel(
        X[Nystroem(n_components=40, random_state=0).fit(X).component_indices_]))
    previous = 41
    for tol in (1e-12, 1e-8, 1e-4, 1e-2):
        ny = Nystroem(n_components=40, random_state=0, basis="eigen", eigen_tol=tol).fit(X)
        expected = int((eigenvalues > tol * eigenvalues.max()).sum())
        assert ny.n_features_out_ == expected <= previous
        assert ny.transform(X).shape == (100, expected)
        assert len(ny.get_feature_names_out()) == expected
        previous = expected
    assert previous < 40  # the premise: the largest tolerance truncated something


def test_inverse_sqrt_psd_bases_share_one_decomposition(rng):
    A = rng.normal(size=(12, 12))
    K = A @ A.T
    sym = inverse_sqrt_psd(K)
    eig = inverse_sqrt_psd(K, basis="eigen")
    np.testing.assert_allclose(sym @ K @ sym, np.eye(12), atol=1e-8)
    np.testing.assert_allclose(eig.T @ eig, sym @ sym, atol=1e-8)  # both give K⁻¹
    with pytest.raises(ValueError, match="basis must be one of"):
        inverse_sqrt_psd(K, basis="cholesky")


def test_indefinite_kernel_still_warns_in_eigen_basis(rng):
    X = rng.normal(size=(80, 4))
    with pytest.warns(IndefiniteKernelWarning, match="negative eigenvalue"):
        ny = Nystroem(kernel="sigmoid", gamma=1.0, coef0=-1.0, n_components=80,
                      random_state=0, basis="eigen").fit(X)
    assert ny.n_features_out_ < 80 and np.isfinite(ny.transform(X)).all()


def test_eigen_basis_of_a_zero_kernel_matrix_is_an_error():
    with pytest.raises(ValueError, match="no eigenvalue above eigen_tol"):
        Nystroem(kernel="linear", n_components=5, basis="eigen").fit(np.zeros((10, 3)))


def test_landmarks_with_wrong_number_of_features(rng):
    match = r"landmarks has 2 features but X has 3.*\(n_landmarks, 3\)"
    with pytest.raises(ValueError, match=match):
        Nystroem(landmarks=rng.uniform(size=(5, 2))).fit(rng.uniform(size=(20, 3)))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_landmarks(bad, rng):
    points = rng.uniform(size=(5, 3))
    points[2, 1] = bad
    with pytest.raises(ValueError, match="landmarks contains NaN or infinity"):
        Nystroem(landmarks=points).fit(rng.uniform(size=(20, 3)))


def test_empty_and_one_dimensional_landmarks(rng):
    X = rng.uniform(size=(20, 3))
    with pytest.raises(ValueError, match="landmarks is an empty array"):
        Nystroem(landmarks=np.empty((0, 3))).fit(X)
    with pytest.raises(ValueError, match="Expected 2D array"):
        Nystroem(landmarks=np.ones(3)).fit(X)


def test_negative_landmarks_for_chi2(rng):
    with pytest.raises(ValueError, match=r"landmarks contains negative values.*chi2"):
        Nystroem(kernel="chi2", landmarks=-rng.uniform(size=(4, 3))).fit(rng.uniform(size=(9, 3)))


@pytest.mark.parametrize("landmarks", STRATEGIES)
def test_more_landmarks_than_samples_warns_and_clamps(landmarks, rng):
    X = rng.uniform(size=(12, 3))
    with pytest.warns(UserWarning, match="n_components > n_samples"):
        ny = Nystroem(n_components=50, landmarks=landmarks, random_state=0).fit(X)
    assert ny.components_.shape == (12, 3)
    Z = ny.transform(X)
    assert Z.shape == (12, 12) and np.isfinite(Z).all()
    np.testing.assert_allclose(Z @ Z.T, rbf_kernel(X), atol=1e-6)


@pytest.mark.parametrize("params, match", [
    (dict(landmarks="random"), r"'landmarks' parameter of Nystroem must be a str among"),
    (dict(basis="cholesky"), r"'basis' parameter of Nystroem must be a str among"),
    (dict(eigen_tol=1.5), r"'eigen_tol' parameter of Nystroem must be"),
    (dict(eigen_tol=-1e-3), r"'eigen_tol' parameter of Nystroem must be"),
    (dict(landmark_params=[1]), r"'landmark_params' parameter of Nystroem must be"),
])
def test_bad_parameters_are_named(params, match, rng):
    with pytest.raises(ValueError, match=match):
        Nystroem(**params).fit(rng.uniform(size=(10, 3)))


def test_bad_landmark_params(rng):
    X = rng.uniform(size=(30, 3))
    with pytest.raises(TypeError, match=r"landmark_params \['max_iter'\].*'renyi'.*\['n_passes'\]"):
        Nystroem(n_components=5, landmarks="renyi", landmark_params={"max_iter": 3}).fit(X)
    with pytest.raises(ValueError, match="n_passes must be a positive int"):
        Nystroem(n_components=5, landmarks="renyi", landmark_params={"n_passes": 0}).fit(X)
    with pytest.raises(ValueError, match="landmark_params configures a landmark strategy"):
        Nystroem(landmarks=X[:4], landmark_params={"n_passes": 2}).fit(X)


def test_precomputed_with_coordinate_strategies_is_an_error(rng):
    K = rbf_kernel(rng.uniform(size=(20, 3)))
    with pytest.raises(ValueError, match="'kmeans' needs the data's coordinates"):
        Nystroem(kernel="precomputed", n_components=5, landmarks="kmeans").fit(K)
    with pytest.raises(ValueError, match="landmarks given as points need a kernel"):
        Nystroem(kernel="precomputed", landmarks=K[:5]).fit(K)


def test_leverage_with_indefinite_kernel_is_a_clear_error(rng):
    X = rng.normal(size=(200, 4))
    with pytest.raises(ValueError, match=r"positive semi-definite kernel.*'uniform' or 'renyi'"):
        Nystroem(kernel="sigmoid", gamma=1.0, coef0=-1.0, n_components=20,
                 landmarks="leverage", random_state=0).fit(X)
