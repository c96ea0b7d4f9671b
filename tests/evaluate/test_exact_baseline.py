"""The exact-kernel baseline of compare: Cholesky features / closed-form ridge (issue 12)."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils import check_random_state

from kernelmaps import _cost
from kernelmaps._linalg import cholesky_in_place
from kernelmaps._ridge import DEFAULT_ALPHAS
from kernelmaps.evaluate import MODELS, _exact, compare
from kernelmaps.evaluate import comparison as comparison_module
from kernelmaps.evaluate._splits import Split, make_splits
from kernelmaps.evaluate.error import _seed_values
from kernelmaps.kernels import get_kernel
from kernelmaps.maps import Nystroem


def _old_baseline_score(X, y, kernel, model):
    """Today's (before issue 12) baseline: the model on Nyström with every training row as
    a landmark, on the split compare makes with random_state=0."""
    split_seed = _seed_values(check_random_state(0), 2)[0]
    split = make_splits(X, y, "classification", test_size=0.25, cv=None, test_data=None,
                        seed=split_seed)[0]
    nystroem = Nystroem(kernel=kernel, n_components=split.X_train.shape[0],
                        random_state=0).fit(split.X_train)
    fitted = MODELS[model][0]().fit(nystroem.transform(split.X_train), split.y_train)
    return fitted.score(nystroem.transform(split.X_test), split.y_test)


@pytest.mark.parametrize(("rows", "gamma", "model"), [
    (None, 0.01, "ridge"),      # closed form, all of digits
    (None, 0.001, "ridge"),     # a smoother kernel: a worse-conditioned K
    (600, 0.01, "svm"),         # Cholesky features
    (400, 0.001, "logistic"),
])
def test_baseline_scores_equal_the_nystroem_baseline(rows, gamma, model):
    X, y = load_digits(return_X_y=True)
    X, y = X[:rows], y[:rows]
    kernel = get_kernel("rbf", gamma=gamma)
    table = compare(X, y, kernel=kernel, methods=["rbf_sampler"], n_components=[10],
                    n_seeds=1, model=model, exact=True)
    exact = table[table.method == "exact"].iloc[0]
    assert exact["score"] == pytest.approx(_old_baseline_score(X, y, kernel, model), abs=1e-6)
    assert exact["n_features_out"] == exact["n_train"]
    assert exact["error"] < 1e-12  # 0 for the closed form, rounding for features


def test_closed_form_ridge_matches_ridge_on_cholesky_features_for_regression():
    rng = np.random.RandomState(0)
    X = rng.rand(200, 3)
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.1 * rng.randn(200)
    kernel = get_kernel("rbf", gamma=2.0)
    closed = compare(X, y, kernel=kernel, methods=["rbf_sampler"], n_components=[5],
                     n_seeds=1, model=Ridge(alpha=0.3), exact=True, task="regression")
    assert _exact.closed_form_alpha(Ridge(alpha=0.3)) == 0.3
    assert _exact.closed_form_alpha(Ridge(alpha=0.3, fit_intercept=False)) is None
    # The same Ridge inside a pipeline is fitted on the Cholesky features instead.
    features = compare(X, y, kernel=kernel, methods=["rbf_sampler"], n_components=[5],
                       n_seeds=1, model=make_pipeline(Ridge(alpha=0.3)), exact=True,
                       task="regression")
    score = closed.loc[closed.method == "exact", "score"].iloc[0]
    assert score > 0.5
    split_seed = _seed_values(check_random_state(0), 2)[0]
    split = make_splits(X, y, "regression", test_size=0.25, cv=None, test_data=None,
                        seed=split_seed)[0]
    nystroem = Nystroem(kernel=kernel, n_components=150, random_state=0).fit(split.X_train)
    reference = Ridge(alpha=0.3).fit(nystroem.transform(split.X_train), split.y_train)
    assert score == pytest.approx(reference.score(nystroem.transform(split.X_test),
                                                  split.y_test), abs=1e-9)
    assert features.loc[features.method == "exact", "score"].iloc[0] == pytest.approx(score,
                                                                                      abs=1e-9)


def test_cholesky_in_place_singular_matrix_gets_jitter_and_keeps_lower_triangle():
    rng = np.random.RandomState(0)
    A = rng.randn(300, 4)
    K = A @ A.T  # rank 4: not positive definite
    original = K.copy()
    R, jitter = cholesky_in_place(K, 0.0, floor=1e-10)
    assert R is K and jitter > 0
    assert np.allclose(np.tril(K, -1), np.tril(original, -1))  # restored after failures
    upper = np.triu(R)
    np.testing.assert_allclose(upper.T @ upper, original + jitter * np.eye(300), atol=1e-9)
    with pytest.raises(ValueError, match="kernel matrix is not positive definite"):
        cholesky_in_place(-1e30 * np.eye(3), 0.0)
    with pytest.raises(ValueError, match="C-contiguous float64"):
        cholesky_in_place(np.eye(3, dtype=np.float32), 0.0)


def test_duplicate_rows_need_jitter_and_say_so():
    X, y = load_digits(return_X_y=True)
    X = np.vstack([X[:150], X[:150]])  # every training row has twins
    y = np.concatenate([y[:150], y[:150]])
    table = compare(X, y, kernel=get_kernel("rbf", gamma=0.01), methods=["rbf_sampler"],
                    n_components=[10], n_seeds=1, model="svm", exact=True)
    exact = table[table.method == "exact"].iloc[0]
    assert "jitter" in exact["notes"] and exact["error"] < 1e-8 and exact["score"] > 0.8


@pytest.mark.parametrize(("model", "alpha", "phases"), [
    # 150 training rows: α by leave-one-out on all of them, whose eigh replaces the Cholesky.
    ("ridge", None, [_exact.PHASES[0], _exact.alpha_phase(150), _exact.PHASES[2]]),
    ("ridge", 1e-2, list(_exact.PHASES[:3])), ("svm", None, list(_exact.PHASES))])
def test_phases_are_reported(model, alpha, phases):
    X, y = load_digits(return_X_y=True)
    seen = []
    settings = {"methods": ["rbf_sampler"], "n_components": [10], "n_seeds": 1,
                "model": model, "alpha": alpha, "exact": True, "on_phase": seen.append}
    compare(X[:200], y[:200], n_jobs=1, **settings)  # the baseline runs in this process
    assert seen == phases
    seen.clear()
    # With workers for the maps, the baseline still runs first, alone, in this process (on
    # every BLAS thread): its phases are seen.
    compare(X[:200], y[:200], n_jobs=2, **settings)
    assert seen == phases


def test_auto_decides_from_the_estimated_time_and_memory(monkeypatch):
    X, y = load_digits(return_X_y=True)
    settings = {"methods": ["rbf_sampler"], "n_components": [10], "n_seeds": 1}
    monkeypatch.setattr(comparison_module, "_EXACT_ALWAYS_TRAIN", 100)
    # A very slow machine:
    monkeypatch.setattr(_cost, "gemm_rate", lambda threads=None, clock="wall": 1e4)
    table = compare(X[:400], y[:400], **settings)
    assert "exact" not in set(table.method)
    reason = table.attrs["settings"]["exact_reason"]
    assert reason.startswith("auto: skipped, 300 training rows: estimated") and "s)" in reason
    monkeypatch.setattr(_cost, "gemm_rate", lambda threads=None, clock="wall": 1e12)
    monkeypatch.setattr(_exact, "available_memory", lambda: 1e6)  # 1 MB free
    table = compare(X[:400], y[:400], **settings)
    assert "of the memory" in table.attrs["settings"]["exact_reason"]
    with pytest.raises(ValueError, match="exact=True with 300 training rows: estimated"):
        compare(X[:400], y[:400], exact=True, **settings)
    monkeypatch.setattr(_exact, "available_memory", lambda: 1e12)
    table = compare(X[:400], y[:400], **settings)
    assert table.attrs["settings"]["exact_reason"].startswith("auto: 300 training rows, "
                                                              "estimated")
    assert "exact" in set(table.method)


def test_the_decision_and_the_printed_estimate_are_the_same_numbers(monkeypatch):
    # exact="auto" decides on the estimate that on_estimate reports (and the CLI prints):
    # at a rate where the estimate is just below the limit the baseline runs, and the
    # reason states the seconds the estimate has; just above, it is skipped.
    X, y = load_digits(return_X_y=True)
    settings = {"methods": ["rbf_sampler"], "n_components": [10], "n_seeds": 1}
    monkeypatch.setattr(comparison_module, "_EXACT_ALWAYS_TRAIN", 100)
    flops = _cost.exact_baseline_cost(300, 100, 64, 10, closed_form=True,
                                      select_alpha=True).flops
    limit = comparison_module.EXACT_AUTO_MAX_SECONDS
    for seconds, runs in ((0.9 * limit, True), (1.1 * limit, False)):
        monkeypatch.setattr(_cost, "gemm_rate",
                            lambda threads=None, clock="wall", s=seconds: flops / s)
        seen = []
        table = compare(X[:400], y[:400], on_estimate=seen.append, **settings)
        reason = table.attrs["settings"]["exact_reason"]
        assert ("exact" in set(table.method)) is runs, reason
        assert f"~{seconds:.0f} s" in reason
        if runs:
            estimate = seen[0]["exact"]
            assert estimate["seconds"] == pytest.approx(seconds)
            assert estimate["factorisation"] == "eigendecomposition"
            assert estimate["memory_bytes"] == int(_cost.exact_baseline_memory(
                300, 100, closed_form=True, select_alpha=True))


def test_the_baseline_factorises_after_the_maps_runs_and_not_before():
    # compare's baseline builds its kernel matrix and chooses α beside the maps' workers,
    # then waits for their runs before its Cholesky factorisation (a multithreaded one
    # beside busy workers loses its threads' turns): the grid's end releases it.
    import threading

    from kernelmaps.evaluate import _runs

    events = []
    grid_done = threading.Event()

    def grid():
        for index in range(3):
            assert not grid_done.is_set()
            events.append(("row", index))
            yield index, {}

    def exact_rows():
        grid_done.wait()
        events.append(("factorised",))
        return [(3, {})]

    rows = list(_runs._beside_baseline(exact_rows, grid(), grid_done))
    assert events[-1] == ("factorised",) and sorted(i for i, _ in rows) == [0, 1, 2, 3]


@pytest.mark.parametrize("alpha", [None, 0.01])  # α chosen (subsample), fixed
def test_run_exact_waits_for_before_factorising_just_before_the_cholesky(monkeypatch, alpha):
    from kernelmaps._ridge import kernel_path as kernel_path_module
    from kernelmaps.evaluate._alpha import SelectAlpha

    monkeypatch.setattr(kernel_path_module, "ALPHA_SUBSAMPLE_MIN_ROWS", 100)
    X, y = load_digits(return_X_y=True)
    kernel = get_kernel("rbf", gamma=0.001)
    split = Split(0, X[:400], y[:400], X[400:500], y[400:500])
    factory = (SelectAlpha(DEFAULT_ALPHAS, "classification") if alpha is None
               else (lambda: RidgeClassifier(alpha=alpha)))
    events = []
    run = _exact.run_exact(kernel, split, factory, events.append,
                           before_factorising=lambda: events.append("waited"))
    assert events.index("waited") == events.index(_exact.PHASES[1]) - 1
    plain = _exact.run_exact(kernel, split, factory)
    assert run.alpha == plain.alpha
    np.testing.assert_array_equal(run.losses, plain.losses)
