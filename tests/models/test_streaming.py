"""StreamingPipeline: scikit-learn's Pipeline plus partial_fit (the guide's online recipe)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import SGDClassifier, SGDRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelmaps import Nystroem, RBFSampler
from kernelmaps.models import StreamingPipeline, make_streaming_pipeline

RNG = np.random.RandomState(0)
X = RNG.normal(size=(300, 3))
LABELS = (X[:, 0] * X[:, 1] > 0).astype(int)


@parametrize_with_checks(
    [make_streaming_pipeline(RBFSampler(gamma=0.5, n_components=30, random_state=0),
                             SGDRegressor(random_state=0))],
    expected_failed_checks=lambda estimator: {
        "check_regressors_train": "one SGD epoch on the check's 200 rows stays below its "
                                  "R² threshold; the forwarding is tested below",
        **dict.fromkeys(("check_estimators_overwrite_params",
                         "check_dont_overwrite_parameters"),
                        "scikit-learn's Pipeline fits its steps, which are its parameters, in "
                        "place: sklearn.pipeline.Pipeline fails these checks too")})
def test_scikit_learns_checks(estimator, check):
    check(estimator)


def test_partial_fit_is_the_hand_written_loop():
    steps = [StandardScaler(), RBFSampler(gamma=0.5, n_components=40, random_state=0),
             SGDClassifier(random_state=0)]
    pipeline = make_streaming_pipeline(*(clone(step) for step in steps))
    scaler, rbf, sgd = (clone(step) for step in steps)
    for start in range(0, 300, 100):
        batch, labels = X[start:start + 100], LABELS[start:start + 100]
        pipeline.partial_fit(batch, labels, classes=[0, 1])
        scaled = scaler.partial_fit(batch).transform(batch)
        sgd.partial_fit(rbf.partial_fit(scaled).transform(scaled), labels, classes=[0, 1])
    np.testing.assert_array_equal(pipeline[-1].coef_, sgd.coef_)
    np.testing.assert_array_equal(pipeline.predict(X), sgd.predict(rbf.transform(
        scaler.transform(X))))
    # scikit-learn's Pipeline forwards no partial_fit (RFC #4834): the reason this exists.
    assert not hasattr(make_pipeline(*steps), "partial_fit")


def test_steps_without_partial_fit_must_be_fitted():
    unfitted = make_streaming_pipeline(Nystroem(n_components=20, random_state=0),
                                       SGDClassifier(random_state=0))
    with pytest.raises(TypeError, match=r"step 'nystroem' .* has no partial_fit and is not"):
        unfitted.partial_fit(X, LABELS, classes=[0, 1])
    nystroem = Nystroem(n_components=20, random_state=0).fit(X[:50])
    landmarks = nystroem.components_.copy()
    fitted = StreamingPipeline([("map", nystroem), ("sgd", SGDClassifier(random_state=0))])
    fitted.partial_fit(X, LABELS, classes=[0, 1])
    np.testing.assert_array_equal(fitted["map"].components_, landmarks)  # used as it is
