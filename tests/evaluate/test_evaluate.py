"""kernelmaps.evaluate: error measures against each map's kernel_, the median heuristic, the
method registry, compare() and its plots."""

from __future__ import annotations

import os
import threading
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import pdist
from sklearn.datasets import load_diabetes, load_digits
from sklearn.kernel_approximation import RBFSampler as SklearnRBFSampler
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.metrics.pairwise import pairwise_kernels, rbf_kernel

import kernelmaps as km
from kernelmaps import _cost, evaluate
from kernelmaps.evaluate import (
    METHODS,
    approximation_error,
    compare,
    median_heuristic,
    register_method,
    relative_error,
    summarize,
)
from kernelmaps.evaluate import comparison as comparison_module
from kernelmaps.evaluate._splits import task_of
from kernelmaps.kernels import get_kernel

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:360] / 16.0, y[:360]  # in [0, 1]: valid for every map, chi² included


def additive_chi2_reference(A, B):
    """Σ 2xy/(x+y) written out (0/0 := 0), independent of kernels.py."""
    num = 2 * A[:, None, :] * B[None, :, :]
    den = A[:, None, :] + B[None, :, :]
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0).sum(axis=2)


def skewed_chi2_reference(A, B, c):
    """Π 2√((x+c)(y+c))/(x+y+2c) written out."""
    Ac, Bc = (A + c)[:, None, :], (B + c)[None, :, :]
    return np.exp(np.log(2 * np.sqrt(Ac * Bc) / (Ac + Bc)).sum(axis=2))


# --------------------------------------------------------------------------- relative_error
def test_relative_error_exact_and_zero_features():
    rng = np.random.RandomState(0)
    Z = rng.normal(size=(30, 5))
    K = Z @ Z.T
    for metric in ("fro", "spectral", "max"):
        assert relative_error(K, Z, metric) < 1e-12
        assert relative_error(K, np.zeros_like(Z), metric) == pytest.approx(1.0)
    # A known value: halving the features quarters the Gram matrix.
    assert relative_error(K, Z / 2, "fro") == pytest.approx(0.75)


def test_relative_error_bad_input():
    with pytest.raises(ValueError, match=r"metric must be one of \['fro', 'spectral', 'max'\]"):
        relative_error(np.eye(2), np.eye(2), "l1")
    with pytest.raises(ValueError, match="exact kernel matrix on the sample is zero"):
        relative_error(np.zeros((2, 2)), np.eye(2))


# --------------------------------------------------------------------------- the map's kernel_
def test_error_is_measured_against_each_maps_kernel(digits):
    # approximation_error(kernel=None) measures against the fitted map's kernel_; these are
    # the kernels the maps approximate, checked against their definitions.
    X, _ = digits
    fit = {"n_components": 20, "random_state": 0}
    assert km.RBFSampler(gamma=0.5, **fit).fit(X).kernel_ == get_kernel("rbf", gamma=0.5)
    assert km.PolynomialCountSketch(gamma=0.1, degree=3, coef0=2.0, **fit).fit(X).kernel_ \
        == get_kernel("poly", gamma=0.1, degree=3, coef0=2.0)
    assert km.Nystroem(kernel="laplacian", gamma=0.3, **fit).fit(X).kernel_ == get_kernel(
        "laplacian", gamma=0.3)
    skewed = km.SkewedChi2Sampler(skewedness=0.5, **fit).fit(X)
    assert skewed.kernel_ == get_kernel("skewed_chi2", skewedness=0.5)
    # The chi² kernels against formulas written out here.
    np.testing.assert_allclose(km.AdditiveChi2Sampler().fit(X).kernel_(X[:20]),
                               additive_chi2_reference(X[:20], X[:20]), rtol=1e-12)
    np.testing.assert_allclose(skewed.kernel_(X[:20]),
                               skewed_chi2_reference(X[:20], X[:20], 0.5), rtol=1e-10)
    # ... and the error with kernel=None is the error against that kernel, given explicitly.
    for feature_map, kernel in [
            (km.SkewedChi2Sampler(skewedness=0.5, n_components=50), lambda A, B:
             skewed_chi2_reference(A, B, 0.5)),
            (km.PolynomialCountSketch(gamma=0.1, degree=3, coef0=2.0, n_components=50),
             get_kernel("poly", gamma=0.1, degree=3, coef0=2.0))]:
        implicit = approximation_error(feature_map, X, n_seeds=2, sample=100, random_state=0)
        explicit = approximation_error(feature_map, X, kernel, n_seeds=2, sample=100,
                                       random_state=0)
        assert implicit.values == pytest.approx(explicit.values, rel=1e-9)


def test_data_dependent_kernel_comes_from_the_fitted_map(digits):
    # gamma='scale' is only known after fit: the error must use the fitted gamma.
    X, _ = digits
    gamma = 1.0 / (X.shape[1] * X.var())
    assert km.RBFSampler(gamma="scale").fit(X).kernel_.gamma == pytest.approx(gamma)
    implicit = approximation_error(km.RBFSampler(gamma="scale", n_components=200), X,
                                   n_seeds=2, sample=100, random_state=0)
    explicit = approximation_error(km.RBFSampler(gamma="scale", n_components=200), X,
                                   get_kernel("rbf", gamma=gamma), n_seeds=2, sample=100,
                                   random_state=0)
    assert implicit.values == pytest.approx(explicit.values, rel=1e-9)


def test_error_needs_the_kernel_when_the_map_has_none(digits):
    X, _ = digits
    K = rbf_kernel(X[:40], gamma=0.05)
    with pytest.raises(ValueError, match=r"precomputed.*pass the kernel as kernel="):
        approximation_error(km.Nystroem(kernel="precomputed", n_components=10), K)
    with pytest.raises(ValueError, match="kernel='precomputed' gives no kernel to evaluate"):
        approximation_error(km.RBFSampler(), X, kernel="precomputed")
    # scikit-learn's own map has no kernel_: it works once the kernel is given.
    with pytest.raises(TypeError, match=r"RBFSampler has no kernel_ attribute.*pass the exact "
                                        r"kernel as kernel="):
        approximation_error(SklearnRBFSampler(gamma=0.05), X)
    theirs = approximation_error(SklearnRBFSampler(gamma=0.05, n_components=100), X,
                                 get_kernel("rbf", gamma=0.05), n_seeds=2, random_state=0)
    ours = approximation_error(km.RBFSampler(gamma=0.05, n_components=100), X,
                               n_seeds=2, random_state=0)
    assert theirs.values == pytest.approx(ours.values, rel=1e-9)  # same numbers, same seeds
    with pytest.raises(ValueError, match="Unknown kernel 'nope' for approximation_error"):
        approximation_error(km.RBFSampler(), X, kernel="nope")


def test_nystroem_with_a_pairwise_callable_kernel():
    def kernel(x, y, scale=1.0):
        return float(np.exp(-scale * np.abs(x - y).sum()))

    X = np.random.RandomState(0).rand(30, 3)
    nystroem = km.Nystroem(kernel=kernel, kernel_params={"scale": 2.0}, n_components=10,
                           random_state=0)
    np.testing.assert_allclose(nystroem.fit(X).kernel_(X),
                               pairwise_kernels(X, metric="laplacian", gamma=2.0))
    laplacian = get_kernel("laplacian", gamma=2.0)
    implicit = approximation_error(nystroem, X, n_seeds=2, random_state=0)
    explicit = approximation_error(nystroem, X, laplacian, n_seeds=2, random_state=0)
    assert implicit.values == pytest.approx(explicit.values, rel=1e-9)
    # All 30 rows as landmarks: the map is exact on them.
    full = km.Nystroem(kernel=kernel, kernel_params={"scale": 2.0}, n_components=30).fit(X)
    assert approximation_error(full, X, refit=False).mean < 1e-8


# --------------------------------------------------------------------------- approximation_error
def test_deterministic_map_interval_collapses(digits):
    X, _ = digits
    result = approximation_error(km.AdditiveChi2Sampler(), X, n_seeds=5, random_state=0)
    assert len(result.values) == 1 and result.seeds == (None,)
    assert result.ci_low == result.mean == result.ci_high
    # The value is the error against the formula written out here, on the same rows.
    rows = np.sort(np.random.RandomState(0).choice(X.shape[0], 300, replace=False))
    direct = approximation_error(km.AdditiveChi2Sampler(), X, additive_chi2_reference,
                                 sample=300, random_state=0)
    Z = km.AdditiveChi2Sampler().fit_transform(X[rows])
    K = additive_chi2_reference(X[rows], X[rows])
    assert direct.mean == pytest.approx(relative_error(K, Z))
    assert 0 < result.mean < 0.1


def test_randomized_map_interval_over_seeds(digits):
    X, _ = digits
    small = approximation_error(km.RBFSampler(gamma=0.05, n_components=40), X, n_seeds=4,
                                sample=200, random_state=0)
    large = approximation_error(km.RBFSampler(gamma=0.05, n_components=1000), X, n_seeds=4,
                                sample=200, random_state=0)
    assert len(small.values) == 4 and len(set(small.seeds)) == 4
    assert small.ci_low < small.mean < small.ci_high
    assert min(small.values) <= small.mean <= max(small.values)
    # Monte Carlo error shrinks like 1/√D: 25× the features, about 5× less error.
    assert 3 < small.mean / large.mean < 8
    assert "95% CI" in str(small)


def test_error_uses_the_maps_own_kernel(digits):
    X, _ = digits
    gamma = 0.05  # about the median heuristic's choice for this data
    default = approximation_error(km.RBFSampler(gamma=gamma, n_components=300), X, n_seeds=2,
                                  random_state=0)
    explicit = approximation_error(km.RBFSampler(gamma=gamma, n_components=300), X,
                                   lambda A, B: rbf_kernel(A, B, gamma=gamma), n_seeds=2,
                                   random_state=0)
    wrong = approximation_error(km.RBFSampler(gamma=gamma, n_components=300), X,
                                get_kernel("rbf", gamma=10 * gamma), n_seeds=2, random_state=0)
    assert default.values == pytest.approx(explicit.values, rel=1e-12)
    assert wrong.mean > 3 * default.mean


def test_full_nystroem_is_exact_and_refit_false(digits):
    X, _ = digits
    fitted = km.Nystroem(gamma=0.05, n_components=X.shape[0], random_state=0).fit(X)
    result = approximation_error(fitted, X, refit=False, metric="spectral", sample=200)
    assert result.values[0] < 1e-10 and result.seeds == (None,)
    with pytest.raises(ValueError, match="refit=False measures the map as fitted"):
        approximation_error(fitted, X, refit=False, n_seeds=3)


def test_approximation_error_bad_input(digits):
    X, _ = digits
    with pytest.raises(ValueError, match="sample must be an int >= 2"):
        approximation_error(km.RBFSampler(), X, sample=1)
    with pytest.raises(ValueError, match="confidence must be in"):
        approximation_error(km.RBFSampler(), X, confidence=1.5)
    with pytest.raises(ValueError, match="NaN"):
        approximation_error(km.RBFSampler(), np.array([[np.nan, 1.0], [1.0, 2.0]]))


# --------------------------------------------------------------------------- median heuristic
def test_median_heuristic_rules():
    X = np.random.RandomState(0).normal(size=(50, 4))
    rbf = median_heuristic(X, "rbf")
    assert rbf.name == "gamma"
    assert rbf.value == pytest.approx(1 / (2 * np.median(pdist(X, "sqeuclidean"))))
    assert median_heuristic(X, "laplacian").value == pytest.approx(
        1 / np.median(pdist(X, "cityblock")))
    assert median_heuristic(X, "matern").value == pytest.approx(np.median(pdist(X)))
    assert median_heuristic(X, "polynomial").name == "gamma"  # aliases resolve
    assert evaluate.median_heuristic_parameter("student") == "alpha"
    assert evaluate.median_heuristic_parameter("linear") is None
    assert median_heuristic(np.vstack([X] * 30), "rbf", max_samples=100).n_samples == 100


def test_median_heuristic_errors():
    with pytest.raises(ValueError, match="no median heuristic for the 'linear' kernel"):
        median_heuristic(np.eye(3), "linear")
    with pytest.raises(ValueError, match=r"identical or orthogonal\); set gamma explicitly"):
        median_heuristic(np.ones((10, 2)), "rbf")


# --------------------------------------------------------------------------- registry
def test_registry_entries_and_errors():
    assert {"nystroem", "rbf_sampler", "poly_sketch", "additive_chi2",
            "skewed_chi2"} <= set(METHODS)
    assert evaluate.methods_for(get_kernel("rbf"))[:2] == ["nystroem", "rbf_sampler"]
    assert "poly_sketch" in evaluate.methods_for(get_kernel("polynomial"))
    with pytest.raises(ValueError, match="'exact' is the name of the exact-kernel baseline"):
        register_method("exact", lambda *a: None)
    with pytest.raises(ValueError, match="already registered"):
        register_method("nystroem", lambda *a: None)


def test_a_new_method_plugs_in_with_one_call(digits):
    X, y = digits
    register_method("rbf_half", lambda kernel, n, seed, d: km.RBFSampler(
        gamma=kernel._gamma(d), n_components=max(1, n // 2), random_state=seed),
        kernels={"rbf"})
    try:
        table = compare(X, y, kernel=get_kernel("rbf", gamma=0.05), methods=["rbf_half"],
                        n_components=[40], n_seeds=1, exact=False)
    finally:
        del METHODS["rbf_half"]
    assert table["method"].tolist() == ["rbf_half"]
    assert table["n_features_out"].tolist() == [20]


# --------------------------------------------------------------------------- compare
@pytest.fixture(scope="module")
def comparison(digits):
    X, y = digits
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = compare(X, y, kernel=get_kernel("rbf", gamma=0.05),
                        methods=["nystroem", "rbf_sampler"], n_components=[10, 40, 160, 400],
                        n_seeds=2, error_sample=200, random_state=0)
    return table, caught


def test_compare_table(comparison):
    table, caught = comparison
    # 270 training rows: nystroem at 400 landmarks is skipped, with a warning saying so.
    assert any("nystroem n_components=400 > 270 training rows" in str(w.message)
               for w in caught)
    counts = table.groupby("method").size().to_dict()
    assert counts == {"exact": 1, "nystroem": 3 * 2, "rbf_sampler": 4 * 2}
    assert list(table.columns[:8]) == ["method", "n_components", "n_features_out", "seed",
                                       "random_state", "split", "error", "score"]
    assert (table["n_train"] == 270).all() and (table["n_test"] == 90).all()
    assert table["scoring"].unique().tolist() == ["accuracy"]
    # Accuracy on 10 classes (chance 0.1): measured 0.70-0.99 on these 90 test rows, the
    # exact kernel 0.98; a broken map, model or label decoding falls to chance.
    assert (table["score"] > 0.5).all()
    assert table.loc[table.method == "exact", "score"].iloc[0] > 0.9
    for column in ("fit_time_s", "transform_time_s", "model_time_s", "peak_memory_mb"):
        assert (table[column] > 0).all(), column
    # Peak memory grows with the output dimension: at least the 270 × (400 − 10) more float64
    # training features are allocated (the α path's fixed row-block buffers, ~1 MB, are not
    # a ratio's business: measured 2.6 MB at D = 10, 7.2 MB at 400).
    rbf = table[table.method == "rbf_sampler"].groupby("n_components")["peak_memory_mb"].mean()
    assert rbf[400] - rbf[10] > 270 * (400 - 10) * 8 / 1e6
    assert table.attrs["settings"]["exact"] is True


def test_compare_exact_row_has_zero_error_and_nystroem_error_decreases(comparison):
    table, _ = comparison
    exact = table[table.method == "exact"].iloc[0]
    assert exact["error"] < 1e-10 and exact["n_components"] == 270
    assert exact["score"] >= table["score"].max() - 0.02
    nystroem = table[table.method == "nystroem"].groupby("n_components")["error"].mean()
    assert nystroem.is_monotonic_decreasing and nystroem[160] < nystroem[10] / 5


def test_summarize(comparison):
    table, _ = comparison
    summary = summarize(table)
    assert summary["method"].tolist()[0] == "exact"
    assert len(summary) == 1 + 3 + 4
    row = summary[(summary.method == "rbf_sampler") & (summary.n_components == 40)].iloc[0]
    seeds = table[(table.method == "rbf_sampler") & (table.n_components == 40)]["error"]
    assert row["runs"] == 2 and row["error"] == pytest.approx(seeds.mean())
    assert row["error_ci_low"] < seeds.min() <= seeds.max() < row["error_ci_high"]


def test_plots(comparison):
    table, _ = comparison
    ax = evaluate.plot_error(table)
    assert [line.get_label() for line in ax.get_lines()] == ["nystroem", "rbf_sampler"]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    ax = evaluate.plot_score(table)
    labels = ax.get_legend_handles_labels()[1]
    assert labels[0].startswith("exact kernel (") and set(labels[1:]) == {"nystroem",
                                                                            "rbf_sampler"}
    assert ax.get_ylabel() == "test accuracy"
    ax = evaluate.plot_pareto(table)
    assert "Pareto front" in ax.get_legend_handles_labels()[1]


def test_pareto_front():
    times = np.array([1.0, 2.0, 3.0, 0.5, 2.5])
    scores = np.array([0.5, 0.7, 0.6, 0.4, 0.9])
    assert evaluate.pareto_front(times, scores).tolist() == [3, 0, 1, 4]


def test_compare_deterministic_methods_run_once(digits):
    X, y = digits
    table = compare(X, y, kernel="additive_chi2_psd", methods=["additive_chi2"],
                    n_components=[64, 128, 192, 320], n_seeds=2, exact=False)
    chi2 = table[table.method == "additive_chi2"]
    # sample_steps 1, 1, 2, 3 → three distinct maps, one run each.
    assert chi2["n_features_out"].tolist() == [64, 192, 320]
    assert chi2["random_state"].isna().all()
    assert chi2["error"].is_monotonic_decreasing


# --------------------------------------------------------------------------- one run per map
def test_requests_giving_the_same_map_run_once_and_say_why(digits):
    # d = 64: structured rounds D' up to a multiple of 64. Its methods take the default's output
    # form (issue 32): cos/sin pairs wherever they round D no further than the offset cosine.
    # 25, 26 and 50 are 64 offset cosines (as pairs, 13 or 25 frequencies → 64: D = 128, twice
    # the offset form's), one map; 100 is 128 either way, so pairs. rff never rounds, so all
    # its requests are maps of their own.
    X, y = digits
    table = compare(X, y, kernel=get_kernel("rbf", gamma=0.05), methods=["structured", "rff"],
                    n_components=[25, 26, 50, 100], n_seeds=2, error_sample=100, exact=False)
    shown = table.groupby("method", sort=False)[["n_components", "n_features_out",
                                                  "n_components_same_map"]].agg(list)
    assert shown.loc["structured", "n_components"] == [25, 25, 100, 100]
    assert shown.loc["structured", "n_features_out"] == [64, 64, 128, 128]
    assert shown.loc["structured", "n_components_same_map"] == ["25 26 50"] * 2 + ["100"] * 2
    assert shown.loc["rff", "n_components"] == [25, 25, 26, 26, 50, 50, 100, 100]
    assert shown.loc["rff", "n_features_out"] == [25, 25, 26, 26, 50, 50, 100, 100]
    merged = table.attrs["settings"]["merged"]
    assert len(merged) == 1 and merged[0].startswith(
        "structured: n_components 25, 26 and 50 give the same map, D = 64 on 64 input "
        "features (") and "next power of two ≥ the input features" in merged[0]
    assert "it ran once per seed, shown as n_components=25" in merged[0]
    summary = summarize(table)
    assert summary[summary.method == "structured"]["n_components_same_map"].tolist() == [
        "25 26 50", "100"]
    # The run shown as 25 is the map n_components=50 asks for: same numbers (to rounding).
    alone = compare(X, y, kernel=get_kernel("rbf", gamma=0.05), methods=["structured"],
                    n_components=[50], n_seeds=2, error_sample=100, exact=False)
    np.testing.assert_allclose(alone["error"], table["error"][0:2], rtol=1e-12)
    np.testing.assert_allclose(alone["score"], table["score"][0:2], rtol=1e-12)


def test_every_fourier_method_takes_the_default_output_form():
    # compare and tune judge each structure by the form the default map would take (issue 32):
    # output="auto" on every structure's method, and the report's methods line names it.
    kernel = get_kernel("rbf", gamma=0.05)
    for name in ("rff", "orthogonal", "structured", "fastfood", "quadrature", "principal"):
        feature_map = METHODS[name].build(kernel, 256, 0, 64)
        assert feature_map.output == "auto", name
        assert "cos/sin pairs" in METHODS[name].description, name
        assert feature_map.fit(np.random.RandomState(0).normal(size=(50, 64))).output_ == \
            "cos_sin"


def test_the_same_dimension_is_not_the_same_map(digits):
    # A map drawing its parameters from n_components as well as the seed: every request
    # gives D = 20, but different maps; each must run. Landmark maps are never merged.
    X, y = digits
    register_method("rbf_fixed_d", lambda kernel, n, seed, d: km.RBFSampler(
        gamma=kernel._gamma(d), n_components=20, random_state=seed + n), kernels={"rbf"})
    try:
        table = compare(X, y, kernel=get_kernel("rbf", gamma=0.05),
                        methods=["rbf_fixed_d", "nystroem"], n_components=[30, 40],
                        n_seeds=1, exact=False)
    finally:
        del METHODS["rbf_fixed_d"]
    assert table["n_components"].tolist() == [30, 40, 30, 40]
    assert table["n_features_out"].tolist() == [20, 20, 30, 40]
    assert table.attrs["settings"]["merged"] == []


def test_the_number_of_workers_changes_only_the_times(digits):
    # Every run does the same arithmetic on one thread wherever it runs; the data sit at
    # other addresses in a worker, so numbers agree to rounding (a few ulps), not bitwise.
    X, y = digits
    settings = {"kernel": get_kernel("rbf", gamma=0.05), "n_components": [25, 50, 200],
                "methods": ["nystroem", "structured", "rbf_sampler"], "n_seeds": 2,
                "error_sample": 150}
    serial = compare(X, y, n_jobs=1, **settings)
    parallel = compare(X, y, n_jobs=2, **settings)
    assert serial.attrs["settings"]["n_jobs"] == 1 and parallel.attrs["settings"]["n_jobs"] == 2
    exact_columns = ["method", "n_components", "n_features_out", "n_components_same_map",
                     "seed", "random_state", "split", "n_train", "n_test", "notes"]
    pd.testing.assert_frame_equal(serial[exact_columns], parallel[exact_columns])
    np.testing.assert_allclose(parallel["error"], serial["error"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(parallel["score"], serial["score"], rtol=1e-12)
    # Peak memory: the same allocations. A fresh thread per run keeps per-thread caches out
    # and what a process keeps for good (a module imported on first use) is left out; a few
    # kilobytes of Python objects still differ from process to process (measured ≤ 13 KB).
    np.testing.assert_allclose(parallel["peak_memory_mb"][1:], serial["peak_memory_mb"][1:],
                               rtol=0.02, atol=0.02)
    # The baseline runs in this process beside the workers, and tracemalloc counts the whole
    # process: what the pool holds here meanwhile moves its peak either way. That is at most
    # the grid's rows received (16 rows, ≤ 1.3 KB each pickled: 21 KB measured) and the
    # 2 · n_jobs tasks queued for the workers (arrays memory-mapped: ≤ 2 KB each), so 0.02 MB
    # of process-to-process difference + 0.03 MB. (With the arrays inside the tasks it was
    # 0.4 MB; with joblib writing the memory maps as the tasks went out, beside the baseline,
    # 0.17 MB on a loaded machine: the failures this guards against, the second also below.)
    assert abs(parallel["peak_memory_mb"][0] - serial["peak_memory_mb"][0]) <= 0.05
    assert (parallel["cpu_time_s"] > 0).all() and (serial["cpu_time_s"] > 0).all()


def test_the_grid_arrays_are_written_before_the_baseline_starts(digits, monkeypatch):
    # joblib copies an array (tobytes) as it writes it for a worker to memory-map; written on
    # joblib's queue thread as tasks went out, that copy could fall in the baseline's run and
    # count in its peak memory (the test above, on a loaded machine). Every array of the
    # data is written on the calling thread before the baseline starts, and none after.
    from joblib import numpy_pickle

    from kernelmaps.evaluate import _runs

    written: list[tuple[int, str, bool]] = []
    started = threading.Event()
    write_array = numpy_pickle.NumpyArrayWrapper.write_array
    measure_exact = _runs._measure_exact

    def recording_write(self, array, pickler):
        written.append((array.nbytes, threading.current_thread().name, started.is_set()))
        return write_array(self, array, pickler)

    def flagged_exact(*args, **kwargs):
        started.set()
        return measure_exact(*args, **kwargs)

    monkeypatch.setattr(numpy_pickle.NumpyArrayWrapper, "write_array", recording_write)
    monkeypatch.setattr(_runs, "_measure_exact", flagged_exact)
    X, y = digits
    compare(X, y, kernel=get_kernel("rbf", gamma=0.05), n_components=[25, 50],
            methods=["nystroem", "rbf_sampler"], n_seeds=2, error_sample=150, n_jobs=2)
    data = [entry for entry in written if entry[0] >= 1024]  # 1 KB: the α grid is 0.3 KB
    # X_train, X_test and the 150 × 150 error kernel matrix at least, written once
    assert sorted(nbytes for nbytes, _, _ in data)[-3:] == [90 * 64 * 8, 270 * 64 * 8,
                                                            150 * 150 * 8]
    assert all(thread == threading.current_thread().name and not after
               for _, thread, after in data), data


def test_progress_reports_every_row_with_workers(digits):
    X, y = digits
    calls = []
    table = compare(X, y, kernel=get_kernel("rbf", gamma=0.05), methods=["rbf_sampler"],
                    n_components=[10, 20, 40], n_seeds=2, n_jobs=2,
                    progress=lambda row, done, total: calls.append((row["method"], done, total)))
    assert [done for _, done, _ in calls] == list(range(1, 8))
    assert {total for _, _, total in calls} == {7}
    assert sorted(method for method, _, _ in calls) == ["exact"] + ["rbf_sampler"] * 6
    assert table["method"].tolist() == ["exact"] + ["rbf_sampler"] * 6  # table order kept


def test_workers_by_default_only_where_the_work_is_worth_them(monkeypatch):
    # One worker per 15 s of estimated single-core work (the cost model's seconds): none
    # for the default grid on digits (~3 s) or on 6,000 × 40 rows (11 s of CPU measured,
    # where two workers did not pay), every core on 50,000 × 784 (~120 s).
    from kernelmaps.evaluate import _runs

    assert _runs.SECONDS_PER_WORKER == 15.0
    assert _runs.workers_worth(3.0, cap=16, n_runs=100) == 1
    assert _runs.workers_worth(11.0, cap=16, n_runs=100) == 1
    assert _runs.workers_worth(65.0, cap=16, n_runs=100) == 4
    assert _runs.workers_worth(120.0, cap=2, n_runs=78) == 2
    assert _runs.workers_worth(420.0, cap=64, n_runs=30) == 28  # 420 / 15
    X, y = load_digits(return_X_y=True)
    # The estimate at a fixed probe rate (20 Gflop/s a core, this machine's order), not the
    # rate measured now: the decision must not depend on the load of the moment.
    monkeypatch.setattr(_cost, "_measured_rate", lambda threads: (2e10 * threads, 2e10))
    table = compare(X, y, kernel=get_kernel("rbf", gamma=0.0002), n_components=[25, 400],
                    methods=["rbf_sampler"], n_seeds=2)
    settings = table.attrs["settings"]
    # ~2.5 s: the baseline's α path on 1,347 rows (eigh and the per-α LOO work, ~30 Gflop) and
    # five runs at their fixed cost: under one worker's 15 s.
    assert settings["n_jobs"] == 1 and 0.5 < settings["work_estimate_s"] < 5
    # A fixed overhead per run (exact + 2 sizes × 2 seeds) and flops at the probe's rate:
    # half the rate, twice the flops' seconds.
    monkeypatch.setattr(_cost, "_measured_rate", lambda threads: (1e10 * threads, 1e10))
    slower = compare(X, y, kernel=get_kernel("rbf", gamma=0.0002), n_components=[25, 400],
                     methods=["rbf_sampler"], n_seeds=2).attrs["settings"]
    # The fixed part: per run its overhead and the α path's per-group cost (1,347 training
    # rows, 10 classes: 19 groups of α).
    overhead = 5 * (_runs.RUN_OVERHEAD_S + _cost.alpha_path_fixed_seconds(1347, 10))
    assert slower["work_estimate_s"] == pytest.approx(
        overhead + 2 * (settings["work_estimate_s"] - overhead))
    monkeypatch.setattr(_runs, "SECONDS_PER_WORKER", 1e-3)  # as many as runs and cores
    table = compare(X, y, kernel=get_kernel("rbf", gamma=0.0002), n_components=[25, 400],
                    methods=["rbf_sampler"], n_seeds=2)
    assert table.attrs["settings"]["n_jobs"] == min(5, km.get_config()["n_threads"]
                                                    or len(os.sched_getaffinity(0)))


def test_the_baselines_work_pays_for_workers_that_run_the_maps_beside_it(monkeypatch):
    # With the exact baseline in this process, one worker would run the maps' runs after it
    # (one core busy, the others idle); workers run them beside it. So the baseline's work
    # counts toward the workers: a grid too small for two alone gets two with the baseline
    # (the main job: one worker for its maps alone, two with the baseline).
    from kernelmaps.evaluate import _runs

    monkeypatch.setattr(_cost, "_measured_rate", lambda threads: (1e10 * threads, 1e10))
    X, y = load_digits(return_X_y=True)
    args = dict(kernel=get_kernel("rbf", gamma=0.0002), n_components=[25],
                methods=["rbf_sampler"], n_seeds=2)
    maps_alone, with_exact = [], []
    with km.config_context(n_threads=2):
        compare(X, y, exact=False, on_estimate=maps_alone.append, **args)
        maps = maps_alone[0]["work_s"]
        assert maps_alone[0]["n_jobs"] == 1
        monkeypatch.setattr(_runs, "SECONDS_PER_WORKER", 0.75 * maps)  # maps alone: 1.33
        table = compare(X, y, exact=True, on_estimate=with_exact.append, **args)
    baseline = with_exact[0]["work_s"] - maps - 2 * _runs.WORKER_START_S
    assert baseline > 0.5 * maps  # (maps + baseline) / (0.75 maps) >= 2
    assert with_exact[0]["n_jobs"] == table.attrs["settings"]["n_jobs"] == 2
    with km.config_context(n_threads=2):
        assert compare(X, y, exact=False, **args).attrs["settings"]["n_jobs"] == 1


def test_the_work_estimate_is_the_cost_models_run_formula(monkeypatch):
    # Issue 34: compare's printed work is, per run, its fixed cost, the α path's per-group
    # cost and the cost model's flops of a map and ridge (a landmark map's fit and M × M
    # normalisation included; training, test and kernel-error rows transformed) at the
    # probe's rate: here fixed at 1e10 flop/s, so the number is exact, not timed.
    from kernelmaps.evaluate import _runs

    monkeypatch.setattr(_cost, "_measured_rate", lambda threads: (1e10 * threads, 1e10))
    X, y = load_digits(return_X_y=True)
    estimates = []
    compare(X, y, kernel=get_kernel("rbf", gamma=0.0002), n_components=[50],
            methods=["nystroem"], n_seeds=1, exact=False, on_estimate=estimates.append)
    n_train, n_test, d, classes = 1347, 450, 64, 10
    flops = (_cost.map_ridge_flops(n_train, d, 50, classes, landmarks=True,
                                   other_rows=n_test + 500)
             + 2 * n_test * 50 * classes)
    expected = (_runs.RUN_OVERHEAD_S + _cost.alpha_path_fixed_seconds(n_train, classes)
                + flops / 1e10)
    assert estimates[0]["work_s"] == pytest.approx(expected)
    assert estimates[0]["n_jobs"] == 1 and estimates[0]["exact"] is None
    # One process at a probe whose wall rate equals its CPU rate: elapsed = work.
    assert estimates[0]["wall_s"] == pytest.approx(expected)


@pytest.mark.parametrize("n_jobs", [0, 1.5, True, "2"])
def test_bad_n_jobs(digits, n_jobs):
    X, y = digits
    with pytest.raises(ValueError, match="n_jobs must be None, a positive int, or -1"):
        compare(X, y, n_components=[10], n_jobs=n_jobs)


def test_summary_times_are_medians_with_their_spread():
    runs = pd.DataFrame({"method": "a", "n_components": 10, "n_features_out": 10,
                         "n_components_same_map": "10", "seed": [0, 1, 2],
                         "error": [0.1, 0.2, 0.3], "score": 0.9, "fit_time_s": [1.0, 2.0, 9.0],
                         "transform_time_s": 1.0, "total_time_s": [3.0, 4.0, 30.0],
                         "cpu_time_s": [2.0, 3.0, 20.0], "peak_memory_mb": [1.0, 1.0, 2.0]})
    row = summarize(runs).iloc[0]
    # One disturbed run (30 s) moves a mean to 12.3 s; the median stays at 4 s.
    assert (row["fit_time_s"], row["total_time_s"], row["cpu_time_s"]) == (2.0, 4.0, 3.0)
    assert (row["cpu_time_min_s"], row["cpu_time_max_s"]) == (2.0, 20.0)
    assert row["cpu_time_mad_s"] == 1.0  # |2 - 3|, 0, |20 - 3|: the disturbed run is ignored
    assert row["peak_memory_mb"] == 2.0 and row["runs"] == 3


@pytest.mark.parametrize(("kernel", "method"), [
    (get_kernel("poly", gamma=0.05, degree=2, coef0=1.0), "poly_sketch"),
    (get_kernel("skewed_chi2", skewedness=0.5), "skewed_chi2"),
])
def test_compare_randomized_maps_of_other_kernels(digits, kernel, method):
    X, y = digits
    table = compare(X, y, kernel=kernel, methods=[method], n_components=[20, 500], n_seeds=2,
                    error_sample=200, exact=False)
    errors = table.groupby("n_components")["error"].mean()
    assert errors[500] < errors[20] / 2
    assert table["random_state"].notna().all()


def test_compare_with_a_vectorised_callable_kernel(digits):
    # A callable k(X, Y) is resolved by resolve_kernel(vectorized=True): only the methods for
    # any kernel run on it, and they give the numbers of the same kernel given by name.
    X, y = digits
    settings = {"n_components": [20, 80], "n_seeds": 2, "error_sample": 150}
    named = compare(X, y, kernel=get_kernel("rbf", gamma=0.05), methods=["nystroem"],
                    **settings)
    function = compare(X, y, kernel=lambda A, B: rbf_kernel(A, B, gamma=0.05), **settings)
    assert function["method"].tolist() == named["method"].tolist()  # exact + nystroem only
    assert function["kernel"].iloc[0].startswith("CallableKernel(")
    np.testing.assert_allclose(function["error"], named["error"], rtol=1e-6, atol=1e-12)
    # The two kernels' values agree to rounding, not bit for bit (a callable through
    # scikit-learn's pairwise code, a name through kernelmaps' blocks), so a test row whose
    # decision is a tie within rounding may flip: one of the 90 test rows (25 %) at most.
    np.testing.assert_allclose(function["score"], named["score"], rtol=0, atol=1.5 / 90)


def test_exact_baseline_is_the_kernel_machine():
    # Ridge without intercept on the exact features is kernel ridge regression (representer
    # theorem): the baseline row must score what sklearn's KernelRidge scores.
    X, y = load_diabetes(return_X_y=True)
    X_train, y_train, X_test, y_test = X[:300], y[:300], X[300:], y[300:]
    kernel = get_kernel("rbf", gamma=0.5)
    table = compare(X_train, y_train, kernel=kernel, methods=["nystroem"], n_components=[20],
                    n_seeds=1, model=Ridge(alpha=0.1, fit_intercept=False),
                    test_data=(X_test, y_test), exact=True)
    exact = table[table.method == "exact"].iloc[0]
    reference = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(X_train, y_train)
    assert exact["score"] == pytest.approx(r2_score(y_test, reference.predict(X_test)), abs=1e-8)
    assert table["scoring"].iloc[0] == "r2" and table["model"].iloc[0] == "Ridge"


def test_compare_cross_validation_and_exact_auto(digits, monkeypatch):
    X, y = digits
    table = compare(X, y, kernel=get_kernel("rbf", gamma=0.05), methods=["rbf_sampler"],
                    n_components=[50], n_seeds=1, cv=3)
    assert sorted(table["split"].unique()) == [0, 1, 2]
    assert (table.method == "exact").sum() == 3
    assert summarize(table)["method"].tolist() == ["exact", "rbf_sampler"]
    monkeypatch.setattr(comparison_module, "EXACT_AUTO_MAX_TRAIN", 100)
    table = compare(X, y, methods=["rbf_sampler"], n_components=[50], n_seeds=1)
    assert "exact" not in set(table.method)
    assert table.attrs["settings"]["exact_reason"] == "auto: skipped, 270 training rows > 100"
    monkeypatch.setattr(comparison_module, "EXACT_MAX_TRAIN", 100)
    with pytest.raises(ValueError, match="exact=True with 270 training rows"):
        compare(X, y, methods=["rbf_sampler"], n_components=[50], exact=True)


def test_task_detection():
    assert task_of(np.array([0.0, 1.0, 1.0])) == "classification"  # integral floats, 2 values
    assert task_of(np.array(["a", "b"])) == "classification"
    assert task_of(np.arange(100.0)) == "regression"  # > MAX_AUTO_CLASSES distinct values
    assert task_of(np.array([0.5, 1.0])) == "regression"
    assert task_of(np.arange(100.0), "classification") == "classification"
    with pytest.raises(ValueError, match="task='regression' needs a numeric y"):
        task_of(np.array(["a", "b"]), "regression")
    with pytest.raises(ValueError, match="task must be one of"):
        task_of(np.array([0, 1]), "ranking")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"methods": ["nope"]}, r"unknown method 'nope'; valid methods are \['additive_chi2'"),
    ({"methods": ["poly_sketch"]}, r"approximates the \['poly'\] kernel\(s\), not 'rbf'"),
    ({"kernel": "nope"}, "Unknown kernel 'nope' for compare"),
    ({"kernel": "precomputed"}, "compare needs a kernel on the rows of X"),
    ({"model": "tree"}, r"unknown model 'tree'; valid models are \['logistic', 'ridge'"),
    ({"n_components": [0]}, "n_components must be positive"),
    ({"n_seeds": 0}, "n_seeds must be a positive int"),
    ({"exact": "yes"}, "exact must be True, False or 'auto'"),
    ({"test_size": 0.0}, r"test_size must be in \(0, 1\)"),
    ({"cv": 1}, "cv must be an int >= 2"),
])
def test_compare_bad_arguments(digits, kwargs, message):
    X, y = digits
    with pytest.raises(ValueError, match=message):
        compare(X, y, **{"n_components": [10], **kwargs})


def test_compare_bad_data():
    X = np.random.RandomState(0).rand(6, 2)
    with pytest.raises(ValueError, match=r"too little data for the split: 2 rows with "
                                         r"test_size=0\.25 leave 1 training and 1 test rows"):
        compare(X[:2], [0, 1], n_components=[2])
    with pytest.raises(ValueError, match="too little data for 4-fold cross-validation"):
        compare(X, [0, 1] * 3, n_components=[2], cv=4)
    with pytest.raises(ValueError, match=r"y has 1 NaN/inf value\(s\), first at row\(s\) \[2\]"):
        compare(X, [0.5, 1.0, np.nan, 1.0, 2.0, 3.0], n_components=[2])
    with pytest.raises(ValueError, match="model 'logistic' needs class labels"):
        compare(X, np.linspace(0, 1, 6), n_components=[2], model="logistic")
    with pytest.raises(ValueError, match="training part holds a single class"):
        compare(X, [0, 0, 0, 0, 0, 1], n_components=[2], test_size=0.2)


def test_with_workers_the_maps_runs_go_beside_the_baseline(digits, monkeypatch):
    # With worker processes the grid is dispatched before the baseline starts and the
    # baseline runs on a thread of this process meanwhile (_runs._beside_baseline); its
    # phases are announced from that thread, and every row still arrives once.
    from kernelmaps.evaluate import _runs

    X, y = digits
    calls, threads = [], []
    beside = _runs._beside_baseline
    monkeypatch.setattr(_runs, "_beside_baseline",
                        lambda *args: calls.append(1) or beside(*args))
    table = compare(X[:600], y[:600], kernel=get_kernel("rbf", gamma=0.05),
                    methods=["rbf_sampler"], n_components=[10, 20], n_seeds=2, n_jobs=2,
                    exact=True,
                    on_phase=lambda name: threads.append(threading.current_thread().name))
    assert calls == [1]
    assert threads and all(name.startswith("kernelmaps-compare-") for name in threads)
    assert table["method"].tolist() == ["exact"] + ["rbf_sampler"] * 4
    assert table["score"].notna().all()
