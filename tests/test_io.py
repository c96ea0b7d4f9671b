"""kernelmaps.io: safe persistence with skops — every estimator round-trips, nothing else loads."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.linear_model import (
    Lasso,
    LinearRegression,
    LogisticRegression,
    Ridge,
    RidgeClassifier,
    RidgeClassifierCV,
    RidgeCV,
    SGDClassifier,
    SGDOneClassSVM,
    SGDRegressor,
)
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import (
    LabelBinarizer,
    LabelEncoder,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    RobustScaler,
    StandardScaler,
)
from sklearn.svm import LinearSVC, LinearSVR

pytest.importorskip("skops")  # the `persist` extra; part of the `test` extra, so CI runs these

import kernelmaps
from kernelmaps.io import SKLEARN_TRUSTED, UntrustedTypeError, dump, load, trusted_types
from kernelmaps.maps import Nystroem, RandomFourierFeatures, RBFSampler

# Every registered estimator's round trip: tests/test_contract.py (the registry).


def _qualified(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def test_trusted_types_are_exactly_kernelmaps_the_listed_sklearn_estimators_and_sparse():
    trusted = trusted_types()
    foreign = {name for name in trusted if not name.startswith(("kernelmaps.", "scipy.sparse."))}
    losses = {_qualified(entry[0]) for estimator in (SGDClassifier, SGDRegressor)
              for entry in estimator.loss_functions.values()}
    assert foreign == {_qualified(cls) for cls in SKLEARN_TRUSTED} | losses
    assert len(SKLEARN_TRUSTED) == 24  # a class joins by being named, in the code and the docs
    for name in ("sklearn.preprocessing._data.StandardScaler",
                 "sklearn.linear_model._stochastic_gradient.SGDClassifier",
                 "sklearn.linear_model._sgd_fast.Hinge", "sklearn.pipeline.Pipeline",
                 "sklearn.compose._column_transformer.ColumnTransformer"):
        assert name in trusted
    # Nothing that holds code, nor an arbitrary estimator.
    for name in ("sklearn.preprocessing._function_transformer.FunctionTransformer",
                 "sklearn.linear_model._coordinate_descent.Lasso",
                 "kernelmaps.kernels._user.CallableKernel"):
        assert name not in trusted
    for name in ("Nystroem", "RBFSampler", "TensorSRHT"):
        assert _qualified(getattr(kernelmaps, name)) in trusted


def _readme_trust_list():
    """The class names of the README's bulleted list of trusted scikit-learn estimators."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = text.split("## Saving models", 1)[1].split("\n## ", 1)[0]
    bullets = section.split("(`kernelmaps.io.SKLEARN_TRUSTED`)", 1)[1].split("\n\n", 2)[1]
    items = re.split(r"\n\* ", "\n" + bullets)
    estimators = {name for item in items if not item.startswith("the loss objects")
                  for name in re.findall(r"`(\w+)`", item)}
    losses = {name for item in items if item.startswith("the loss objects")
              for name in re.findall(r"`(\w+)`", item)} - {"loss_functions"}
    return estimators, losses


def test_the_readme_lists_exactly_the_trusted_sklearn_estimators():
    estimators, losses = _readme_trust_list()
    assert estimators == {cls.__name__ for cls in SKLEARN_TRUSTED}
    assert losses == {entry[0].__name__ for estimator in (SGDClassifier, SGDRegressor)
                      for entry in estimator.loss_functions.values()}


def _data(kind, n=80):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(n, 4))
    if kind == "regression":
        return X, X[:, 0] - 2 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")  # string labels


def _map():
    return RBFSampler(n_components=20, random_state=0)


#: The pipelines the docs recommend around kernelmaps: (name, kind, pipeline factory).
PIPELINES = [
    *[(f"standard-rbf-sgd-{loss}", "classification",
       lambda loss=loss: make_pipeline(StandardScaler(), _map(),
                                       SGDClassifier(loss=loss, random_state=0)))
      for loss in SGDClassifier.loss_functions],
    *[(f"robust-nystroem-sgdreg-{loss}", "regression",
       lambda loss=loss: make_pipeline(RobustScaler(), Nystroem(n_components=15, random_state=0),
                                       SGDRegressor(loss=loss, random_state=0)))
      for loss in SGDRegressor.loss_functions],
    ("minmax-ridge", "regression", lambda: make_pipeline(MinMaxScaler(), _map(), Ridge())),
    ("maxabs-ridgecv", "regression", lambda: make_pipeline(MaxAbsScaler(), _map(), RidgeCV())),
    ("normalizer-linreg", "regression",
     lambda: make_pipeline(Normalizer(), _map(), LinearRegression())),
    ("imputer-logistic", "classification",
     lambda: make_pipeline(SimpleImputer(), StandardScaler(), _map(), LogisticRegression())),
    ("ridgeclassifier", "classification", lambda: make_pipeline(_map(), RidgeClassifier())),
    ("ridgeclassifiercv", "classification", lambda: make_pipeline(_map(), RidgeClassifierCV())),
    ("linearsvc", "classification", lambda: make_pipeline(StandardScaler(), _map(), LinearSVC())),
    ("linearsvr", "regression", lambda: make_pipeline(StandardScaler(), _map(), LinearSVR())),
    ("columns-onehot", "classification", lambda: make_pipeline(
        ColumnTransformer([("num", StandardScaler(), [0, 1, 2]),
                           ("cat", OneHotEncoder(handle_unknown="ignore"), [3])]),
        Nystroem(n_components=15, random_state=0), LogisticRegression())),
    ("union", "regression", lambda: make_pipeline(
        FeatureUnion([("rbf", _map()), ("nys", Nystroem(n_components=10, random_state=0))]),
        Ridge())),
    ("nystroem-pca", "transform", lambda: make_pipeline(
        Nystroem(n_components=30, random_state=0, fit_inverse_transform=True),
        PCA(n_components=3))),
    ("one-class", "outlier", lambda: make_pipeline(StandardScaler(), _map(),
                                                   SGDOneClassSVM(random_state=0))),
]


@pytest.mark.parametrize(("name", "kind", "factory"), PIPELINES, ids=[p[0] for p in PIPELINES])
def test_every_recommended_pipeline_round_trips(tmp_path, name, kind, factory):
    X, y = _data("regression" if kind == "regression" else "classification")
    if name == "columns-onehot":
        X[:, 3] = np.round(np.abs(X[:, 3]))  # a categorical column
    if name == "imputer-logistic":
        X[::7, 1] = np.nan
    model = factory().fit(X, None if kind in ("transform", "outlier") else y)
    path = tmp_path / f"{name}.skops"
    dump(model, path)  # no trust beyond the built-in list is needed
    restored = load(path)
    X_new = _data("regression", n=30)[0] + 0.5
    if kind == "transform":
        np.testing.assert_allclose(restored.transform(X_new), model.transform(X_new),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(restored.inverse_transform(model.transform(X_new)),
                                   model.inverse_transform(model.transform(X_new)),
                                   rtol=1e-12, atol=1e-12)
        return
    assert np.array_equal(restored.predict(X_new), model.predict(X_new))
    for method in ("decision_function", "predict_proba"):
        if hasattr(model, method):
            np.testing.assert_allclose(getattr(restored, method)(X_new),
                                       getattr(model, method)(X_new), rtol=1e-12, atol=1e-12)


def test_label_encoders_round_trip(tmp_path):
    labels = np.array(["b", "a", "c", "a"])
    for encoder in (LabelEncoder().fit(labels), LabelBinarizer().fit(labels)):
        path = tmp_path / "labels.skops"
        dump(encoder, path)
        assert np.array_equal(load(path).transform(labels), encoder.transform(labels))


def test_dump_refuses_a_user_kernel_function_before_writing(tmp_path):
    X = np.random.RandomState(0).normal(size=(30, 3))
    model = Nystroem(kernel=np.dot, n_components=5, random_state=0).fit(X)
    path = tmp_path / "callable.skops"
    with pytest.raises(UntrustedTypeError,
                       match=r"did not write.*numpy\.dot.*trusted=\[.*numpy\.dot"):
        dump(model, path)
    assert not path.exists()
    # An existing file is not replaced either.
    path.write_bytes(b"previous model")
    with pytest.raises(UntrustedTypeError):
        dump(model, path)
    assert path.read_bytes() == b"previous model"


def test_dump_refuses_a_foreign_estimator_in_a_pipeline_before_writing(tmp_path):
    X, y = _data("regression")
    model = make_pipeline(StandardScaler(), _map(), Lasso()).fit(X, y)
    path = tmp_path / "lasso.skops"
    with pytest.raises(UntrustedTypeError,
                       match=r"sklearn\.linear_model\._coordinate_descent\.Lasso"):
        dump(model, path)
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_named_trust_saves_and_loads_what_the_list_lacks(tmp_path):
    X, y = _data("regression")
    model = make_pipeline(_map(), Lasso(alpha=0.01)).fit(X, y)
    path = tmp_path / "lasso.skops"
    lasso = "sklearn.linear_model._coordinate_descent.Lasso"
    dump(model, path, trusted=[lasso])
    with pytest.raises(UntrustedTypeError, match=r"load\(path, trusted=\["):
        load(path)
    assert np.array_equal(load(path, trusted=[lasso]).predict(X), model.predict(X))
    for everything in (True, "sklearn", [lasso, 1]):
        with pytest.raises(TypeError, match="no 'trust everything'"):
            load(path, trusted=everything)


def test_load_refuses_a_user_kernel_function_written_by_skops(tmp_path):
    skops_io = pytest.importorskip("skops.io")
    X = np.random.RandomState(0).normal(size=(30, 3))
    model = Nystroem(kernel=np.dot, n_components=5, random_state=0).fit(X)
    path = tmp_path / "callable.skops"
    skops_io.dump(model, path)  # written around kernelmaps.io's check
    with pytest.raises(UntrustedTypeError, match=r"does not trust.*numpy"):
        load(path)


def test_load_refuses_a_foreign_object_inside_an_estimator(tmp_path):
    skops_io = pytest.importorskip("skops.io")
    X = np.random.RandomState(0).normal(size=(30, 3))
    model = RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    model.smuggled_ = Lasso()  # any type outside the trusted ones: refused, listed by name
    path = tmp_path / "foreign.skops"
    skops_io.dump(model, path)
    with pytest.raises(UntrustedTypeError,
                       match=r"sklearn\.linear_model\._coordinate_descent\.Lasso"):
        load(path)


def test_corrupt_files_give_a_clear_error(tmp_path):
    X = np.random.RandomState(0).normal(size=(30, 3))
    path = tmp_path / "model.skops"
    dump(RandomFourierFeatures(n_components=8, random_state=0).fit(X), path)
    data = path.read_bytes()
    truncated = tmp_path / "truncated.skops"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a readable skops model file"):
        load(truncated)
    text = tmp_path / "text.skops"
    text.write_text("not a model")
    with pytest.raises(ValueError, match="not a readable skops model file"):
        load(text)
    with pytest.raises(FileNotFoundError, match="no model file"):
        load(tmp_path / "missing.skops")


def test_a_pickle_renamed_to_skops_is_not_executed(tmp_path):
    class Boom:
        def __reduce__(self):
            return (exec, ("raise SystemExit('executed')",))

    path = tmp_path / "evil.skops"
    path.write_bytes(pickle.dumps(Boom()))
    with pytest.raises(ValueError, match="not a readable skops model file"):
        load(path)
