"""Nystroem beyond scikit-learn: precomputed subsets, indefinite and singular kernels."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel, sigmoid_kernel

import kernelmaps as km
from kernelmaps._engine import _blocks
from kernelmaps.kernels import IndefiniteKernelWarning, RBFKernel


def _no_warnings(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


def test_precomputed_with_fewer_components_than_samples(rng):
    X = rng.uniform(size=(200, 5))
    X_new = rng.uniform(size=(30, 5))
    K = rbf_kernel(X, gamma=0.5)
    K_new = rbf_kernel(X_new, X, gamma=0.5)
    ny_pre = km.Nystroem(kernel="precomputed", n_components=40, random_state=3).fit(K)
    ny_raw = km.Nystroem(kernel="rbf", gamma=0.5, n_components=40, random_state=3).fit(X)
    # The same landmarks, the same features as computing the kernel ourselves.
    np.testing.assert_array_equal(ny_pre.component_indices_, ny_raw.component_indices_)
    assert ny_pre.normalization_.shape == (40, 40)
    np.testing.assert_allclose(ny_pre.transform(K_new), ny_raw.transform(X_new), atol=1e-10)
    np.testing.assert_allclose(ny_pre.transform(K), ny_raw.transform(X), atol=1e-10)
    # Sparse precomputed rows are accepted too.
    np.testing.assert_allclose(ny_pre.transform(sp.csr_matrix(K_new)), ny_pre.transform(K_new))


def test_precomputed_requires_square_fit_matrix(rng):
    with pytest.raises(ValueError, match="square kernel matrix"):
        km.Nystroem(kernel="precomputed", n_components=5).fit(rng.uniform(size=(20, 10)))


def test_precomputed_transform_checks_training_columns(rng):
    K = rbf_kernel(rng.uniform(size=(20, 3)))
    ny = km.Nystroem(kernel="precomputed", n_components=5, random_state=0).fit(K)
    with pytest.raises(ValueError, match="X has 7 features, but Nystroem is expecting 20"):
        ny.transform(np.ones((3, 7)))


def test_indefinite_kernel_warns_with_negative_mass(rng):
    X = rng.normal(size=(80, 4))
    match = r"negative eigenvalue.*of the eigenvalue mass"
    with pytest.warns(IndefiniteKernelWarning, match=match):
        ny = km.Nystroem(kernel="sigmoid", gamma=1.0, coef0=-1.0, n_components=80,
                         random_state=0).fit(X)
    K = sigmoid_kernel(X, gamma=1.0, coef0=-1.0)
    eigenvalues = np.linalg.eigvalsh(K)
    assert eigenvalues.min() < -1e-6  # the premise: truly indefinite
    Z = ny.transform(X)
    assert np.isfinite(Z).all()
    # Dropping the negative directions gives the projection of K onto the PSD cone.
    w, U = np.linalg.eigh(K)
    K_plus = (U * np.clip(w, 0, None)) @ U.T
    np.testing.assert_allclose(Z @ Z.T, K_plus, atol=1e-8)


def test_psd_kernel_does_not_warn(rng):
    X = rng.uniform(size=(60, 3))
    _no_warnings(km.Nystroem(n_components=30, random_state=0).fit, X)


def test_duplicate_landmarks_singular_matrix(rng):
    X = np.vstack([rng.uniform(size=(15, 4))] * 3)  # every point three times
    ny = _no_warnings(km.Nystroem(gamma=2.0, n_components=45, random_state=0).fit, X)
    Z = ny.transform(X)
    assert np.isfinite(Z).all()
    np.testing.assert_allclose(Z @ Z.T, rbf_kernel(X, gamma=2.0), atol=1e-8)
    # Null directions are dropped, not amplified: features stay of the kernel's scale.
    assert np.abs(Z).max() < 10


def test_more_components_than_samples_warns_and_clamps(rng):
    X = rng.uniform(size=(12, 3))
    with pytest.warns(UserWarning, match="n_components > n_samples"):
        ny = km.Nystroem(n_components=50, random_state=0).fit(X)
    assert ny.transform(X).shape == (12, 12)
    assert ny.component_indices_.shape == (12,)
    np.testing.assert_allclose(ny.transform(X) @ ny.transform(X).T, rbf_kernel(X), atol=1e-10)


@pytest.mark.parametrize("gamma", [1e-12, 1e-6, 1e3, 1e9])
def test_extreme_gamma_stays_finite(gamma, rng):
    X = rng.uniform(size=(50, 3))
    ny = km.Nystroem(gamma=gamma, n_components=20, random_state=0).fit(X)
    Z = ny.transform(X)
    assert np.isfinite(Z).all()
    K = rbf_kernel(X, gamma=gamma)
    # Rank-deficient limits are reproduced: gamma→0 gives the all-ones kernel and
    # gamma→∞ gives the identity on the landmarks.
    idx = ny.component_indices_
    np.testing.assert_allclose((Z @ Z.T)[np.ix_(idx, idx)], K[np.ix_(idx, idx)], atol=1e-6)


def test_kernel_object_and_name_agree(rng):
    X = rng.uniform(size=(40, 3))
    by_name = km.Nystroem(kernel="rbf", gamma=0.3, n_components=10, random_state=0).fit(X)
    by_obj = km.Nystroem(kernel=RBFKernel(gamma=0.3), n_components=10, random_state=0).fit(X)
    np.testing.assert_array_equal(by_name.transform(X), by_obj.transform(X))
    with pytest.raises(ValueError, match="Don't pass gamma"):
        km.Nystroem(kernel=RBFKernel(gamma=0.3), gamma=1.0).fit(X)


def test_non_integer_degree_on_negative_products_is_an_error(rng):
    X = rng.normal(size=(30, 3))
    with pytest.raises(ValueError, match=r"non-finite value.*(degree|parameters)"):
        km.Nystroem(kernel="poly", degree=2.5, coef0=0.0, n_components=10,
                    random_state=0).fit(X)


def test_poly_kernel_exact_with_all_landmarks(rng):
    X = rng.uniform(size=(10, 4))
    Z = km.Nystroem(kernel="poly", degree=3.1, coef0=0.1, n_components=10).fit_transform(X)
    np.testing.assert_allclose(Z @ Z.T, polynomial_kernel(X, degree=3.1, coef0=0.1), atol=1e-8)


def test_huge_inputs_give_the_limit_not_nan():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    ny = km.Nystroem(n_components=3, random_state=0).fit(X)
    # ‖x‖² overflows to inf; the kernel's limit exp(-inf) = 0 is returned, not NaN.
    np.testing.assert_array_equal(ny.transform(np.array([[1e200, -1e200]])), 0.0)


def test_overflowing_kernel_raises_instead_of_nan():
    X = np.array([[1e200, 1e200], [1.0, 0.0], [0.5, 0.5]])
    with pytest.raises(ValueError, match="non-finite value"):
        km.Nystroem(n_components=3, random_state=0).fit(X)


@pytest.mark.blas_default_threads
@pytest.mark.parametrize("n_jobs", [None, 1, 2, -1])
def test_n_jobs_does_not_change_results(n_jobs, rng, monkeypatch):
    # Engine threads however small the work and busy the machine, so they really run.
    monkeypatch.setattr(_blocks, "FLOPS_PER_THREAD", 1)
    monkeypatch.setattr(_blocks, "free_cores", lambda cores: float(cores))
    X = rng.uniform(size=(3000, 5))

    def features(n_jobs):
        return km.Nystroem(n_components=50, random_state=0, n_jobs=n_jobs).fit(X).transform(X)

    with km.config_context(block_bytes=64 * 1024):  # many blocks
        serial = features(1)
        Z = features(n_jobs)
    # The same call on the same arrays: identical, whatever the thread count.
    np.testing.assert_array_equal(Z, serial)

    # Other blocks are other BLAS calls (another row count, another code path), equal to
    # rounding only. First-order bound of z = N k(x) between two evaluations: each x·c is
    # off by d·ε·|x||c|, so k by k·4γd·ε·R² (R the largest row norm), and each product
    # N k by m·ε·(|N| k): |Δz| ≤ (4γd·R² + 2m)·ε·(|N| k(x)).
    default_blocks = features(1)
    ny = km.Nystroem(n_components=50, random_state=0).fit(X)
    gamma, (m, d) = 1 / X.shape[1], ny.components_.shape
    R2 = float((X ** 2).sum(axis=1).max())
    bound = (4 * gamma * d * R2 + 2 * m) * np.finfo(np.float64).eps * (
        rbf_kernel(X, ny.components_, gamma=gamma) @ np.abs(ny.normalization_).T)
    assert np.all(np.abs(Z - default_blocks) <= bound)


def test_float32_landmark_matrix_computed_in_float64(rng):
    X = rng.uniform(size=(300, 4))
    Z32 = km.Nystroem(gamma=5.0, n_components=300, random_state=0).fit_transform(
        X.astype(np.float32))
    assert Z32.dtype == np.float32
    K = rbf_kernel(X, gamma=5.0)
    assert np.abs(Z32 @ Z32.T - K).max() < 1e-2
