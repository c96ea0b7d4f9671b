"""KernelCCA: against the exact regularised kernel CCA, a known answer, and the sklearn contract."""

from __future__ import annotations

import doctest
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cross_decomposition import CCA
from sklearn.frozen import FrozenEstimator
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import GridSearchCV
from sklearn.utils._param_validation import InvalidParameterError

import kernelmaps as km
from kernelmaps.models import KernelCCA
from kernelmaps.models import cca as cca_module
from tests._rounding import assert_equal_to_rounding

# scikit-learn's estimator checks run from the registry (tests/_estimators.py).


# ------------------------------------------------------------------ the exact answer
def centred(K):
    n = K.shape[0]
    H = np.eye(n) - 1.0 / n
    return H @ K @ H


def smoother_root(K, reg):
    """R = K̃^{1/2} (K̃ + n r I)^{-1/2} with n r = reg · tr K̃ (so R² is the ridge smoother)."""
    Kc = centred(K)
    eigenvalues, vectors = np.linalg.eigh(Kc)
    eigenvalues = np.maximum(eigenvalues, 0.0)
    nr = reg * np.trace(Kc)
    return (vectors * np.sqrt(eigenvalues / (eigenvalues + nr))) @ vectors.T


def exact_kernel_cca(K_x, K_y, reg, k):
    """Regularised kernel CCA from the full Gram matrices (Hardoon et al., 2004, dual form).

    max αᵀK̃xK̃yβ / √(αᵀ(K̃x² + n rx K̃x)α · βᵀ(K̃y² + n ry K̃y)β): with γ = K̃^{1/2}α the
    correlations are the singular values of Rx Ry, and the training variates K̃x α are
    √n Rx a for the left singular vectors a (likewise √n Ry b).
    """
    n = K_x.shape[0]
    R_x, R_y = smoother_root(K_x, reg), smoother_root(K_y, reg)
    a, rho, bt = np.linalg.svd(R_x @ R_y)
    return rho[:k], np.sqrt(n) * R_x @ a[:, :k], np.sqrt(n) * R_y @ bt[:k].T


@pytest.fixture
def views():
    rng = np.random.RandomState(0)
    t = rng.uniform(-1, 1, size=600)
    X = np.c_[t, rng.normal(size=600)] + 0.05 * rng.normal(size=(600, 2))
    Y = np.c_[t ** 2, rng.normal(size=600)] + 0.05 * rng.normal(size=(600, 2))
    return X, Y, t


@pytest.mark.parametrize("reg", [1e-4, 1e-3, 1e-2])
def test_equals_exact_regularised_kernel_cca_with_every_point_a_landmark(views, reg):
    X, Y, _ = views
    X, Y, n, k = X[:120], Y[:120], 120, 5
    x_kernel = dict(kernel="rbf", gamma=0.5)
    y_kernel = dict(kernel="laplacian", gamma=0.7)
    model = KernelCCA(n_components=k, reg=reg,
                      x_map=km.Nystroem(**x_kernel, n_components=n),
                      y_map=km.Nystroem(**y_kernel, n_components=n)).fit(X, Y)
    rho, F, G = exact_kernel_cca(pairwise_kernels(X, metric="rbf", gamma=0.5),
                                 pairwise_kernels(Y, metric="laplacian", gamma=0.7), reg, k)
    np.testing.assert_allclose(model.canonical_correlations_, rho, atol=1e-6)
    assert np.all(np.diff(rho) < -1e-4)  # distinct: the variates are defined up to sign
    # The training variates are the dual ones, up to one sign per pair.
    x_scores, y_scores = model.transform(X, Y)
    signs = np.sign(np.sum(x_scores * F, axis=0))
    np.testing.assert_allclose(x_scores, F * signs, atol=1e-6 * np.abs(F).max())
    np.testing.assert_allclose(y_scores, G * signs, atol=1e-6 * np.abs(G).max())


def test_canonical_directions_solve_the_constrained_problem(views):
    # wᵀ(Σxx + rx I)w = I, vᵀ(Σyy + ry I)v = I and wᵀΣxy v = diag(ρ) on the training data.
    X, Y, _ = views
    model = KernelCCA(n_components=3, reg=1e-3, random_state=0).fit(X, Y)
    F, G = model.transform(X, Y)
    n = X.shape[0]
    W, V = model.x_weights_, model.y_weights_
    np.testing.assert_allclose(F.T @ F / n + model.x_reg_ * W.T @ W, np.eye(3), atol=1e-8)
    np.testing.assert_allclose(G.T @ G / n + model.y_reg_ * V.T @ V, np.eye(3), atol=1e-8)
    np.testing.assert_allclose(F.T @ G / n, np.diag(model.canonical_correlations_), atol=1e-8)
    assert np.all(np.diff(model.canonical_correlations_) <= 0)
    # r = reg × the view's total variance in feature space
    Z = model.x_map_.transform(X)
    assert model.x_reg_ == pytest.approx(1e-3 * Z.var(axis=0).sum(), rel=1e-10)


# ------------------------------------------------------------------ a known answer
def test_finds_a_shared_nonlinear_latent_variable_linear_cca_cannot(views):
    # X sees t, Y sees t²: corr(t, t²) = 0 for symmetric t, so linear CCA finds nothing,
    # while f(x) = x₀², g(y) = y₀ are perfectly correlated up to the noise.
    X, Y, t = views
    train, test = slice(0, 400), slice(400, None)
    model = KernelCCA(n_components=1, random_state=0).fit(X[train], Y[train])
    assert model.canonical_correlations_[0] > 0.9
    held_out = model.score(X[test], Y[test])
    assert held_out > 0.95
    x_scores, y_scores = model.transform(X[test], Y[test])
    # the variates are functions of t² (not of t, nor of the noise columns)
    assert abs(np.corrcoef(x_scores[:, 0], t[test] ** 2)[0, 1]) > 0.95
    assert abs(np.corrcoef(y_scores[:, 0], t[test] ** 2)[0, 1]) > 0.95
    assert abs(np.corrcoef(x_scores[:, 0], t[test])[0, 1]) < 0.2
    x_lin, y_lin = CCA(n_components=1).fit(X[train], Y[train]).transform(X[test], Y[test])
    linear = abs(np.corrcoef(x_lin[:, 0], y_lin[:, 0])[0, 1])
    assert linear < 0.2 < held_out - 0.5


def test_grid_search_chooses_reg_on_held_out_correlation(views):
    X, Y, _ = views
    search = GridSearchCV(KernelCCA(n_components=1, random_state=0),
                          {"reg": [1e-3, 10.0]}, cv=3).fit(X, Y)
    assert search.best_params_ == {"reg": 1e-3}
    assert search.best_score_ > 0.95


# ------------------------------------------------------------------ maps per view
def test_any_map_per_view_fitted_or_not(views):
    X, Y, _ = views
    rff = km.RBFSampler(gamma=0.5, n_components=200)  # random_state None: seeded by the model
    fitted = km.Nystroem(gamma=0.5, n_components=50, random_state=3).fit(Y[:100])
    model = KernelCCA(n_components=1, x_map=rff, y_map=fitted, random_state=0).fit(X, Y)
    assert not hasattr(rff, "random_offset_")  # the given unfitted map is cloned
    assert model.x_map_.random_state is not None
    # the fitted map is used as it is (a copy, not refitted on this Y)
    np.testing.assert_array_equal(model.y_map_.components_, fitted.components_)
    assert model.y_map_ is not fitted
    assert model.y_weights_.shape == (50, 1)
    assert model.score(X, Y) > 0.9
    # same random_state → same model; the map's own seed is honoured when set
    again = KernelCCA(n_components=1, x_map=rff, y_map=fitted, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(again.x_weights_, model.x_weights_)
    other = KernelCCA(n_components=1, x_map=rff, y_map=fitted, random_state=1).fit(X, Y)
    assert not np.array_equal(other.x_map_.random_weights_, model.x_map_.random_weights_)


def test_frozen_map_survives_cloning(views):
    X, Y, _ = views
    fitted = km.Nystroem(gamma=0.5, n_components=40, random_state=3).fit(Y[:100])
    model = KernelCCA(n_components=1, y_map=FrozenEstimator(fitted), random_state=0)
    from sklearn.base import clone

    refit = clone(model).fit(X, Y)
    np.testing.assert_array_equal(refit.y_map_.components_, fitted.components_)


# ------------------------------------------------------------------ contract details
def test_fit_transform_is_fit_then_transform(views):
    X, Y, _ = views
    x_scores, y_scores = KernelCCA(random_state=0).fit_transform(X, Y)
    model = KernelCCA(random_state=0).fit(X, Y)
    np.testing.assert_allclose(x_scores, model.transform(X), rtol=1e-12)
    np.testing.assert_allclose(y_scores, model.transform(X, Y)[1], rtol=1e-12)
    # lists and 1-D second views are accepted (one feature)
    x_list = KernelCCA(random_state=0).fit(X.tolist(), Y[:, 0]).transform(X.tolist())
    assert x_list.shape == (600, 2)


def test_float32_sparse_pickle_and_pandas(views):
    X, Y, _ = views
    model = KernelCCA(random_state=0).fit(X, Y)
    X32, Y32 = X.astype(np.float32), Y.astype(np.float32)
    model32 = KernelCCA(random_state=0).fit(X32, Y32)
    x32, y32 = model32.transform(X32, Y32)
    assert x32.dtype == y32.dtype == np.float32
    # float32 Nyström features are ~1e-4 from the float64 ones and lose the directions below
    # float32 resolution: the strong first pair follows closely (the weak second pair, made
    # of many small directions, moves by ~1e-2)
    assert model32.canonical_correlations_[0] == pytest.approx(
        model.canonical_correlations_[0], abs=1e-3)
    x64 = model.transform(X)[:, 0]
    assert np.linalg.norm(x32[:, 0] - x64) < 5e-3 * np.linalg.norm(x64)
    sparse = KernelCCA(random_state=0).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    # Nyström features of sparse and dense input differ by rounding amplified by K_mm^{-1/2}
    # (~2e-5 here; ~5e-4 in scikit-learn's Nystroem); the variates follow to that level.
    dense = model.transform(X)
    np.testing.assert_allclose(sparse.transform(sp.csr_matrix(X)), dense,
                               atol=1e-4 * np.abs(dense).max())
    restored = pickle.loads(pickle.dumps(model))
    # Equal arrays at other addresses, where BLAS may take another path: equal to rounding of
    # the last product (Z - mean) @ weights, i.e. a few ulps per term of Σ|Z - mean||weights|
    # (the terms' scale, which cancellation makes larger than the output's); D terms per row.
    terms = np.abs(model.x_map_.transform(X) - model.x_mean_) @ np.abs(model.x_weights_)
    assert_equal_to_rounding(restored.transform(X), model.transform(X),
                             ulps=4 * model.x_weights_.shape[0], scale=terms.max())
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b"])
    out = KernelCCA(random_state=0).set_output(transform="pandas").fit(frame, Y)
    assert list(out.transform(frame).columns) == ["kernelcca0", "kernelcca1"]
    assert list(out.get_feature_names_out()) == ["kernelcca0", "kernelcca1"]


def test_errors_name_the_problem(views):
    X, Y, _ = views
    with pytest.raises(ValueError, match="requires y to be passed"):
        KernelCCA().fit(X, None)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        KernelCCA().fit(X, Y[:10])
    with pytest.raises(ValueError, match=r"n_components=60 is more than the 50 .*y_map 50"):
        KernelCCA(n_components=60, y_map=km.Nystroem(n_components=50)).fit(X, Y)
    with pytest.raises(InvalidParameterError, match="reg"):
        KernelCCA(reg=0.0).fit(X, Y)
    with pytest.raises(InvalidParameterError, match="x_map"):
        KernelCCA(x_map="rbf").fit(X, Y)
    model = KernelCCA(random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        model.transform(X, Y[:5])
    with pytest.raises(ValueError, match="sample_weight"):
        model.score(X, Y, sample_weight=np.ones(600))


def test_docstring_examples_run():
    failures, tried = doctest.testmod(cca_module, verbose=False, report=True)
    assert tried >= 6 and failures == 0
