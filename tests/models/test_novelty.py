"""KernelMeanDistance: the formula, the outlier API, landmarks."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from kernelmaps.models import KernelMeanDistance

# scikit-learn's estimator checks run from the registry (tests/_estimators.py).


def test_distance_formula():
    rng = np.random.RandomState(0)
    X, Z = rng.normal(size=(100, 3)), rng.normal(size=(20, 3))
    model = KernelMeanDistance(kernel="rbf", gamma=0.5).fit(X)
    expected = (1.0 - 2 * rbf_kernel(Z, X, gamma=0.5).mean(1)
                + rbf_kernel(X, gamma=0.5).mean())
    np.testing.assert_allclose(-model.score_samples(Z), expected, rtol=1e-10)


def test_linear_kernel_gives_euclidean_distance_to_the_mean():
    rng = np.random.RandomState(0)
    X, Z = rng.normal(size=(50, 3)), rng.normal(size=(10, 3))
    model = KernelMeanDistance(kernel="linear").fit(X)
    np.testing.assert_allclose(-model.score_samples(Z), ((Z - X.mean(0)) ** 2).sum(1),
                               rtol=1e-10)


def test_detects_planted_outliers_and_respects_contamination():
    rng = np.random.RandomState(0)
    inliers = rng.normal(size=(300, 2))
    outliers = rng.uniform(5, 8, size=(15, 2)) * rng.choice([-1, 1], size=(15, 2))
    model = KernelMeanDistance(kernel="rbf", gamma=0.3, contamination=0.05).fit(inliers)
    assert np.mean(model.predict(inliers) == -1) == pytest.approx(0.05, abs=0.01)
    assert (model.predict(outliers) == -1).all()
    assert (model.decision_function(outliers) < 0).all()


def test_landmarks_approximate_exact_scores():
    rng = np.random.RandomState(0)
    X, Z = rng.normal(size=(2000, 2)), rng.normal(size=(200, 2)) * 2
    exact = KernelMeanDistance(kernel="rbf", gamma=0.5).fit(X)
    errors = []
    for m in (50, 200, 800):
        approx = KernelMeanDistance(kernel="rbf", gamma=0.5, n_components=m,
                                    random_state=0).fit(X)
        errors.append(np.abs(approx.score_samples(Z) - exact.score_samples(Z)).max())
    assert errors[0] > errors[1] > errors[2] and errors[2] < 2e-4
    far = np.array([[50.0, 50.0]])  # far from every landmark: k(x, x) keeps it far
    assert approx.score_samples(far)[0] == pytest.approx(exact.score_samples(far)[0], abs=1e-3)


def test_bad_parameters():
    X = np.random.RandomState(0).rand(20, 2)
    with pytest.raises(ValueError, match="contamination"):
        KernelMeanDistance(contamination=0.7).fit(X)
    with pytest.raises(ValueError, match="precomputed"):
        KernelMeanDistance(kernel="precomputed").fit(np.eye(20))
