"""ridge_alpha_path: closed-form leave-one-out / k-fold scores against brute force, and the
model at the best α against scikit-learn's own fit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_diabetes, load_digits, load_wine
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import (
    KFold,
    LeaveOneOut,
    StratifiedKFold,
    cross_val_predict,
    cross_val_score,
)

from kernelmaps.tuning import DEFAULT_ALPHAS, ridge_alpha_path

ALPHAS = [1e-3, 1e-1, 1.0, 10.0, 1e3]
# Brute force refits n models; the path uses one eigendecomposition. Both are float64 and
# backward stable, so scores agree to ~κ·eps: 1e-7 relative leaves room for κ up to ~1e8.
RTOL = 1e-7


def _loo_r2(Z, y, alpha):
    return r2_score(y, cross_val_predict(Ridge(alpha=alpha), Z, y, cv=LeaveOneOut()))


def _loo_accuracy(Z, y, alpha):
    return accuracy_score(y, cross_val_predict(RidgeClassifier(alpha=alpha), Z, y,
                                               cv=LeaveOneOut()))


def test_loo_regression_equals_brute_force_on_unscaled_data():
    X, y = load_diabetes(return_X_y=True)
    X = X[:150] * 100.0  # unscaled columns, a target in the hundreds
    path = ridge_alpha_path(X, y[:150], alphas=ALPHAS)
    expected = [_loo_r2(X, y[:150], a) for a in ALPHAS]
    np.testing.assert_allclose(path.scores, expected, rtol=RTOL)
    assert path.alpha == ALPHAS[int(np.argmax(expected))]


def test_loo_classification_equals_brute_force():
    X, y = load_wine(return_X_y=True)
    path = ridge_alpha_path(X, y, alphas=ALPHAS, task="classification")
    expected = [_loo_accuracy(X, y, a) for a in ALPHAS]
    # Accuracy counts decisions: equal unless a decision sits within rounding of a tie.
    np.testing.assert_array_equal(path.scores, expected)


def test_binary_classification_equals_brute_force():
    X, y = load_digits(return_X_y=True)
    X, y = X[:200], (y[:200] >= 5).astype(int)
    path = ridge_alpha_path(X, y, alphas=ALPHAS, task="classification")
    np.testing.assert_array_equal(path.scores, [_loo_accuracy(X, y, a) for a in ALPHAS])


def test_more_features_than_rows_uses_the_dual_and_agrees():
    rng = np.random.RandomState(0)
    Z = rng.normal(size=(40, 120))
    y = Z[:, 0] - 2 * Z[:, 1] + 0.1 * rng.normal(size=40)
    path = ridge_alpha_path(Z, y, alphas=ALPHAS)
    np.testing.assert_allclose(path.scores, [_loo_r2(Z, y, a) for a in ALPHAS], rtol=RTOL)
    model = path.estimator()
    reference = Ridge(alpha=path.alpha).fit(Z, y)
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-8,
                               atol=1e-10 * np.abs(reference.coef_).max())


@pytest.mark.parametrize("rows", [300, 60])  # primal (n ≥ D) and dual (n < D) folds
def test_kfold_equals_cross_val_score(rows):
    X, y = load_digits(return_X_y=True)
    X, y = X[:rows], y[:rows]
    path = ridge_alpha_path(X, y, alphas=ALPHAS, task="regression", cv=3, random_state=0)
    folds = KFold(3, shuffle=True, random_state=0)
    expected = [cross_val_score(Ridge(alpha=a), X, y, cv=folds).mean() for a in ALPHAS]
    # Fold Gram matrices by subtraction from the full one: rounding ~eps·‖G‖/λ_min(G+α).
    np.testing.assert_allclose(path.scores, expected, rtol=1e-6)


def test_kfold_classification_is_stratified_like_scikit_learn():
    X, y = load_digits(return_X_y=True)
    X, y = X[:400], y[:400]
    path = ridge_alpha_path(X, y, alphas=ALPHAS, task="classification", cv=4, random_state=3)
    folds = StratifiedKFold(4, shuffle=True, random_state=3)
    expected = [cross_val_score(RidgeClassifier(alpha=a), X, y, cv=folds).mean()
                for a in ALPHAS]
    np.testing.assert_allclose(path.scores, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("task,labels", [("classification", 3), ("classification", 2),
                                         ("regression", 0)])
def test_estimator_equals_scikit_learns_fit(task, labels):
    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    if task == "classification":
        y = y % labels
        reference_cls = RidgeClassifier
    else:
        y = y + 0.1 * X[:, 20]
        reference_cls = Ridge
    path = ridge_alpha_path(X, y, alphas=ALPHAS, task=task)
    model = path.estimator()
    reference = reference_cls(alpha=path.alpha).fit(X, y)
    assert model.coef_.shape == reference.coef_.shape
    assert np.shape(model.intercept_) == np.shape(reference.intercept_)
    # Two solvers of one SPD system (κ(XᵀX + αI) ≲ 1e6 here): 1e-8 relative to the scale.
    scale = np.abs(reference.coef_).max()
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(model.intercept_, reference.intercept_, rtol=1e-8, atol=1e-8)
    if task == "classification":  # decisions far from ties: the same labels
        np.testing.assert_array_equal(model.predict(X[:50]), reference.predict(X[:50]))
    else:
        np.testing.assert_allclose(model.predict(X[:50]), reference.predict(X[:50]),
                                   rtol=1e-8)


def test_float32_features_give_float32_coefficients():
    X, y = load_diabetes(return_X_y=True)
    path = ridge_alpha_path(X.astype(np.float32), y, alphas=ALPHAS)
    assert path.coef.dtype == np.float32
    assert path.estimator().predict(X[:3].astype(np.float32)).shape == (3,)


def test_default_grid_and_tie_break_prefers_larger_alpha():
    rng = np.random.RandomState(0)
    Z = rng.normal(size=(50, 3))
    y = np.repeat([0, 1], 25)  # unrelated labels
    path = ridge_alpha_path(Z, y, task="classification")
    np.testing.assert_array_equal(path.alphas, DEFAULT_ALPHAS)
    best = path.scores.max()
    ties = np.flatnonzero(path.scores == best)
    errors = path.errors[ties]
    assert path.best_index in ties[errors == errors.min()]


@settings(max_examples=15, deadline=None)
@given(n=st.integers(8, 30), d=st.integers(1, 40), seed=st.integers(0, 10_000))
def test_loo_equals_brute_force_property(n, d, seed):
    rng = np.random.RandomState(seed)
    Z = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, size=d)
    y = rng.normal(size=n)
    alphas = [1e-2, 1.0, 100.0]
    path = ridge_alpha_path(Z, y, alphas=alphas)
    expected = [_loo_r2(Z, y, a) for a in alphas]
    # Column scales up to 100×: κ(ZᵀZ + αI) ≤ ~1e6, so 1e-6 of the R² scale (≥ 1).
    np.testing.assert_allclose(path.scores, expected, rtol=1e-6,
                               atol=1e-6 * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("kwargs,match", [
    ({"alphas": [-1.0]}, "alphas"), ({"alphas": []}, "alphas"),
    ({"alphas": [np.nan]}, "alphas"), ({"cv": 1}, "cv"), ({"cv": "gcv"}, "cv"),
    ({"cv": True}, "cv"), ({"task": "ranking"}, "task"),
])
def test_bad_arguments_name_the_parameter(kwargs, match):
    Z, y = np.ones((10, 2)), np.arange(10.0)
    with pytest.raises(ValueError, match=match):
        ridge_alpha_path(Z, y, **kwargs)


def test_bad_data():
    with pytest.raises(ValueError, match="y has 9 rows but Z has 10"):
        ridge_alpha_path(np.ones((10, 2)), np.arange(9.0))
    with pytest.raises(ValueError, match="single class"):
        ridge_alpha_path(np.ones((10, 2)), np.zeros(10), task="classification")
    with pytest.raises(ValueError, match="NaN"):
        ridge_alpha_path(np.ones((10, 2)), np.r_[np.nan, np.arange(9.0)])
    with pytest.raises(ValueError, match="Z"):
        ridge_alpha_path(np.r_[[[np.inf, 1.0]], np.ones((9, 2))], np.arange(10.0))
    with pytest.raises(ValueError, match="cv=5 folds need at least 10 rows"):
        ridge_alpha_path(np.ones((8, 2)), np.arange(8.0), cv=5)


def test_score_rows_scores_only_those_rows_of_the_loo_predictions():
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:120], y[:120]
    rows = np.arange(0, 120, 3)
    path = ridge_alpha_path(X, y, alphas=ALPHAS, score_rows=rows)
    mask = np.zeros(120, dtype=bool)
    mask[rows] = True
    np.testing.assert_array_equal(
        path.scores, ridge_alpha_path(X, y, alphas=ALPHAS, score_rows=mask).scores)
    for alpha, score in zip(ALPHAS, path.scores, strict=True):
        loo = cross_val_predict(Ridge(alpha=alpha), X, y, cv=LeaveOneOut())
        np.testing.assert_allclose(score, r2_score(y[rows], loo[rows]), rtol=RTOL)
    # Every row is still fitted on: the model is the one fitted without score_rows.
    reference = Ridge(alpha=path.alpha).fit(X, y)
    np.testing.assert_allclose(path.coef, reference.coef_, rtol=0,
                               atol=1e-8 * np.abs(reference.coef_).max())


def test_score_rows_in_folds():
    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    keep = np.arange(300) % 2 == 0
    path = ridge_alpha_path(X, y, alphas=ALPHAS, task="classification", cv=3,
                            random_state=0, score_rows=keep)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    expected = []
    for alpha in ALPHAS:
        fold_scores = []
        for train, test in folds.split(X, y):
            test = test[keep[test]]
            model = RidgeClassifier(alpha=alpha).fit(X[train], y[train])
            fold_scores.append(model.score(X[test], y[test]))
        expected.append(np.mean(fold_scores))
    np.testing.assert_allclose(path.scores, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("rows,error,match", [
    (np.ones(5, dtype=bool), ValueError, "one value per row"),
    ([0, 99], ValueError, "outside"),
    ([0.5, 1.5], TypeError, "score_rows"),
    ([3], ValueError, "at least 2"),
])
def test_bad_score_rows(rows, error, match):
    with pytest.raises(error, match=match):
        ridge_alpha_path(np.random.RandomState(0).normal(size=(10, 2)), np.arange(10.0),
                         score_rows=rows)


def _loo_alpha_by_alpha(Z, y, alphas, task, rows):
    """The closed form as it was computed before row blocks: α by α, every scored row at
    once (eigh of the centred Gram matrix, leverages and fitted values per α)."""
    from kernelmaps._ridge import encode_targets, path_scores

    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[0]
    Y, classes = encode_targets(y, n, task)
    Zc, y_mean = Z - Z.mean(axis=0), Y.mean(axis=0)
    lam, V = np.linalg.eigh(Zc.T @ Zc)
    keep = lam > 1e-12 * lam[-1]
    lam, V = lam[keep], V[:, keep]
    P_all = Zc @ V
    coeffs, P = P_all.T @ (Y - y_mean), P_all[rows]
    labels = np.asarray(y)[rows] if task == "classification" else None
    scores, errors = [], []
    for alpha in alphas:
        inverse = 1.0 / (lam + alpha)
        leverage = 1.0 / n + (P * P) @ inverse
        fitted = y_mean + P @ (coeffs * inverse[:, None])
        loo = (fitted - leverage[:, None] * Y[rows]) / np.maximum(1.0 - leverage, 1e-12)[:, None]
        s, e = path_scores(Y[rows], loo[:, :, None], task, classes, labels)
        scores.append(s[0])
        errors.append(e[0])
    return np.array(scores), np.array(errors)


@pytest.mark.parametrize("data", ["digits-nystroem", "wine", "diabetes"])
@pytest.mark.parametrize("block_elements", [2**10, 2**17])
def test_row_blocks_select_the_same_alpha_and_scores_as_alpha_by_alpha(
        data, block_elements, monkeypatch):
    # Blocks of rows with every α at once (2**10: blocks of 16 rows; 2**17: the default)
    # must give what the formula α by α gives on the same rows: the same accuracy counts
    # (a decision changes only within rounding of a tie, which these data sets do not
    # have); errors and R² equal to rounding: both sides are backward-stable float64 (the
    # reference decomposes with NumPy's eigh and a plain product, and sums in another
    # order), so they agree to a small multiple of n·eps relative.
    from kernelmaps import Nystroem
    from kernelmaps._ridge import best_index, honest_rows
    from kernelmaps._ridge import path as path_module

    monkeypatch.setattr(path_module, "_CHUNK_ELEMENTS", block_elements)
    if data == "digits-nystroem":
        X, y = load_digits(return_X_y=True)
        feature_map = Nystroem(gamma=0.02, n_components=300, random_state=0).fit(X)
        Z, task, rows = feature_map.transform(X), "classification", honest_rows(feature_map,
                                                                              X.shape[0])
    elif data == "wine":
        X, y = load_wine(return_X_y=True)
        Z, task, rows = (X - X.mean(axis=0)) / X.std(axis=0), "classification", None
    else:
        Z, y = load_diabetes(return_X_y=True)
        task, rows = "regression", None
    path = ridge_alpha_path(Z, y, task=task, score_rows=rows)
    scored = np.ones(Z.shape[0], dtype=bool) if rows is None else rows
    scores, errors = _loo_alpha_by_alpha(Z, y, DEFAULT_ALPHAS, task, scored)
    bound = 50 * Z.shape[0] * np.finfo(float).eps
    if task == "classification":
        np.testing.assert_array_equal(path.scores, scores)
    else:
        np.testing.assert_allclose(path.scores, scores, rtol=bound, atol=bound)
    np.testing.assert_allclose(path.errors, errors, rtol=bound)
    assert path.alpha == DEFAULT_ALPHAS[best_index(DEFAULT_ALPHAS, scores, errors, task,
                                                   int(scored.sum()))]
