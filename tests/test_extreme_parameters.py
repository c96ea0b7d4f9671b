"""Extreme parameters and degenerate shapes, for every public estimator and every kernel.

Over the registry (``tests/_estimators.py``) and :data:`kernelmaps.kernels.KERNELS`: the scale
parameter (``gamma``, or the map's own: ``skewedness``, ``sample_interval``, the Matérn
``length_scale``; the data's scale for the scale-free arc-cosine map) from 1e-12 to 1e12 in
float64 and float32, ``n_components`` far above the number of rows and features,
all-duplicate rows, a single row, a single feature. Each case gives finite output of the
right shape and dtype, or a ``ValueError`` naming the parameter; never a NumPy
``RuntimeWarning`` (silent overflow or NaN inside) and never an ``IndefiniteKernelWarning``
for these positive-definite kernels. Where a fit forms a kernel matrix that is numerically
constant or the identity, it warns with a :class:`~kernelmaps.kernels.DegenerateKernelWarning`
that names the parameter.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import AdditiveChi2Sampler as SkAdditiveChi2Sampler

import kernelmaps as km
from kernelmaps.kernels import KERNELS, DegenerateKernelWarning, get_kernel
from kernelmaps.kernels.degenerate import scale_parameter, warn_if_degenerate
from kernelmaps.models import KernelFisherDiscriminant, KernelMeanDistance, KernelRidge
from tests._estimators import ENTRIES, Entry, by_id, make_data
from tests._float32_bound import float32_prediction_bound
from tests._helpers import dense

SCALES = (1e-12, 1e-9, 1e-6, 1e-3, 1e3, 1e6, 1e9, 1e12)
#: Warnings an extreme case may legitimately give: the degenerate-kernel warning, Nystroem's
#: n_components clamp (a UserWarning, as scikit-learn's) and an iterative solver's
#: non-convergence. Anything else (a NumPy RuntimeWarning, an IndefiniteKernelWarning for a
#: PSD kernel) fails the case.
ALLOWED_WARNINGS = (DegenerateKernelWarning, ConvergenceWarning)
CLAMP = "n_components > n_samples"

#: Estimators whose fit forms a kernel matrix (and so warns when it is degenerate).
#: (KernelRidge's default linear kernel has no gamma to warn about.)
GRAM_FORMING = [e for e in ENTRIES
                if (e.cls in (km.Nystroem, KernelRidge, KernelFisherDiscriminant)
                    or (e.cls is KernelMeanDistance and e.params.get("n_components")))
                and e.make().get_params()["kernel"] != "linear"]


def scale_case(e: Entry, value: float) -> tuple[str, dict, float]:
    """(parameter name, constructor overrides, factor for the data) for a scale ``value``."""
    if e.cls is km.SkewedChi2Sampler:
        return "skewedness", {"skewedness": value}, 1.0
    if e.cls is km.AdditiveChi2Sampler:
        return "sample_interval", {"sample_interval": value}, 1.0
    if e.cls is km.ArcCosineSampler:  # no scale parameter: k(sx, sy) = s^(2 degree) k(x, y)
        return "X", {}, value
    if e.two_views:  # KernelCCA: the gamma of both views' Nyström maps
        return "gamma", {view: km.Nystroem(n_components=20, gamma=value)
                         for view in ("x_map", "y_map")}, 1.0
    if "feature_map" in e.make().get_params():  # FeatureRidge: the gamma of its map
        feature_map = e.params.get("feature_map") or km.RBFSampler(n_components=20)
        return "gamma", {"feature_map": sklearn.clone(feature_map).set_params(gamma=value)}, 1.0
    if e.params.get("kernel") == "matern":
        return "length_scale", {"kernel_params": {**e.params["kernel_params"],
                                                  "length_scale": value}}, 1.0
    if e.params.get("kernel") == "student":  # 1/(α + ‖x−y‖²): α sets the scale
        return "alpha", {"kernel_params": {**e.params.get("kernel_params", {}),
                                           "alpha": value}}, 1.0
    return "gamma", {"gamma": value}, 1.0


def run_case(e: Entry, overrides: dict, X, y, X_new, names: tuple[str, ...]) -> str:
    """Fit and call every output method; return "ok" or "error" after checking the outcome."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est = e.make(**overrides).fit(X, y)
            outputs = {m: dense(getattr(est, m)(X_new)) for m in e.output_methods}
        except ValueError as error:
            message = str(error)
            assert any(re.search(rf"\b{re.escape(name)}\b", message) for name in names), (
                f"{e.id} {overrides}: the error does not name {names}: {message}")
            outcome = "error"
        else:
            outcome = "ok"
    unexpected = [w for w in caught if not issubclass(w.category, ALLOWED_WARNINGS)
                  and CLAMP not in str(w.message)]
    assert not unexpected, [f"{w.category.__name__}: {w.message}" for w in unexpected]
    if outcome == "error":
        return outcome
    for method, out in outputs.items():
        assert out.shape[0] == X_new.shape[0], method
        if out.dtype.kind == "f":
            assert np.isfinite(out).all(), f"{e.id} {overrides}: {method} is not finite"
        if method == "transform" and e.float32_out:
            assert out.dtype == X_new.dtype, method
    return outcome


# ------------------------------------------------------------------------------ the registry
@by_id(ENTRIES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scale_parameter_from_1e_minus_12_to_1e12(e, dtype):
    X, y = make_data(e, n_samples=40, n_features=4)
    X_new, _ = make_data(e, n_samples=10, n_features=4, seed=5)
    outcomes = []
    for value in SCALES:
        name, overrides, factor = scale_case(e, value)
        outcomes.append(run_case(e, overrides, (X * factor).astype(dtype), y,
                                 (X_new * factor).astype(dtype), names=(name,)))
    # An error is for a parameter the arithmetic cannot take, not the common case.
    assert outcomes.count("ok") >= len(SCALES) // 2, outcomes


MANY = "n_components 5000 (40 rows, 4 features)"


def _shape_cases(e: Entry) -> dict:
    X, y = make_data(e, n_samples=40, n_features=4)
    X_new, _ = make_data(e, n_samples=7, n_features=4, seed=5)
    one = (None if y is None else y[:1])
    duplicates = np.repeat(X[:1], 30, axis=0)
    y_duplicates = None if y is None else (np.arange(30) % 2 if e.kind == "classifier"
                                           else np.repeat(y[:1], 30, axis=0))
    cases = {
        "all-duplicate rows": ({}, duplicates, y_duplicates, X_new),
        "one row": ({}, X[:1], one, X_new),
        "one feature": ({}, X[:, :1], y, X_new[:, :1]),
        "one row, one feature": ({}, X[:1, :1], one, X_new[:, :1]),
    }
    if "n_components" in e.make().get_params():
        cases[MANY] = ({"n_components": 5000}, X, y, X_new)
    return cases


@by_id(ENTRIES)
def test_degenerate_shapes(e):
    outcomes = {}
    for case, (overrides, X, y, X_new) in _shape_cases(e).items():
        names = ("n_components",) if case == MANY else ("X", "y", "sample")
        outcomes[case] = run_case(e, overrides, X, y, X_new, names=names)
    if e.kind == "classifier":
        # One row has one class: refused. Identical rows have identical class means, which the
        # Fisher discriminant refuses; a ridge classifier fits them (it predicts the mean).
        assert outcomes.pop("one row") == outcomes.pop("one row, one feature") == "error"
        duplicates = outcomes.pop("all-duplicate rows")
        assert duplicates == ("error" if e.cls is KernelFisherDiscriminant else "ok")
        assert set(outcomes.values()) == {"ok"}, outcomes
    elif e.two_views:  # a correlation needs two samples; canonical pairs ≤ the features
        assert outcomes.pop("one row") == outcomes.pop("one row, one feature") == "error"
        assert outcomes.pop(MANY) == "error"
        assert set(outcomes.values()) == {"ok"}, outcomes
    else:
        assert set(outcomes.values()) == {"ok"}, outcomes


def test_n_components_far_above_rows_keeps_the_width_of_random_maps():
    X = np.random.RandomState(0).uniform(size=(5, 2))
    Z = km.RBFSampler(n_components=5000, random_state=0).fit_transform(X)
    assert Z.shape == (5, 5000) and np.isfinite(Z).all()
    with pytest.warns(UserWarning, match=CLAMP):
        ny = km.Nystroem(n_components=5000, random_state=0).fit(X)
    assert ny.transform(X).shape == (5, 5)


# ------------------------------------------------------------------------------ the kernels
def _kernel_data():
    rng = np.random.RandomState(0)
    X = rng.uniform(0.0, 1.0, size=(20, 4))  # non-negative: the histogram kernels need it
    X[:, 0] += 0.1
    return X


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_kernel_at_extreme_parameters_is_finite_or_a_clear_error(name):
    X = _kernel_data()
    params = [p for p in KERNELS[name].param_names if p not in ("degree", "coef0", "nu")]
    cases = [{p: v} for p in params for v in SCALES] or [{}]
    for kwargs in cases:
        kernel = get_kernel(name, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            for data in (X, X[:1], X[:, :1], np.repeat(X[:1], 5, axis=0)):
                try:
                    K = kernel(data)
                except ValueError as error:  # overflow: reported with the parameters
                    assert all(f"{p}={v!r}" in str(error) for p, v in kwargs.items()), error
                    continue
                assert K.shape == (len(data),) * 2 and np.isfinite(K).all(), kwargs
                np.testing.assert_allclose(kernel.diag(data), np.diag(K), rtol=1e-12)


# ------------------------------------------------------------------------------ the warning
def _distinct_data(n=30, d=3, seed=0):
    return np.random.RandomState(seed).uniform(size=(n, d))  # continuous: no duplicates


def _fit(e: Entry, X, **overrides):
    y = make_data(e, n_samples=len(X))[1]
    if e.kind == "classifier":
        y = (X[:, 0] > np.median(X[:, 0])).astype(int)
    elif e.kind == "regressor":
        y = np.sin(3 * X[:, 0])
    return e.make(**overrides).fit(X, y)


@by_id(GRAM_FORMING)
@pytest.mark.parametrize(("gamma", "kind", "advice"), [
    (1e-12, "numerically constant", "raise it"),
    (1e12, "numerically the identity", "lower it"),
])
def test_degenerate_kernel_matrix_warns_naming_gamma(e, gamma, kind, advice):
    with pytest.warns(DegenerateKernelWarning, match=kind) as record:
        _fit(e, _distinct_data(), gamma=gamma)
    message = str(record[0].message)
    assert f"gamma={gamma!r}" in message and advice in message
    assert e.cls.__name__ in message


@by_id(GRAM_FORMING)
def test_no_degenerate_warning_at_ordinary_parameters(e):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        _fit(e, _distinct_data())
        _fit(e, _distinct_data(), gamma=10.0)
        # Duplicate rows are the data's, not the kernel's: no warning for them.
        _fit(e, np.repeat(_distinct_data(n=10), 3, axis=0), gamma=1.0)


@pytest.mark.parametrize("name", sorted(n for n in KERNELS
                                        if scale_parameter(KERNELS[n]()) is not None))
def test_warning_diagnoses_each_kernel_with_a_scale_parameter(name):
    X = _distinct_data(n=15)
    if name == "sigmoid":
        X = X - 0.5  # tanh(γ<x, y> + 1) saturates at γ → ∞ only where <x, y> keeps a sign
    param, _, direction = scale_parameter(KERNELS[name]())
    narrow, wide = (1e12, 1e-12) if direction <= 0 else (1e-12, 1e12)
    with pytest.warns(DegenerateKernelWarning, match=f"{param}=") as record:
        assert warn_if_degenerate(get_kernel(name, **{param: wide})(X), X,
                                  get_kernel(name, **{param: wide}), owner="test",
                                  what="points") == "constant"
    assert "numerically constant" in str(record[0].message)
    # The skewed chi² kernel narrows only where a feature is 0 in one point and not the
    # other (c → 0 leaves Π 2√(xy)/(x+y) on positive features), so it is not checked here.
    if direction != 0 and name != "skewed_chi2":
        kernel = get_kernel(name, **{param: narrow})
        with pytest.warns(DegenerateKernelWarning, match="numerically the identity"):
            assert warn_if_degenerate(kernel(X), X, kernel, owner="test",
                                      what="points") == "identity"


def test_warning_is_silent_where_a_diagonal_matrix_is_legitimate():
    one_hot = np.eye(6)  # orthogonal rows: the linear and cosine kernels are the identity
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        for name in ("linear", "cosine", "additive_chi2_psd"):
            kernel = get_kernel(name)
            assert warn_if_degenerate(kernel(one_hot), one_hot, kernel, owner="test",
                                      what="points") is None
        # One point, or the same point repeated: nothing to tell apart.
        rbf = get_kernel("rbf", gamma=1e-12)
        for points in (one_hot[:1], np.repeat(one_hot[:1], 4, axis=0)):
            assert warn_if_degenerate(rbf(points), points, rbf, owner="test",
                                      what="points") is None
        # Sparse points are compared row by row too.
        duplicated = sp.csr_matrix(np.repeat(one_hot[:2], 3, axis=0))
        assert warn_if_degenerate(get_kernel("rbf", gamma=1.0)(duplicated), duplicated,
                                  get_kernel("rbf", gamma=1.0), owner="test",
                                  what="points") is None
    with pytest.warns(DegenerateKernelWarning, match="identity"):
        rbf = get_kernel("rbf", gamma=1e12)
        warn_if_degenerate(rbf(sp.csr_matrix(one_hot)), sp.csr_matrix(one_hot), rbf,
                           owner="test", what="points")


# ------------------------------------------------------------------------------ defects found
@pytest.mark.parametrize(("kernel", "gamma"), [
    ("linear", None),  # n_components > n_features: K_MM of rank 4 among 20 centres
    ("rbf", 1e-9), ("rbf", 1e-5), ("rbf", 1e-3), ("poly", 1e-5),
])
def test_nystrom_kernel_ridge_float32_agrees_with_float64(kernel, gamma):
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(300, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    model = dict(kernel=kernel, gamma=gamma, solver="nystrom", n_components=20,
                 random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateKernelWarning)
        warnings.simplefilter("error", ConvergenceWarning)
        warnings.simplefilter("error", RuntimeWarning)
        fitted = KernelRidge(**model).fit(X.astype(np.float32), y)
        p32 = fitted.predict(X.astype(np.float32))
        p64 = KernelRidge(**model).fit(X, y).predict(X)
    # Was off by 3e8 (linear) and 1e141 (rbf 1e-3): FALKON's CG diverged in float32 (and at
    # rbf 1e-9 on Prescott kernels, with float32 products). K_MM is numerically singular at
    # these parameters, so the first-order bound of tests/_float32_bound.py exceeds
    # |f| (it holds, but says nothing): what is checked is that CG reaches the float64
    # model rather than diverging, to half of float32's digits, √eps32 of the scale.
    expected, bound = float32_prediction_bound(fitted.kernel_, X, fitted.X_fit_, X, y, 1.0,
                                               tol=1e-4)
    assert np.all(np.abs(p32 - expected[:, 0]) <= bound[:, 0])
    np.testing.assert_allclose(p32, p64, rtol=0,
                               atol=np.sqrt(np.finfo(np.float32).eps) * np.abs(p64).max())


def test_additive_chi2_large_sample_interval_matches_scikit_learn():
    X = np.random.RandomState(0).uniform(size=(6, 3))
    for interval in (300.0, 1e6, 1e12):  # math.cosh overflowed past ~226
        ours = km.AdditiveChi2Sampler(sample_steps=3, sample_interval=interval).fit_transform(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # scikit-learn's np.cosh overflow
            theirs = SkAdditiveChi2Sampler(sample_steps=3,
                                           sample_interval=interval).fit_transform(X)
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("params", [{}, {"n_components": 5, "random_state": 0},
                                    {"gamma": 1e-17}])
def test_fisher_refuses_classes_with_the_same_mean(n_classes, params):
    fisher = KernelFisherDiscriminant(**params)
    y = np.arange(30) % n_classes
    if "gamma" in params:  # distinct points, but a kernel constant on them
        with pytest.warns(DegenerateKernelWarning, match="numerically constant"), \
                pytest.raises(ValueError, match="same mean in the feature space"):
            fisher.fit(_distinct_data(30, 4), y)
        return
    same = np.repeat(np.random.RandomState(0).uniform(size=(1, 4)), 30, axis=0)
    with pytest.raises(ValueError, match="same mean in the feature space"):
        fisher.fit(same, y)
