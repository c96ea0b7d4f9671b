"""Any array library: every registered estimator and every kernel on PyTorch (CPU) and
array_api_strict arrays.

The estimators come from the registry (``tests/_estimators.py``): every entry runs here
unless it declares ``array_api_unsupported`` with its reason, and
``test_every_registered_estimator_runs_here_or_says_why`` keeps it so. ``EXTRA_MAPS`` and
``EXTRA_MODELS`` add parameter variants of registered classes that reach other device code
paths (every kernel of Nystroem, every projection structure, landmark strategies).

With ``sklearn.config_context(array_api_dispatch=True)`` the output must be in the input's
namespace, on its device and in its dtype, every fitted array must live there too, and the
numbers must be NumPy's for the same ``random_state``: the two runs round differently (other
BLAS kernels, other summation orders), each is within the first-order rounding-error bound B
of the exact result on the same inputs, so they must agree to 2B. B comes from
``tests/_error_bounds.py`` (float32 and float64 alike), or from the kernel's declared
:meth:`~kernelmaps.kernels.Kernel.rounding_error` for kernel values. ``array_api_strict`` on
its non-default ``device1`` catches any array silently created on the wrong device or any
non-standard call; torch exercises the in-place fast paths (``addmm`` into the output,
``cos_``).
"""

from __future__ import annotations

import functools
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
from kernelmaps.maps._structured import fwht, fwht_device
from kernelmaps.maps.fourier import RandomFourierFeatures
from kernelmaps.models import (
    FeatureRidge,
    FeatureRidgeClassifier,
    KernelFisherDiscriminant,
    KernelMeanDistance,
    KernelRidge,
)
from tests._error_bounds import error_bound, kernel_values_bound, nystroem_precomputed_bound
from tests._estimators import ENTRIES, Entry

#: (namespace, device, dtype): strict's second device and both torch precisions on CPU.
PLACEMENTS = [
    pytest.param(("array_api_strict", "CPU_DEVICE", "float64"), id="strict-float64"),
    pytest.param(("array_api_strict", "device1", "float32"), id="strict-device1-float32"),
    pytest.param(("torch", "cpu", "float64"), id="torch-float64"),
    pytest.param(("torch", "cpu", "float32"), id="torch-float32"),
]
if torch.cuda.is_available():  # a GPU machine (never CI): the same tests on CUDA tensors
    PLACEMENTS += [pytest.param(("torch", "cuda", "float64"), id="cuda-float64"),
                   pytest.param(("torch", "cuda", "float32"), id="cuda-float32")]


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


def assert_within(result, expected, bound, what=""):
    """Two runs, each within ``bound`` of the exact values, agree to twice the bound."""
    result, expected = to_numpy(result).astype(np.float64), np.asarray(expected, np.float64)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), expected.shape)
    excess = np.abs(result - expected) - 2 * bound
    assert (excess <= 0).all(), (
        f"{what}: differs by up to {float(np.abs(result - expected).max()):.3g}, beyond twice "
        f"the rounding-error bound at {np.unravel_index(np.argmax(excess), excess.shape)}")


def rounded(values, dtype):
    """float64 values of ``values`` rounded to ``dtype``: the inputs both runs see."""
    return None if values is None else np.asarray(values).astype(dtype).astype(np.float64)


def dispatch():
    return sklearn.config_context(array_api_dispatch=True)


RNG = np.random.RandomState(0)
#: Non-negative (valid for the χ² maps), 10 features: landmark matrices well conditioned.
X_DATA = RNG.uniform(0.05, 1.0, size=(60, 10))
X_NEW = RNG.uniform(0.05, 1.0, size=(25, 10))
LANDMARK_POINTS = RNG.uniform(0.05, 1.0, size=(6, 10))
Y_DATA = np.column_stack([np.sin(3 * X_DATA[:, 0]) + X_DATA[:, 1], X_DATA[:, 2] ** 2])
LABELS = np.digitize(X_DATA[:, 0] + X_DATA[:, 1], [0.8, 1.2])  # three classes


def _second_view(X, seed):
    """KernelCCA's second view: a non-linear signal shared with X, and noise."""
    noise = np.random.RandomState(seed).uniform(size=len(X))
    return np.column_stack([np.cos(3 * X[:, 0]), X[:, 1] ** 2, noise])


VIEW, VIEW_NEW = _second_view(X_DATA, 1), _second_view(X_NEW, 2)

#: Parameter variants of registered classes that reach other device code paths.
EXTRA_MAPS = {
    "RBFSampler-gamma": km.RBFSampler(gamma=0.5, n_components=64, random_state=0),
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
    "PolynomialKernelMap-3": km.PolynomialKernelMap(degree=3, coef0=0.0, gamma=0.5),
    "RandomMaclaurin": km.RandomMaclaurin("poly", degree=3, coef0=1.0, n_components=40,
                                          random_state=0),
    "RandomMaclaurin-exp": km.RandomMaclaurin("exponential", gamma=0.3, n_components=40,
                                              random_state=0),
    "TensorSRHT-3": km.TensorSRHT(degree=3, n_components=50, random_state=0),
    **{f"RandomFourierFeatures-{kernel}-{structure}-{output}": RandomFourierFeatures(
        kernel, structure=structure, output=output, n_components=48, random_state=0)
       for kernel, structure, output in [
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
       for landmarks in ("kmeans", "renyi")},
    "Nystroem-points": km.Nystroem(gamma=1.0, landmarks=LANDMARK_POINTS),
}
EXTRA_MODELS = {
    "KernelRidge-exact-alphas": (KernelRidge(alpha=[0.1, 1.0], kernel="laplacian", gamma=0.5,
                                             solver="exact"), "regressor"),
    "KernelRidge-nystrom-tol": (KernelRidge(alpha=1e-3, kernel="rbf", gamma=1.0,
                                            solver="nystrom", n_components=20, tol=1e-8,
                                            random_state=0), "regressor"),
    "KernelRidge-nystrom-kmeans": (KernelRidge(
        alpha=1e-2, kernel="matern", kernel_params={"nu": 1.5}, solver="nystrom",
        n_components=12, landmarks="kmeans", tol=1e-8, random_state=0), "regressor"),
    "KernelFisherDiscriminant-reg": (KernelFisherDiscriminant(reg=1e-2, gamma=1.0),
                                     "classifier"),
    "KernelMeanDistance-gamma": (KernelMeanDistance(gamma=1.0), "outlier"),
}


def _extra(name: str, estimator, kind: str) -> Entry:
    # Maps keep float32; the models give float64 (their small systems are float64).
    return Entry(name, type(estimator), estimator.get_params(deep=False), kind=kind,
                 float32_out=kind == "transformer")


#: Every configuration run here: the registry's (less those declared unsupported) and the
#: extra parameter variants.
CASES: dict[str, Entry] = {
    **{e.id: e for e in ENTRIES if not e.array_api_unsupported},
    **{f"extra-{name}": _extra(name, est, "transformer") for name, est in EXTRA_MAPS.items()},
    **{f"extra-{name}": _extra(name, est, kind) for name, (est, kind) in EXTRA_MODELS.items()},
}


def test_every_registered_estimator_runs_here_or_says_why():
    for entry in ENTRIES:
        if entry.array_api_unsupported:
            assert len(entry.array_api_unsupported) > 20, f"{entry.id}: give the reason"
            assert entry.id not in CASES
        else:
            assert CASES[entry.id] is entry
    # The extras are variants of registered classes, never an estimator of their own.
    registered = {e.cls for e in ENTRIES}
    assert {e.cls for e in CASES.values()} <= registered


def test_scipy_saw_its_array_api_switch():
    # conftest sets SCIPY_ARRAY_API=1 before SciPy is imported; SciPy reads it only then.
    from scipy._lib import _array_api

    assert scipy.__version__ and _array_api.SCIPY_ARRAY_API


# ----------------------------------------------------------------------------- estimators
def _targets(entry: Entry, dtype: str):
    """``(y, y_new)`` for the entry's kind, rounded to ``dtype`` where they are numbers."""
    if entry.two_views:
        return rounded(VIEW, dtype), rounded(VIEW_NEW, dtype)
    if entry.kind == "regressor":
        return rounded(Y_DATA, dtype), None
    if entry.kind == "classifier":
        return LABELS, None
    return None, None


def _outputs(estimator, entry: Entry, X_new, y_new, to=lambda a: a) -> dict:
    """Every float output on ``X_new`` (and the labels), keyed as error_bound keys them."""
    out = {}
    for method in entry.output_methods:
        if method == "transform" and entry.two_views:
            out["transform-x"], out["transform-y"] = estimator.transform(to(X_new), to(y_new))
        else:
            out[method] = getattr(estimator, method)(to(X_new))
    return out


@functools.cache
def _bounds(case: str, dtype: str) -> dict:
    """The rounding-error bound of each output of a ``dtype`` run of the case, on X_NEW and
    (maps) on X_DATA, from the estimator fitted in float64 on the rounded inputs."""
    entry = CASES[case]
    X, X_new = rounded(X_DATA, dtype), rounded(X_NEW, dtype)
    y, y_new = _targets(entry, dtype)
    exact = entry.make().fit(X, y)
    bounds = error_bound(exact, X, X_new, y, y_new, dtype=np.dtype(dtype).type)
    if entry.kind == "transformer" and not entry.two_views:
        bounds["fit_transform"] = error_bound(exact, X, X, dtype=np.dtype(dtype).type)[
            "transform"]
    return bounds


def _label_margin_holds(entry: Entry, expected: dict, bounds: dict) -> np.ndarray:
    """Rows whose label no rounding within the bounds can flip: the decision (or score
    against the threshold) is further from a tie than twice its bound."""
    decision = np.asarray(expected["decision_function"])
    bound = np.broadcast_to(bounds["decision_function"], decision.shape)
    if decision.ndim == 1:
        return np.abs(decision) > 2 * bound
    order = np.sort(decision, axis=1)
    return order[:, -1] - order[:, -2] > 4 * bound.max(axis=1)


def _informative(bound, expected) -> bool:
    """Whether agreement to twice ``bound`` says anything: the bound is below the scale."""
    return 2 * float(np.max(bound)) < float(np.abs(np.asarray(expected)).max())


#: Outputs whose first-order float32 bound exceeds their own scale, so the comparison with
#: NumPy above cannot fail: the Fisher discriminant's scores and probabilities come from an
#: LDA fitted on the float32 training projections, and with reg <= 1e-2 that fit is
#: sensitive beyond float32's resolution. For these the device's scores are checked against
#: its own projection instead (below), which the transform's informative bound pins down.
UNINFORMATIVE_FLOAT32 = {("KernelFisherDiscriminant", "decision_function"),
                         ("KernelFisherDiscriminant", "predict_proba")}


def _check_scores_from_own_projection(case, key, device, X_new, placement, value) -> None:
    """The device's scores equal its discriminant applied (in float64, on the host) to its
    own projection: z·coefᵀ + intercept, then the logistic or softmax, to float64 rounding
    of those few terms relative to their sizes."""
    assert placement[2] == "float32" and (CASES[case].cls.__name__, key) in \
        UNINFORMATIVE_FLOAT32, f"{case} {key}: the comparison with NumPy cannot fail"
    with dispatch():
        projection = to_numpy(device.transform(on(placement, X_new))).astype(np.float64)
    coef = to_numpy(device.discriminant_coef_).astype(np.float64)
    intercept = to_numpy(device.discriminant_intercept_).astype(np.float64)
    scores = projection @ coef.T + intercept
    terms = np.abs(projection) @ np.abs(coef.T) + np.abs(intercept)  # sizes summed
    if scores.shape[1] == 1:
        scores, terms = scores[:, 0], terms[:, 0]
    expected = scores
    if key == "predict_proba":
        if scores.ndim == 1:
            positive = 1.0 / (1.0 + np.exp(-scores))
            expected = np.stack([1.0 - positive, positive], axis=1)
        else:
            shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
            expected = shifted / shifted.sum(axis=1, keepdims=True)
        terms = terms.max(axis=-1) if terms.ndim == 2 else terms
        terms = terms[:, None]  # d proba / d score <= 1: the scores' error bounds it
    # The device works in the input's float32 for the projection's product with the
    # coefficients: (d + 2) eps32 of the terms' sizes, d = the projection's width.
    bound = (projection.shape[1] + 2) * np.finfo(np.float32).eps * terms
    assert_within(value, expected, bound / 2, f"{case} {key} from its own projection")


@pytest.mark.filterwarnings("ignore::kernelmaps.IndefiniteKernelWarning")  # additive_chi2
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", list(CASES))
def test_estimator_on_device_matches_numpy(case, placement):
    entry, dtype = CASES[case], placement[2]
    y, y_new = _targets(entry, dtype)  # the same (rounded) values for both runs
    host_y = y if y is None or entry.kind == "classifier" else y.astype(dtype)
    host = entry.make().fit(X_DATA.astype(dtype), host_y)
    expected = _outputs(host, entry, X_NEW.astype(dtype),
                        None if y_new is None else y_new.astype(dtype))
    host_arrays = {key: value.dtype for key, value in vars(host).items()  # not parameters
                   if isinstance(value, np.ndarray) and key not in host.get_params()
                   and key != "classes_" and not key.startswith("_")}
    # (private state is not a fitted attribute: FeatureRidge keeps its normal equations'
    # statistics on the host, in float64, by design)
    X = on(placement, X_DATA)
    with dispatch():
        device_y = None if y is None else on(
            (*placement[:2], "int64" if entry.kind == "classifier" else dtype), y)
        device = entry.make()
        results = {}
        if entry.kind == "transformer" and not entry.two_views:
            results["fit_transform"] = device.fit_transform(X)
            expected["fit_transform"] = entry.make().fit_transform(X_DATA.astype(dtype))
        else:
            device.fit(X, device_y)
        results.update(_outputs(device, entry, X_NEW, y_new,
                                to=lambda a: None if a is None else on(placement, a)))
    bounds = _bounds(case, dtype)
    for key, value in results.items():
        assert array_api_compat.array_namespace(value) is array_api_compat.array_namespace(X)
        assert array_api_compat.device(value) == array_api_compat.device(X), key
        if key == "predict" and entry.kind != "regressor":
            # Labels: equal wherever rounding within the bounds cannot flip them.
            holds = _label_margin_holds(entry, expected, bounds)
            if dtype == "float64":  # (in float32 the bound may leave no label decided)
                assert holds.mean() > 0.5, f"{case}: the labels are too close to ties"
            np.testing.assert_array_equal(to_numpy(value)[holds], expected[key][holds])
        else:
            if entry.float32_out:
                assert value.dtype == X.dtype, key
            assert_within(value, expected[key], bounds[key], f"{case} {key}")
            if not _informative(bounds[key], expected[key]):
                _check_scores_from_own_projection(case, key, device, X_NEW, placement, value)
    # Every fitted array lives on the input's device, in the dtype NumPy's fit gives it
    # (scikit-learn's rule).
    for key, host_dtype in host_arrays.items():
        value = getattr(device, key)
        assert array_api_compat.array_namespace(value) is array_api_compat.array_namespace(X)
        assert array_api_compat.device(value) == array_api_compat.device(X), key
        assert to_numpy(value).dtype == host_dtype, key


NYSTROEM_PRECOMPUTED = km.Nystroem(kernel="precomputed", n_components=10, random_state=0)


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_feature_ridge_partial_fit_on_device_is_fit(placement):
    # partial_fit with X and y in the device's namespace: features made there, statistics
    # summed on the host in float64, coef_ placed back on the device.
    rbf = km.RBFSampler(gamma=0.5, n_components=20, random_state=0)
    with dispatch():
        X, y = on(placement, X_DATA), on(placement, Y_DATA[:, 0])
        labels = on((*placement[:2], "int64"), LABELS)
        fitted = km.models.FeatureRidge(rbf, alpha=0.1).fit(X, y)
        online = km.models.FeatureRidge(rbf, alpha=0.1)
        classifier = km.models.FeatureRidgeClassifier(rbf, alpha=0.1)
        for start, stop in ((0, 25), (25, 50), (45, 60)):
            online.partial_fit(X[start:stop, :], y[start:stop])
            classifier.partial_fit(X[start:stop, :], labels[start:stop], classes=[0, 1, 2])
        outputs = (online.predict(on(placement, X_NEW)),
                   classifier.decision_function(on(placement, X_NEW)), online.coef_)
    for value in outputs:  # on X's device, in float64 (the models' outputs)
        assert array_api_compat.array_namespace(value) is array_api_compat.array_namespace(X)
        assert array_api_compat.device(value) == array_api_compat.device(X)
    # The same features of the same rows (the batches overlap: rows 45-49 twice), summed in
    # another order: the statistics of 75 rows against those of 60 differ, so compare with
    # a fit on the same rows.
    rows = np.r_[0:25, 25:50, 45:60]
    with dispatch():
        same_rows = km.models.FeatureRidge(rbf, alpha=0.1).fit(
            on(placement, X_DATA[rows]), on(placement, Y_DATA[rows, 0]))
    # float64 sums of the same features in another order: within n·eps64 of G, amplified by
    # cond(S + αI) < 1e3 at α = 0.1 (D = 20): 1e-9 of coef_'s size. float32 features are
    # made per batch, and a product's rounding depends on its operands' shapes in BLAS (the
    # kernel family decides the blocking): each feature within (d + 2)·eps32 of its value
    # (d = 10 inputs, the cosine), so coef_ within 2·cond·12·eps32 < 3e-3 of its size.
    eps = np.finfo(placement[2]).eps
    bound = 1e-9 if placement[2] == "float64" else 2 * 1e3 * 12 * eps
    coef, expected = to_numpy(online.coef_), to_numpy(same_rows.coef_)
    np.testing.assert_allclose(coef, expected, rtol=0, atol=bound * np.abs(expected).max())
    assert not np.allclose(coef, to_numpy(fitted.coef_), rtol=0,
                           atol=1e-9 * np.abs(expected).max())  # the repeated rows count


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_precomputed_nystroem_on_device(placement):
    dtype = placement[2]
    gram = rbf_kernel(X_DATA, gamma=1.0)
    gram_new = rbf_kernel(X_NEW, X_DATA, gamma=1.0)
    est = sklearn.clone(NYSTROEM_PRECOMPUTED)
    expected = est.fit_transform(gram.astype(dtype))
    expected_new = est.transform(gram_new.astype(dtype))
    with dispatch():
        features = est.fit_transform(on(placement, gram))
        new_features = est.transform(on(placement, gram_new))
    assert_placed_like(features, on(placement, gram))
    exact = sklearn.clone(NYSTROEM_PRECOMPUTED).fit(rounded(gram, dtype))
    for got, values, rows in ((features, expected, gram), (new_features, expected_new,
                                                             gram_new)):
        bound = nystroem_precomputed_bound(exact, rounded(gram, dtype), rounded(rows, dtype),
                                           dtype=np.dtype(dtype).type)
        assert_within(got, values, bound, "precomputed Nystroem")
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
    # Each run's values are within the kernel's declared bound E (or check_mercer's default
    # √ε·max|K| for a callable); K V adds the float32 product's (m + 2)ε|K||V|.
    cross, square = kernel_values_bound(kernel, X, Y), kernel_values_bound(kernel, X, X)
    bounds = {"cross": cross, "square": square, "diag": np.diag(square),
              "matmul": cross @ np.abs(V) + (Y.shape[0] + 2) * np.finfo(dtype).eps
              * np.abs(kernel(X, Y).astype(np.float64)) @ np.abs(V)}
    for key, value in got.items():
        assert_placed_like(value, X_d)
        assert_within(value, expected[key], bounds[key], f"{kernel!r} {key}")


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
    # Taking columns is exact; the product is one sum of 3 values: (3 + 2)ε|K||1|.
    np.testing.assert_array_equal(to_numpy(block), gram[:, columns])
    np.testing.assert_array_equal(to_numpy(diagonal), np.diag(gram))
    assert_within(product, gram[:, columns].sum(axis=1),
                  5 * np.finfo(placement[2]).eps * np.abs(gram[:, columns]).sum(axis=1))


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_kernel_reduce_on_device(placement):
    # Σ_b K_bᵀ (K_b v): the FALKON product, accumulated over device blocks.
    kernel = get_kernel("rbf", gamma=0.5)
    dtype = placement[2]
    X, C = X_DATA.astype(dtype), X_DATA[:5].astype(dtype)
    v = np.arange(5.0)
    K = kernel(X, C).astype(np.float64)
    expected = K.T @ (K @ v)
    with dispatch(), km.config_context(device_block_bytes=4096):
        X_d, C_d = on(placement, X), on(placement, C)
        v_d = on(placement, v)
        total = kernel.reduce(X_d, C_d, lambda K: K.T @ (K @ v_d))
    assert array_api_compat.array_namespace(total) is array_api_compat.array_namespace(X_d)
    # K to its bound E, the two products of lengths 5 and 60 to (m + 2)ε of their sizes:
    # |δ| <= Eᵀ|K||v| + |K|ᵀE|v| + (60 + 5 + 4)ε|K|ᵀ|K||v|.
    E = kernel_values_bound(kernel, X, C)
    bound = E.T @ (np.abs(K) @ np.abs(v)) + np.abs(K).T @ (E @ np.abs(v)) \
        + 69 * np.finfo(dtype).eps * np.abs(K).T @ (np.abs(K) @ np.abs(v))
    assert_within(total, expected, bound, "K_nMᵀ K_nM v")


# ----------------------------------------------------------------------------- the engine
@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", ["RBFSampler", "PolynomialCountSketch",
                                  "Nystroem", "extra-RandomFourierFeatures-rbf-structured-"
                                  "cos_offset"])
def test_device_blocks_give_the_one_block_result(case, placement):
    # 4 KiB blocks: many blocks, each written into a view of the output (torch: addmm and
    # cos_ in place) or copied into it (array_api_strict).
    entry = CASES[case]
    X = on(placement, X_DATA)
    with dispatch():
        est = entry.make()
        whole = est.fit_transform(X)
        with km.config_context(device_block_bytes=4096):
            blocked = est.transform(X)
    assert_placed_like(blocked, X)
    # The same numbers, up to the rounding of matrix products over other block sizes.
    assert_within(blocked, to_numpy(whole), _bounds(case, placement[2])["fit_transform"],
                  case)


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
    x = RNG.normal(size=(3, 2, 256)).astype(placement[2])
    expected = fwht(x.copy())  # in place
    with dispatch():
        result = fwht_device(array_api_compat.array_namespace(on(placement, x)),
                             on(placement, x))
    # Each output is a ±1 sum of the 256 inputs, in log₂ 256 = 8 stages whose partial sums
    # are at most Σ|x|: |δ| <= 8 ε Σ|x| per row.
    bound = 8 * np.finfo(placement[2]).eps * np.abs(x.astype(np.float64)).sum(axis=-1)
    assert_within(result, expected, bound[..., None], "fwht")


# ----------------------------------------------------------------------------- dtypes
def test_integer_tensor_is_computed_in_float64():
    X = torch.asarray((X_DATA * 10).astype(np.int64))
    with dispatch():
        features = km.RBFSampler(gamma=0.01, n_components=16, random_state=0).fit_transform(X)
    assert features.dtype == torch.float64
    est = km.RBFSampler(gamma=0.01, n_components=16, random_state=0)
    expected = est.fit_transform((X_DATA * 10).astype(np.int64))
    bound = error_bound(est, X_DATA * 10, X_DATA * 10, dtype=np.float64)["transform"]
    assert_within(features, expected, bound, "integer input")


def test_device_without_float64_stays_float32():
    device = array_api_strict.Device("no_float64")
    X = array_api_strict.asarray(X_DATA.astype(np.float32), device=device)
    with dispatch():
        est = km.Nystroem(gamma=1.0, n_components=8, random_state=0)
        features = est.fit_transform(X)
    assert features.dtype == array_api_strict.float32 and features.device == device
    expected = sklearn.clone(est).fit_transform(X_DATA.astype(np.float32))
    # The device computes N = K_LL^{-1/2} in float32 too (no float64 there): the bound of a
    # float32 run throughout.
    X32 = rounded(X_DATA, "float32")
    exact = sklearn.clone(est).fit(X32)
    bound = error_bound(exact, X32, X32, dtype=np.float32, solve_dtype=np.float32)
    assert_within(features, expected, bound["transform"], "Nystroem without float64")


# ----------------------------------------------------------------------------- boundaries
def test_without_dispatch_a_cpu_tensor_is_converted_like_scikit_learn():
    est = km.RBFSampler(n_components=16, random_state=0)
    features = est.fit_transform(torch.asarray(X_DATA))
    assert isinstance(features, np.ndarray)
    # The same NumPy computation on a copy at another address (BLAS may pick other
    # kernels for it): to its float64 rounding bound.
    bound = error_bound(sklearn.clone(est).fit(X_DATA), X_DATA, X_DATA, dtype=np.float64)
    assert_within(features, sklearn.clone(est).fit_transform(X_DATA), bound["transform"],
                  "converted tensor")


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
        got = restored.transform(torch.asarray(X_NEW))
        expected = to_numpy(est.transform(torch.asarray(X_NEW)))
    # Equal fitted arrays at other addresses (BLAS may pick other kernels for them): to the
    # float64 rounding bound of the transform.
    bound = error_bound(sklearn.clone(est).fit(X_DATA), X_DATA, X_NEW, dtype=np.float64)
    assert_within(got, expected, bound["transform"], "restored Nystroem")


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
    # Rows of X, or (k-means) means of 60 rows computed on the host from the same values:
    # within (60 + 2) ε64 of |X|.
    assert_within(points, expected_points, 62 * np.finfo(np.float64).eps, strategy)
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
        # float64 runs of the weighted problem: its rounding-error bound (the weights in
        # the adjoint, see tests/_error_bounds.py).
        bound = error_bound(expected, X_DATA, X_NEW, Y_DATA[:, 0], dtype=np.float64,
                            sample_weight=weights)
        assert_within(predictions, expected.predict(X_NEW), bound["predict"],
                      f"weighted {solver}")


@pytest.mark.parametrize("model", [FeatureRidge(random_state=0),
                                   FeatureRidgeClassifier(random_state=0)],
                         ids=lambda m: type(m).__name__)
def test_feature_ridge_sample_weight_on_device(model):
    # y and sample_weight in X's namespace, as scikit-learn's convention has them: the
    # weighted fit equals NumPy's, to the rounding of the float64 runs.
    weights = RNG.uniform(0.5, 2.0, size=X_DATA.shape[0])
    y = Y_DATA[:, 0] if isinstance(model, FeatureRidge) else LABELS
    expected = sklearn.clone(model).fit(X_DATA, y, sample_weight=weights)
    with dispatch():
        device = sklearn.clone(model).fit(torch.asarray(X_DATA), torch.asarray(y),
                                          sample_weight=torch.asarray(weights))
        method = "predict" if isinstance(model, FeatureRidge) else "decision_function"
        got = getattr(device, method)(torch.asarray(X_NEW))
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
    bound = error_bound(expected, X_DATA, X_NEW, y, dtype=np.float64, sample_weight=weights)
    assert_within(got, getattr(expected, method)(X_NEW), bound[method], f"weighted {model}")


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
