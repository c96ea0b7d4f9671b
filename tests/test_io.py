"""kernelmaps.io: safe persistence with skops — every estimator round-trips, nothing else loads."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.linear_model import Lasso

pytest.importorskip("skops")  # the `persist` extra; part of the `test` extra, so CI runs these

import kernelmaps
from kernelmaps.io import UntrustedTypeError, dump, load, trusted_types
from kernelmaps.maps import Nystroem, RandomFourierFeatures

# Every registered estimator's round trip: tests/test_contract.py (the registry).


def test_trusted_types_are_exactly_kernelmaps_classes_tunes_pipeline_and_sparse():
    trusted = trusted_types()
    # Beyond kernelmaps and SciPy's CSR: exactly what kernelmaps.tune returns fitted.
    foreign = {name for name in trusted if not name.startswith(("kernelmaps.", "scipy.sparse."))}
    assert foreign == {"sklearn.pipeline.Pipeline", "sklearn.linear_model._ridge.Ridge",
                       "sklearn.linear_model._ridge.RidgeClassifier",
                       "sklearn.preprocessing._label.LabelBinarizer",
                       "sklearn.preprocessing._data.StandardScaler",
                       "sklearn.preprocessing._data.MinMaxScaler"}
    for name in ("Nystroem", "RBFSampler", "TensorSRHT"):
        cls = getattr(kernelmaps, name)
        assert f"{cls.__module__}.{cls.__qualname__}" in trusted
    assert "kernelmaps.kernels._user.CallableKernel" not in trusted  # holds user code


def test_a_user_kernel_function_is_refused(tmp_path):
    X = np.random.RandomState(0).normal(size=(30, 3))
    model = Nystroem(kernel=np.dot, n_components=5, random_state=0).fit(X)
    path = tmp_path / "callable.skops"
    dump(model, path)
    with pytest.raises(UntrustedTypeError, match=r"does not trust.*numpy"):
        load(path)


def test_a_foreign_object_inside_an_estimator_is_refused(tmp_path):
    X = np.random.RandomState(0).normal(size=(30, 3))
    model = RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    model.smuggled_ = Lasso()  # any type outside the trusted ones: refused, listed by name
    path = tmp_path / "foreign.skops"
    dump(model, path)
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
