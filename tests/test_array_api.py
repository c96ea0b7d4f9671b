"""Any array library: every map and kernel on PyTorch (CPU) and array_api_strict arrays.

With ``sklearn.config_context(array_api_dispatch=True)`` the output must be in the input's
namespace, on its device and in its dtype, every fitted array must live there too, and the
numbers must be NumPy's for the same ``random_state`` (float64: to rounding; float32: 1e-5
of the output's scale). ``array_api_strict`` on its non-default ``device1`` catches any
array silently created on the wrong device or any non-standard call; torch exercises the
in-place fast paths (``addmm`` into the output, ``cos_``).
"""

from __future__ import annotations

import inspect
import pickle

import array_api_compat
import array_api_strict
import numpy as np
import pytest
import scipy
import scipy.sparse as sp
import sklearn
import torch
from sklearn.metrics.pairwise import rbf_kernel

import kernelmaps as km
from kernelmaps._array_api import to_numpy
from kernelmaps.kernels import KERNELS, get_kernel, resolve_kernel
from kernelmaps.landmarks import select_landmarks
from kernelmaps.maps import _base as maps_base
from kernelmaps.maps._structured import fwht, fwht_device
from kernelmaps.maps.fourier import RandomFourierFeatures
from kernelmaps.models import KernelFisherDiscriminant, KernelMeanDistance, KernelRidge

#: (namespace, device, dtype): strict's second device and both torch precisions on CPU.
PLACEMENTS = [
    pytest.param(("array_api_strict", "CPU_DEVICE", "float64"), id="strict-float64"),
    pytest.param(("array_api_strict", "device1", "float32"), id="strict-device1-float32"),
    pytest.param(("torch", "cpu", "float64"), id="torch-float64"),
    pytest.param(("torch", "cpu", "float32"), id="torch-float32"),
]


def on(placement, X):
    """``X`` (NumPy) as an array of the placement's namespace, device and dtype."""
    namespace, device, dtype = placement
    X = np.asarray(X, dtype=dtype)
    if namespace == "torch":
        return torch.asarray(X, device=device)
    return array_api_strict.asarray(X, device=array_api_strict.Device(device))


def assert_placed_like(result, X):
    """``result`` has ``X``'s namespace, device and dtype."""
    assert array_api_compat.array_namespace(result) is array_api_compat.array_namespace(X)
    assert array_api_compat.device(result) == array_api_compat.device(X)
    assert result.dtype == X.dtype


def assert_close_to_numpy(result, expected, dtype):
    """float64: to rounding; float32: 1e-5 relative to the output's scale."""
    expected = np.asarray(expected)
    tolerance = 1e-5 if dtype == "float32" else 1e-10
    scale = max(float(np.abs(expected).max(initial=0.0)), 1e-300)
    np.testing.assert_allclose(to_numpy(result), expected, rtol=0, atol=tolerance * scale)


def dispatch():
    return sklearn.config_context(array_api_dispatch=True)


RNG = np.random.RandomState(0)
#: Non-negative (valid for the χ² maps), 10 features: landmark matrices well conditioned.
X_DATA = RNG.uniform(0.05, 1.0, size=(60, 10))
X_NEW = RNG.uniform(0.05, 1.0, size=(25, 10))
LANDMARK_POINTS = RNG.uniform(0.05, 1.0, size=(6, 10))

#: Every public feature map, with the parameters that reach each device code path.
MAPS = {
    "RBFSampler": km.RBFSampler(gamma=0.5, n_components=64, random_state=0),
    "RBFSampler-scale": km.RBFSampler(gamma="scale", n_components=32, random_state=0),
    "SkewedChi2Sampler": km.SkewedChi2Sampler(skewedness=0.5, n_components=40, random_state=0),
    "AdditiveChi2Sampler-1": km.AdditiveChi2Sampler(sample_steps=1),
    "AdditiveChi2Sampler-3": km.AdditiveChi2Sampler(sample_steps=3),
    "PolynomialCountSketch-1": km.PolynomialCountSketch(degree=1, n_components=32,
                                                        random_state=0),
    "PolynomialCountSketch-2": km.PolynomialCountSketch(degree=2, coef0=1.0, n_components=40,
                                                        random_state=0),
    "PolynomialCountSketch-3": km.PolynomialCountSketch(degree=3, n_components=32,
                                                        random_state=0),
    "PolynomialKernelMap": km.PolynomialKernelMap(degree=2, coef0=1.0),
    "PolynomialKernelMap-3": km.PolynomialKernelMap(degree=3, coef0=0.0, gamma=0.5),
    "RandomMaclaurin": km.RandomMaclaurin("poly", degree=3, coef0=1.0, n_components=40,
                                          random_state=0),
    "RandomMaclaurin-exp": km.RandomMaclaurin("exponential", gamma=0.3, n_components=40,
                                              random_state=0),
    "TensorSRHT": km.TensorSRHT(degree=2, coef0=1.0, n_components=40, random_state=0),
    "TensorSRHT-3": km.TensorSRHT(degree=3, n_components=50, random_state=0),
    "ArcCosineSampler-0": km.ArcCosineSampler(degree=0, n_components=40, random_state=0),
    "ArcCosineSampler-1": km.ArcCosineSampler(degree=1, n_components=40, random_state=0),
    "ArcCosineSampler-2": km.ArcCosineSampler(degree=2, n_components=40, random_state=0),
    **{f"RandomFourierFeatures-{kernel}-{structure}-{output}": RandomFourierFeatures(
        kernel, structure=structure, output=output, n_components=48, random_state=0)
       for kernel, structure, output in [
           ("rbf", "iid", "cos_offset"), ("rbf", "orthogonal", "cos_sin"),
           ("rbf", "structured", "cos_offset"), ("rbf", "fastfood", "cos_offset"),
           ("matern", "structured", "cos_sin"), ("student", "orthogonal", "cos_offset"),
           ("laplacian", "iid", "cos_sin")]},
    # Randomised QMC: the default (principal axes read from the data, or QMC-ORF), inverse
    # CDFs of every density, the quadrature rules' per-column weights in both output forms.
    **{f"RandomFourierFeatures-{kernel}-{structure}-{output}-{sampling}":
       RandomFourierFeatures(kernel, structure=structure, sampling=sampling, output=output,
                             n_components=48, random_state=0)
       for kernel, structure, output, sampling in [
           ("rbf", "auto", "cos_sin", "qmc"), ("laplacian", "iid", "cos_offset", "halton"),
           ("matern", "orthogonal", "cos_offset", "qmc"),
           ("student", "principal", "cos_sin", "qmc"), ("rbf", "quadrature", "cos_sin", "qmc"),
           ("student", "quadrature", "cos_offset", "mc")]},
    **{f"Nystroem-{kernel}": km.Nystroem(kernel=kernel, gamma=gamma, n_components=8,
                                         random_state=0)
       for kernel, gamma in [("rbf", 1.0), ("laplacian", 0.5), ("poly", 1.0), ("linear", None),
                             ("cosine", None), ("chi2", 1.0), ("additive_chi2", None)]},
    "Nystroem-matern": km.Nystroem(kernel=get_kernel("matern", nu=2.5, length_scale=0.5),
                                   n_components=8, random_state=0),
    "Nystroem-student": km.Nystroem(kernel=get_kernel("student", alpha=0.5), n_components=8,
                                    random_state=0),
    "Nystroem-arccos": km.Nystroem(kernel=get_kernel("arccos", degree=1), n_components=6,
                                   random_state=0),
    "Nystroem-exponential": km.Nystroem(kernel=get_kernel("exponential", gamma=1.0),
                                        n_components=6, random_state=0),
    "Nystroem-skewed_chi2": km.Nystroem(kernel=get_kernel("skewed_chi2", skewedness=0.5),
                                        n_components=6, random_state=0),
    "Nystroem-additive_chi2_psd": km.Nystroem(kernel=get_kernel("additive_chi2_psd"),
                                              n_components=6, random_state=0),
    "Nystroem-eigen": km.Nystroem(gamma=1.0, n_components=8, basis="eigen", random_state=0),
    **{f"Nystroem-{landmarks}": km.Nystroem(gamma=1.0, n_components=8, landmarks=landmarks,
                                            random_state=0)
       for landmarks in ("kmeans", "leverage", "renyi")},
    "Nystroem-points": km.Nystroem(gamma=1.0, landmarks=LANDMARK_POINTS),
}


def test_every_public_map_is_covered():
    public = {name for name, obj in vars(km).items()
              if inspect.isclass(obj) and issubclass(obj, maps_base.FeatureMap)}
    covered = {type(est).__name__ for est in MAPS.values()}
    assert public <= covered, sorted(public - covered)


def test_scipy_saw_its_array_api_switch():
    # conftest sets SCIPY_ARRAY_API=1 before SciPy is imported; SciPy reads it only then.
    from scipy._lib import _array_api

    assert scipy.__version__ and _array_api.SCIPY_ARRAY_API


@pytest.mark.filterwarnings("ignore::kernelmaps.IndefiniteKernelWarning")  # additive_chi2
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", list(MAPS))
def test_map_on_device_matches_numpy(name, placement):
    dtype = placement[2]
    est = sklearn.clone(MAPS[name])
    expected_fit = est.fit_transform(X_DATA.astype(dtype))
    expected_new = est.transform(X_NEW.astype(dtype))
    host_arrays = {key: value.dtype for key, value in vars(est).items()  # not parameters
                   if isinstance(value, np.ndarray) and key not in est.get_params()}
    X, X_new = on(placement, X_DATA), on(placement, X_NEW)
    with dispatch():
        features = est.fit_transform(X)
        new_features = est.transform(X_new)
    for result, expected in ((features, expected_fit), (new_features, expected_new)):
        assert_placed_like(result, X)
        assert_close_to_numpy(result, expected, dtype)
    # Every fitted array lives on the input's device, in the dtype NumPy's fit gives it
    # (scikit-learn's rule).
    for key, host_dtype in host_arrays.items():
        value = getattr(est, key)
        assert array_api_compat.array_namespace(value) is array_api_compat.array_namespace(X)
        assert array_api_compat.device(value) == array_api_compat.device(X), key
        assert to_numpy(value).dtype == host_dtype, key


NYSTROEM_PRECOMPUTED = km.Nystroem(kernel="precomputed", n_components=10, random_state=0)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_precomputed_nystroem_on_device(placement):
    dtype = placement[2]
    gram = rbf_kernel(X_DATA, gamma=1.0)
    est = sklearn.clone(NYSTROEM_PRECOMPUTED)
    expected = est.fit_transform(gram.astype(dtype))
    expected_new = est.transform(rbf_kernel(X_NEW, X_DATA, gamma=1.0).astype(dtype))
    with dispatch():
        features = est.fit_transform(on(placement, gram))
        new_features = est.transform(on(placement, rbf_kernel(X_NEW, X_DATA, gamma=1.0)))
    assert_placed_like(features, on(placement, gram))
    assert_close_to_numpy(features, expected, dtype)
    assert_close_to_numpy(new_features, expected_new, dtype)
    assert array_api_compat.device(est.component_indices_) == array_api_compat.device(
        on(placement, gram))
    np.testing.assert_array_equal(to_numpy(est.component_indices_),
                                  sklearn.clone(NYSTROEM_PRECOMPUTED).fit(gram)
                                  .component_indices_)


# ----------------------------------------------------------------------------- kernels
KERNEL_OBJECTS = [get_kernel(name) for name in sorted(KERNELS)
                  if name not in ("matern", "arccos", "polynomial")]
KERNEL_OBJECTS += [get_kernel("matern", nu=nu) for nu in (0.5, 1.5, 2.5)]
KERNEL_OBJECTS += [get_kernel("arccos", degree=n) for n in (0, 1, 2)]
KERNEL_OBJECTS += [get_kernel("poly", gamma=0.5, degree=2.5, coef0=1.0)]  # a float degree
KERNEL_OBJECTS += [resolve_kernel(lambda x, y: float(x @ y)),                # pairwise callable
                   resolve_kernel(lambda X, Y: X @ Y.T, vectorized=True)]


def _kernel_id(kernel) -> str:
    return f"callable-vectorized={kernel.vectorized}" if kernel.name == "callable" \
        else repr(kernel)


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("kernel", KERNEL_OBJECTS, ids=_kernel_id)
def test_kernel_on_device_matches_numpy(kernel, placement):
    dtype = placement[2]
    X, Y = X_DATA[:20].astype(dtype), X_NEW[:7].astype(dtype)
    V = RNG.normal(size=(7, 3))
    expected = {"cross": kernel(X, Y), "square": kernel(X), "diag": kernel.diag(X),
                "matmul": kernel.matmul(X, Y, V)}
    X_d, Y_d = on(placement, X), on(placement, Y)
    with dispatch():
        got = {"cross": kernel(X_d, Y_d), "square": kernel(X_d), "diag": kernel.diag(X_d),
               "matmul": kernel.matmul(X_d, Y_d, V)}
    for key, value in got.items():
        assert_placed_like(value, X_d)
        assert_close_to_numpy(value, expected[key], dtype)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_precomputed_kernel_on_device(placement):
    kernel = resolve_kernel("precomputed")
    gram = rbf_kernel(X_DATA[:12]).astype(placement[2])
    columns = np.array([3, 0, 7])
    with dispatch():
        G = on(placement, gram)
        block = kernel(G, columns)
        diagonal = kernel.diag(G)
        product = kernel.matmul(G, columns, np.ones(3))
    assert_placed_like(block, G)
    np.testing.assert_array_equal(to_numpy(block), gram[:, columns])
    np.testing.assert_array_equal(to_numpy(diagonal), np.diag(gram))
    assert_close_to_numpy(product, gram[:, columns].sum(axis=1), placement[2])


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_kernel_reduce_on_device(placement):
    # Σ_b K_bᵀ (K_b v): the FALKON product, accumulated over device blocks.
    kernel = get_kernel("rbf", gamma=0.5)
    X, C = X_DATA.astype(placement[2]), X_DATA[:5].astype(placement[2])
    v = np.arange(5.0)
    expected = kernel(X, C).T @ (kernel(X, C) @ v)
    with dispatch(), km.config_context(device_block_bytes=4096):
        X_d, C_d = on(placement, X), on(placement, C)
        v_d = on(placement, v)
        total = kernel.reduce(X_d, C_d, lambda K: K.T @ (K @ v_d))
    assert array_api_compat.array_namespace(total) is array_api_compat.array_namespace(X_d)
    assert_close_to_numpy(total, expected, placement[2])


# ----------------------------------------------------------------------------- the engine
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", ["RBFSampler", "PolynomialCountSketch-2", "Nystroem-rbf",
                                  "RandomFourierFeatures-rbf-structured-cos_offset"])
def test_device_blocks_give_the_one_block_result(name, placement):
    # 4 KiB blocks: many blocks, each written into a view of the output (torch: addmm and
    # cos_ in place) or copied into it (array_api_strict).
    est = sklearn.clone(MAPS[name])
    X = on(placement, X_DATA)
    with dispatch():
        whole = est.fit_transform(X)
        with km.config_context(device_block_bytes=4096):
            blocked = est.transform(X)
    assert_placed_like(blocked, X)
    # The same numbers, up to the rounding of matrix products over other block sizes.
    assert_close_to_numpy(blocked, to_numpy(whole), placement[2])


def test_device_output_overflow_is_a_clear_error():
    X = torch.full((4, 10), 3e38, dtype=torch.float32)
    est = km.RBFSampler(gamma=1.0, n_components=8, random_state=0)
    with dispatch(), pytest.raises(ValueError, match="non-finite value at row 0"):
        est.fit_transform(X)


def test_device_block_bytes_setting_is_validated():
    with pytest.raises(ValueError, match="device_block_bytes"):
        km.set_config(device_block_bytes=100)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_fwht_device_matches_numpy(placement):
    x = RNG.normal(size=(3, 2, 256))
    expected = fwht(np.ascontiguousarray(x.astype(placement[2])))
    with dispatch():
        result = fwht_device(array_api_compat.array_namespace(on(placement, x)),
                             on(placement, x))
    assert_close_to_numpy(result, expected, placement[2])


# ----------------------------------------------------------------------------- dtypes
def test_integer_tensor_is_computed_in_float64():
    X = torch.asarray((X_DATA * 10).astype(np.int64))
    with dispatch():
        features = km.RBFSampler(gamma=0.01, n_components=16, random_state=0).fit_transform(X)
    assert features.dtype == torch.float64
    expected = km.RBFSampler(gamma=0.01, n_components=16, random_state=0).fit_transform(
        (X_DATA * 10).astype(np.int64))
    assert_close_to_numpy(features, expected, "float64")


def test_device_without_float64_stays_float32():
    device = array_api_strict.Device("no_float64")
    X = array_api_strict.asarray(X_DATA.astype(np.float32), device=device)
    with dispatch():
        est = km.Nystroem(gamma=1.0, n_components=8, random_state=0)
        features = est.fit_transform(X)
    assert features.dtype == array_api_strict.float32 and features.device == device
    assert_close_to_numpy(features, sklearn.clone(est).fit_transform(
        X_DATA.astype(np.float32)), "float32")


# ----------------------------------------------------------------------------- boundaries
def test_without_dispatch_a_cpu_tensor_is_converted_like_scikit_learn():
    est = km.RBFSampler(n_components=16, random_state=0)
    features = est.fit_transform(torch.asarray(X_DATA))
    assert isinstance(features, np.ndarray)
    np.testing.assert_array_equal(features, sklearn.clone(est).fit_transform(X_DATA))


def test_without_dispatch_an_array_numpy_cannot_read_names_the_switch():
    X = array_api_strict.asarray(X_DATA, device=array_api_strict.Device("device1"))
    with pytest.raises(TypeError, match="array_api_dispatch"):
        km.RBFSampler(n_components=16, random_state=0).fit(X)


@pytest.mark.parametrize("fit_on_device", [True, False])
def test_transform_in_another_namespace_is_refused(fit_on_device):
    est = km.RBFSampler(n_components=16, random_state=0)
    tensor = torch.asarray(X_DATA)
    with dispatch():
        est.fit(tensor if fit_on_device else X_DATA)
        with pytest.raises(ValueError, match=r"RBFSampler\.transform\(\) must use the same "
                                             "namespace"):
            est.transform(X_DATA if fit_on_device else tensor)


def test_fitted_on_device_then_numpy_without_dispatch_is_refused():
    est = km.RBFSampler(n_components=16, random_state=0)
    with dispatch():
        est.fit(torch.asarray(X_DATA))
    with pytest.raises(ValueError, match=r"fitted on array_api_compat\.torch arrays"):
        est.transform(X_DATA)


def test_device_fitted_map_pickles():
    with dispatch():
        est = km.Nystroem(gamma=1.0, n_components=8, random_state=0).fit(torch.asarray(X_DATA))
        restored = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(to_numpy(restored.transform(torch.asarray(X_NEW))),
                                      to_numpy(est.transform(torch.asarray(X_NEW))))


def test_sparse_input_keeps_the_numpy_path_under_dispatch():
    X = sp.csr_matrix(X_DATA * (X_DATA > 0.5))
    with dispatch():
        features = km.RBFSampler(n_components=16, random_state=0).fit_transform(X)
    assert isinstance(features, np.ndarray)


# ----------------------------------------------------------------------------- landmarks
@pytest.mark.parametrize("strategy", ["uniform", "kmeans", "leverage", "renyi"])
def test_select_landmarks_on_device_matches_numpy(strategy):
    kernel = get_kernel("rbf", gamma=1.0)
    expected_points, expected_indices = select_landmarks(strategy, X_DATA, kernel, 8,
                                                         random_state=0)
    X = on(("array_api_strict", "device1", "float64"), X_DATA)
    with dispatch():
        points, indices = select_landmarks(strategy, X, kernel, 8, random_state=0)
    assert_placed_like(points, X)
    assert_close_to_numpy(points, expected_points, "float64")
    if expected_indices is None:
        assert indices is None
    else:
        assert array_api_compat.device(indices) == X.device
        np.testing.assert_array_equal(to_numpy(indices), expected_indices)


@pytest.mark.parametrize("strategy", ["kmeans", "leverage"])
def test_host_strategies_use_a_subsample_of_large_device_data(strategy, monkeypatch):
    from kernelmaps import landmarks

    monkeypatch.setattr(landmarks, "HOST_SAMPLE_ROWS", 30)
    X = torch.asarray(X_DATA)
    with dispatch():
        points, indices = select_landmarks(strategy, X, "rbf", 5, random_state=0)
    assert points.shape == (5, 10) and isinstance(points, torch.Tensor)
    if indices is not None:  # rows of the whole X, not of the subsample
        assert len(set(indices.tolist())) == 5
        np.testing.assert_array_equal(points.numpy(), X_DATA[indices.numpy()])


# ----------------------------------------------------------------------------- models
Y_DATA = np.column_stack([np.sin(3 * X_DATA[:, 0]) + X_DATA[:, 1], X_DATA[:, 2] ** 2])
LABELS = np.digitize(X_DATA[:, 0] + X_DATA[:, 1], [0.8, 1.2])  # three classes

MODELS = {
    "KernelRidge-exact": (KernelRidge(alpha=0.1, kernel="rbf", gamma=1.0,
                                                solver="exact"), "regressor"),
    "KernelRidge-exact-alphas": (KernelRidge(alpha=[0.1, 1.0], kernel="laplacian",
                                                       gamma=0.5, solver="exact"), "regressor"),
    "KernelRidge-nystrom": (KernelRidge(alpha=1e-3, kernel="rbf", gamma=1.0,
                                                  solver="nystrom", n_components=20, tol=1e-8,
                                                  random_state=0), "regressor"),
    "KernelRidge-nystrom-kmeans": (KernelRidge(
        alpha=1e-2, kernel="matern", kernel_params={"nu": 1.5}, solver="nystrom",
        n_components=12, landmarks="kmeans", tol=1e-8, random_state=0), "regressor"),
    "KernelFisherDiscriminant": (KernelFisherDiscriminant(reg=1e-2, gamma=1.0),
                                 "classifier"),
    "KernelFisherDiscriminant-landmarks": (KernelFisherDiscriminant(
        reg=1e-2, gamma=1.0, n_components=15, random_state=0), "classifier"),
    "KernelMeanDistance": (KernelMeanDistance(gamma=1.0), "outlier"),
    "KernelMeanDistance-landmarks": (KernelMeanDistance(
        gamma=1.0, n_components=15, landmarks="renyi", random_state=0), "outlier"),
}
MODEL_METHODS = {"regressor": ("predict",),
                 "classifier": ("transform", "decision_function", "predict_proba", "predict"),
                 "outlier": ("score_samples", "decision_function", "predict")}


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("name", list(MODELS))
def test_model_on_device_matches_numpy(name, placement):
    model, kind = MODELS[name]
    dtype = placement[2]
    y = {"regressor": Y_DATA, "classifier": LABELS, "outlier": None}[kind]
    fitted = sklearn.clone(model).fit(X_DATA.astype(dtype), y)
    expected = {method: getattr(fitted, method)(X_NEW.astype(dtype))
                for method in MODEL_METHODS[kind]}
    X, X_new = on(placement, X_DATA), on(placement, X_NEW)
    with dispatch():
        device_model = sklearn.clone(model).fit(X, None if y is None else on(
            (*placement[:2], "int64" if kind == "classifier" else dtype), y))
        for method, value in expected.items():
            result = getattr(device_model, method)(X_new)
            assert array_api_compat.array_namespace(result) is \
                array_api_compat.array_namespace(X)
            assert array_api_compat.device(result) == array_api_compat.device(X)
            if method == "predict" and kind != "regressor":
                np.testing.assert_array_equal(to_numpy(result), value)
            else:
                assert_close_to_numpy(result, value, dtype)
    for key, value in vars(fitted).items():  # every fitted array lives on the device
        if isinstance(value, np.ndarray) and key not in ("classes_",) and \
                key not in model.get_params():
            assert array_api_compat.device(getattr(device_model, key)) == X.device, key


def test_kernel_ridge_sample_weight_on_device():
    weights = RNG.uniform(0.5, 2.0, size=X_DATA.shape[0])
    for solver in ("exact", "nystrom"):
        model = KernelRidge(alpha=0.1, kernel="rbf", gamma=1.0, solver=solver,
                                      n_components=20, tol=1e-8, random_state=0)
        expected = sklearn.clone(model).fit(X_DATA, Y_DATA[:, 0], sample_weight=weights)
        with dispatch():
            device_model = sklearn.clone(model).fit(
                torch.asarray(X_DATA), torch.asarray(Y_DATA[:, 0]),
                sample_weight=torch.asarray(weights))
            predictions = device_model.predict(torch.asarray(X_NEW))
        assert predictions.dtype == torch.float64
        assert_close_to_numpy(predictions, expected.predict(X_NEW), "float64")


def test_falkon_on_device_without_triangular_solves_matches_torch():
    # array_api_strict has no triangular solve: the preconditioner applies inverses instead.
    model = KernelRidge(alpha=1e-3, kernel="rbf", gamma=1.0, solver="nystrom",
                                  n_components=30, tol=1e-10, random_state=0)
    with dispatch():
        strict = sklearn.clone(model).fit(on(PLACEMENTS[0].values[0], X_DATA), Y_DATA)
        by_torch = sklearn.clone(model).fit(torch.asarray(X_DATA), torch.asarray(Y_DATA))
    # Applying R⁻¹ by a product instead of a triangular solve costs about cond(R)·eps (here
    # ~1e-10 relative), so the two solvers agree to 1e-8, not to the last bits.
    expected = to_numpy(by_torch.dual_coef_)
    np.testing.assert_allclose(to_numpy(strict.dual_coef_), expected, rtol=0,
                               atol=1e-8 * np.abs(expected).max())
    assert abs(strict.n_iter_ - by_torch.n_iter_) <= 1
