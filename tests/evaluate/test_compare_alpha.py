"""compare on fair terms (issue 20, item 3): ridge's α chosen per row by closed-form
leave-one-out — the feature rows as ``RidgeCV`` chooses, the exact baseline as a brute-force
leave-one-out over its kernel matrix — a fixed ``alpha`` on request, and rows that score
above the exact kernel flagged with the likely reason."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_digits
from sklearn.linear_model import Ridge, RidgeCV

from kernelmaps.evaluate import METHODS, advise, compare, median_heuristic, summarize
from kernelmaps.evaluate.advice import NOISE_SES, advice_sentence
from kernelmaps.kernels import get_kernel
from kernelmaps.tuning import DEFAULT_ALPHAS, honest_rows, kernel_alpha_path, ridge_alpha_path
from tests._rounding import assert_equal_to_rounding


def _diabetes(n_train: int, n_test: int):
    X, y = load_diabetes(return_X_y=True)  # real, unscaled targets (25…346)
    kernel = get_kernel("rbf", gamma=median_heuristic(X[:n_train], "rbf").value)
    return X[:n_train], y[:n_train], X[n_train:n_train + n_test], y[n_train:n_train + n_test], \
        kernel


def test_feature_rows_choose_the_alpha_ridgecv_chooses():
    X, y, X_test, y_test, kernel = _diabetes(300, 142)
    # Random features depend on no training row, so every row is scored, as in RidgeCV.
    # D = 400 > 300 rows takes the dual (n × n) decomposition.
    table = compare(X, y, kernel=kernel, methods=["rbf_sampler", "rff"],
                    n_components=[50, 400], n_seeds=2, exact=False, test_data=(X_test, y_test),
                    n_jobs=1)
    assert len(table) == 8 and table["alpha"].notna().all()
    chosen = set()
    for _, row in table.iterrows():
        feature_map = METHODS[row["method"]].build(kernel, int(row["n_components"]),
                                                   int(row["random_state"]), X.shape[1])
        Z = feature_map.fit(X).transform(X)
        reference = RidgeCV(alphas=DEFAULT_ALPHAS).fit(Z, y)  # LOO (its GCV mode), by MSE
        # Both pick a value of the same grid: the same one, to rounding of its value.
        assert row["alpha"] == pytest.approx(reference.alpha_, rel=1e-12), row["method"]
        chosen.add(float(row["alpha"]))
        # The row's model is Ridge at that α: its test score, to rounding.
        model = Ridge(alpha=reference.alpha_).fit(Z, y)
        expected = model.score(feature_map.transform(X_test), y_test)
        # R² of predictions that agree to ~1e3 ulps of y's scale (different solvers).
        assert row["score"] == pytest.approx(expected, abs=1e-9)
    assert len(chosen) > 1  # the rows do not all land on one α: there is something to choose


def test_classification_rows_score_like_tune():
    # Nyström's landmark rows are fitted on but not scored, and accuracy decides, as in tune.
    X, y = load_digits(return_X_y=True)
    X, y, X_test, y_test = X[:500], y[:500], X[500:700], y[500:700]
    kernel = get_kernel("rbf", gamma=median_heuristic(X, "rbf").value)
    table = compare(X, y, kernel=kernel, methods=["nystroem"], n_components=[100], n_seeds=1,
                    exact=False, test_data=(X_test, y_test), n_jobs=1)
    row = table.iloc[0]
    feature_map = METHODS["nystroem"].build(kernel, 100, int(row["random_state"]), 64).fit(X)
    path = ridge_alpha_path(feature_map.transform(X), y, alphas=DEFAULT_ALPHAS,
                            task="classification", score_rows=honest_rows(feature_map, 500))
    assert row["alpha"] == path.alpha


def _brute_force_loo_r2(K: np.ndarray, y: np.ndarray, alpha: float) -> float:
    """Leave each row out, fit scikit-learn's Ridge (with an intercept) on features Z with
    ZZᵀ = K on the other rows, predict the row left out; R² of those predictions."""
    lam, U = np.linalg.eigh(K)
    Z = U * np.sqrt(np.maximum(lam, 0.0))
    predicted = np.empty_like(y)
    for i in range(y.size):
        keep = np.arange(y.size) != i
        predicted[i] = Ridge(alpha=alpha).fit(Z[keep], y[keep]).predict(Z[i:i + 1])[0]
    return 1.0 - np.sum((y - predicted) ** 2) / np.sum((y - y.mean()) ** 2)


def test_exact_baseline_alpha_is_the_brute_force_leave_one_out_choice():
    X, y, X_test, y_test, kernel = _diabetes(50, 40)
    alphas = DEFAULT_ALPHAS[::3]  # 13 values over the same range, 650 ridge fits
    K = kernel(X, X)
    brute = np.array([_brute_force_loo_r2(K, y, a) for a in alphas])
    H = np.eye(50) - 1.0 / 50
    path = kernel_alpha_path(H @ K @ H, y, alphas=alphas)
    # Two computations of the same LOO R² (eigh + closed form, 50 Ridge fits): agree to
    # rounding of the R² scale (a sum of 50 squares; the condition of K + αI at the
    # smallest α is ~1e6, so ~1e6 · n · eps of a unit score).
    assert_equal_to_rounding(path.scores, brute, ulps=50 * 1e6, scale=1.0)
    assert path.alpha == alphas[np.argmax(brute)]
    # compare's baseline chooses over DEFAULT_ALPHAS the same way.
    table = compare(X, y, kernel=kernel, methods=["nystroem"], n_components=[10], n_seeds=1,
                    exact=True, test_data=(X_test, y_test), n_jobs=1)
    exact = table[table["method"] == "exact"].iloc[0]
    full = kernel_alpha_path(H @ K @ H, y)
    brute_at = {a: _brute_force_loo_r2(K, y, a) for a in (full.alpha,)}
    assert exact["alpha"] == full.alpha
    assert full.scores[full.best_index] == pytest.approx(brute_at[full.alpha], abs=1e-8)
    # ... and at that α scores what the Cholesky path scores with alpha fixed to it.
    fixed = compare(X, y, kernel=kernel, methods=["nystroem"], n_components=[10], n_seeds=1,
                    exact=True, test_data=(X_test, y_test), n_jobs=1, alpha=full.alpha)
    fixed_exact = fixed[fixed["method"] == "exact"].iloc[0]
    assert fixed_exact["alpha"] == full.alpha
    assert exact["score"] == pytest.approx(fixed_exact["score"], abs=1e-8)


def _smooth_noisy(n: int, rng: np.random.RandomState):
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, np.sin(3 * X[:, 0]) + X[:, 1] + 0.5 * rng.normal(size=n)


def test_a_row_above_the_exact_kernel_is_flagged_with_the_reason():
    # A narrow kernel at a tiny fixed α: the exact kernel interpolates the noise (test R² far
    # below 0), Nyström at D = 20 cannot, and scores far above it on 1,000 test rows.
    rng = np.random.RandomState(0)
    (X, y), test = _smooth_noisy(400, rng), _smooth_noisy(1000, rng)
    settings = {"kernel": get_kernel("rbf", gamma=5.0), "methods": ["nystroem"],
                "n_components": [20], "n_seeds": 1, "exact": True, "test_data": test,
                "n_jobs": 1}
    fixed = advise(compare(X, y, alpha=1e-6, **settings))
    row = fixed.iloc[0]
    assert row["beats_reference"] and row["above_reason"] == "regularisation"
    assert row["score_gap"] < -1.0 and row["score_diff_se"] > 0
    assert "beyond the test split's noise" in row["advice"]
    assert "fixed alpha" in row["advice"] and "within" not in row["advice"]
    sentence = advice_sentence(fixed)
    assert "at or above the reference score" in sentence and "Note: nystroem" in sentence
    # With α chosen per row the exact kernel regularises itself and is the better one.
    fair = compare(X, y, **settings)
    summary = summarize(fair)
    assert summary.loc[0, "method"] == "exact" and summary.loc[0, "score"] > 0.6
    assert summary.loc[1, "score_diff"] < 0
    assert not advise(fair)["beats_reference"].any()


def _table(score: float, se: float, selected: bool) -> pd.DataFrame:
    table = pd.DataFrame({
        "method": ["exact", "a"], "n_components": [100, 10], "n_features_out": [100, 10],
        "runs": 1, "score": [0.90, score], "total_time_s": [5.0, 0.1],
        "peak_memory_mb": [80.0, 1.0], "alpha": [1e-3, 1e-2],
        "score_diff_se": [np.nan, se]})
    table.attrs["settings"] = {"alpha_selected": selected}
    return table


@pytest.mark.parametrize(("score", "se", "reason", "words"), [
    (0.905, 0.01, "noise", "within the test split's noise"),  # 0.5 SE
    (0.95, 0.01, "regularisation", "finite D likely acts as extra regularisation"),  # 5 SE
    (0.95, np.nan, "unknown", "unknown here"),
    (0.895, 0.01, "", "within 1 % of the reference"),  # below: within tolerance, as before
])
def test_the_reason_follows_the_standard_error(score, se, reason, words):
    advice = advise(_table(score, se, selected=True))
    assert advice.loc[0, "above_reason"] == reason
    assert advice.loc[0, "beats_reference"] == (score > 0.90)
    assert words in advice.loc[0, "advice"]
    assert NOISE_SES == 2.0


def test_one_fixed_alpha_is_named_as_the_likely_cause():
    advice = advise(_table(0.95, 0.01, selected=False))
    assert "at one fixed alpha" in advice.loc[0, "advice"]


@pytest.mark.parametrize("alpha", [0, -1.0, np.inf, np.nan, True, "0.1"])
def test_bad_alpha_is_refused_naming_it(alpha):
    X, y = load_digits(return_X_y=True)
    with pytest.raises(ValueError, match=r"alpha must be None .* or a positive finite number"):
        compare(X[:100], y[:100], methods=["rff"], n_components=[10], alpha=alpha)


def test_alpha_applies_to_ridge_only():
    X, y = load_digits(return_X_y=True)
    with pytest.raises(ValueError, match="alpha applies to model='ridge'"):
        compare(X[:100], y[:100], methods=["rff"], n_components=[10], model="svm", alpha=1.0)


def test_fixed_alpha_is_used_by_every_row():
    X, y = load_digits(return_X_y=True)
    table = compare(X[:300], y[:300], methods=["rff", "nystroem"], n_components=[20],
                    n_seeds=1, alpha=0.5, n_jobs=1)
    assert (table["alpha"] == 0.5).all()
    assert table.attrs["settings"]["alpha"] == "0.5 (fixed)"
    assert table.attrs["settings"]["alpha_selected"] is False
    other = compare(X[:300], y[:300], methods=["rff"], n_components=[20], n_seeds=1,
                    model="svm", n_jobs=1)
    assert other["alpha"].isna().all()  # a model without ridge's alpha


def test_kernel_alpha_path_rejects_non_finite_kernels_and_misaligned_targets():
    K = np.eye(5)
    for bad in (np.inf, np.nan):
        K_bad = K.copy()
        K_bad[1, 2] = K_bad[2, 1] = bad
        with pytest.raises(ValueError, match="K_centred contains NaN or infinity"):
            kernel_alpha_path(K_bad, np.arange(5.0))
    with pytest.raises(ValueError, match="y has 4 rows but K_centred has 5"):
        kernel_alpha_path(K, np.arange(4.0))
