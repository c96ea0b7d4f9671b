"""KernelRidgeClassifier: scikit-learn's RidgeClassifier contract with a kernel, exact and
Nyström/FALKON, on labels of any type, weighted, on the array API."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_digits, load_wine
from sklearn.linear_model import RidgeClassifier
from sklearn.preprocessing import StandardScaler

from kernelmaps.models import KernelRidge, KernelRidgeClassifier

EPS = np.finfo(np.float64).eps


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_linear_exact_equals_scikit_learns_ridge_classifier(wine):
    # Without an intercept, ridge on X (primal) and kernel ridge with the linear kernel (dual)
    # are the same minimiser: the scores agree to the solves' rounding, κ·eps.
    X, y = wine
    ours = KernelRidgeClassifier(alpha=2.0, kernel="linear", solver="exact").fit(X, y)
    theirs = RidgeClassifier(alpha=2.0, fit_intercept=False).fit(X, y)
    scores = theirs.decision_function(X)
    kappa = np.linalg.cond(X.T @ X + 2.0 * np.eye(X.shape[1]))
    np.testing.assert_allclose(ours.decision_function(X), scores, rtol=0,
                               atol=100 * kappa * EPS * np.abs(scores).max())
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)


@pytest.mark.parametrize("solver", ["exact", "nystrom"])
def test_scores_are_kernel_ridge_on_plus_minus_one_targets(wine, solver):
    X, y = wine
    params = dict(alpha=0.5, kernel="rbf", gamma=0.1, solver=solver, n_components=60,
                  tol=1e-10, max_iter=300, random_state=0)
    classifier = KernelRidgeClassifier(**params).fit(X, y)
    targets = np.where(y[:, None] == np.unique(y)[None, :], 1.0, -1.0)
    regression = KernelRidge(**params).fit(X, targets)
    # The same system solved the same way: equal to the solves' rounding (CG at 1e-10).
    expected = regression.predict(X)
    np.testing.assert_allclose(classifier.decision_function(X), expected, rtol=0,
                               atol=1e-7 * np.abs(expected).max())
    assert classifier.fit_info_["solver"] == solver


def test_labels_of_any_type_and_two_classes():
    X, y = load_digits(return_X_y=True)
    keep = y < 2
    X, y = X[keep] / 16, y[keep]
    names = np.array(["zero", "one"])[y]
    model = KernelRidgeClassifier(alpha=0.1, gamma=0.05).fit(X, names)
    assert list(model.classes_) == ["one", "zero"]
    scores = model.decision_function(X)
    assert scores.shape == (X.shape[0],) and model.dual_coef_.ndim == 1
    # Two classes: +1 for classes_[1]; positive scores predict it.
    np.testing.assert_array_equal(model.predict(X), np.where(scores > 0, "zero", "one"))
    assert model.score(X, names) > 0.99


def test_sample_weight_equals_repetition_for_the_exact_solver(wine):
    X, y = wine
    repeats = np.random.RandomState(0).randint(0, 3, size=len(y))
    weighted = KernelRidgeClassifier(alpha=1.0, gamma=0.1, solver="exact").fit(
        X, y, sample_weight=repeats)
    repeated = KernelRidgeClassifier(alpha=1.0, gamma=0.1, solver="exact").fit(
        np.repeat(X, repeats, axis=0), np.repeat(y, repeats))
    scores = repeated.decision_function(X)
    np.testing.assert_allclose(weighted.decision_function(X), scores, rtol=0,
                               atol=1e-8 * np.abs(scores).max())


def test_nystrom_classifier_matches_the_exact_one_on_digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16
    exact = KernelRidgeClassifier(alpha=1e-2, gamma=0.05, solver="exact").fit(X[:1400], y[:1400])
    nystrom = KernelRidgeClassifier(alpha=1e-2, gamma=0.05, solver="nystrom",
                                    n_components=600, random_state=0).fit(X[:1400], y[:1400])
    a, b = exact.score(X[1400:], y[1400:]), nystrom.score(X[1400:], y[1400:])
    assert a > 0.95 and b > a - 0.02, (a, b)
    assert nystrom.fit_info_["path"] == "cached" and nystrom.n_iter_ < 100


def test_precomputed_kernel(wine):
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = wine
    K = rbf_kernel(X, gamma=0.1)
    precomputed = KernelRidgeClassifier(alpha=0.5, kernel="precomputed").fit(K, y)
    direct = KernelRidgeClassifier(alpha=0.5, kernel="rbf", gamma=0.1).fit(X, y)
    np.testing.assert_allclose(precomputed.decision_function(K), direct.decision_function(X),
                               rtol=0, atol=1e-10)


def test_clear_errors(wine):
    X, y = wine
    with pytest.raises(ValueError, match="at least 2 classes"):
        KernelRidgeClassifier().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="Unknown label type"):
        KernelRidgeClassifier().fit(X, np.linspace(0, 1, len(y)))
    with pytest.raises(ValueError, match="alpha"):
        KernelRidgeClassifier(alpha=-1.0).fit(X, y)


@pytest.mark.parametrize("solver", ["exact", "nystrom"])
@pytest.mark.parametrize("library", ["torch", "array_api_strict"])
def test_array_api_matches_numpy(wine, solver, library):
    xp = pytest.importorskip(library)
    X, y = wine
    model = KernelRidgeClassifier(alpha=0.5, gamma=0.1, solver=solver, n_components=50,
                                  tol=1e-10, max_iter=300, random_state=0)
    expected = sklearn.clone(model).fit(X, y).decision_function(X)
    with sklearn.config_context(array_api_dispatch=True):
        fitted = model.fit(xp.asarray(X), xp.asarray(y))
        scores = fitted.decision_function(xp.asarray(X))
        labels = fitted.predict(xp.asarray(X))
    assert type(scores).__module__.split(".")[0] == library.split(".")[0]
    # Same float64 algebra, another library's BLAS and summation order: κ·eps-level.
    np.testing.assert_allclose(np.asarray(scores), expected, rtol=0,
                               atol=1e-8 * np.abs(expected).max())
    np.testing.assert_array_equal(np.asarray(labels), fitted.classes_[expected.argmax(axis=1)])
