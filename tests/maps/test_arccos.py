"""ArcCosineSampler: unbiased random sign / ReLU / squared-ReLU features of the arc-cosine
kernels of kernels.py in every structure (iid, orthogonal, structured, the spherical
quadrature rule), with the Monte Carlo rate; the quadrature rule's construction; the
"auto" choice; bad parameters. (The estimator contract is in tests/test_contract.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from kernelmaps.evaluate import relative_error
from kernelmaps.kernels import get_kernel
from kernelmaps.maps._structure_policy import AUTO_MAX_FEATURES
from kernelmaps.maps.arccos import ARCCOS_STRUCTURES, ArcCosineSampler, moment_radius
from tests._helpers import gram, relative_difference

X = np.random.RandomState(0).normal(size=(20, 5)) * 0.7


@pytest.mark.parametrize("structure", ARCCOS_STRUCTURES)
@pytest.mark.parametrize("degree", [0, 1, 2])
def test_error_shrinks_like_one_over_sqrt_D(degree, structure):
    K = get_kernel("arccos", degree=degree)(X)
    errors = {
        D: np.mean([relative_error(K, ArcCosineSampler(
            degree=degree, n_components=D, structure=structure, random_state=s
        ).fit_transform(X)) for s in range(6)])
        for D in (96, 1536)  # whole Hadamard blocks of 8: no rounding in any structure
    }
    # c/√D with c ≈ 2, 3, 6 for degrees 0, 1, 2 for iid weights (higher powers, heavier
    # tails); the structures only lower c. Every structure draws independent blocks, so the
    # rate stays Monte Carlo's: 16× the units divide the error by ≈ 4. A biased map stalls
    # at its bias (ratio → 1); a wrong scale breaks the first bound.
    assert errors[1536] < {0: 4.0, 1: 5.0, 2: 9.0}[degree] / np.sqrt(1536)
    assert 2.4 < errors[96] / errors[1536] < 7.0


def _mean_and_standard_error(degree, structure, D, S=64):
    """The mean of S independent Gram estimates, its relative error against the exact
    kernel, and its relative standard error ‖sd‖_F / (√S ‖K‖_F)."""
    K = get_kernel("arccos", degree=degree)(X)
    estimates = np.array([gram(ArcCosineSampler(degree=degree, n_components=D,
                                                structure=structure, random_state=100 + s)
                               .fit_transform(X)) for s in range(S)])
    standard_error = np.linalg.norm(estimates.std(axis=0)) / np.sqrt(S) / np.linalg.norm(K)
    return relative_difference(estimates.mean(axis=0), K), standard_error


@pytest.mark.parametrize(("structure", "D"), [("iid", 200), ("orthogonal", 200),
                                              ("quadrature", 200), ("quadrature", 201)])
@pytest.mark.parametrize("degree", [0, 1, 2])
def test_mean_over_seeds_is_the_exact_kernel(degree, structure, D):
    # For an unbiased map E‖mean − K‖²_F = ‖sd‖²_F / S (sd: the per-entry standard
    # deviations of one D-unit estimate), so the mean's relative error is about one
    # standard error (measured 0.7 – 1.1 of it for these forms); 4 leaves room for the
    # estimate of sd itself. A bias of a few per cent stands out above it: the quadrature
    # rule's standard error is 0.5 – 1 % here, and a radius ρₙ with ρₙ² 10 % too large
    # measured 19 (n = 1) and 18 (n = 2) standard errors away. D = 201: the rule's unpaired
    # last direction (its weight 2 is checked exactly in the construction test below).
    difference, standard_error = _mean_and_standard_error(degree, structure, D)
    assert difference < 4.0 * standard_error


@pytest.mark.parametrize("degree", [0, 1, 2])
def test_structured_is_nearly_unbiased(degree):
    # SORF rows (HD₁HD₂HD₃) are not exactly uniform on the sphere, so "structured" is only
    # asymptotically unbiased (Yu et al., 2016): at d = 5 (d_pad = 8) its mean over 64
    # seeds measured 0.048 from the kernel for n = 0 (3.8 standard errors) and within one
    # standard error for n = 1, 2. A wrong radius law or scale gives tens of per cent.
    difference, standard_error = _mean_and_standard_error(degree, "structured", 200)
    assert difference < 0.06 + 2.0 * standard_error


def test_features_are_the_documented_units():
    sampler = ArcCosineSampler(degree=0, n_components=50, structure="iid",
                               random_state=0).fit(X)
    weights = sampler.projection_.weights
    # The Gaussian draws of earlier versions (the iid structure keeps their numbers).
    np.testing.assert_array_equal(weights, np.random.RandomState(0).normal(size=(5, 50)))
    projection = X @ weights
    scale = np.sqrt(2.0 / 50)
    np.testing.assert_array_equal(sampler.transform(X), scale * (projection > 0))
    for degree in (1, 2):
        Z = ArcCosineSampler(degree=degree, n_components=50, structure="iid",
                             random_state=0).fit_transform(X)
        np.testing.assert_allclose(Z, scale * np.maximum(projection, 0) ** degree, rtol=1e-12)


@pytest.mark.parametrize("degree", [0, 1, 2])
@pytest.mark.parametrize("d", [1, 2, 5, 40])
def test_moment_radius_is_the_chi_moment(degree, d):
    # ρₙ^{2n} = E χ_d^{2n} (scipy's χ moments); n = 0: √d (any radius would do).
    expected = stats.chi(d).moment(2 * degree) ** (1 / (2 * degree)) if degree else np.sqrt(d)
    assert moment_radius(d, degree) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("degree", [0, 1, 2])
def test_quadrature_units_are_rotated_simplices_and_antipodes(degree):
    d, D = 5, 2 * 6 * 2 + 3  # two whole rules of d + 1 = 6 directions, then 2 of a third
    sampler = ArcCosineSampler(degree=degree, n_components=D, structure="quadrature",
                               random_state=0).fit(X)
    W = sampler.projection_.weights.T  # (D, d)
    radius = moment_radius(d, degree)
    np.testing.assert_allclose(np.linalg.norm(W, axis=1), radius, rtol=1e-12)
    np.testing.assert_allclose(W[1:D - 1:2], -W[0:D - 1:2], rtol=0, atol=1e-15)
    directions = np.vstack([W[0:D - 1:2], W[-1:]]) / radius  # m = 14 directions
    for rule in (directions[:6], directions[6:12]):
        # A regular simplex: unit vertices with inner products −1/d, summing to 0.
        gram_matrix = rule @ rule.T
        np.testing.assert_allclose(gram_matrix, (1 + 1 / d) * np.eye(6) - 1 / d, atol=1e-12)
    partial = directions[12:]  # two vertices of a third simplex
    assert partial.shape == (2, d)
    assert partial[0] @ partial[1] == pytest.approx(-1 / d, abs=1e-12)
    # Scales √(cᵢ/m): 1/√14 for the 26 paired units, √(2/14) for the unpaired last one.
    Z = sampler.transform(X)
    units = X @ W.T
    units = (units > 0) * np.abs(units) ** degree if degree else (units > 0) * 1.0
    scale = np.full(D, math.sqrt(1 / 14))
    scale[-1] = math.sqrt(2 / 14)
    np.testing.assert_allclose(Z, units * scale, rtol=1e-12, atol=1e-15)


def test_quadrature_integrates_the_bilinear_part_exactly():
    # Degree 1 with one whole rule (D = 2(d + 1)): ReLU(a)ReLU(b) + ReLU(−a)ReLU(−b) =
    # (ab + |a||b|)/2, and the simplex integrates ab exactly, so the estimate minus the
    # estimate of the |a||b| part is xᵀy/2 for every draw (no randomness left in it).
    d = X.shape[1]
    sampler = ArcCosineSampler(degree=1, n_components=2 * (d + 1), structure="quadrature",
                               random_state=3).fit(X)
    P = X @ sampler.projection_.weights  # the 2m = 2(d + 1) units: ±ρ₁Qvⱼ
    # z(x)ᵀz(y) = (1/m)Σⱼ ½(aⱼbⱼ + |aⱼ||bⱼ|); the columns of P hold each |aⱼ| twice.
    absolute_part = np.abs(P) @ np.abs(P).T / (4 * (d + 1))
    np.testing.assert_allclose(gram(sampler.transform(X)) - absolute_part, X @ X.T / 2,
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("structure", ARCCOS_STRUCTURES)
def test_same_random_state_same_numbers_and_float32_kept(structure):
    make = lambda seed: ArcCosineSampler(degree=1, n_components=48, structure=structure,  # noqa: E731
                                         random_state=seed)
    Z = make(7).fit_transform(X)
    np.testing.assert_array_equal(make(7).fit_transform(X), Z)
    assert not np.array_equal(make(8).fit_transform(X), Z)
    Z32 = make(7).fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    # float32 weights and products: relative rounding ≈ 1e-7 × d of the unit values.
    np.testing.assert_allclose(Z32, Z, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(make(7).fit(X).transform(sp.csr_matrix(X)), Z, rtol=1e-12,
                               atol=1e-14)


def test_auto_takes_the_quadrature_rule_and_explicit_settings_are_obeyed():
    assert ArcCosineSampler(n_components=8).fit(X).structure_ == "quadrature"
    wide = np.random.RandomState(0).normal(size=(3, AUTO_MAX_FEATURES + 1))
    assert ArcCosineSampler(n_components=8).fit(wide).structure_ == "iid"
    for structure in ARCCOS_STRUCTURES:
        assert ArcCosineSampler(n_components=8, structure=structure).fit(X).structure_ \
            == structure
    # "auto" is the quadrature rule itself: the same numbers.
    np.testing.assert_array_equal(
        ArcCosineSampler(n_components=30, random_state=0).fit_transform(X),
        ArcCosineSampler(n_components=30, structure="quadrature",
                         random_state=0).fit_transform(X))


@pytest.mark.parametrize(("structure", "expected"), [("auto", 101), ("iid", 101),
                                                     ("orthogonal", 101), ("quadrature", 101),
                                                     ("structured", 104)])
def test_rounding_of_D_is_said_before_and_after_fit(structure, expected):
    sampler = ArcCosineSampler(n_components=101, structure=structure, random_state=0)
    assert sampler.n_features_out_for(X.shape[1]) == expected  # d_pad = 8: 13 blocks
    sampler.fit(X)
    assert sampler.n_features_out_ == expected == sampler.transform(X).shape[1]
    assert len(sampler.get_feature_names_out()) == expected


@pytest.mark.parametrize("structure", ARCCOS_STRUCTURES)
@pytest.mark.parametrize("degree", [0, 1, 2])
def test_positively_homogeneous_of_degree_n(degree, structure):
    sampler = ArcCosineSampler(degree=degree, structure=structure, random_state=0).fit(X)
    # A power of two scales every floating-point step exactly (the Hadamard sums too).
    np.testing.assert_allclose(sampler.transform(4.0 * X), 4.0 ** degree * sampler.transform(X),
                               rtol=1e-12)


def test_kernel_attribute_is_the_approximated_kernel():
    assert ArcCosineSampler(degree=2).fit(X).kernel_ == get_kernel("arccos", degree=2)


@pytest.mark.parametrize("degree", [3, -1, 0.5])
def test_invalid_degree_names_the_parameter(degree):
    with pytest.raises(ValueError, match=r"'degree' parameter of ArcCosineSampler.*0, 1, 2"):
        ArcCosineSampler(degree=degree).fit(X)


def test_invalid_structure_names_the_parameter():
    with pytest.raises(ValueError, match=r"'structure' parameter of ArcCosineSampler.*quadrature"):
        ArcCosineSampler(structure="fastfood").fit(X)
