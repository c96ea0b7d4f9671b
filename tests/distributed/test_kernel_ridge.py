"""KernelRidge(solver='nystrom') on dask arrays: FALKON with the K_nM passes chunk by chunk."""

from __future__ import annotations

import warnings

import dask.array as da
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import kernelmaps as km
from kernelmaps import get_kernel
from kernelmaps.models import KernelRidge, KernelRidgeClassifier
from kernelmaps.models._kernel_blocks import attainable_residual
from tests._float32_bound import float32_prediction_bound


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(3000, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.normal(size=3000)
    return X, y, da.from_array(X, chunks=(700, 4))


def closed_form(X, Y, centres, alpha, weights):
    r"""β = (K_nMᵀ W K_nM + α K_MM)⁻¹ K_nMᵀ W Y, directly (small n)."""
    kernel = get_kernel("rbf", gamma=0.5)
    K_nM, K_MM = kernel(X, centres), kernel(centres)
    H = K_nM.T @ (weights[:, None] * K_nM) + alpha * K_MM
    return np.linalg.solve(H, K_nM.T @ (weights[:, None] * Y))


def model(**params):
    return KernelRidge(**{**dict(alpha=1e-2, kernel="rbf", gamma=0.5, solver="nystrom",
                                 n_components=60, tol=1e-10, max_iter=300,
                                 random_state=0), **params})


def test_solves_the_nystrom_normal_equations(problem):
    X, y, dX = problem
    weights = np.random.RandomState(3).uniform(0.5, 2, size=3000)
    fitted = model().fit(dX, y, sample_weight=da.from_array(weights, chunks=500))
    assert fitted.solver_ == "nystrom" and fitted.X_fit_.shape == (60, 4)
    np.testing.assert_array_equal(fitted.X_fit_, X[fitted.center_indices_])
    beta = closed_form(X, y[:, None], fitted.X_fit_, 1e-2, weights)[:, 0]
    np.testing.assert_allclose(fitted.dual_coef_, beta, rtol=1e-6,
                               atol=1e-6 * np.abs(beta).max())
    assert fitted.kernel_ == get_kernel("rbf", gamma=0.5) and fitted.n_features_in_ == 4


def test_several_targets_and_float32(problem):
    # float32 chunks, float32 products over 64-row sub-blocks summed in float64 (issue 26):
    # CG reaches the attainable residual, and the predictions are within the first-order
    # effect of the float32 rounding of the kernel values plus CG's stopping error at that
    # residual of the float64 closed form on the same centres
    # (tests/_float32_bound.py); accumulating whole blocks in float32 put them ~1 %
    # off on some BLAS kernels.
    X, y, dX = problem
    Y = np.column_stack([y, 2 - y])
    floor = attainable_residual(np.float32, 60)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # CG reached tol
        fitted = model(tol=floor, max_iter=400).fit(dX.astype(np.float32), Y)
    assert fitted.dual_coef_.shape == (60, 2)
    expected, bound = float32_prediction_bound(get_kernel("rbf", gamma=0.5), X, fitted.X_fit_,
                                               X, Y, 1e-2, tol=floor)
    error = np.abs(fitted.predict(X.astype(np.float32)) - expected)
    assert np.all(error <= bound), (error.max(), bound.max())


def test_predict_on_dask_is_lazy_and_matches(problem):
    X, y, dX = problem
    fitted = model().fit(dX, y)
    lazy = fitted.predict(dX)
    assert isinstance(lazy, da.Array) and lazy.shape == (3000,)
    np.testing.assert_allclose(lazy.compute(), fitted.predict(X), rtol=1e-12, atol=1e-12)
    assert np.sqrt(np.mean((fitted.predict(X) - y) ** 2)) < 0.15 * y.std()  # a good fit


def test_uniform_centres_and_solution_equal_the_in_memory_fit(problem):
    # The same draw as in memory (one permutation from random_state): the same centres, and
    # FALKON's iterates equal up to the summation order of the chunk partials.
    X, y, dX = problem
    on_dask, in_memory = model().fit(dX, y), model().fit(X, y)
    np.testing.assert_array_equal(on_dask.center_indices_, in_memory.center_indices_)
    np.testing.assert_array_equal(on_dask.X_fit_, in_memory.X_fit_)
    np.testing.assert_allclose(on_dask.dual_coef_, in_memory.dual_coef_, rtol=0,
                               atol=1e-7 * np.abs(in_memory.dual_coef_).max())


def test_as_accurate_as_the_in_memory_solver(problem):
    X, y, dX = problem
    rng = np.random.RandomState(9)
    X_test = rng.uniform(-1, 1, size=(1000, 4))
    y_test = np.sin(3 * X_test[:, 0]) + X_test[:, 1] * X_test[:, 2]
    for landmarks in ("uniform", "kmeans"):
        on_dask = model(landmarks=landmarks, tol=1e-4).fit(dX, y)
        in_memory = model(landmarks=landmarks, tol=1e-4).fit(X, y)
        rmse = [np.sqrt(np.mean((m.predict(X_test) - y_test) ** 2))
                for m in (on_dask, in_memory)]
        assert rmse[0] < 1.1 * rmse[1] + 1e-3, (landmarks, rmse)
    assert not hasattr(on_dask, "center_indices_")  # k-means centres are not rows


def test_clear_errors(problem):
    _, y, dX = problem
    with pytest.raises(ValueError, match="solver='exact' needs the n × n kernel matrix"):
        model(solver="exact").fit(dX, y)
    with pytest.raises(ValueError, match="precomputed"):
        model(kernel="precomputed").fit(dX, y)
    with pytest.raises(ValueError, match="single positive alpha"):
        model(alpha=np.array([1.0, 2.0])).fit(dX, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="y contains NaN"):
        model().fit(dX, np.where(np.arange(3000) == 2500, np.nan, y))
    with pytest.raises(ValueError, match="n_components"):
        model(n_components=0).fit(dX, y)  # parameters validated as in memory


@pytest.mark.parametrize("budget", [0, 1000 * 60 * 8, None])
def test_chunk_caches_within_the_budget_give_the_in_memory_fit(problem, budget):
    # The budget is shared out evenly over the five chunks (700, 700, 700, 700 and 200 rows:
    # 200 rows' worth each, for 1,000 rows' worth); cached or recomputed, each chunk's
    # products are the in-memory ones, summed in another order.
    X, y, dX = problem
    with km.config_context(kernel_cache_bytes=budget):
        on_dask = model(tol=1e-8).fit(dX, y)
    in_memory = model(tol=1e-8).fit(X, y)
    info = on_dask.fit_info_
    assert info["path"] == {0: "recompute", None: "cached"}.get(budget, "partly cached")
    assert info["cached_rows"] == {0: 0, None: 3000}.get(budget, 1000)
    assert info["cache_bytes"] == 8 * 60 * info["cached_rows"] and info["chunks"] == 5
    # Both within the float64 first-order bound of the closed form (one ulp per kernel
    # value, CG stopped at tol): within twice it of each other.
    _, bound = float32_prediction_bound(get_kernel("rbf", gamma=0.5), X, in_memory.X_fit_, X,
                                        y, 1e-2, tol=1e-8, dtype=np.float64)
    assert np.all(np.abs(on_dask.predict(X) - in_memory.predict(X)) <= 2 * bound[:, 0])


def test_kernel_ridge_classifier_on_dask_equals_in_memory(problem):
    X, y, dX = problem
    labels = np.digitize(y, [-0.5, 0.5])  # three classes
    names = np.array(["low", "mid", "high"])[labels]
    params = dict(alpha=1e-2, gamma=0.5, solver="nystrom", n_components=60, tol=1e-8,
                  max_iter=300, random_state=0)
    on_dask = KernelRidgeClassifier(**params).fit(dX, da.from_array(names, chunks=700))
    in_memory = KernelRidgeClassifier(**params).fit(X, names)
    np.testing.assert_array_equal(on_dask.classes_, in_memory.classes_)
    np.testing.assert_array_equal(on_dask.center_indices_, in_memory.center_indices_)
    scores = in_memory.decision_function(X)
    _, bound = float32_prediction_bound(get_kernel("rbf", gamma=0.5), X, in_memory.X_fit_, X,
                                        in_memory._encode(names), 1e-2, tol=1e-8,
                                        dtype=np.float64)
    assert np.all(np.abs(on_dask.decision_function(X) - scores) <= 2 * bound)
    lazy = on_dask.predict(dX)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), in_memory.predict(X))
    assert on_dask.score(X, names) > 0.8


@pytest.mark.parametrize("cls", [KernelRidge, KernelRidgeClassifier])
def test_auto_solver_says_once_that_it_fits_by_falkon(problem, cls):
    # Issue 34: on a Dask collection solver="auto" is FALKON (the exact solve needs the
    # n × n kernel matrix in one process); it says so, once, as the in-memory fit does.
    _, y, dX = problem
    if cls is KernelRidgeClassifier:
        y = y > np.median(y)
    params = dict(alpha=1e-2, kernel="rbf", gamma=0.5, n_components=40, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = cls(solver="auto", **params).fit(dX, y)
    approximate = [w for w in caught
                   if issubclass(w.category, km.models.ApproximateSolverWarning)]
    assert len(approximate) == 1 and approximate[0].filename == __file__
    message = str(approximate[0].message)
    for part in ("M = 40", "X.compute()", "solver='exact'", "solver='falkon'",
                 "rms relative", "Dask collection"):
        assert part in message
    assert fitted.solver_ == "nystrom" and fitted.dual_coef_.shape == (40,)
    for solver in ("nystrom", "falkon"):  # chosen explicitly: nothing said
        with warnings.catch_warnings():
            warnings.simplefilter("error", km.models.ApproximateSolverWarning)
            cls(solver=solver, **params).fit(dX, y)


@pytest.mark.parametrize("jit", [True, False])
def test_the_chunks_sweep_as_jit_says_and_fit_info_reports_it(problem, jit):
    # Issue 33: each chunk's float32 cache is swept by the compiled kernel or by BLAS as the
    # client's jit setting says; fit_info_["sweep"] reports the chunks' choice as the
    # in-memory fit's does, and both fits are within the float32 bound of the float64 closed
    # form on the same centres (tests/_float32_bound.py, as test_several_targets_and_float32).
    if jit:
        pytest.importorskip("numba")
    X, y, dX = problem
    X32 = X.astype(np.float32)
    floor = attainable_residual(np.float32, 60)
    with km.config_context(jit=jit), warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # CG reached tol
        on_dask = model(tol=floor, max_iter=400).fit(dX.astype(np.float32), y)
        in_memory = model(tol=floor, max_iter=400).fit(X32, y)
    sweep = "compiled" if jit else "blas"
    assert on_dask.fit_info_["sweep"] == in_memory.fit_info_["sweep"] == sweep
    assert on_dask.fit_info_["chunk_sweeps"] == {sweep: 5}
    np.testing.assert_array_equal(on_dask.X_fit_, in_memory.X_fit_)
    expected, bound = float32_prediction_bound(get_kernel("rbf", gamma=0.5), X, on_dask.X_fit_,
                                               X, y, 1e-2, tol=floor)
    for fitted in (on_dask, in_memory):
        error = np.abs(fitted.predict(X32) - expected[:, 0])
        assert np.all(error <= bound[:, 0]), (error.max(), bound.max())


def test_jit_auto_decides_each_chunk_by_its_own_cache_and_max_iter(problem):
    # jit="auto": every chunk's system gets max_iter as its passes and compiles its sweep
    # when its own cache's elements × passes repay loading Numba (compiled_sweep's rule):
    # at this max_iter the 700-row chunks (700 × 60 values) do and the 200-row one does not
    # (with no passes reaching the chunks, none would).
    pytest.importorskip("numba")
    from kernelmaps._fastmath import JIT_AUTO_ELEMENTS
    from kernelmaps.models.interface import COMPILED_SWEEP_SAVING

    _, y, dX = problem
    passes = int(np.ceil(JIT_AUTO_ELEMENTS / (COMPILED_SWEEP_SAVING * 700 * 60)))
    assert 200 * 60 * passes * COMPILED_SWEEP_SAVING < JIT_AUTO_ELEMENTS
    with km.config_context(jit="auto"):
        fitted = model(tol=1e-3, max_iter=passes).fit(dX.astype(np.float32), y)
    assert fitted.fit_info_["sweep"] == "mixed"
    assert fitted.fit_info_["chunk_sweeps"] == {"compiled": 4, "blas": 1}


def test_sweep_summary_without_a_cache_and_after_widening(problem):
    # As NystromSystem.info: None when no chunk caches; "float64" once widen() switched
    # every chunk's products to float64.
    from kernelmaps.distributed._falkon import DaskNystromSystem

    X, y, dX = problem
    kernel, centres = get_kernel("rbf", gamma=0.5), X[:60].astype(np.float32)
    weights, Y = da.ones((3000, 1), chunks=(700, 1)), da.from_array(y[:, None], chunks=(700, 1))
    with km.config_context(jit=False):
        systems = {budget: DaskNystromSystem(kernel, dX.astype(np.float32), centres, weights, Y,
                                             cache_bytes=budget, passes=100)
                   for budget in (0, None)}
    assert systems[0].info["sweep"] is None and systems[0].info["chunk_sweeps"] == {}
    assert systems[None].info["sweep"] == "blas"
    systems[None].widen()
    assert systems[None].info["sweep"] == "float64"
    assert systems[None].info["chunk_sweeps"] == {"float64": 5}
