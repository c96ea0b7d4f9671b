"""kernelmaps.io: safe persistence with skops — every estimator round-trips, nothing else loads."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.linear_model import Ridge

pytest.importorskip("skops")  # the `persist` extra; part of the `test` extra, so CI runs these

import kernelmaps
from kernelmaps.io import UntrustedTypeError, dump, load, trusted_types
from kernelmaps.maps import Nystroem, RandomFourierFeatures
from kernelmaps.models import KernelFisherDiscriminant, KernelMeanDistance, KernelRidge

# TODO(registry): replace with the registry of public estimators once it lands.
_CASES = {
    "Nystroem": lambda: kernelmaps.Nystroem(n_components=10, random_state=0),
    "Nystroem-leverage": lambda: kernelmaps.Nystroem(n_components=10, landmarks="leverage",
                                                     random_state=0),
    "RBFSampler": lambda: kernelmaps.RBFSampler(n_components=10, random_state=0),
    "AdditiveChi2Sampler": lambda: kernelmaps.AdditiveChi2Sampler(),
    "SkewedChi2Sampler": lambda: kernelmaps.SkewedChi2Sampler(n_components=10, random_state=0),
    "PolynomialCountSketch": lambda: kernelmaps.PolynomialCountSketch(n_components=10,
                                                                      random_state=0),
    "RFF-orthogonal": lambda: RandomFourierFeatures(n_components=10, structure="orthogonal",
                                                    random_state=0),
    "RFF-structured": lambda: RandomFourierFeatures(n_components=16, structure="structured",
                                                    random_state=0),
    "RFF-fastfood": lambda: RandomFourierFeatures(n_components=16, structure="fastfood",
                                                  output="cos_sin", random_state=0),
    "ArcCosineSampler": lambda: kernelmaps.ArcCosineSampler(n_components=10, random_state=0),
    "RandomMaclaurin": lambda: kernelmaps.RandomMaclaurin(n_components=10, random_state=0),
    "TensorSRHT": lambda: kernelmaps.TensorSRHT(n_components=10, random_state=0),
    "PolynomialKernelMap": lambda: kernelmaps.PolynomialKernelMap(),
    "KernelRidge-exact": lambda: KernelRidge(kernel="rbf"),
    "KernelRidge-nystrom": lambda: KernelRidge(kernel="rbf", solver="nystrom", n_components=10,
                                               random_state=0),
    "KernelFisherDiscriminant": lambda: KernelFisherDiscriminant(),
    "KernelMeanDistance": lambda: KernelMeanDistance(),
}


def _output(estimator, X):
    for method in ("transform", "decision_function", "predict"):
        if hasattr(estimator, method):
            return getattr(estimator, method)(X)
    raise AssertionError(f"{estimator!r} has no output method")


@pytest.mark.parametrize("name", sorted(_CASES))
def test_every_fitted_estimator_round_trips_identically(name, tmp_path):
    rng = np.random.RandomState(0)
    X = np.abs(rng.normal(size=(60, 4)))
    y = (X[:, 0] > X[:, 1]).astype(int)
    estimator = _CASES[name]().fit(X, y)
    output_of = _output
    path = tmp_path / "model.skops"
    dump(estimator, path)
    loaded = load(path)
    assert type(loaded) is type(estimator)
    np.testing.assert_array_equal(output_of(loaded, X), output_of(estimator, X))
    if hasattr(estimator, "kernel_"):
        assert loaded.kernel_ == estimator.kernel_
    # pickling keeps working too
    unpickled = pickle.loads(pickle.dumps(estimator))
    np.testing.assert_array_equal(output_of(unpickled, X), output_of(estimator, X))


def test_trusted_types_are_exactly_kernelmaps_classes_and_sparse():
    trusted = trusted_types()
    assert all(name.startswith(("kernelmaps.", "scipy.sparse.")) for name in trusted)
    for name in ("Nystroem", "RBFSampler", "TensorSRHT"):
        cls = getattr(kernelmaps, name)
        assert f"{cls.__module__}.{cls.__qualname__}" in trusted
    assert "kernelmaps.kernels._base.CallableKernel" not in trusted  # holds user code


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
    model.smuggled_ = Ridge()  # any type outside kernelmaps: refused, listed by name
    path = tmp_path / "foreign.skops"
    dump(model, path)
    with pytest.raises(UntrustedTypeError, match=r"sklearn\.linear_model\._ridge\.Ridge"):
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
