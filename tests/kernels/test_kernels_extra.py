"""Kernels beyond sklearn.metrics.pairwise, spectral densities, and the Mercer check."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.gaussian_process.kernels import Matern

from kernelmaps.kernels import KERNELS, check_mercer, get_kernel

NON_NEGATIVE = {"chi2", "additive_chi2", "additive_chi2_psd", "skewed_chi2"}
NOT_PSD = {"sigmoid", "additive_chi2"}


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_equals_sklearn_gaussian_process(nu, rng):
    X, Y = rng.normal(size=(30, 4)), rng.normal(size=(20, 4))
    ours = get_kernel("matern", nu=nu, length_scale=0.7)(X, Y)
    np.testing.assert_allclose(ours, Matern(length_scale=0.7, nu=nu)(X, Y), rtol=1e-12,
                               atol=1e-14)


def test_exponential_kernel_relates_to_rbf(rng):
    # exp(−γ‖x−y‖²/2) = e^{−γ‖x‖²/2} exp(γ⟨x,y⟩) e^{−γ‖y‖²/2}
    X = rng.normal(size=(12, 3))
    E = get_kernel("exponential", gamma=0.4)(X)
    norms = np.exp(-0.2 * (X ** 2).sum(1))
    np.testing.assert_allclose(norms[:, None] * E * norms[None, :],
                               get_kernel("rbf", gamma=0.2)(X), rtol=1e-12)
    with pytest.raises(ValueError, match="non-finite"):
        get_kernel("exponential", gamma=1.0)(np.full((2, 2), 1e3))


def test_rbf_by_sigma_equals_rbf_by_gamma(rng):
    X = rng.normal(size=(10, 3))
    np.testing.assert_allclose(get_kernel("rbf", sigma=2.0)(X),
                               get_kernel("rbf", gamma=1 / 8)(X), rtol=1e-14)
    with pytest.raises(ValueError, match="not both"):
        get_kernel("rbf", gamma=1.0, sigma=1.0)


def test_closed_forms_against_definitions(rng):
    X, Y = rng.uniform(0.05, 1, size=(8, 3)), rng.uniform(0.05, 1, size=(6, 3))
    diff2 = ((X[:, None] - Y[None]) ** 2).sum(-1)
    np.testing.assert_allclose(get_kernel("student", alpha=0.5)(X, Y), 1 / (0.5 + diff2))
    chi2 = (2 * X[:, None] * Y[None] / (X[:, None] + Y[None])).sum(-1)
    np.testing.assert_allclose(get_kernel("additive_chi2_psd")(X, Y), chi2, rtol=1e-12)
    c = 0.3
    Xc, Yc = X[:, None] + c, Y[None] + c
    skewed = np.prod(2 * np.sqrt(Xc * Yc) / (Xc + Yc), axis=-1)
    np.testing.assert_allclose(get_kernel("skewed_chi2", skewedness=c)(X, Y), skewed,
                               rtol=1e-12)


@pytest.mark.parametrize("degree", [0, 1, 2])
def test_arccos_is_the_expectation_of_random_units(degree, rng):
    # k_n(x, y) = 2 E_w[Θ(wx)Θ(wy)(wx)^n(wy)^n], w ~ N(0, I)  (Cho & Saul, 2009)
    X = rng.normal(size=(4, 3))
    W = np.random.RandomState(1).normal(size=(3, 400_000))
    P = X @ W
    H = np.where(P > 0, P ** degree, 0.0)
    monte_carlo = 2 * H @ H.T / W.shape[1]
    K = get_kernel("arccos", degree=degree)(X)
    np.testing.assert_allclose(K, monte_carlo, rtol=0.03, atol=0.01)
    np.testing.assert_allclose(np.diag(K), get_kernel("arccos", degree=degree).diag(X),
                               rtol=1e-12)


@pytest.mark.parametrize("name", ["rbf", "laplacian", "student", "matern"])
def test_spectral_density_reproduces_the_kernel(name, rng):
    params = {"rbf": {"gamma": 0.6}, "laplacian": {"gamma": 0.5}, "student": {"alpha": 2.0},
              "matern": {"nu": 1.5, "length_scale": 0.9}}[name]
    kernel = get_kernel(name, **params)
    d = 3
    X = rng.normal(size=(5, d)) * 0.5
    density = kernel.spectral_density(d)
    draws = np.random.RandomState(0)
    W = density.sample(d, 200_000, draws)
    estimate = density.scale * np.cos((X[:, None] - X[None]) @ W.T).mean(-1)
    np.testing.assert_allclose(estimate, kernel(X), atol=0.01)
    if density.isotropic:
        radii = density.sample_radii(d, 200_000, draws)
        directions = draws.normal(size=(200_000, d))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        W = directions * radii[:, None]
        estimate = density.scale * np.cos((X[:, None] - X[None]) @ W.T).mean(-1)
        np.testing.assert_allclose(estimate, kernel(X), atol=0.01)
    else:
        with pytest.raises(ValueError, match="not isotropic"):
            density.sample_radii(d, 10, draws)


@pytest.mark.parametrize("name", ["linear", "poly", "sigmoid", "cosine", "arccos", "exponential"])
def test_no_spectral_density_for_non_shift_invariant(name):
    with pytest.raises(ValueError, match=r"not shift-invariant.*Nystroem"):
        get_kernel(name).spectral_density(3)


@pytest.mark.parametrize(("name", "params", "match"), [
    ("student", {"alpha": 0.0}, "alpha must be finite and > 0"),
    ("student", {"alpha": -1.0}, "alpha"),
    ("matern", {"nu": 2.0}, "nu=2.0 is not supported"),
    ("matern", {"length_scale": 0}, "length_scale"),
    ("arccos", {"degree": 3}, "degree must be 0, 1 or 2"),
    ("skewed_chi2", {"skewedness": float("nan")}, "skewedness"),
    ("rbf", {"gamma": -1e-3}, "gamma must be finite and >= 0"),
    ("poly", {"degree": 0.5}, "degree must be >= 1"),
])
def test_bad_parameters_name_the_parameter(name, params, match):
    with pytest.raises(ValueError, match=match):
        get_kernel(name, **params)


def test_skewed_chi2_domain():
    with pytest.raises(ValueError, match="<= -skewedness"):
        get_kernel("skewed_chi2", skewedness=0.5)(np.array([[-0.6, 1.0]]))


# --------------------------------------------------------------------------- Mercer check
@pytest.mark.parametrize("name", sorted(set(KERNELS) - NOT_PSD))
def test_mercer_passes_every_psd_kernel(name, rng):
    X = rng.normal(size=(200, 4))
    if name in NON_NEGATIVE:
        X = np.abs(X)
    report = check_mercer(name, X)
    assert report.passed, report.summary()
    assert report.negative_mass < 1e-10 and report.worst_pair is None


def test_mercer_flags_sigmoid(rng):
    X = rng.normal(size=(200, 4))
    report = check_mercer(get_kernel("sigmoid", gamma=1.0, coef0=-1.0), X)
    assert not report.passed and report.is_symmetric
    assert report.min_eigenvalue < -1 and report.negative_mass > 0.1
    i, j = report.worst_pair
    K = get_kernel("sigmoid", gamma=1.0, coef0=-1.0)(X[[i, j]])
    # The witness pair really is indefinite: its 2×2 Gram matrix has a negative eigenvalue.
    assert np.linalg.eigvalsh(K)[0] < 0
    v = report.worst_eigenvector
    K_full = get_kernel("sigmoid", gamma=1.0, coef0=-1.0)(X)
    assert v @ K_full @ v == pytest.approx(report.min_eigenvalue, rel=1e-8)


def test_mercer_flags_indicator_of_inequality(rng):
    X = rng.normal(size=(100, 2))
    report = check_mercer(lambda A, B: (A[:, None, 0] != B[None, :, 0]).astype(float), X)
    # 1[x ≠ y] on distinct points is J − I: eigenvalues n − 1 and −1.
    assert not report.passed
    assert report.min_eigenvalue == pytest.approx(-1.0)
    assert report.negative_mass == pytest.approx(0.5)  # (n−1)·1 / (n−1)... relative to Σ|λ|


def test_mercer_flags_asymmetry(rng):
    X = rng.normal(size=(30, 2))
    report = check_mercer(lambda A, B: np.exp(-np.abs(A[:, None, 0] - 2 * B[None, :, 0])), X)
    assert not report.is_symmetric and not report.passed
    i, j = report.worst_pair
    assert i != j


def test_mercer_subsamples_and_validates(rng):
    X = rng.normal(size=(500, 2))
    report = check_mercer("rbf", X, max_samples=100, random_state=0)
    assert report.n_samples == 100 and len(set(report.sample_indices)) == 100
    with pytest.raises(ValueError, match="max_samples"):
        check_mercer("rbf", X, max_samples=1)
    with pytest.raises(ValueError, match="NaN"):
        check_mercer("rbf", np.array([[np.nan, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"vectorised kernel must return the \(\d+, \d+\) matrix"):
        check_mercer(lambda A, B: np.ones(3), X)


@settings(max_examples=30, deadline=None)
@given(X=arrays(np.float64, st.tuples(st.integers(2, 25), st.integers(1, 4)),
                elements=st.floats(-5, 5, allow_nan=False)),
       name=st.sampled_from(["rbf", "laplacian", "student", "matern", "linear", "cosine"]))
def test_gram_matrices_symmetric_psd_property(X, name):
    K = get_kernel(name)(X)
    np.testing.assert_allclose(K, K.T, atol=1e-12)
    assert np.linalg.eigvalsh(K).min() > -1e-8 * max(1.0, np.abs(K).max()) * len(K)
