"""DegenerateKernelWarning from every map and model whose kernel is numerically the identity
or a constant on the data — one check (kernels/degenerate.py), reused: the random-feature maps
run it on a sample of rows, Nystroem and the kernel machines on the matrices they form."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine
from sklearn.preprocessing import StandardScaler

from kernelmaps import (
    DegenerateKernelWarning,
    Nystroem,
    PolynomialCountSketch,
    RandomFourierFeatures,
    RandomMaclaurin,
    RBFSampler,
    SkewedChi2Sampler,
    TensorSRHT,
)
from kernelmaps.evaluate import median_heuristic
from kernelmaps.models import (
    FeatureRidgeClassifier,
    KernelCCA,
    KernelFisherDiscriminant,
    KernelMeanDistance,
    KernelRidge,
    KernelRidgeClassifier,
    make_fixed_size_model,
)

_digits = load_digits()
X_STD = StandardScaler().fit_transform(_digits.data[:300])
X_POS = _digits.data[:300] / 16.0  # non-negative: the chi² family's domain
Y = _digits.target[:300]

# name → (estimator at an extreme scale, the same at a sane one, data, what it degenerates to)
CASES = {
    "RBFSampler": (RBFSampler(gamma=1e12, random_state=0),
                   RBFSampler(gamma=0.02, random_state=0), X_STD, "identity"),
    "RBFSampler-constant": (RBFSampler(gamma=1e-14, random_state=0),
                            RBFSampler(gamma=0.02, random_state=0), X_STD, "constant"),
    "RandomFourierFeatures-rbf": (
        RandomFourierFeatures(gamma=1e12, random_state=0),
        RandomFourierFeatures(gamma=0.02, random_state=0), X_STD, "identity"),
    "RandomFourierFeatures-laplacian": (
        RandomFourierFeatures("laplacian", gamma=1e12, random_state=0),
        RandomFourierFeatures("laplacian", gamma=0.01, random_state=0), X_STD, "identity"),
    "SkewedChi2Sampler": (SkewedChi2Sampler(skewedness=1e12, random_state=0),
                          SkewedChi2Sampler(skewedness=1.0, random_state=0), X_POS,
                          "constant"),
    "RandomMaclaurin": (RandomMaclaurin(gamma=1e-14, coef0=1.0, random_state=0),
                        RandomMaclaurin(gamma=0.02, coef0=1.0, random_state=0), X_STD,
                        "constant"),
    "TensorSRHT": (TensorSRHT(gamma=1e-14, coef0=1.0, random_state=0),
                   TensorSRHT(gamma=0.02, coef0=1.0, random_state=0), X_STD, "constant"),
    "PolynomialCountSketch": (PolynomialCountSketch(gamma=1e-14, coef0=1.0, random_state=0),
                              PolynomialCountSketch(gamma=0.02, coef0=1.0, random_state=0),
                              X_STD, "constant"),
    "Nystroem": (Nystroem(gamma=1e12, n_components=50, random_state=0),
                 Nystroem(gamma=0.02, n_components=50, random_state=0), X_STD, "identity"),
    "KernelRidge": (KernelRidge(kernel="rbf", gamma=1e12), KernelRidge(kernel="rbf", gamma=0.02),
                    X_STD, "identity"),
    "KernelRidgeClassifier": (KernelRidgeClassifier(kernel="rbf", gamma=1e12),
                              KernelRidgeClassifier(kernel="rbf", gamma=0.02), X_STD,
                              "identity"),
    "KernelFisherDiscriminant": (KernelFisherDiscriminant(gamma=1e12),
                                 KernelFisherDiscriminant(gamma=0.02), X_STD, "identity"),
    "KernelMeanDistance": (KernelMeanDistance(gamma=1e12), KernelMeanDistance(gamma=0.02),
                           X_STD, "identity"),
    "KernelCCA": (KernelCCA(x_map=RBFSampler(gamma=1e12, random_state=0),
                            y_map=RBFSampler(gamma=0.02, random_state=0)),
                  KernelCCA(x_map=RBFSampler(gamma=0.02, random_state=0),
                            y_map=RBFSampler(gamma=0.02, random_state=0)), X_STD, "identity"),
    "fixed-size": (make_fixed_size_model(gamma=1e12, n_components=40, random_state=0),
                   make_fixed_size_model(gamma=0.02, n_components=40, random_state=0), X_STD,
                   "identity"),
}


def _fit(estimator, X):
    if isinstance(estimator, KernelCCA):
        return estimator.fit(X, X[:, ::-1])
    if isinstance(estimator, (KernelRidge, KernelRidgeClassifier, KernelFisherDiscriminant)) \
            or hasattr(estimator, "steps"):
        return estimator.fit(X, Y)
    return estimator.fit(X)


@pytest.mark.parametrize("name", list(CASES))
def test_warns_at_an_extreme_scale(name):
    extreme, _, X, kind = CASES[name]
    # Only the degenerate-kernel warning matters here (an identity kernel also makes some
    # solvers complain, e.g. Fisher's within-class scatter).
    with pytest.warns(DegenerateKernelWarning, match=f"numerically (the )?{kind}"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", DegenerateKernelWarning)
        _fit(extreme, X)


@pytest.mark.parametrize("name", list(CASES))
def test_silent_at_a_sane_scale(name):
    _, sane, X, _ = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        _fit(sane, X)


def test_the_sample_check_is_cheap_and_draws_nothing():
    # No random draw: the map's parameters are scikit-learn's exactly.
    from sklearn.kernel_approximation import RBFSampler as SkRBFSampler
    ours = RBFSampler(gamma=0.02, random_state=0).fit(X_STD)
    theirs = SkRBFSampler(gamma=0.02, random_state=0).fit(X_STD)
    np.testing.assert_array_equal(ours.random_weights_, theirs.random_weights_)


def test_dask_fit_runs_the_same_check():
    da = pytest.importorskip("dask.array")
    X = da.from_array(X_STD, chunks=100)
    with pytest.warns(DegenerateKernelWarning, match="numerically the identity"):
        RBFSampler(gamma=1e12, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        RBFSampler(gamma=0.02, random_state=0).fit(X)
        RandomFourierFeatures(gamma=0.02, random_state=0).fit(X)


# Issue 34: γ = 1e-9 on digits (the median heuristic gives 2.1e-4) scored 0.102 — chance —
# on its own training data, silently: the kernel's values differed by 4e-6 of their size,
# far above the rounding level the warning used to start at (γ ≈ 1e-12).
@pytest.mark.parametrize("model", [
    KernelRidgeClassifier(gamma=1e-9),
    FeatureRidgeClassifier(RBFSampler(gamma=1e-9, random_state=0)),
], ids=["KernelRidgeClassifier", "FeatureRidgeClassifier-RBFSampler"])
def test_too_small_gamma_on_digits_warns_naming_the_median_heuristic(model):
    X, y = _digits.data, _digits.target
    with pytest.warns(DegenerateKernelWarning, match="numerically constant") as caught:
        model.fit(X, y)
    message = str(caught[0].message)
    assert "gamma=1e-09 is too small" in message
    heuristic = median_heuristic(X, "rbf").value  # 2.1e-4
    found = float(message.split("gives gamma ≈ ")[1].split(" ")[0])
    assert heuristic / 2 < found < heuristic * 2


@pytest.mark.parametrize("loader", [load_wine, load_breast_cancer, load_digits, load_diabetes])
@pytest.mark.parametrize("multiple", [0.01, 0.1, 1.0, 10.0, 100.0])
def test_no_false_positive_around_the_median_heuristic(loader, multiple):
    X, y = loader(return_X_y=True)
    gamma = multiple * median_heuristic(X, "rbf").value
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        RBFSampler(gamma=gamma, random_state=0).fit(X)
        KernelRidge(kernel="rbf", gamma=gamma).fit(X[:300], y[:300])
