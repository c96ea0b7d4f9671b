"""tune: known optima, determinism, the model it returns, bad input and the time budget."""

import math
import types
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_diabetes, load_digits
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.pipeline import Pipeline

import kernelmaps
from kernelmaps import _cost
from kernelmaps.evaluate import median_heuristic
from kernelmaps.kernels import get_kernel
from kernelmaps.tuning import Trial, TuneResult, honest_rows, ridge_alpha_path, tune
from kernelmaps.tuning import search as search_module
from kernelmaps.tuning.search import plateau_middle


def rkhs_data(gamma, n=600, seed=0, noise=0.3):
    """y = a random function of the rbf kernel's RKHS at ``gamma`` (40 centres) + noise: the
    kernel width that fits it best is of the order of ``gamma`` (with little noise, every
    narrower width interpolates about as well: the noise makes the width matter)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    centres = rng.uniform(-1, 1, size=(40, 2))
    y = get_kernel("rbf", gamma=gamma)(X, centres) @ rng.normal(size=40)
    return X, y + noise * y.std() * rng.normal(size=n)


# Widths far off are visited on purpose: no DegenerateKernelWarning for them.
@pytest.mark.filterwarnings("error::kernelmaps.DegenerateKernelWarning")
@pytest.mark.parametrize("gamma", [0.3, 30.0])  # one below the heuristic (≈0.45), one 6
def test_finds_the_width_of_the_function(gamma):  # octaves above it (the search widens)
    X, y = rkhs_data(gamma)
    heuristic = median_heuristic(X, "rbf", random_state=0).value
    result = tune(X, y, n_components=300, random_state=0)
    assert abs(math.log2(result.params["gamma"] / gamma)) <= 1.0
    if gamma > heuristic * 8:  # outside the default interval: found by widening it
        assert result.params["gamma"] > heuristic * 8
    assert result.score > 0.85  # R² with noise at 0.3 of the signal's spread: ≤ 0.92


def test_search_finds_the_optimum_of_its_objective():
    # Brute force over a fine log grid of the same objective (LOO R² at the best α, same
    # map seed): the 1-D search must land within 0.2 octave's worth of the best score.
    X, y = rkhs_data(3.0, n=400)
    result = tune(X, y, n_components=100, random_state=0)
    assert result.estimator.named_steps["map"].random_state == 0  # an int seeds the map
    searched = [t for t in result.trials if t.stage == "gamma"]
    assert len(searched) <= 14  # a 1-D search, not a grid
    first = result.estimator.named_steps["map"]
    scores = []
    for u in np.arange(-3, 3.01, 0.25):
        gamma = result.heuristic * 2.0**u
        Z = clone(first).set_params(kernel=get_kernel("rbf", gamma=gamma)).fit_transform(X)
        scores.append(ridge_alpha_path(Z, y, score_rows=honest_rows(first, y.size)).score)
    assert result.score >= max(scores) - 2e-3


def test_classification_returns_a_fitted_pipeline_that_scores_like_its_refit():
    X, y = load_digits(return_X_y=True)
    result = tune(X[:500], y[:500], n_components=150, random_state=0)
    assert isinstance(result, TuneResult) and result.task == "classification"
    assert result.scoring == "accuracy" and result.score > 0.95
    pipeline = result.estimator
    assert isinstance(pipeline, Pipeline)
    assert isinstance(pipeline.named_steps["model"], RidgeClassifier)
    assert set(result.params) == {"method", "kernel", "gamma", "alpha", "n_components"}
    assert pipeline.named_steps["model"].alpha == result.params["alpha"]
    assert pipeline.named_steps["map"].kernel_.gamma == result.params["gamma"]
    # The same pipeline fitted by scikit-learn (same map seed: same landmarks) decides alike.
    refit = clone(pipeline).fit(X[:500], y[:500])
    np.testing.assert_array_equal(refit.predict(X[500:]), pipeline.predict(X[500:]))
    assert pipeline.score(X[500:], y[500:]) > 0.9


def test_regression_on_unscaled_data_and_the_table():
    X, y = load_diabetes(return_X_y=True)
    result = tune(X * 50.0, y, random_state=0)  # unscaled features, target in the hundreds
    assert result.task == "regression" and result.scoring == "r2"
    assert isinstance(result.estimator.named_steps["model"], Ridge)
    assert result.score > 0.4  # linear ridge reaches ≈0.48 on diabetes
    table = result.table
    assert list(table.columns) == list(Trial.__dataclass_fields__)
    assert len(table) == len(result.trials)
    # Each trial's time is a part of tune's own wall time (trials run one after another).
    assert (table["time_s"] > 0).all() and table["time_s"].sum() <= result.time_s
    # Each configuration records the cost model's price for it (never left unset).
    assert (table["estimated_s"] > 0).all() and np.isfinite(table["estimated_s"]).all()
    assert set(table["stage"]) <= {"gamma", "n_components", "refine", "final"}
    assert "nystroem" in repr(result)


def test_d_grows_while_it_pays_and_stops():
    X, y = load_digits(return_X_y=True)
    result = tune(X[:1000], y[:1000], random_state=0, max_components=1024)
    dims = sorted({t.n_components for t in result.trials})
    assert dims[0] == 128 and len(dims) >= 2  # 128 is not enough on digits
    assert result.params["n_components"] in dims
    assert result.stopped in ("converged", "max_components")
    # A target that is linear in the features: D never pays, it stops at the first doubling.
    X, y = rkhs_data(0.05, n=600, noise=0.0)
    small = tune(X, y, random_state=0, target=0.01)
    assert small.params["n_components"] == 128
    assert sorted({t.n_components for t in small.trials}) == [128, 256]


def test_deterministic_for_a_fixed_random_state():
    X, y = load_digits(return_X_y=True)
    first = tune(X[:400], y[:400], n_components=100, random_state=7, search_rows=300)
    second = tune(X[:400], y[:400], n_components=100, random_state=7, search_rows=300)
    assert first.params == second.params
    strip = [(t.stage, t.gamma, t.n_components, t.alpha, t.score) for t in first.trials]
    assert strip == [(t.stage, t.gamma, t.n_components, t.alpha, t.score)
                     for t in second.trials]
    # The same calls on the same arrays: identical predictions.
    np.testing.assert_array_equal(first.estimator.decision_function(X[400:]),
                                  second.estimator.decision_function(X[400:]))
    assert first.trials[-1].stage == "final"  # 300 search rows, then all 400


def test_other_inputs_kernels_and_methods():
    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    sparse = tune(sp.csr_matrix(X), y, n_components=60, random_state=0)
    assert sparse.score > 0.9
    single = tune(X.astype(np.float32), y, n_components=60, random_state=0)
    assert single.estimator.named_steps["model"].coef_.dtype == np.float32
    matern = tune(X, y, kernel=get_kernel("matern", nu=2.5), n_components=60, random_state=0)
    assert "length_scale" in matern.params and matern.estimator.named_steps["map"].kernel_.nu == 2.5
    rff = tune(X, y, method="rff", n_components=100, random_state=0, cv=3)
    assert rff.params["method"] == "rff" and rff.cv == 3
    sigma = tune(X, y, kernel=get_kernel("rbf", sigma=3.0), n_components=60, random_state=0)
    assert sigma.estimator.named_steps["map"].kernel_.sigma is None


def test_bounds_are_respected_and_progress_is_called():
    X, y = load_digits(return_X_y=True)
    calls = []
    result = tune(X[:300], y[:300], n_components=60, gamma_bounds=(1e-4, 2e-4),
                  random_state=0, progress=lambda trial, done: calls.append((trial, done)))
    assert all(1e-4 * (1 - 1e-9) <= t.gamma <= 2e-4 * (1 + 1e-9) for t in result.trials)
    assert len(calls) == len(result.trials) and all(0 <= d < 1 for _, d in calls)
    done = [d for _, d in calls]
    assert done == sorted(done)  # progress never goes back


def test_exported_from_kernelmaps():
    assert kernelmaps.tune is tune and "tune" in kernelmaps.__all__


X_SMALL, Y_SMALL = load_digits(return_X_y=True)
X_SMALL, Y_SMALL = X_SMALL[:60], Y_SMALL[:60]


@pytest.mark.parametrize("kwargs,error,match", [
    ({"kernel": "linear"}, ValueError, "scale"),
    ({"kernel": "nope"}, ValueError, "nope"),
    ({"method": "nope"}, ValueError, "unknown method 'nope'"),
    ({"method": "poly_sketch"}, ValueError, "does not approximate the 'rbf'"),
    ({"method": 3}, TypeError, "method"),
    ({"target": 0.0}, ValueError, "target"),
    ({"target": "small"}, TypeError, "target"),
    ({"cv": 1}, ValueError, "cv"),
    ({"cv": "gcv"}, ValueError, "cv"),
    ({"time_budget": -1}, ValueError, "time_budget"),
    ({"time_budget": "10"}, TypeError, "time_budget"),
    ({"n_components": 0}, ValueError, "n_components"),
    ({"n_components": "many"}, ValueError, "n_components"),
    ({"n_components": 2.5}, TypeError, "n_components"),
    ({"n_components": 100}, ValueError, "n_components=100 exceeds the 60 rows"),
    ({"gamma_bounds": (2.0, 1.0)}, ValueError, "gamma_bounds"),
    ({"gamma_bounds": 3.0}, TypeError, "gamma_bounds"),
    ({"alphas": [0.0]}, ValueError, "alphas"),
    ({"search_rows": 5}, ValueError, "search_rows"),
    ({"max_components": 0}, ValueError, "max_components"),
    ({"task": "ranking"}, ValueError, "task"),
    ({"progress": "bar"}, TypeError, "progress"),
])
def test_bad_arguments_name_the_parameter(kwargs, error, match):
    with pytest.raises(error, match=match):
        tune(X_SMALL, Y_SMALL, **{"n_components": 20, **kwargs})


def test_bad_data_is_refused_clearly():
    X = X_SMALL.copy()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        tune(X, Y_SMALL)
    with pytest.raises(ValueError, match="one value per row"):
        tune(X_SMALL, Y_SMALL[:-1])
    with pytest.raises(ValueError, match="NaN"):
        tune(X_SMALL, np.r_[np.nan, np.arange(59.0)])
    with pytest.raises(ValueError, match="single class"):
        tune(X_SMALL, np.zeros(60, dtype=int))
    with pytest.raises(ValueError, match="at least"):
        tune(X_SMALL[:2], Y_SMALL[:2])


class _WorkClock:
    """A clock for :mod:`kernelmaps.tuning.search` that moves only with the work it sees:
    each α path on an n × D feature matrix advances it by the cost model's flops of that
    evaluation (its map and its ridge) at 1 Gflop/s, three times slower than the model says
    (a busy machine, which the search must learn). Deterministic: no wall or CPU time."""

    def __init__(self, monkeypatch, n_features):
        self.now = 0.0
        real_path = search_module.ridge_alpha_path

        def timed_path(Z, y, **kwargs):
            path = real_path(Z, y, **kwargs)
            n_rows, n_components = Z.shape
            targets = np.unique(y).size if kwargs.get("task") == "classification" else 1
            flops = _cost.map_ridge_flops(n_rows, n_features, n_components, targets,
                                          landmarks=True,  # tune's default map, Nyström
                                          n_alphas=kwargs["alphas"].size)
            self.now += 3 * flops / 1e9
            return path

        monkeypatch.setattr(search_module, "ridge_alpha_path", timed_path)
        monkeypatch.setattr(search_module, "time",
                            types.SimpleNamespace(perf_counter=lambda: self.now))


def test_time_budget_is_honoured(monkeypatch):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 20))
    y = np.sin(X[:, 0] * 2) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=3000)
    _WorkClock(monkeypatch, X.shape[1])
    free = tune(X, y, search_rows=1500, random_state=0)
    assert free.stopped != "time budget" and free.time_s > 0
    budget = 0.5 * free.time_s
    result = tune(X, y, time_budget=budget, search_rows=1500, random_state=0)
    # The costs measured so far predict each next step and the final fit (the slowest rate
    # seen, with a margin): the search stops early and ends within the budget.
    assert result.stopped == "time budget", result.table
    assert len(result.trials) < len(free.trials)
    assert result.time_s <= budget, (result.time_s, budget, result.table)
    assert result.trials[-1].stage == "final"  # the budget kept room for the final fit
    assert result.estimator.predict(X[:5]).shape == (5,)


def test_a_budget_too_small_for_the_final_fit_keeps_the_search_model():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 10))
    y = X[:, 0] + 0.1 * rng.normal(size=3000)
    result = tune(X, y, time_budget=1e-3, search_rows=500, n_components=50, random_state=0)
    assert result.stopped == "time budget" and len(result.trials) == 1
    assert "no time to refit" in result.notes[0]
    assert result.estimator.named_steps["map"].n_components == 50


def test_honest_rows_are_the_rows_that_are_not_landmarks():
    X = np.random.RandomState(0).normal(size=(50, 3))
    nystroem = kernelmaps.Nystroem(n_components=10, random_state=0).fit(X)
    mask = honest_rows(nystroem, 50)
    assert mask.sum() == 40 and not mask[nystroem.component_indices_].any()
    assert honest_rows(kernelmaps.RBFSampler(n_components=10).fit(X), 50) is None
    everything = kernelmaps.Nystroem(n_components=50, random_state=0).fit(X)
    assert honest_rows(everything, 50) is None  # no row left: score them all


def test_plateau_middle():
    scales = [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0]
    # The digits case (D = 300): a run of near-ties whose best sits next to the cliff.
    values = [0.9885, 0.9885, 0.9885, 0.9885, 0.9895, 0.9896, 0.9828]
    assert plateau_middle(scales, values, tie=0.0015) in (-1.0, 0.0)
    assert plateau_middle(scales, values, tie=0.0) == 2.0  # no tolerance: the best
    # A separate near-tie beyond a dip is not part of the run.
    assert plateau_middle(scales, [0.89, 0.5, 0.9, 0.9, 0.9, 0.5, 0.5], tie=0.02) == 0.0


def test_a_dataframe_keeps_its_column_names_through_tune():
    # Issue 34, item 4: the model tune returns was fitted on the frame's values, so predicting
    # on a DataFrame warned "X has feature names, but StandardScaler was fitted without
    # feature names", and columns in another order passed unnoticed.
    pd = pytest.importorskip("pandas")
    X, y = rkhs_data(1.0, n=300)
    frame = pd.DataFrame(X, columns=["width", "height"])
    model = tune(frame, y, n_components=32, random_state=0).estimator
    assert list(model.feature_names_in_) == ["width", "height"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model.predict(frame.iloc[:5]).shape == (5,)
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict(frame[["height", "width"]])
