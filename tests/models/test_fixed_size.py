"""make_fixed_size_model: landmarks → eigen-feature map → linear model, as one Pipeline."""

from __future__ import annotations

import doctest
import pickle
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

import kernelmaps.models.fixed_size as fixed_size
from kernelmaps.kernels import get_kernel
from kernelmaps.landmarks import select_landmarks
from kernelmaps.maps.nystroem import Nystroem
from kernelmaps.models.fixed_size import FIXED_SIZE_MODELS, make_fixed_size_model
from tests._rounding import assert_labels_agree_where_decided

DOCS = Path(__file__).resolve().parents[2] / "docs" / "landmarks.md"


@pytest.fixture
def moons():
    X, y = make_moons(n_samples=600, noise=0.15, random_state=0)
    return train_test_split(X, y, random_state=0)


def test_pipeline_shape_and_defaults():
    model = make_fixed_size_model()
    assert isinstance(model, Pipeline)
    assert [name for name, _ in model.steps] == ["features", "model"]
    features = model.named_steps["features"]
    assert isinstance(features, Nystroem)
    assert (features.landmarks, features.basis, features.n_components) == ("renyi", "eigen", 100)
    assert isinstance(model.named_steps["model"], Ridge)


@pytest.mark.parametrize("name, cls", sorted(FIXED_SIZE_MODELS.items()))
def test_models_by_name(name, cls):
    model = make_fixed_size_model(name, random_state=3)
    assert type(model.named_steps["model"]) is cls
    if "random_state" in cls().get_params():
        assert model.named_steps["model"].random_state == 3
    assert model.named_steps["features"].random_state == 3


@pytest.mark.parametrize("name", ["ridge_classifier", "logistic", "linear_svc"])
def test_classifiers_beat_a_linear_model_on_moons(name, moons):
    X_train, X_test, y_train, y_test = moons
    params = {"C": 100.0} if name in ("logistic", "linear_svc") else {"alpha": 1e-3}
    model = make_fixed_size_model(name, n_components=40, gamma=2.0, model_params=params,
                                  random_state=0).fit(X_train, y_train)
    linear = RidgeClassifier().fit(X_train, y_train).score(X_test, y_test)
    assert linear < 0.9  # the premise: not linearly separable
    assert model.score(X_test, y_test) > 0.95
    assert model.named_steps["features"].n_features_out_ <= 40


@pytest.mark.parametrize("name", ["ridge", "linear_svr"])
def test_regression_on_sinc(name):
    rng = np.random.RandomState(0)
    X = rng.uniform(-3, 3, size=(800, 1))
    y = np.sinc(X[:, 0]) + 0.05 * rng.normal(size=800)
    # The primal (dual=False) squared-ε-insensitive SVR converges without iteration limits.
    params = {"alpha": 1e-4} if name == "ridge" else {
        "C": 100.0, "epsilon": 0.0, "loss": "squared_epsilon_insensitive", "dual": False}
    model = make_fixed_size_model(name, n_components=30, gamma=1.0, model_params=params,
                                  random_state=0).fit(X[:600], y[:600])
    assert model.score(X[600:], y[600:]) > 0.95  # R²


def test_fitted_features_carry_the_kernel_and_the_selected_centres(moons):
    X_train, _, y_train, _ = moons
    model = make_fixed_size_model("ridge_classifier", n_components=30, kernel="laplacian",
                                  gamma=0.7, random_state=0).fit(X_train, y_train)
    features = model.named_steps["features"]
    assert features.kernel_ == get_kernel("laplacian", gamma=0.7)
    expected, indices = select_landmarks("renyi", X_train, features.kernel_, 30,
                                         random_state=0)
    np.testing.assert_array_equal(features.components_, expected)
    np.testing.assert_array_equal(features.component_indices_, indices)


def test_user_random_state_in_model_params_wins():
    model = make_fixed_size_model("logistic", model_params={"random_state": 11},
                                  random_state=3)
    assert model.named_steps["model"].random_state == 11


def test_estimator_instance_is_cloned():
    svc = LinearSVC(C=3.0)
    model = make_fixed_size_model(svc)
    assert model.named_steps["model"] is not svc
    assert model.named_steps["model"].get_params() == svc.get_params()


def test_nystroem_options_are_passed_through():
    points = np.zeros((3, 2))
    model = make_fixed_size_model(landmarks=points, basis="symmetric", eigen_tol=1e-6,
                                  kernel="laplacian", gamma=0.7, kernel_params={"x": 1},
                                  landmark_params=None, n_components=9)
    params = model.named_steps["features"].get_params()
    assert params["landmarks"] is points
    assert (params["basis"], params["eigen_tol"], params["kernel"], params["gamma"],
            params["kernel_params"], params["n_components"]) == (
        "symmetric", 1e-6, "laplacian", 0.7, {"x": 1}, 9)


def test_grid_search_and_pickle(moons):
    X_train, X_test, y_train, _ = moons
    model = make_fixed_size_model("ridge_classifier", n_components=30, random_state=0)
    search = GridSearchCV(model, {"features__gamma": [0.1, 2.0],
                                  "model__alpha": [1e-3]}, cv=3).fit(X_train, y_train)
    assert search.best_params_["features__gamma"] == 2.0
    restored = pickle.loads(pickle.dumps(search.best_estimator_))
    # Equal arrays at other addresses: scores equal to rounding, so labels equal wherever the
    # decision is not a tie within it.
    assert_labels_agree_where_decided(restored.predict(X_test), search.predict(X_test),
                                      search.decision_function(X_test), ulps=1024)


def test_bad_model_arguments():
    with pytest.raises(ValueError, match=r"model must be one of \['linear_svc'"):
        make_fixed_size_model("svm")
    with pytest.raises(ValueError, match=r"got 'logistc' \(did you mean 'logistic'\?\)"):
        make_fixed_size_model("logistc")
    with pytest.raises(TypeError, match=r"model_params \['C'\] are not parameters of Ridge"):
        make_fixed_size_model("ridge", model_params={"C": 1.0})
    with pytest.raises(TypeError, match="set the parameters on the estimator instance"):
        make_fixed_size_model(LogisticRegression(), model_params={"C": 1.0})


def test_bad_nystroem_arguments_fail_at_fit(moons):
    X_train, _, y_train, _ = moons
    model = make_fixed_size_model(landmarks="random")
    with pytest.raises(ValueError, match="'landmarks' parameter of Nystroem"):
        model.fit(X_train, y_train)


def test_docstring_example_runs():
    failures, tried = doctest.testmod(fixed_size, verbose=False, report=True)
    assert tried > 5 and failures == 0


def test_docs_worked_example_runs():
    # The fixed-size pipeline example in docs/landmarks.md, run as written.
    text = DOCS.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    example = next(b for b in blocks if "make_fixed_size_model" in b)
    namespace: dict = {}
    exec(compile(example, str(DOCS), "exec"), namespace)
    assert namespace["accuracy"] > 0.85
