"""RandomFourierFeatures: every spectral density × structure × sampling × output is an
unbiased (structured, Fastfood: asymptotically unbiased) estimator of its exact kernel from
kernels.py, with the Monte Carlo rate (QMC: at least that rate); orthogonality of the
ORF/SORF blocks; the documented rounding; clear errors. (Determinism, dtypes, sparse input
and the estimator contract of every structure and output are in tests/test_contract.py; the
hypothesis test of unbiasedness, the quadrature rule and the principal axes in
tests/maps/test_rff_variance_reduction.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kernelmaps.evaluate import relative_error
from kernelmaps.kernels import get_kernel
from kernelmaps.maps import STRUCTURES as REGISTRY
from kernelmaps.maps._sampling import self_normalised_chi2
from kernelmaps.maps.fourier import RandomFourierFeatures
from tests._helpers import gram, relative_difference

#: Every registered structure (a new one is covered without editing this file).
STRUCTURES = tuple(REGISTRY)
SAMPLINGS = ("mc", "qmc")
OUTPUTS = ("cos_offset", "cos_sin")
#: One kernel per spectral density (rbf twice: by gamma and by sigma).
KERNELS = {
    "rbf": get_kernel("rbf", gamma=0.5),
    "rbf-sigma": get_kernel("rbf", sigma=1.5),
    "laplacian": get_kernel("laplacian", gamma=0.4),
    "matern-0.5": get_kernel("matern", nu=0.5, length_scale=1.5),
    "matern-1.5": get_kernel("matern", nu=1.5),
    "matern-2.5": get_kernel("matern", nu=2.5, length_scale=0.8),
    "student": get_kernel("student", alpha=2.0),
}
COMBINATIONS = [
    pytest.param(name, structure, output, sampling,
                 id=f"{name}-{structure}-{output}-{sampling}")
    for name in KERNELS for structure in STRUCTURES for output in OUTPUTS
    for sampling in SAMPLINGS
    # The L1 Laplacian's density is not isotropic: iid only (the others raise, tested below).
    if name != "laplacian" or not REGISTRY[structure].isotropic_only
]
# d = 6 is not a power of two, so the Hadamard structures also exercise the zero padding.
X_SMALL = np.random.RandomState(0).normal(size=(16, 6)) * 0.4


def make(kernel, structure="iid", output="cos_offset", n_components=64, random_state=0, *,
         sampling="mc", **kw):
    return RandomFourierFeatures(kernel, n_components=n_components, structure=structure,
                                 sampling=sampling, output=output, random_state=random_state,
                                 **kw)


# ---------------------------------------------------------------------------- estimator
@pytest.mark.parametrize(("name", "structure", "output", "sampling"), COMBINATIONS)
def test_error_shrinks_like_one_over_sqrt_D(name, structure, output, sampling):
    kernel = KERNELS[name]
    K = kernel(X_SMALL)
    errors = {
        D: np.mean([relative_error(K, make(kernel, structure, output, D, seed,
                                           sampling=sampling).fit_transform(X_SMALL))
                    for seed in range(6)])
        for D in (64, 1024)
    }
    # Monte Carlo: error ≈ c/√D with c ≈ 1–3 here, so 16× the features divide it by ≈ 4.
    # A biased map stalls at its bias (ratio → 1); a wrong variance breaks the bound.
    # Randomised QMC converges at least as fast (up to ≈ 1/D on smooth integrands, so no
    # upper bound on the ratio).
    assert errors[1024] < 4.0 / np.sqrt(1024)
    assert errors[64] / errors[1024] > 2.2
    if sampling == "mc":
        assert errors[64] / errors[1024] < 8.0


@pytest.mark.parametrize(("name", "structure", "output", "sampling"), COMBINATIONS)
def test_mean_over_seeds_converges_to_the_exact_kernel(name, structure, output, sampling):
    # The average of S independent D-feature estimates has the error of one S·D-feature
    # estimate if (and only if) the map is unbiased: a bias of a few per cent (a wrong
    # radius law, scale factor or padding) would stand out above 5/√(S·D) ≈ 0.04. (QMC
    # estimates have less variance, so the same bound holds a fortiori.) The quadrature
    # rules share one mixing scale σ per rule (2(d+1) frequencies), so for the scale
    # mixtures (Matérn, Student) their variance is that of fewer independent draws: for
    # an unbiased map E‖mean − K‖²_F = ‖sd‖²_F / S, which bounds it at 4 standard errors.
    kernel = KERNELS[name]
    S, D = 64, 256
    estimates = np.array([gram(make(kernel, structure, output, D, 100 + seed,
                                    sampling=sampling).fit_transform(X_SMALL))
                          for seed in range(S)])
    K = kernel(X_SMALL)
    standard_error = np.linalg.norm(estimates.std(axis=0)) / np.sqrt(S) / np.linalg.norm(K)
    bound = max(5.0 / np.sqrt(S * D), 4.0 * standard_error)
    assert relative_difference(estimates.mean(axis=0), K) < bound


@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("structure", STRUCTURES)
def test_frequency_scale_matches_the_spectral_density(structure, sampling):
    # For the Gaussian kernel E‖ω‖² = 2γd; recover ω from the projections of the unit
    # vectors (dense and Hadamard structures alike) and compare (weighted by the
    # quadrature weights where there are some).
    gamma, d = 0.3, 6
    X = np.random.RandomState(0).normal(size=(20, d))
    rff = make("rbf", structure, n_components=4096, gamma=gamma, sampling=sampling).fit(X)
    omega = np.empty((d, rff.n_frequencies_))
    rff.projection_.project_into(np.eye(d), omega)
    weights = rff.frequency_weights_
    squared = np.sum(omega ** 2, axis=0)
    mean = squared.mean() if weights is None else squared @ weights
    np.testing.assert_allclose(mean, 2 * gamma * d, rtol=0.05)


def test_cos_sin_is_the_pair_of_cos_and_sin_of_the_projection():
    rff = make("rbf", output="cos_sin", n_components=40, gamma=0.7).fit(X_SMALL)
    P = X_SMALL @ rff.projection_.weights
    scale = np.sqrt(1.0 / rff.n_frequencies_)
    np.testing.assert_allclose(rff.transform(X_SMALL),
                               scale * np.hstack([np.cos(P), np.sin(P)]), atol=1e-14)


def test_cos_offset_iid_rbf_is_rbfsampler_form():
    rff = make("rbf", n_components=50, gamma=0.7).fit(X_SMALL)
    expected = np.sqrt(2.0 / 50) * np.cos(X_SMALL @ rff.projection_.weights
                                          + rff.random_offset_)
    np.testing.assert_allclose(rff.transform(X_SMALL), expected, atol=1e-14)


def test_student_features_carry_the_kernel_scale():
    # k(0) = 1/alpha: ‖z(x)‖² estimates it (exactly, for cos_sin).
    Z = make("student", output="cos_sin", kernel_params={"alpha": 4.0}).fit_transform(X_SMALL)
    np.testing.assert_allclose(np.sum(Z ** 2, axis=1), 0.25)


# ---------------------------------------------------------------------------- structure
def test_orthogonal_frequencies_up_to_d_are_orthogonal_with_drawn_radii():
    d = 13  # D' = 5 <= d: one partial Haar block, orthonormal directions times radii
    W = make("matern", "orthogonal", n_components=5,
             kernel_params={"nu": 1.5}).fit(np.zeros((2, d))).projection_.weights
    assert W.shape == (d, 5)
    gram = W.T @ W
    np.testing.assert_allclose(gram - np.diag(np.diag(gram)), 0.0, atol=1e-12)
    assert np.ptp(np.diag(gram)) > 1e-3  # radii drawn, not one fixed norm


@pytest.mark.parametrize("sampling", ["mc", "qmc"])
def test_orthogonal_frequencies_beyond_d_have_a_nearly_exact_second_moment(sampling):
    # D' > d: one D' × d block with orthonormal columns, radii χ_{D'}·√(2γ), so
    # Σ ω ωᵀ = 2γ Qᵀ diag(r²) Q with Qᵀ Q = I. Per entry of Σ ω ωᵀ / (2γ D'): standard
    # deviation √6/D' = 0.006 on the diagonal (Var r² = 2D', q_ij⁴ ≈ 3/D'²) and √2/D' off
    # it, so 0.03 is over 5 of them; stacked d × d ORF blocks (χ_d radii: √(6/(D'd)) ≈
    # 0.055) or i.i.d. frequencies (√(2/D') ≈ 0.07) fail it, and radii of the wrong
    # dimension (χ_d) give a diagonal of d/D' ≈ 0.01 instead of 1.
    d, D, gamma = 5, 400, 0.3
    W = make("rbf", "orthogonal", n_components=D, sampling=sampling, gamma=gamma).fit(
        np.zeros((2, d))).projection_.weights
    np.testing.assert_allclose(W @ W.T / (2 * gamma * D), np.eye(d), atol=0.03)


def test_orthogonal_directions_are_uniform_on_the_sphere():
    # Each direction of a Haar orthogonal matrix is uniform, so its mean is 0. QR alone is
    # not Haar (LAPACK makes the first column's first entry negative): the sign fix matters.
    directions = []
    for seed in range(200):
        W = make("rbf", "orthogonal", n_components=4, random_state=seed).fit(
            np.zeros((2, 4))).projection_.weights
        directions.append(W / np.linalg.norm(W, axis=0))
    mean = np.mean(directions, axis=0)  # std of one coordinate: 0.5/√200 ≈ 0.035
    assert np.abs(mean).max() < 0.15


@pytest.mark.parametrize("kernel", ["rbf", "student"])
def test_structured_blocks_are_orthogonal_with_norms_equal_to_the_radii(kernel):
    d = 8  # a power of two: no padding, so each block HD₁HD₂HD₃ is square and orthogonal
    rff = make(kernel, "structured", n_components=24).fit(np.zeros((2, d)))
    omega = np.empty((d, 24))
    rff.projection_.project_into(np.eye(d), omega)
    radii = rff.projection_.row_scale * d ** 1.5
    np.testing.assert_allclose(np.linalg.norm(omega, axis=0), radii, rtol=1e-12)
    for start in range(0, 24, d):
        block = omega[:, start:start + d] / radii[start:start + d]
        np.testing.assert_allclose(block.T @ block, np.eye(d), atol=1e-12)


@pytest.mark.parametrize("d", [8, 6])  # 6: zero-padded to d_pad = 8
@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_structured_weighted_second_moment_is_exactly_isotropic(d, sampling):
    # The Dirichlet block shares sum to 1 and the weights cancel the radii's squares, so
    # Σ w_i ω_i ω_iᵀ is a multiple of I for every draw (to rounding), while the earlier
    # per-frequency radii left a relative spread of order √(2/D′) ≈ 0.1 here.
    rff = make("rbf", "structured", n_components=64, gamma=0.3, sampling=sampling).fit(
        np.zeros((2, d)))
    omega = np.empty((d, 64))
    rff.projection_.project_into(np.eye(d), omega)
    moment = (omega * rff.frequency_weights_) @ omega.T
    np.testing.assert_allclose(moment, moment[0, 0] * np.eye(d), atol=1e-12 * moment[0, 0])


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_structured_weighted_radii_have_the_radial_law(sampling):
    # The weighted law of ‖ω‖² over a draw is the Gaussian density's, 2γ·χ²_d (beta–gamma
    # algebra for the shares, size-biasing for the weights, normalised without bias): its
    # Laplace transform E exp(−t‖ω‖²) = (1 + 4γt)^(−d/2), checked at three t. Mean over S
    # draws, bound 4 standard errors of that mean.
    gamma, d, D, S = 0.3, 8, 64, 200
    values = []
    for seed in range(S):
        rff = make("rbf", "structured", n_components=D, gamma=gamma, random_state=seed,
                   sampling=sampling).fit(np.zeros((2, d)))
        omega = np.empty((d, D))
        rff.projection_.project_into(np.eye(d), omega)
        squared = np.sum(omega ** 2, axis=0)
        values.append([np.exp(-t * squared) @ rff.frequency_weights_ for t in (0.1, 0.5, 2.0)])
    values = np.array(values)
    exact = (1.0 + 4.0 * gamma * np.array([0.1, 0.5, 2.0])) ** (-d / 2)
    standard_error = values.std(axis=0) / np.sqrt(S)
    assert np.all(np.abs(values.mean(axis=0) - exact) < 4.0 * standard_error)


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_self_normalised_chi2_weights_are_exactly_unbiased(sampling):
    # Σ wᵢ g(xᵢ) with weights ∝ 1/x summing to 1 estimates E g(χ²_dof) without bias even
    # for 3 points, where plainly normalised size-biased draws are biased by about 60
    # standard errors of this mean (measured); bound: 4 standard errors.
    dof, size, R = 4, 3, 20_000
    t = np.array([0.05, 0.3, 1.0])
    random_state = np.random.RandomState(0)
    values = np.empty((R, len(t)))
    for r in range(R):
        x, weights = self_normalised_chi2(dof, size, random_state, sampling)
        assert weights.min() > 0 and abs(weights.sum() - 1.0) < 1e-12
        values[r] = np.exp(-np.outer(t, x)) @ weights
    exact = (1.0 + 2.0 * t) ** (-dof / 2)
    standard_error = values.std(axis=0) / np.sqrt(R)
    assert np.all(np.abs(values.mean(axis=0) - exact) < 4.0 * standard_error)


def test_fastfood_frequency_norms_are_the_radii():
    d = 16
    rff = make("rbf", "fastfood", n_components=32).fit(np.zeros((2, d)))
    p = rff.projection_
    omega = np.empty((d, 32))
    p.project_into(np.eye(d), omega)
    gaussian_norms = np.linalg.norm(p.gaussian.reshape(-1, d), axis=1).repeat(d)
    np.testing.assert_allclose(np.linalg.norm(omega, axis=0),
                               p.row_scale * np.sqrt(d) * gaussian_norms, rtol=1e-12)
    # S H G Π H B: each block is a permutation and a sign pattern, hence not orthogonal,
    # but the projections equal the explicit matrix product.
    H = np.array([[1.0]])
    while H.shape[0] < d:
        H = np.block([[H, H], [H, -H]])
    perm = p.permutation[0]
    V = (p.row_scale[:d, None] * H @ np.diag(p.gaussian[0]) @ np.eye(d)[perm] @ H
         @ np.diag(p.signs[0]))
    np.testing.assert_allclose(omega[:, :d], V.T, atol=1e-12)


@pytest.mark.parametrize("structure", ["structured", "fastfood"])
def test_hadamard_structures_store_O_D_parameters(structure):
    d, D = 512, 4096
    X = np.zeros((2, d))
    hadamard = make("rbf", structure, n_components=D).fit(X).projection_.nbytes
    dense = make("rbf", "iid", n_components=D).fit(X).projection_.nbytes
    assert dense == d * D * 8
    assert hadamard <= 3 * D * 8  # a few bytes per frequency, independent of d


# ---------------------------------------------------------------------------- rounding
@pytest.mark.parametrize(("structure", "output", "d", "n_components", "expected"), [
    ("iid", "cos_offset", 6, 37, 37),
    ("orthogonal", "cos_offset", 6, 37, 37),     # partial last block: no rounding
    ("iid", "cos_sin", 6, 37, 38),               # odd → one more (pairs)
    ("orthogonal", "cos_sin", 6, 36, 36),
    ("structured", "cos_offset", 6, 37, 40),     # d_pad = 8: whole blocks of 8
    ("fastfood", "cos_offset", 6, 3, 8),         # at least one block
    ("structured", "cos_sin", 6, 37, 48),        # 19 frequencies → 24 → 48 features
    ("fastfood", "cos_sin", 8, 32, 32),          # already compatible
    ("structured", "cos_offset", 1, 5, 5),       # d = 1: blocks of 1
    ("quadrature", "cos_offset", 6, 37, 38),     # radii come in pairs: D' even
    ("quadrature", "cos_sin", 6, 37, 40),        # 19 frequencies → 20 → 40 features
    ("quadrature", "cos_sin", 6, 36, 36),
    ("principal", "cos_offset", 6, 37, 37),      # dense: no rounding
    ("auto", "cos_offset", 6, 37, 37),
])
def test_documented_rounding_is_visible(structure, output, d, n_components, expected):
    X = np.random.RandomState(0).normal(size=(4, d))
    rff = make("rbf", structure, output, n_components=n_components).fit(X)
    assert rff.n_features_out_ == expected
    assert make("rbf", structure, output, n_components=n_components).n_features_out_for(d) \
        == expected  # known before fitting
    assert rff.transform(X).shape == (4, expected)
    names = rff.get_feature_names_out()
    assert len(names) == expected
    assert names[-1] == f"randomfourierfeatures{expected - 1}"


def test_kernel_object_equals_named_kernel():
    by_object = make(get_kernel("rbf", sigma=2.0), "structured").fit_transform(X_SMALL)
    by_name = make("rbf", "structured", gamma=0.125).fit_transform(X_SMALL)
    by_params = make("rbf", "structured", kernel_params={"sigma": 2.0}).fit_transform(X_SMALL)
    np.testing.assert_allclose(by_object, by_name, rtol=1e-12)
    np.testing.assert_allclose(by_params, by_name, rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(X=st.tuples(st.integers(1, 6), st.integers(1, 9)).flatmap(
           lambda s: arrays(np.float64, s, elements=st.floats(-5, 5))),
       structure=st.sampled_from(("auto", *STRUCTURES)), output=st.sampled_from(OUTPUTS),
       sampling=st.sampled_from(("mc", "qmc", "halton")), D=st.integers(1, 40))
def test_features_are_bounded_by_the_scale(X, structure, output, sampling, D):
    rff = make("rbf", structure, output, n_components=D, gamma=0.5, sampling=sampling).fit(X)
    Z = rff.transform(X)
    weights = rff.frequency_weights_
    weights = np.full(rff.n_frequencies_, 1.0 / rff.n_frequencies_) if weights is None \
        else weights
    per_feature = np.sqrt((2.0 if output == "cos_offset" else 1.0) * weights)
    if output == "cos_sin":
        per_feature = np.tile(per_feature, 2)
    assert np.isfinite(Z).all()
    assert np.all(np.abs(Z) <= per_feature * (1 + 1e-12))
    if output == "cos_sin":  # cos² + sin² = 1: ‖z(x)‖² = k(0) exactly
        np.testing.assert_allclose(np.sum(Z ** 2, axis=1), 1.0)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("kernel", "suggestion"), [
    ("poly", "TensorSRHT"),
    ("polynomial", "PolynomialCountSketch"),
    ("arccos", "ArcCosineSampler"),
    ("additive_chi2", "AdditiveChi2Sampler"),
    ("sigmoid", "Nystroem"),
])
def test_unsupported_kernel_names_the_map_to_use(kernel, suggestion):
    with pytest.raises(ValueError, match=rf"not one\. Use .*{suggestion}"):
        RandomFourierFeatures(kernel).fit(X_SMALL)


@pytest.mark.parametrize("structure", [s for s in STRUCTURES if REGISTRY[s].isotropic_only])
def test_laplacian_needs_iid_and_says_so(structure):
    with pytest.raises(ValueError, match=r"isotropic.*structure='iid'.*matern"):
        make("laplacian", structure).fit(X_SMALL)


@pytest.mark.parametrize("sampling", ["mc", "qmc", "halton"])
def test_laplacian_with_the_default_structure_is_iid(sampling):
    rff = RandomFourierFeatures("laplacian", sampling=sampling, random_state=0).fit(X_SMALL)
    assert rff.structure_ == "iid" and rff.effective_dimension_ is None


def test_gamma_for_a_kernel_without_gamma_is_an_error():
    with pytest.raises(ValueError, match=r"gamma does not apply.*'matern'.*kernel_params"):
        make("matern", gamma=1.0).fit(X_SMALL)


def test_kernel_object_plus_parameters_is_an_error():
    with pytest.raises(ValueError, match="Kernel object and gamma"):
        make(get_kernel("rbf"), gamma=1.0).fit(X_SMALL)


def test_unknown_kernel_params_is_an_error():
    with pytest.raises(ValueError, match=r"kernel_params.*unexpected parameter.*'nuu'"):
        make("matern", kernel_params={"nuu": 1.5}).fit(X_SMALL)


@pytest.mark.parametrize(("param", "value"), [
    ("structure", "hadamard"), ("output", "sin"), ("n_components", 0), ("kernel", "gauss"),
    ("sampling", "sobol"),
])
def test_invalid_parameter_values_name_the_parameter(param, value):
    with pytest.raises(ValueError, match=rf"'{param}' parameter of RandomFourierFeatures"):
        RandomFourierFeatures(**{param: value}).fit(X_SMALL)
