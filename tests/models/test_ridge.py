"""KernelRidge: exact equals scikit-learn; Nyström + FALKON-preconditioned CG converges."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge as SklearnKernelRidge
from sklearn.metrics.pairwise import rbf_kernel

import kernelmaps as km
from kernelmaps import _cost
from kernelmaps.models import KernelRidge, KernelRidgeClassifier
from kernelmaps.models._falkon import ToleranceBelowPrecisionWarning
from kernelmaps.models._kernel_blocks import attainable_residual
from tests._float32_bound import float32_prediction_bound
from tests._helpers import peak_bytes

# scikit-learn's estimator checks run from the registry (tests/_estimators.py).


def regression_data(n=400, d=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X).sum(axis=1) + 0.1 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("params", [
    dict(kernel="linear", alpha=1.0),
    dict(kernel="rbf", gamma=0.3, alpha=0.1),
    dict(kernel="poly", degree=2, coef0=1.0, alpha=2.0),
    dict(kernel="laplacian", gamma=0.2, alpha=0.5),
    dict(kernel="sigmoid", gamma=0.01, coef0=0.0, alpha=5.0),
])
def test_exact_equals_sklearn(params):
    X, y = regression_data()
    Y = np.c_[y, y ** 2]
    ours = KernelRidge(**params, solver="exact").fit(X, Y)
    theirs = SklearnKernelRidge(**params).fit(X, Y)
    np.testing.assert_allclose(ours.predict(X[:50]), theirs.predict(X[:50]), rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-7, atol=1e-10)


def test_exact_sample_weight_and_alpha_per_target_equal_sklearn():
    X, y = regression_data()
    Y = np.c_[y, -y, 2 * y]
    w = np.random.RandomState(1).uniform(0.1, 2, size=len(y))
    y_before = Y.copy()
    alpha = np.array([0.1, 1.0, 0.1])
    ours = KernelRidge(kernel="rbf", gamma=0.3, alpha=alpha).fit(X, Y, sample_weight=w)
    theirs = SklearnKernelRidge(kernel="rbf", gamma=0.3, alpha=alpha).fit(X, Y, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(Y, y_before)  # the caller's y is not modified


def test_exact_precomputed_equals_sklearn():
    X, y = regression_data()
    K = rbf_kernel(X, gamma=0.3)
    ours = KernelRidge(kernel="precomputed", alpha=0.1).fit(K, y)
    theirs = SklearnKernelRidge(kernel="precomputed", alpha=0.1).fit(K, y)
    np.testing.assert_allclose(ours.predict(K[:20]), theirs.predict(K[:20]), rtol=1e-8)


def test_nystrom_with_all_centres_converges_to_exact():
    X, y = regression_data(n=300)
    exact = KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1, solver="exact").fit(X, y)
    nys = KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1, solver="nystrom", n_components=300,
                      tol=1e-10, max_iter=500, random_state=0).fit(X, y)
    # With every point a centre, the Nyström problem is the exact one.
    np.testing.assert_allclose(nys.predict(X), exact.predict(X), rtol=1e-5, atol=1e-6)


def test_nystrom_close_to_exact_with_fewer_centres():
    X, y = regression_data(n=3000, d=3)
    X_test, y_test = regression_data(n=1000, d=3, seed=1)
    exact = KernelRidge(kernel="rbf", gamma=0.3, alpha=1.0, solver="exact").fit(X, y)
    nys = KernelRidge(kernel="rbf", gamma=0.3, alpha=1.0, solver="nystrom", n_components=300,
                      random_state=0).fit(X, y)
    rmse_exact = np.sqrt(np.mean((exact.predict(X_test) - y_test) ** 2))
    rmse_nys = np.sqrt(np.mean((nys.predict(X_test) - y_test) ** 2))
    assert rmse_nys < 1.02 * rmse_exact
    assert nys.n_iter_ < 60  # the preconditioner works: unpreconditioned CG needs far more


def test_nystrom_multi_output_sparse_and_float32():
    X, y = regression_data(n=1000)
    Y = np.c_[y, np.cos(X[:, 0])]
    dense = KernelRidge(kernel="rbf", gamma=0.3, solver="nystrom", n_components=100,
                        random_state=0).fit(X, Y)
    assert dense.predict(X).shape == (1000, 2)
    sparse = KernelRidge(kernel="rbf", gamma=0.3, solver="nystrom", n_components=100,
                         random_state=0).fit(sp.csr_matrix(X), Y)
    np.testing.assert_allclose(sparse.predict(X), dense.predict(X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("weighted", [False, True])
def test_float32_nystrom_is_as_accurate_as_its_kernel_values(weighted):
    # float32 kernel blocks multiplied in float32 over 64-row sub-blocks, the sub-blocks
    # summed in float64 (issue 26): the fit reaches the attainable relative residual and is
    # then within the first-order effect of the kernel values' rounding plus CG's stopping
    # error at that residual (and the reference's float64 solve) of the float64 closed form.
    # Measured at 0.06-0.09 of the bound; float32 sums over whole blocks (issue 17) put it
    # ~1 % off, and a CG that followed rounding past its floor (no true residual) drifted to
    # 10× the bound.
    X, y = regression_data(n=3000, d=4)
    Y = np.c_[y, np.cos(X[:, 0])]
    weights = np.random.RandomState(2).uniform(0.2, 3, size=3000) if weighted else None
    X_test = regression_data(n=500, d=4, seed=1)[0]
    floor = attainable_residual(np.float32, 80)
    model = KernelRidge(kernel="rbf", gamma=0.3, alpha=1e-2, solver="nystrom",
                        n_components=80, tol=floor, max_iter=400, random_state=0)
    with warnings.catch_warnings():
        # This system is ill-conditioned (M = 80, α = 1e-2): CG stalls at ~2e-4 > floor and
        # stops there (a ConvergenceWarning) instead of running to max_iter on rounding.
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("error", ToleranceBelowPrecisionWarning)
        model.fit(X.astype(np.float32), Y, sample_weight=weights)
    assert model.n_iter_ < 400
    expected, bound = float32_prediction_bound(model.kernel_, X, model.X_fit_, X_test, Y,
                                               1e-2, tol=floor, weights=weights)
    error = np.abs(model.predict(X_test.astype(np.float32)) - expected)
    assert np.all(error <= bound), (error.max(), bound.max())


def test_a_tol_below_the_float32_floor_warns_and_stops_there():
    X, y = regression_data(n=2000, d=4)
    params = dict(kernel="rbf", gamma=0.3, alpha=0.1, solver="nystrom", n_components=60,
                  max_iter=300, random_state=0)
    floor = attainable_residual(np.float32, 60)
    assert 1e-5 < floor < 1e-4
    with pytest.warns(ToleranceBelowPrecisionWarning, match="below the relative residual"):
        low = KernelRidge(tol=1e-10, **params).fit(X.astype(np.float32), y)
    at_floor = KernelRidge(tol=floor, **params).fit(X.astype(np.float32), y)
    assert low.n_iter_ == at_floor.n_iter_ < 300
    np.testing.assert_array_equal(low.dual_coef_, at_floor.dual_coef_)
    with warnings.catch_warnings():  # float64 data: no floor at this tol
        warnings.simplefilter("error")
        exact = KernelRidge(tol=1e-10, **params).fit(X, y)
    assert exact.n_iter_ > at_floor.n_iter_


@pytest.mark.parametrize("budget", [0, 40 << 20])
def test_nystrom_memory_stays_within_the_kernel_cache_budget(budget):
    X, y = regression_data(n=40_000, d=3)
    model = KernelRidge(kernel="rbf", gamma=0.3, solver="nystrom", n_components=500,
                        max_iter=3, random_state=0)
    with warnings.catch_warnings(), km.config_context(block_bytes=1 << 20,
                                                      kernel_cache_bytes=budget):
        warnings.simplefilter("ignore")
        _, peak = peak_bytes(lambda: model.fit(X, y))
    # K_nM would be 160 MB. Beyond the cache: the M × M preconditioner buffer (2 MB), K_MM's
    # evaluation and one 1 MiB block (+ its float64 copy) per thread.
    assert peak < budget + 0.25 * X.shape[0] * 500 * 8
    info = model.fit_info_
    assert info["cache_bytes"] <= budget and info["cache_budget_bytes"] == budget
    assert info["path"] == ("recompute" if budget == 0 else "partly cached")
    assert info["cached_rows"] == budget // (500 * 8)


def test_auto_solver_stays_exact_as_sklearn_above_the_old_5000_rows():
    # Issue 34: auto switched to Nyström (M = 1,000) above 5,000 rows, silently; at 6,000 × 5
    # the exact fit needs 0.3 GB and a few seconds, so auto stays scikit-learn's model.
    X, y = regression_data(n=6000, d=5)
    params = dict(kernel="rbf", gamma=0.1, alpha=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", km.models.ApproximateSolverWarning)
        ours = KernelRidge(**params).fit(X, y)
    theirs = SklearnKernelRidge(**params).fit(X, y)
    assert ours.solver_ == "exact" and ours.dual_coef_.shape == (6000,)
    # Both solve (K + αI)c = y by Cholesky; K's condition number is at most 1 + n/α.
    np.testing.assert_allclose(ours.predict(X[:500]), theirs.predict(X[:500]),
                               rtol=0, atol=1e-9 * np.abs(theirs.predict(X[:500])).max())
    assert KernelRidge(kernel="rbf").fit(X[:50], y[:50]).solver_ == "exact"


@pytest.mark.parametrize("budget", ["seconds", "memory"])
@pytest.mark.parametrize("cls", [KernelRidge, KernelRidgeClassifier])
def test_auto_solver_over_the_budget_says_it_uses_falkon(monkeypatch, budget, cls):
    if budget == "seconds":
        monkeypatch.setattr(_cost, "EXACT_FIT_MAX_SECONDS", 0.0)
    else:
        monkeypatch.setattr(_cost, "available_memory", lambda: 1e6)
    X, y = regression_data(n=_cost.EXACT_FIT_ALWAYS_SAMPLES + 1, d=2)
    if cls is KernelRidgeClassifier:
        y = y > np.median(y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = cls(kernel="rbf", n_components=50, random_state=0).fit(X, y)
    approximate = [w for w in caught
                   if issubclass(w.category, km.models.ApproximateSolverWarning)]
    assert len(approximate) == 1 and approximate[0].filename == __file__
    message = str(approximate[0].message)
    for part in ("M = 50", "solver='exact'", "solver='falkon'", "rms relative",
                 "more than 0 s" if budget == "seconds" else "of the memory"):
        assert part in message
    assert model.solver_ == "nystrom" and model.dual_coef_.shape == (50,)
    for solver in ("exact", "falkon"):  # choosing either explicitly says nothing
        with warnings.catch_warnings():
            warnings.simplefilter("error", km.models.ApproximateSolverWarning)
            cls(kernel="rbf", n_components=50, solver=solver).fit(X[:200], y[:200])


@pytest.mark.parametrize("cls", [KernelRidge, KernelRidgeClassifier])
def test_falkon_is_the_nystrom_solver_under_its_own_name(cls):
    X, y = regression_data(n=200)
    if cls is KernelRidgeClassifier:
        y = y > np.median(y)
    params = dict(kernel="rbf", gamma=0.3, alpha=0.1, n_components=40, random_state=0)
    falkon = cls(solver="falkon", **params).fit(X, y)
    nystrom = cls(solver="nystrom", **params).fit(X, y)
    assert falkon.solver_ == nystrom.solver_ == "nystrom"
    assert falkon.fit_info_["solver"] == "nystrom" and falkon.n_iter_ == nystrom.n_iter_
    np.testing.assert_array_equal(falkon.dual_coef_, nystrom.dual_coef_)
    np.testing.assert_array_equal(falkon.predict(X), nystrom.predict(X))


def test_duplicate_centres_do_not_break_the_solver():
    X, y = regression_data(n=100)
    X = np.vstack([X] * 4)
    y = np.tile(y, 4)
    model = KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1, solver="nystrom",
                        n_components=200, random_state=0).fit(X, y)
    assert np.isfinite(model.predict(X)).all()


@pytest.mark.parametrize(("params", "error", "match"), [
    (dict(alpha=-1.0), ValueError, "alpha"),
    (dict(alpha=[1.0, 2.0, 3.0]), ValueError, "one per target"),
    (dict(kernel="rbf", gamma=-2.0), ValueError, "gamma"),
    (dict(kernel="student", kernel_params={"alpha": 0.0}), ValueError, "alpha must be"),
    (dict(kernel="matern", kernel_params={"nu": 0.7}), ValueError, "nu=0.7"),
    (dict(kernel="poly", degree=0.5), ValueError, "degree"),
    (dict(kernel="gausian"), ValueError, "did you mean 'gaussian'"),  # aliases are taken
    (dict(solver="nystrom", alpha=[1.0, 2.0]), ValueError, "single alpha"),
    (dict(solver="falkon", alpha=[1.0, 2.0]), ValueError, "single alpha"),
    (dict(solver="falcon"), ValueError, "did you mean 'falkon'"),
])
def test_bad_parameters(params, error, match):
    X, y = regression_data(n=30)
    with pytest.raises(error, match=match):
        KernelRidge(**params).fit(X, np.c_[y, y])


def test_bad_targets_and_shapes():
    X, y = regression_data(n=30)
    y_nan = y.copy()
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KernelRidge().fit(X, y_nan)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        KernelRidge().fit(X, y[:-1])
    model = KernelRidge(kernel="rbf").fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but KernelRidge is expecting 4"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="square"):
        KernelRidge(kernel="precomputed").fit(X, y)


def test_chi2_kernel_rejects_negative_inputs():
    X, y = regression_data(n=30)
    with pytest.raises(ValueError, match="negative values"):
        KernelRidge(kernel="chi2").fit(X, y)


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans", "leverage", "renyi"])
def test_landmark_strategies_for_centres(landmarks):
    X, y = regression_data(n=1500, d=3)
    X_test, y_test = regression_data(n=500, d=3, seed=1)
    model = KernelRidge(kernel="rbf", gamma=0.3, alpha=1.0, solver="nystrom", n_components=60,
                        landmarks=landmarks, random_state=0).fit(X, y)
    assert model.X_fit_.shape == (60, 3)
    rmse = np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2))
    assert rmse < 0.5  # the signal's sd is ≈ 1.1; the noise is 0.1
    # Rows of X are recorded as such; k-means centres are not rows.
    assert hasattr(model, "center_indices_") == (landmarks != "kmeans")
    if landmarks != "kmeans":
        np.testing.assert_array_equal(model.X_fit_, X[model.center_indices_])


def test_landmarks_with_precomputed_kernel():
    X, y = regression_data(n=300)
    K = rbf_kernel(X, gamma=0.3)
    model = KernelRidge(kernel="precomputed", alpha=0.1, solver="nystrom", n_components=50,
                        landmarks="leverage", tol=1e-12, max_iter=500, random_state=0).fit(K, y)
    same = KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1, solver="nystrom", n_components=50,
                       landmarks="leverage", tol=1e-12, max_iter=500, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.center_indices_, same.center_indices_)
    np.testing.assert_allclose(model.predict(K[:20]), same.predict(X[:20]), rtol=1e-6,
                               atol=1e-8)
    with pytest.raises(ValueError, match="kmeans"):
        KernelRidge(kernel="precomputed", solver="nystrom", n_components=10,
                    landmarks="kmeans").fit(K, y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cached_and_recomputed_passes_give_the_same_fit(dtype):
    # The cache holds the kernel values in X's dtype and every product is accumulated in
    # float64 either way; the blocks are evaluated into other memory (the cache, a scratch
    # buffer), where BLAS may round a value differently by an ulp of X's dtype.
    X, y = regression_data(n=3000, d=4)
    X = X.astype(dtype)
    Y = np.c_[y, np.cos(X[:, 0])]
    fits = {}
    tol = max(1e-8, attainable_residual(dtype, 100))  # float32: the products' floor
    for budget in (0, 1500 * 100 * 8, None):  # recompute, half the rows (float64), all
        model = KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1, solver="nystrom",
                            n_components=100, tol=tol, max_iter=200, random_state=0)
        with km.config_context(kernel_cache_bytes=budget, block_bytes=1 << 16):
            fits[budget] = model.fit(X, Y)
    assert fits[0].fit_info_["path"] == "recompute"
    assert fits[None].fit_info_["path"] == "cached"
    assert fits[1500 * 100 * 8].fit_info_["path"] == (
        "partly cached" if dtype == np.float64 else "cached")
    # Each fit is within the first-order bound (its kernel values' rounding, CG stopped at
    # tol; tests/_float32_bound.py) of the float64 closed form, so within twice that
    # bound of each other.
    reference = fits[0]
    _, bound = float32_prediction_bound(reference.kernel_, X, reference.X_fit_, X, Y, 0.1,
                                        tol=tol, dtype=dtype)
    for budget in (1500 * 100 * 8, None):
        assert fits[budget].n_iter_ <= 200
        difference = np.abs(fits[budget].predict(X) - reference.predict(X))
        assert np.all(difference <= 2 * bound), (difference.max(), bound.max())


def test_verbose_reports_every_iteration_and_is_quiet_by_default(caplog, capsys):
    from kernelmaps.models._progress import FitProgress

    X, y = regression_data(n=2000, d=3)
    params = dict(kernel="rbf", gamma=0.3, alpha=0.1, solver="nystrom", n_components=50,
                  random_state=0)
    with caplog.at_level("INFO", logger="kernelmaps"):
        quiet = KernelRidge(**params).fit(X, y)
    assert not caplog.records and capsys.readouterr() == ("", "")
    # The logging backend (rich/tqdm draw on the terminal): one record per iteration.
    original = FitProgress.__init__

    def logging_backend(self, verbose, owner, *, backend=None):
        original(self, verbose, owner, backend="logging")

    with pytest.MonkeyPatch.context() as patch, caplog.at_level("INFO", logger="kernelmaps"):
        patch.setattr(FitProgress, "__init__", logging_backend)
        loud = KernelRidge(**params, verbose=1).fit(X, y)
    iterations = [r.getMessage() for r in caplog.records if "CG iteration" in r.getMessage()]
    assert len(iterations) == loud.n_iter_ == quiet.n_iter_
    assert "residual" in iterations[-1] and "ETA" in iterations[-1]
    assert any("converged" in r.getMessage() for r in caplog.records)
    np.testing.assert_array_equal(loud.dual_coef_, quiet.dual_coef_)  # the same fit


@pytest.mark.parametrize("backend", ["rich", "tqdm"])
def test_verbose_progress_bars(backend, capsys):
    pytest.importorskip(backend)
    from kernelmaps.models._progress import FitProgress

    progress = FitProgress(1, "KernelRidge", backend=backend)
    progress.start_iterations(100, 1e-4)
    for k, residual in enumerate([1e-1, 1e-2, 1e-3], start=1):
        progress.iteration(k, residual)
    progress.finish(3, converged=False)
    assert "KernelRidge" in capsys.readouterr().err


def test_eta_extrapolates_the_convergence_rate():
    from kernelmaps.models._progress import FitProgress

    progress = FitProgress(0, "KernelRidge")
    progress.start_iterations(100, 1e-6)
    progress.eta(1, 1e-1)
    _, left = progress.eta(3, 1e-3)  # ×0.1 per iteration: 3 more to reach 1e-6
    assert left == 3
    _, left = progress.eta(4, 1e-3)  # stalled: at most max_iter - 4
    assert 3 < left <= 96


def test_estimate_fit_cost_matches_what_the_fit_does():
    from kernelmaps.models import estimate_fit_cost

    X, y = regression_data(n=4000, d=5)
    X = X.astype(np.float32)
    model = KernelRidge(kernel="rbf", gamma=0.3, solver="nystrom", n_components=200,
                        random_state=0)
    for budget, path in ((None, "cached"), (0, "recompute"), (4000 * 200 * 2, "partly cached")):
        with km.config_context(kernel_cache_bytes=budget):
            cost = estimate_fit_cost(model, X)
            fitted = clone(model).fit(X, y)
        assert cost.path == fitted.fit_info_["path"] == path
        assert cost.cache_bytes == fitted.fit_info_["cache_bytes"]
        # Memory from the shapes: the cache, the 200 × 200 buffer and K_MM, Y and weights.
        assert cost.memory_bytes >= cost.cache_bytes + 8 * 200 * 200 + 8 * 4000 * 2
        assert cost.first_pass_s > 0 and cost.iteration_s > 0
        assert cost.seconds(20) > cost.seconds(10) > 0
    assert "per CG iteration" in str(cost)
    exact = estimate_fit_cost(KernelRidge(kernel="rbf"), X[:1000])
    assert exact.solver == "exact" and exact.memory_bytes >= 8 * 1000 * 1000


@pytest.mark.parametrize("value", [-1, 1.5, "half", True])
def test_kernel_cache_bytes_setting_is_checked(value):
    with pytest.raises(ValueError, match="kernel_cache_bytes must be None"):
        km.set_config(kernel_cache_bytes=value)
    with pytest.raises(ValueError, match="kernel_cache_bytes"), \
            km.config_context(kernel_cache_bytes=value):
        pass
    assert km.get_config()["kernel_cache_bytes"] is None  # unchanged
    with km.config_context(kernel_cache_bytes=0):
        assert km.get_config()["kernel_cache_bytes"] == 0


def test_float32_products_keep_the_float64_fit_at_fixed_iterations():
    # The benchmark's regime (issue 26): few CG iterations, many rows per centre. The float32
    # fit (float32 products over 64-row sub-blocks, float64 sums) follows the float64 fit's
    # iterates to the rounding of its kernel values: measured 1.3e-5 rms relative on
    # Fashion-MNIST (20,000 rows, M = 1,000, 10 iterations; 7.7e-6 with float64 products),
    # against a test-error spread over seeds of 3e-3. Here 1.2e-6-1.8e-6 under the SkylakeX,
    # Sandybridge and Prescott kernels of OpenBLAS (float64 products: 4.7e-7); 2e-5 fails a
    # path that lost an order of magnitude.
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(6000, 10))
    Y = np.c_[np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2], np.cos(2 * X[:, 3])]
    Y += 0.1 * rng.normal(size=Y.shape)
    params = dict(kernel="rbf", gamma=0.5, alpha=1e-6 * 6000, solver="nystrom",
                  n_components=400, max_iter=10, tol=1e-3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 10 iterations on purpose
        wide = KernelRidge(**params).fit(X, Y)
        narrow = KernelRidge(**params).fit(X.astype(np.float32), Y)
    assert narrow.n_iter_ == wide.n_iter_ == 10
    difference = narrow.predict(X.astype(np.float32)) - wide.predict(X)
    relative = np.sqrt(np.mean(difference ** 2) / np.mean(wide.predict(X) ** 2))
    assert relative < 2e-5, relative


def test_the_sweeps_sub_block_products_equal_the_whole_products():
    from kernelmaps.models._kernel_blocks import cross_block, gram_block, widened_gram_block

    rng = np.random.RandomState(0)
    K32 = rng.uniform(0.0, 1.0, size=(203, 50)).astype(np.float32)  # 3 sub-blocks + 11 rows
    w, V, Y = rng.uniform(0.5, 2.0, 203), rng.normal(size=(50, 3)), rng.normal(size=(203, 2))
    K = K32.astype(np.float64)
    exact = K.T @ (w[:, None] * (K @ V))
    scale = np.abs(K).T @ (w[:, None] * (np.abs(K) @ np.abs(V)))  # the sums' sizes
    # float64 products of the float32 entries: 203 + 50 terms a sum, ε₆₄ each.
    np.testing.assert_array_less(np.abs(widened_gram_block(K32, w, V) - exact),
                                 (203 + 50) * np.finfo(np.float64).eps * scale)
    # float32 products over 64-row sub-blocks, float64 sums across them:
    # (M + b + 2) ε₃₂ a product (attainable_residual's sums, as a worst case).
    bound = (50 + 64 + 2) * np.finfo(np.float32).eps * scale
    np.testing.assert_array_less(np.abs(gram_block(K32, w, V) - exact), bound)
    np.testing.assert_array_less(np.abs(gram_block(K32, None, V) - K.T @ (K @ V)),
                                 (50 + 64 + 2) * np.finfo(np.float32).eps
                                 * (np.abs(K).T @ (np.abs(K) @ np.abs(V))))
    np.testing.assert_array_less(np.abs(cross_block(K32, w, Y) - K.T @ (w[:, None] * Y)),
                                 (64 + 2) * np.finfo(np.float32).eps
                                 * (np.abs(K).T @ (w[:, None] * np.abs(Y))))


def test_the_compiled_sweep_equals_the_blas_sweep_to_rounding():
    # jit=True sweeps float32 blocks with the Numba kernel: the same 64-row sub-blocks and
    # float64 sums as the BLAS path, within the same bound of the float64 product, and the
    # same numbers for the same call.
    pytest.importorskip("numba")
    from kernelmaps.models._kernel_blocks import gram_block

    rng = np.random.RandomState(1)
    # odd rows, columns and targets; 4 columns at a time from t = 4 (4, 4 + 1, 4 + 2 + 1, 2 × 4,
    # 2 × 4 + 2), each sub-block read once first from STREAM_COLUMNS = 8 (t = 8, 10)
    for n, M, t in [(203, 50, 3), (130, 37, 1), (77, 41, 5), (90, 33, 4), (70, 29, 7),
                    (66, 31, 8), (139, 43, 10)]:
        K32 = rng.uniform(0.0, 1.0, size=(n, M)).astype(np.float32)
        V = rng.normal(size=(M, t)) * 1e30  # scaled to float32's range first
        for w in (rng.uniform(0.5, 2.0, n), None):
            unit = np.ones(n) if w is None else w
            K = K32.astype(np.float64)
            exact = K.T @ (unit[:, None] * (K @ V))
            scale = np.abs(K).T @ (unit[:, None] * (np.abs(K) @ np.abs(V)))
            compiled = gram_block(K32, w, V, compiled=True)
            # (M + b + 2) ε₃₂ a product, as for the BLAS path (the test above).
            np.testing.assert_array_less(np.abs(compiled - exact),
                                         (M + 64 + 2) * np.finfo(np.float32).eps * scale)
            np.testing.assert_array_equal(compiled, gram_block(K32, w, V, compiled=True))


def test_jit_auto_compiles_the_sweep_by_the_calls_known_work_only():
    # jit="auto" compiles the cache's sweep when elements × passes × COMPILED_SWEEP_SAVING
    # (NumPy cosines' time saved) reaches JIT_AUTO_ELEMENTS (the load of Numba), up to
    # COMPILED_SWEEP_MAX_COLUMNS columns, float32 only; the same answer in any process.
    pytest.importorskip("numba")
    from kernelmaps._fastmath import JIT_AUTO_ELEMENTS
    from kernelmaps.models._kernel_blocks import (
        COMPILED_SWEEP_MAX_COLUMNS,
        COMPILED_SWEEP_SAVING,
        compiled_sweep,
    )

    passes = 20
    enough = int(np.ceil(JIT_AUTO_ELEMENTS / (COMPILED_SWEEP_SAVING * passes)))  # elements
    with km.config_context(jit="auto"):
        for _ in range(2):  # deterministic: the second answer (Numba now loaded) is the first
            assert compiled_sweep(np.float32, enough, 1, passes)
            assert not compiled_sweep(np.float32, enough - 2, 1, passes)
            assert compiled_sweep(np.float32, enough, COMPILED_SWEEP_MAX_COLUMNS, passes)
            assert not compiled_sweep(np.float32, enough, COMPILED_SWEEP_MAX_COLUMNS + 1,
                                      passes)
            assert not compiled_sweep(np.float32, enough, 1, 0)  # passes unknown
            assert not compiled_sweep(np.float64, 100 * enough, 1, passes)
    with km.config_context(jit=False):
        assert not compiled_sweep(np.float32, 100 * enough, 1, passes)
    with km.config_context(jit=True):  # forced: any work, any columns
        assert compiled_sweep(np.float32, 1, 26, 1)
        assert not compiled_sweep(np.float64, 1, 1, 1)


def test_the_sweep_chosen_is_in_fit_info_and_agrees_with_blas_to_the_float32_bound():
    pytest.importorskip("numba")
    from kernelmaps.kernels import RBFKernel
    from kernelmaps.models._nystrom import NystromSystem

    X, y = regression_data(n=1000, d=4)
    X = X.astype(np.float32)
    model = KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1, solver="nystrom",
                        n_components=50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ToleranceBelowPrecisionWarning)
        assert model.fit(X, y).fit_info_["sweep"] == "blas"  # 5e4 elements: far below
        with km.config_context(jit=True):
            assert clone(model).fit(X, y).fit_info_["sweep"] == "compiled"
        assert clone(model).fit(X.astype(np.float64), y).fit_info_["sweep"] == "blas"
        with km.config_context(kernel_cache_bytes=0):
            assert clone(model).fit(X, y).fit_info_["sweep"] is None
    kernel, C = RBFKernel(gamma=0.3), X[:300]
    rng = np.random.RandomState(2)
    Y, V = rng.normal(size=(1000, 2)), rng.normal(size=(300, 2))
    systems = {passes: NystromSystem(kernel, X, C, np.ones(1000), Y, passes=passes)
               for passes in (20, 10**12)}  # 10¹² passes: the work pays for the load
    assert systems[20].info["sweep"] == "blas"
    assert systems[10**12].info["sweep"] == "compiled"
    K = systems[20]._cache.astype(np.float64)
    scale = np.abs(K).T @ (np.abs(K) @ np.abs(V))
    # Each within (M + b + 2) ε₃₂ of the float64 product (test_the_sweeps_sub_block_...),
    # so within twice that of each other.
    bound = 2 * (300 + 64 + 2) * np.finfo(np.float32).eps * scale
    blas, compiled = systems[20].gram_times(V), systems[10**12].gram_times(V)
    np.testing.assert_array_less(np.abs(compiled - blas), bound)
    assert not np.array_equal(compiled, blas)  # the two paths did run
    systems[10**12].widen()
    assert systems[10**12].info["sweep"] == "float64"


@pytest.mark.parametrize("jit", [False, True])
def test_the_cached_sweep_gives_the_same_fit_for_any_block_size(jit):
    # Block sizes cut the engine's blocks (and so the float64 sums' order), never the
    # 64-row sub-blocks: fits agree to rounding, and a repeated fit is identical.
    if jit:
        pytest.importorskip("numba")
    X, y = regression_data(n=3000, d=4)
    X = X.astype(np.float32)
    Y = np.c_[y, np.cos(X[:, 0])]
    tol = attainable_residual(np.float32, 100)
    model = KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1, solver="nystrom",
                        n_components=100, tol=tol, max_iter=200, random_state=0)
    predictions = []
    for block_bytes in (1 << 16, 1 << 16, 1 << 22):
        with warnings.catch_warnings(), km.config_context(block_bytes=block_bytes, jit=jit):
            warnings.simplefilter("ignore", ToleranceBelowPrecisionWarning)
            fitted = clone(model).fit(X, Y)
        assert fitted.fit_info_["path"] == "cached"
        predictions.append(fitted.predict(X))
    np.testing.assert_array_equal(predictions[0], predictions[1])
    # Both within the first-order bound of the float64 closed form (tests/_float32_bound.py),
    # so within twice it of each other.
    _, bound = float32_prediction_bound(fitted.kernel_, X, fitted.X_fit_, X, Y, 0.1, tol=tol,
                                        dtype=np.float32)
    assert np.all(np.abs(predictions[2] - predictions[0]) <= 2 * bound)


@pytest.mark.parametrize("n_features", [20, 100])  # the two fused first passes
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_fused_rbf_first_pass_caches_the_kernel_and_its_right_hand_side(n_features,
                                                                           dtype):
    from kernelmaps.kernels import RBFKernel
    from kernelmaps.models._kernel_blocks import cross_block
    from kernelmaps.models._nystrom import FUSED_RBF_MAX_FEATURES, NystromSystem

    rng = np.random.RandomState(1)
    X = rng.uniform(0.0, 4.0, size=(517, n_features)).astype(dtype)  # unscaled, ragged
    C, w, Y = X[:40].copy(), rng.uniform(0.5, 2.0, 517), rng.normal(size=(517, 3))
    kernel = RBFKernel(gamma=0.5 / n_features)
    system = NystromSystem(kernel, X, C, w, Y)
    assert system._rbf is not None and system.info["path"] == "cached"
    K = kernel.evaluate(X, C)
    # Beyond 64 features the kernel's own operations in its order, but a GEMM of another
    # block shape may sum in another order; up to 64 the norms ride in the GEMM. Either way
    # the entries differ by the exponent's rounding, which the kernel bounds (both sides).
    assert n_features <= FUSED_RBF_MAX_FEATURES or isinstance(system._rbf, tuple)
    np.testing.assert_array_less(np.abs(system._cache - K),
                                 2 * kernel.rounding_error(X, C, K) + 1e-300)
    # The right-hand side is the sweep's product over the cached block, to its rounding.
    expected = cross_block(K, w, Y)
    eps = np.finfo(dtype).eps
    np.testing.assert_array_less(np.abs(system.rhs - expected),
                                 (64 + 2) * eps * (np.abs(K).T @ (w[:, None] * np.abs(Y)))
                                 + 1e-300)


def test_the_fit_reports_its_first_touch_within_its_first_pass():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)).astype(np.float32)
    model = KernelRidge(kernel="rbf", solver="nystrom", n_components=40, alpha=1.0,
                        random_state=0).fit(X, X[:, 0])
    info = model.fit_info_
    assert info["path"] == "cached"
    assert 0.0 <= info["first_touch_s"] <= info["first_pass_s"]
