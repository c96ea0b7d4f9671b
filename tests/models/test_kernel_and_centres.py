"""Every kernel machine: one fitted ``kernel_``, centres from kernelmaps.landmarks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel

import kernelmaps.models._common as common
from kernelmaps.kernels import CallableKernel, PrecomputedKernel, get_kernel
from kernelmaps.landmarks import select_landmarks
from kernelmaps.models import KernelFisherDiscriminant, KernelMeanDistance, KernelRidge


def data(n=300, d=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)  # a non-linear class boundary
    return X, y


MODELS = {
    "ridge_exact": lambda **kw: KernelRidge(solver="exact", **kw),
    "ridge_nystrom": lambda **kw: KernelRidge(solver="nystrom", n_components=40, **kw),
    "fisher": lambda **kw: KernelFisherDiscriminant(**kw),
    "fisher_landmarks": lambda **kw: KernelFisherDiscriminant(n_components=40, **kw),
    "novelty": lambda **kw: KernelMeanDistance(**kw),
    "novelty_landmarks": lambda **kw: KernelMeanDistance(n_components=40, **kw),
}


def fit(model, X, y):
    return model.fit(X) if isinstance(model, KernelMeanDistance) else model.fit(X, y)


def output(model, X):
    if isinstance(model, KernelMeanDistance):
        return model.score_samples(X)
    if isinstance(model, KernelFisherDiscriminant):
        return model.transform(X)
    return model.predict(X)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_kernel_is_resolved_once_in_fit_and_never_again(name, monkeypatch):
    X, y = data()
    calls = []
    resolve = common.resolve_kernel

    def counting(*args, **kwargs):
        calls.append(args)
        return resolve(*args, **kwargs)

    monkeypatch.setattr(common, "resolve_kernel", counting)
    model = fit(MODELS[name](kernel="rbf", gamma=0.4, random_state=0), X, y)
    assert len(calls) == 1
    assert model.kernel_ == get_kernel("rbf", gamma=0.4)
    output(model, X[:7])
    assert len(calls) == 1  # predictions use kernel_, never the parameters


@pytest.mark.parametrize("name", sorted(MODELS))
def test_kernel_object_name_and_callable_give_the_same_model(name):
    X, y = data(n=120)  # a pairwise callable is called once per pair of rows
    named = fit(MODELS[name](kernel="rbf", gamma=0.4, random_state=0), X, y)
    as_object = fit(MODELS[name](kernel=get_kernel("rbf", gamma=0.4), random_state=0), X, y)
    # scikit-learn's KernelRidge rules: gamma/degree/coef0 are ignored for a callable,
    # which gets kernel_params as its keyword arguments.
    as_callable = fit(MODELS[name](
        kernel=lambda a, b, width: np.exp(-width * np.sum((a - b) ** 2)), gamma=123.0,
        degree=7, kernel_params={"width": 0.4}, random_state=0), X, y)
    assert isinstance(as_callable.kernel_, CallableKernel)
    assert as_callable.kernel_.params == {"width": 0.4}
    expected = output(named, X[:20])
    np.testing.assert_allclose(output(as_object, X[:20]), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(output(as_callable, X[:20]), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("model", [KernelFisherDiscriminant, KernelMeanDistance])
def test_precomputed_is_refused_where_new_points_need_kernel_values(model):
    X, y = data(n=30)
    with pytest.raises(ValueError, match=f"{model.__name__} does not take kernel='precomputed'"):
        fit(model(kernel="precomputed"), rbf_kernel(X), y)


def test_precomputed_kernel_ridge_stores_a_precomputed_kernel():
    X, y = data()
    K = rbf_kernel(X, gamma=0.4)
    for solver in ("exact", "nystrom"):
        model = KernelRidge(kernel="precomputed", solver=solver, n_components=40,
                            random_state=0).fit(K, y)
        same = KernelRidge(kernel="rbf", gamma=0.4, solver=solver, n_components=40,
                           random_state=0).fit(X, y)
        assert isinstance(model.kernel_, PrecomputedKernel)
        np.testing.assert_allclose(model.predict(K[:20]), same.predict(X[:20]), rtol=1e-6,
                                   atol=1e-6)
        # float32 kernel values: computed in float32, returned as float64, close.
        single = KernelRidge(kernel="precomputed", solver=solver, n_components=40,
                             random_state=0).fit(K.astype(np.float32), y)
        prediction = single.predict(K[:20].astype(np.float32))
        assert prediction.dtype == np.float64
        np.testing.assert_allclose(prediction, same.predict(X[:20]), atol=1e-3)


@pytest.mark.parametrize("model", [KernelFisherDiscriminant, KernelMeanDistance])
def test_uniform_landmarks_are_scikit_learns_draw(model):
    X, y = data()
    fitted = fit(model(kernel="rbf", gamma=0.4, n_components=25, random_state=3), X, y)
    expected, _ = select_landmarks("uniform", X, get_kernel("rbf", gamma=0.4), 25,
                                   random_state=3)
    np.testing.assert_array_equal(fitted.X_fit_, expected)
    np.testing.assert_array_equal(expected, X[np.random.RandomState(3).permutation(300)[:25]])


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans", "leverage", "renyi"])
def test_fisher_landmark_strategies(landmarks):
    X, y = data(n=600)
    X_test, y_test = data(n=300, seed=1)
    model = KernelFisherDiscriminant(kernel="rbf", gamma=0.5, n_components=80,
                                     landmarks=landmarks, random_state=0).fit(X, y)
    assert model.X_fit_.shape == (80, 3)
    assert model.score(X_test, y_test) > 0.9  # exact (600 points): 0.97
    rows = (model.X_fit_[:, None, :] == X[None]).all(axis=2).any(axis=1)
    assert rows.all() == (landmarks != "kmeans")  # k-means centres are not rows of X


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans", "leverage", "renyi"])
def test_novelty_landmark_strategies_approximate_the_exact_scores(landmarks):
    rng = np.random.RandomState(0)
    X, Z = rng.normal(size=(1500, 2)), rng.normal(size=(200, 2)) * 2
    exact = KernelMeanDistance(kernel="rbf", gamma=0.5).fit(X).score_samples(Z)
    approx = KernelMeanDistance(kernel="rbf", gamma=0.5, n_components=100,
                                landmarks=landmarks, random_state=0).fit(X)
    assert np.abs(approx.score_samples(Z) - exact).max() < 1e-2


@pytest.mark.parametrize("name", ["ridge_nystrom", "fisher_landmarks", "novelty_landmarks"])
def test_landmark_parameters_are_checked(name):
    X, y = data(n=100)
    with pytest.raises(ValueError, match="landmarks"):
        fit(MODELS[name](landmarks="farthest"), X, y)
    with pytest.raises(TypeError, match=r"landmark_params \['depth'\].*'renyi'"):
        fit(MODELS[name](landmarks="renyi", landmark_params={"depth": 2}), X, y)
    fitted = fit(MODELS[name](kernel="rbf", landmarks="renyi",
                              landmark_params={"n_passes": 1}, random_state=0), X, y)
    assert fitted.X_fit_.shape[0] == 40


@pytest.mark.parametrize("name", sorted(MODELS))
def test_sparse_and_float32_inputs(name):
    X, y = data()
    dense = fit(MODELS[name](kernel="rbf", gamma=0.4, random_state=0), X, y)
    sparse = fit(MODELS[name](kernel="rbf", gamma=0.4, random_state=0), sp.csr_matrix(X), y)
    np.testing.assert_allclose(output(sparse, sp.csr_matrix(X[:30])), output(dense, X[:30]),
                               rtol=1e-6, atol=1e-8)
    single = fit(MODELS[name](kernel="rbf", gamma=0.4, random_state=0), X.astype(np.float32), y)
    result = output(single, X[:30].astype(np.float32))
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, output(dense, X[:30]), rtol=2e-2, atol=2e-2)


def test_refit_does_not_keep_stale_centres():
    X, y = data()
    model = KernelRidge(kernel="rbf", solver="nystrom", n_components=20, random_state=0)
    assert hasattr(model.fit(X, y), "center_indices_")
    assert not hasattr(model.set_params(landmarks="kmeans").fit(X, y), "center_indices_")
    model = clone(model).set_params(landmarks="uniform").fit(X, y)
    assert not hasattr(model.set_params(solver="exact").fit(X, y), "center_indices_")
