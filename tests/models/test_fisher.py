"""KernelFisherDiscriminant: the formula, multi-class, landmarks, errors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_blobs, make_circles
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import train_test_split

from kernelmaps.models import KernelFisherDiscriminant
from tests._rounding import assert_labels_agree_where_decided

# scikit-learn's estimator checks run from the registry (tests/_estimators.py).


def test_binary_direction_is_the_closed_form():
    X, y = make_circles(n_samples=200, factor=0.4, noise=0.05, random_state=0)
    model = KernelFisherDiscriminant(reg=1e-2, kernel="rbf", gamma=2.0).fit(X, y)
    K = rbf_kernel(X, gamma=2.0)
    m0, m1 = K[y == 0].mean(0), K[y == 1].mean(0)
    N = sum((K[y == c] - K[y == c].mean(0)).T @ (K[y == c] - K[y == c].mean(0)) for c in (0, 1))
    mu = 1e-2 * np.trace(N) / N.shape[0]
    a = np.linalg.solve(N + mu * np.eye(len(N)), m1 - m0)
    direction = model.coef_[:, 0]
    cosine = a @ direction / (np.linalg.norm(a) * np.linalg.norm(direction))
    assert abs(cosine) == pytest.approx(1.0, abs=1e-6)  # a ∝ (N + μI)⁻¹(m₁ − m₀)


def test_separates_non_linear_classes():
    X, y = make_circles(n_samples=400, factor=0.4, noise=0.05, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    model = KernelFisherDiscriminant(kernel="rbf", gamma=2.0).fit(X_train, y_train)
    assert model.score(X_test, y_test) > 0.95
    proba = model.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (model.classes_[proba.argmax(axis=1)] == model.predict(X_test)).all()


@pytest.mark.parametrize("n_components", [None, 300])
def test_multiclass_digits(n_components):
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X / 16, y, random_state=0)
    model = KernelFisherDiscriminant(kernel="rbf", gamma=0.05, n_components=n_components,
                                     random_state=0).fit(X_train, y_train)
    assert model.transform(X_test).shape == (len(X_test), 9)  # C − 1 directions
    assert model.score(X_test, y_test) > 0.95
    assert np.all(np.diff(model.eigenvalues_) <= 1e-12)  # sorted by Fisher ratio


def test_string_labels_and_feature_names():
    X, y = make_circles(n_samples=100, factor=0.4, noise=0.05, random_state=0)
    labels = np.where(y == 1, "inner", "outer")
    model = KernelFisherDiscriminant(kernel="rbf", gamma=2.0).fit(X, labels)
    assert set(model.predict(X)) <= {"inner", "outer"}
    assert list(model.get_feature_names_out()) == ["kernelfisherdiscriminant0"]


def test_single_class_is_a_clear_error():
    with pytest.raises(ValueError, match="at least 2 classes"):
        KernelFisherDiscriminant().fit(np.random.RandomState(0).rand(10, 2), np.zeros(10))


def test_bad_parameters():
    X, y = make_circles(n_samples=50, random_state=0)
    with pytest.raises(ValueError, match="reg"):
        KernelFisherDiscriminant(reg=0.0).fit(X, y)
    with pytest.raises(ValueError, match="precomputed"):
        KernelFisherDiscriminant(kernel="precomputed").fit(np.eye(50), y)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_in_discriminant_space_equals_sklearn_lda(n_classes):
    # The fitted state keeps LDA's arrays, not the LDA object (safe persistence): the
    # scores, labels and probabilities must still be exactly scikit-learn's LDA on the
    # training projections.
    X, y = make_blobs(n_samples=120, centers=n_classes, n_features=4, random_state=0)
    model = KernelFisherDiscriminant(kernel="rbf", gamma=0.2).fit(X, y)
    lda = LinearDiscriminantAnalysis().fit(model.transform(X), y)
    X_new = X[::3] + 0.3
    projected = model.transform(X_new)
    np.testing.assert_allclose(model.decision_function(X_new), lda.decision_function(projected),
                               rtol=1e-12, atol=1e-12)
    # Labels follow scores equal to 1e-12 (above): the same wherever the decision is no tie
    # within that.
    assert_labels_agree_where_decided(model.predict(X_new), lda.predict(projected),
                                      lda.decision_function(projected), tie=1e-12)
    np.testing.assert_allclose(model.predict_proba(X_new), lda.predict_proba(projected),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.predict_log_proba(X_new),
                               lda.predict_log_proba(projected), rtol=1e-12, atol=1e-12)
    assert not any(hasattr(value, "fit") for value in vars(model).values())


def test_beyond_the_cache_budget_the_kernel_matrix_is_streamed():
    # n × p above kernel_cache_bytes: the scatter matrices from passes over K's blocks (class
    # sums, then the scatter about those means), the same algebra in another summation
    # order. Directions are eigenvectors: compared through the projections they give.
    import kernelmaps as km

    X, y = load_digits(return_X_y=True)
    X = X / 16
    params = dict(kernel="rbf", gamma=0.05, n_components=150, random_state=0)
    held = KernelFisherDiscriminant(**params).fit(X, y)
    with km.config_context(kernel_cache_bytes=1 << 20, block_bytes=1 << 17):
        streamed = KernelFisherDiscriminant(**params).fit(X, y)
    assert held.fit_info_["path"] == "cached" and streamed.fit_info_["path"] == "recompute"
    # The generalised eigenproblem's sensitivity: p·κ(S_W + μI)·eps.
    _, within, _, _ = held._scatter(rbf_kernel(X, held.X_fit_, gamma=0.05), np.searchsorted(
        held.classes_, y))
    mu = 1e-3 * np.trace(within) / 150
    tolerance = 150 * np.linalg.cond(within + mu * np.eye(150)) * np.finfo(float).eps
    np.testing.assert_allclose(streamed.eigenvalues_, held.eigenvalues_, rtol=tolerance)
    signs = np.sign(np.sum(streamed.coef_ * held.coef_, axis=0))
    projections = held.transform(X)
    np.testing.assert_allclose(streamed.transform(X) * signs, projections, rtol=0,
                               atol=tolerance * np.abs(projections).max())
    np.testing.assert_array_equal(streamed.predict(X), held.predict(X))


@pytest.mark.parametrize("cache_bytes", [None, 1 << 16])  # projections held, then streamed
def test_float32_projections_are_summed_in_float64_in_fit_and_transform(cache_bytes):
    # fit projects the training rows as K (float32 values, widened) @ coef_ in float64;
    # transform must project the same way, not with float32 sums over the p expansion
    # points (1.8e6 times the float64 bound below before they agreed). The Laplacian
    # kernel: its values sum |x - y| feature by feature, the same whatever block of rows
    # computes them (a GEMM-based kernel's float32 values move with the block shape).
    import kernelmaps as km

    X, y = load_digits(return_X_y=True)
    X = (X[:600] / 16).astype(np.float32)
    y = y[:600]
    with km.config_context(kernel_cache_bytes=cache_bytes):
        model = KernelFisherDiscriminant(kernel="laplacian", gamma=0.05, n_components=200,
                                         random_state=0).fit(X, y)
    assert model.fit_info_["path"] == ("cached" if cache_bytes is None else "recompute")
    K = model.kernel_(X, model.X_fit_).astype(np.float64)
    expected = K @ model.coef_
    bound = 200 * np.finfo(np.float64).eps * (np.abs(K) @ np.abs(model.coef_))
    projections = model.transform(X)
    assert projections.dtype == np.float64
    np.testing.assert_array_less(np.abs(projections - expected), 2 * bound + 1e-300)
