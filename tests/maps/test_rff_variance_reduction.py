"""Variance-reduced random Fourier features: unbiasedness of every exactly unbiased structure
under every sampling (hypothesis, a CLT bound over many seeds), the paired spherical-radial
rule, the principal axes and the "auto" choice, and structures as an extension point."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sklearn
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import special, stats

import kernelmaps
import kernelmaps.evaluate as evaluate
import kernelmaps.maps
from kernelmaps._array_api import namespace_and_device
from kernelmaps.io import trusted_types
from kernelmaps.kernels import get_kernel
from kernelmaps.maps import (
    STRUCTURES,
    Frequencies,
    FrequencyRequest,
    Projection,
    Structure,
    _principal,
    register_structure,
)
from kernelmaps.maps._principal import (
    PRINCIPAL_SAMPLE_ROWS,
    completed_axes,
    participation_ratio,
    principal_frame,
)
from kernelmaps.maps._quadrature import (
    PER_VERTEX_MIN_FEATURES,
    paired_radial_rule,
    regular_simplex,
)
from kernelmaps.maps._structure_policy import AUTO_MAX_EFFECTIVE_DIMENSION
from kernelmaps.maps._structures import BUILTIN_STRUCTURES
from kernelmaps.maps.fourier import RandomFourierFeatures

KERNELS = {
    "rbf": get_kernel("rbf", gamma=0.4),
    "laplacian": get_kernel("laplacian", gamma=0.3),
    "matern-0.5": get_kernel("matern", nu=0.5, length_scale=1.3),
    "matern-2.5": get_kernel("matern", nu=2.5),
    "student": get_kernel("student", alpha=1.5),
}
#: The structures whose every frequency has exactly the law p.
UNBIASED = [name for name, s in STRUCTURES.items() if s.unbiased]


# ---------------------------------------------------------------------------- unbiasedness
@settings(max_examples=25, deadline=None)
@given(kernel=st.sampled_from(sorted(KERNELS)), structure=st.sampled_from(UNBIASED),
       sampling=st.sampled_from(["qmc", "halton", "mc"]),
       output=st.sampled_from(["cos_offset", "cos_sin"]), d=st.integers(1, 7),
       n_components=st.integers(2, 40), seed=st.integers(0, 2**16),
       distance=st.floats(0.05, 3.0))
def test_every_unbiased_structure_and_sampling_estimates_the_kernel_without_bias(
        kernel, structure, sampling, output, d, n_components, seed, distance):
    # E[z(x)·z(y)] = k(x, y): the mean of S independent estimates (independent seeds, so
    # independent scrambles of the QMC sets) is within 5 standard errors of the kernel.
    kernel = KERNELS[kernel]
    assume(kernel.spectral_density(d).isotropic or not STRUCTURES[structure].isotropic_only)
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(30, d))  # the training data (the principal axes read them)
    pair = np.vstack([np.zeros(d), rng.normal(size=d)])
    pair[1] *= distance / np.linalg.norm(pair[1])
    S = 200
    estimates = np.empty(S)
    for s in range(S):
        rff = RandomFourierFeatures(kernel, structure=structure, sampling=sampling,
                                    output=output, n_components=n_components,
                                    random_state=seed * 1000 + s)
        Z = rff.fit(X).transform(pair)
        estimates[s] = Z[0] @ Z[1]
    exact = kernel(pair)[0, 1]
    standard_error = estimates.std(ddof=1) / np.sqrt(S)
    assert abs(estimates.mean() - exact) <= 5 * standard_error + 1e-12


def test_principal_axes_beyond_the_sample_keep_the_law():
    # d = 300 > 256 sample rows: the top axes carry QMC coordinates, the rest an independent
    # Gaussian projected off them; every frequency must still be N(0, 2γ I).
    gamma, d = 0.01, 300
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 6)) @ rng.normal(size=(6, d))  # effective dimension ≤ 6
    rff = RandomFourierFeatures(gamma=gamma, structure="principal", n_components=4096,
                                random_state=0).fit(X)
    omega = rff.projection_.weights  # (d, D')
    for direction in (np.eye(d)[0], rng.normal(size=d)):
        direction /= np.linalg.norm(direction)
        projected = direction @ omega / np.sqrt(2 * gamma)
        assert stats.kstest(projected, "norm").pvalue > 1e-4
    # And without bias, at a pair of rows: 5 standard errors over 100 fits.
    pair = X[:2]
    estimates = [(lambda Z: Z[0] @ Z[1])(RandomFourierFeatures(
        gamma=gamma, structure="principal", n_components=64, random_state=s).fit(X)
        .transform(pair)) for s in range(100)]
    exact = get_kernel("rbf", gamma=gamma)(pair)[0, 1]
    assert abs(np.mean(estimates) - exact) <= 5 * np.std(estimates) / 10


# ---------------------------------------------------------------------------- quadrature
@settings(max_examples=50, deadline=None)
@given(d=st.integers(1, 2000), U=st.lists(st.tuples(*[st.floats(0, 1)] * 3), min_size=1,
                                          max_size=20))
def test_paired_radial_rule_is_exact_for_constants_and_squares(d, U):
    s, t, w_s, w_t = paired_radial_rule(d, np.array(U))
    assert np.all(s <= d) and np.all(t >= d) and np.all(s >= 0)
    assert np.all(w_s >= 0) and np.all(w_t >= 0)
    np.testing.assert_allclose(w_s + w_t, 1.0, rtol=1e-14)
    # w_s s + w_t t = d (the mean of χ²_d): a rounding of the divided difference.
    np.testing.assert_allclose(w_s * s + w_t * t, d, rtol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 6, 50, 784])
def test_paired_radial_rule_is_unbiased_for_other_functions(d):
    # E[w_s g(s) + w_t g(t)] = E g(χ²_d) for g(s) = s², √s, exp(−s/d) (closed forms).
    n = 200_000
    s, t, w_s, w_t = paired_radial_rule(d, np.random.RandomState(d).uniform(size=(n, 3)))
    exact = {
        "square": (lambda x: x * x, d * (d + 2.0)),
        "root": (np.sqrt, np.sqrt(2) * np.exp(special.gammaln((d + 1) / 2)
                                              - special.gammaln(d / 2))),
        "decay": (lambda x: np.exp(-x / d), (1 + 2.0 / d) ** (-d / 2)),
    }
    for name, (g, expected) in exact.items():
        values = w_s * g(s) + w_t * g(t)
        assert abs(values.mean() - expected) <= 5 * values.std() / np.sqrt(n) + 1e-12, name


def test_paired_radial_rule_under_qmc_has_the_law_of_monte_carlo():
    d = 9
    s_mc, t_mc, _, _ = paired_radial_rule(d, np.random.RandomState(0).uniform(size=(4096, 3)))
    points = stats.qmc.Sobol(3, seed=np.random.default_rng(1)).random(4096)
    s_qmc, t_qmc, _, _ = paired_radial_rule(d, points)
    assert stats.ks_2samp(s_mc, s_qmc).pvalue > 1e-3
    assert stats.ks_2samp(t_mc, t_qmc).pvalue > 1e-3


@pytest.mark.parametrize("d", [2, 3, 7, 64])
def test_regular_simplex_is_a_spherical_two_design(d):
    V = regular_simplex(d)
    assert V.shape == (d + 1, d)
    gram = V @ V.T
    np.testing.assert_allclose(np.diag(gram), 1.0, atol=1e-14)
    np.testing.assert_allclose(gram[~np.eye(d + 1, dtype=bool)], -1.0 / d, atol=1e-14)
    np.testing.assert_allclose(V.T @ V, (d + 1.0) / d * np.eye(d), atol=1e-13)


@pytest.mark.parametrize("d", [1, 3, 8])
@pytest.mark.parametrize("sampling", ["mc", "qmc"])
def test_whole_quadrature_rules_integrate_the_quadratic_part_exactly(d, sampling):
    # Σ aᵢ ωᵢωᵢᵀ = E[ωωᵀ] = 2γ I for whole rules (D′ a multiple of 2(d + 1); d = 1: 2):
    # so z(x)·z(y) = k(x − y) + O(‖x − y‖⁴), where Monte Carlo has O(‖x − y‖²) errors.
    gamma = 0.7
    per_rule = 2 * (d + 1) if d > 1 else 2
    rff = RandomFourierFeatures(gamma=gamma, structure="quadrature", sampling=sampling,
                                output="cos_sin", n_components=2 * 5 * per_rule,
                                random_state=0).fit(np.zeros((2, d)))
    W, a = rff.projection_.weights, rff.frequency_weights_
    np.testing.assert_allclose(a.sum(), 1.0, rtol=1e-14)
    np.testing.assert_allclose((W * a) @ W.T, 2 * gamma * np.eye(d), rtol=0, atol=1e-12)


@pytest.mark.parametrize("sampling", ["mc", "qmc"])
@pytest.mark.parametrize("name", ["rbf", "matern-2.5"])  # Gaussian, and a scale mixture
def test_per_vertex_quadrature_rules_are_exactly_unbiased(name, sampling):
    # From PER_VERTEX_MIN_FEATURES inputs on every vertex has its own radius, the weights
    # ∝ 1/x normalised to sum 1 (no centre term). Two frequencies (two vertices of a rule),
    # where normalising the weights of independent size-biased radii biases the estimate
    # (measured with "mc" at d = 11: 9.3, 8.6 and 2.9 standard errors of this mean off, this
    # rule 0.6, 0.7, 0.9); the mean of S estimates at three distances is within 4 standard
    # errors of the kernel (a CLT bound).
    d, S = PER_VERTEX_MIN_FEATURES, 10_000
    kernel = KERNELS[name]
    direction = np.random.RandomState(0).normal(size=d)
    direction /= np.linalg.norm(direction)
    points = np.vstack([np.zeros(d)] + [r * direction for r in (0.5, 1.5, 3.0)])
    estimates = np.empty((S, 3))
    for seed in range(S):
        Z = RandomFourierFeatures(kernel, structure="quadrature", sampling=sampling,
                                  output="cos_sin", n_components=4,
                                  random_state=seed).fit_transform(points)
        estimates[seed] = Z[1:] @ Z[0]
    exact = kernel(points[1:], points[:1])[:, 0]
    standard_error = estimates.std(axis=0, ddof=1) / np.sqrt(S)
    assert np.all(np.abs(estimates.mean(axis=0) - exact) <= 4 * standard_error)


@pytest.mark.parametrize("d", [PER_VERTEX_MIN_FEATURES - 1, PER_VERTEX_MIN_FEATURES, 40])
def test_quadrature_radii_are_paired_below_the_crossover_and_per_vertex_from_it(d):
    # Below PER_VERTEX_MIN_FEATURES the paired rule is kept: in each rule the d + 1 vertices
    # share two radii s < d < t and their two weights; from it on each vertex has its own
    # radius, weighted ∝ 1/‖ω‖² (the weights times the squared norms are one constant), so
    # every whole rule's weighted second moment is a multiple of I.
    gamma, vertices = 0.3, d + 1
    rff = RandomFourierFeatures(gamma=gamma, structure="quadrature", output="cos_sin",
                                n_components=4 * 3 * vertices, random_state=0).fit(
        np.zeros((2, d)))
    W, a = rff.projection_.weights, rff.frequency_weights_
    squared = np.sum(W ** 2, axis=0)
    np.testing.assert_allclose(a.sum(), 1.0, rtol=1e-14)
    if d < PER_VERTEX_MIN_FEATURES:  # rules of 2(d + 1): vertex j at s, vertex j at t
        for rule in range(3):
            block = slice(2 * vertices * rule, 2 * vertices * (rule + 1))
            assert len(np.unique(np.round(squared[block] / squared[block].max(), 12))) == 2
            assert len(np.unique(np.round(a[block] / a[block].max(), 12))) == 2
        np.testing.assert_allclose((W * a) @ W.T, 2 * gamma * np.eye(d), atol=1e-12)
    else:  # 6 whole rules of d + 1
        assert len(np.unique(squared)) == len(squared)
        np.testing.assert_allclose(a * squared, (a * squared)[0], rtol=1e-12)
        moment = (W * a) @ W.T
        np.testing.assert_allclose(moment, moment[0, 0] * np.eye(d), atol=1e-12 * moment[0, 0])


def test_quadrature_beats_orthogonal_features_on_a_smooth_kernel():
    # γ small at the data's scale: the exact quadratic part leaves an O(‖δ‖⁴) error.
    X = np.random.RandomState(0).normal(size=(60, 4))
    kernel = get_kernel("rbf", gamma=0.002)
    K = kernel(X)

    def error(structure):
        return np.mean([np.linalg.norm((lambda Z: Z @ Z.T)(RandomFourierFeatures(
            kernel, structure=structure, sampling="mc", output="cos_sin", n_components=200,
            random_state=seed).fit_transform(X)) - K) for seed in range(5)])

    assert error("quadrature") < 0.1 * error("orthogonal")


def test_quadrature_features_keep_the_diagonal_exact():
    X = np.random.RandomState(0).normal(size=(20, 5))
    Z = RandomFourierFeatures("student", kernel_params={"alpha": 4.0}, structure="quadrature",
                              output="cos_sin", n_components=98,
                              random_state=0).fit_transform(X)
    np.testing.assert_allclose(np.sum(Z ** 2, axis=1), 0.25, rtol=1e-13)  # k(0) = 1/α


# ---------------------------------------------------------------------------- principal axes
def test_principal_frame_is_orthonormal_and_measures_the_effective_dimension():
    rng = np.random.RandomState(0)
    on_a_line = np.outer(rng.normal(size=200), rng.normal(size=7))
    isotropic = rng.normal(size=(5000, 7))
    for rows, expected, axes in ((on_a_line, 1.0, 1), (isotropic, 7.0, 7)):
        frame = principal_frame(rows[:PRINCIPAL_SAMPLE_ROWS])
        assert frame.axes.shape == (7, axes)  # a line: one axis, the rest is null space
        np.testing.assert_allclose(frame.axes.T @ frame.axes, np.eye(axes), atol=1e-12)
        assert frame.participation_ratio == pytest.approx(expected, rel=0.2)
    assert principal_frame(np.ones((3, 4))).participation_ratio == 4.0  # no variance


@pytest.mark.parametrize("shape", [(256, 7), (40, 100)])  # d × d and rows × rows Grams
def test_the_effective_dimension_without_the_axes_is_the_frames(shape):
    rows = np.random.RandomState(1).normal(size=shape) * np.linspace(1.0, 4.0, shape[1])
    assert participation_ratio(rows) == principal_frame(rows).participation_ratio
    # (Σλ)²/Σλ² of the covariance eigenvalues, to rounding (tr G² = Σλ², n·d ε relative)
    centred = rows - rows.mean(axis=0)
    eigenvalues = np.linalg.eigvalsh(centred.T @ centred)
    expected = eigenvalues.sum() ** 2 / (eigenvalues ** 2).sum()
    assert participation_ratio(rows) == pytest.approx(expected, rel=1e-12)
    assert participation_ratio(np.ones((3, 4))) == 4.0


@pytest.mark.parametrize("scale", [1e-90, 1e-70, 1e90])  # the Gram ~s², its squares ~s⁴
def test_the_effective_dimension_is_scale_free_where_the_grams_squares_would_not_be(scale):
    # Hypothesis found rows [[1.5e-90], [0]]: ‖G‖² underflowed to 0 (ZeroDivisionError in
    # RandomFourierFeatures' auto fit). Scaling the rows by s scales the Gram by s², which
    # the ratio does not see: the scaled rows' value is the unscaled one's to rounding.
    rows = np.random.RandomState(2).normal(size=(64, 5)) * np.linspace(1.0, 3.0, 5)
    expected = participation_ratio(rows)
    assert participation_ratio(rows * scale) == pytest.approx(expected, rel=1e-12)
    assert principal_frame(rows * scale).participation_ratio == pytest.approx(expected, rel=1e-12)
    assert participation_ratio(np.array([[1.50963612e-90], [0.0]])) == 1.0
    # Rows near 1e-200 have a Gram that is itself 0 in float64: "no variance", d.
    assert participation_ratio(rows * 1e-200) == 5.0


def _pixels_that_vary_later(seed=0):
    # Like raw digits: columns that are constant in the first half of the rows vary in the
    # second, so the first half's frame has fewer axes than the whole sample's.
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(200, 10)) * np.linspace(1.0, 3.0, 10)
    X[:100, 7:] = 0.0
    return X


def test_completed_axes_keep_the_parts_axes_and_add_the_wholes_variance_outside_them():
    X = _pixels_that_vary_later()
    part, whole = principal_frame(X[:100]).axes, principal_frame(X).axes
    assert part.shape[1] == 7 and whole.shape[1] == 10
    axes = completed_axes(part, X, whole.shape[1])
    assert axes.shape == (10, 10)
    np.testing.assert_array_equal(axes[:, :7], part)  # the scored axes, unchanged
    np.testing.assert_allclose(axes.T @ axes, np.eye(10), atol=1e-12)
    # the added axes are the whole sample's principal axes outside the part's span: here
    # in the three columns that vary only in the second half, largest variance first
    extra = axes[:, 7:]
    np.testing.assert_allclose(extra[:7], 0.0, atol=1e-12)
    centred = X - X.mean(axis=0)
    outside = centred - centred @ part @ part.T
    variances = np.sum((outside @ extra) ** 2, axis=0)
    assert np.all(np.diff(variances) < 0)
    np.testing.assert_allclose(outside.T @ outside @ extra, extra * variances, rtol=0,
                               atol=1e-9 * variances[0])  # eigenvectors, to rounding
    np.testing.assert_array_equal(completed_axes(whole, X, 4), whole[:, :4])  # fewer: a prefix


def test_completed_axes_are_none_where_rounding_would_choose_them():
    X = _pixels_that_vary_later()
    X[100:, 7:] = np.random.RandomState(1).normal(size=(100, 1))  # three equal new columns
    X[100:, 8] = X[100:, 7] * -1.0
    part = principal_frame(X[:100]).axes
    assert completed_axes(part, X, part.shape[1] + 1) is not None  # one new direction
    assert completed_axes(part, X, part.shape[1] + 2) is None  # then a null space
    wide = np.random.RandomState(2).normal(size=(20, 30))  # d above the rows
    assert completed_axes(principal_frame(wide[:10]).axes, wide, 15) is None


@pytest.mark.parametrize("shape", [(256, 8), (100, 300)])
def test_principal_frame_moves_only_by_rounding_when_the_data_do(shape):
    # Features that are constant or duplicated make eigenvalues equal (0, or twice the same):
    # their eigenvectors are whatever rounding makes them, so the frame leaves them out; the
    # axes it keeps move by a few hundred ulps at most when the data move by one.
    rng = np.random.RandomState(0)
    n, d = shape
    X = rng.normal(size=(n, d)) * np.linspace(1.0, 3.0, d)
    X[:, 1] = 5.0                      # constant
    X[:, 2] = X[:, 3] = X[:, 4]        # duplicated
    frame = principal_frame(X)
    moved = principal_frame(X * (1.0 + 1e-15 * rng.normal(size=X.shape)))
    assert frame.axes.shape == moved.axes.shape
    assert frame.axes.shape[1] <= min(n - 1, d - 3)  # no null or duplicate directions
    # A kept axis moves by ≲ ε‖C‖/gap, gap ≥ GAP·λ₁ (GAP = 1e-8): here the gaps are wide.
    np.testing.assert_allclose(moved.axes, frame.axes, rtol=0, atol=1e-11)
    np.testing.assert_allclose(frame.axes.T @ frame.axes, np.eye(frame.axes.shape[1]),
                               atol=1e-12)


def test_auto_takes_the_principal_axes_on_low_dimensional_data_and_orf_otherwise():
    rng = np.random.RandomState(0)
    low = rng.normal(size=(500, 3)) @ rng.normal(size=(3, 30))
    high = rng.normal(size=(500, 30))
    chosen = {name: RandomFourierFeatures(n_components=64, random_state=0).fit(X)
              for name, X in (("low", low), ("high", high))}
    assert chosen["low"].structure_ == "principal"
    assert chosen["low"].effective_dimension_ <= AUTO_MAX_EFFECTIVE_DIMENSION
    assert chosen["high"].structure_ == "orthogonal"
    assert chosen["high"].effective_dimension_ > AUTO_MAX_EFFECTIVE_DIMENSION
    # Monte Carlo sampling: ORF, without reading the data.
    mc = RandomFourierFeatures(sampling="mc", n_components=64, random_state=0).fit(low)
    assert mc.structure_ == "orthogonal" and mc.effective_dimension_ is None


def test_the_fit_reads_at_most_the_sample_rows(monkeypatch):
    seen = []
    original = principal_frame

    def spy(rows):
        seen.append(rows.shape)
        return original(rows)

    monkeypatch.setattr("kernelmaps.maps.fourier.principal_frame", spy)
    X = np.random.RandomState(0).normal(size=(1000, 3))
    rff = RandomFourierFeatures(n_components=8, random_state=0)
    rff.fit(X)
    # structure="auto" scores its candidates with the sample's first half's axes; the whole
    # sample's are computed only for a "principal" kept (as here: d_eff 3).
    assert rff.structure_ == "principal"
    assert seen == [(PRINCIPAL_SAMPLE_ROWS // 2, 3), (PRINCIPAL_SAMPLE_ROWS, 3)]
    state = np.random.RandomState(0)
    drawn = rff._fit_sample_indices(1000, 3, state)
    assert len(drawn) == len(set(drawn)) == PRINCIPAL_SAMPLE_ROWS and drawn.max() < 1000
    before = state.get_state()[1].copy()
    np.testing.assert_array_equal(rff._fit_sample_indices(100, 3, state), np.arange(100))
    np.testing.assert_array_equal(state.get_state()[1], before)  # nothing drawn
    assert RandomFourierFeatures(sampling="mc")._fit_sample_indices(1000, 3, state) is None
    assert RandomFourierFeatures("laplacian")._fit_sample_indices(1000, 3, state) is None
    assert _principal.PRINCIPAL_SAMPLE_ROWS == 256


def test_principal_beats_orf_on_data_of_low_effective_dimension():
    # The measured gain (docs/random_features.md), on a small case: wine, standardised.
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    X = StandardScaler().fit_transform(load_wine().data)
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    kernel = get_kernel("rbf", gamma=1.0 / np.median(sq[np.triu_indices(len(X), 1)]))
    K = kernel(X)

    def error(structure, sampling):
        return np.mean([np.linalg.norm((lambda Z: Z @ Z.T)(RandomFourierFeatures(
            kernel, structure=structure, sampling=sampling, output="cos_sin",
            n_components=1024, random_state=seed).fit_transform(X)) - K) for seed in range(3)])

    assert error("principal", "qmc") < 0.85 * error("orthogonal", "mc")


# ---------------------------------------------------------------------------- extension point
class _NormalisedDense(Projection):
    """A toy projection with a derived attribute (rebuilt by __init__, never passed in)."""

    array_names = ("weights",)

    def __init__(self, weights):
        self.weights = weights
        self.column_norms = np.linalg.norm(np.asarray(weights), axis=0)  # derived

    def project_into(self, X_block, out):
        np.matmul(X_block, self.weights.astype(out.dtype, copy=False), out=out)

    def project_device(self, xp, X_block, out=None, bias=None):
        result = X_block @ self.weights
        return result if bias is None else result + bias


def _toy_draw(request: FrequencyRequest) -> Frequencies:
    omega = request.density.sample(request.n_features, request.n_frequencies,
                                   request.random_state)
    return Frequencies(_NormalisedDense(np.ascontiguousarray(omega.T)))


@pytest.fixture
def toy_structure():
    structure = register_structure(Structure("toy", _toy_draw, isotropic_only=False,
                                             projection_types=(_NormalisedDense,)))
    yield structure
    del STRUCTURES["toy"]


def test_a_registered_structure_is_usable_everywhere(toy_structure):
    X = np.random.RandomState(0).normal(size=(30, 4))
    rff = RandomFourierFeatures("laplacian", structure="toy", n_components=32,
                                random_state=0).fit(X)
    assert isinstance(rff.projection_, _NormalisedDense)
    assert rff.n_features_out_for(4) == rff.transform(X).shape[1] == 32
    assert rff.projection_.nbytes == rff.projection_.weights.nbytes
    assert "laplacian" in RandomFourierFeatures.approximated_kernels("toy")
    # float32: the arrays are cast, the derived attribute rebuilt from them.
    rff32 = sklearn.clone(rff).fit(X.astype(np.float32))
    assert rff32.projection_.column_norms.dtype == np.float32
    # The device move rebuilds from the declared arrays only (torch on CPU).
    torch = pytest.importorskip("torch")
    xp, device = namespace_and_device(torch.zeros(1, dtype=torch.float64))
    moved = rff.projection_.to_device(xp, device)
    assert isinstance(moved.weights, torch.Tensor) and moved.weights.device == device
    # A user's projection class is not trusted by kernelmaps.io.load.
    assert not any("_NormalisedDense" in name for name in trusted_types())
    # compare lists it (registered after kernelmaps.evaluate was imported).
    try:
        assert "toy" in evaluate.methods_for(get_kernel("laplacian"))
    finally:
        evaluate.METHODS.pop("toy", None)
        evaluate.registry._SYNCED_STRUCTURES.discard("toy")


def test_registering_needs_projection_classes_and_a_new_name():
    with pytest.raises(TypeError, match="Projection subclasses"):
        register_structure(Structure("bad", _toy_draw, projection_types=(dict,)))
    with pytest.raises(ValueError, match="already registered"):
        register_structure(STRUCTURES["iid"])


def test_builtin_structures_are_registered_in_one_place_in_listing_order():
    # The package registers BUILTIN_STRUCTURES where it is assembled (maps/__init__.py);
    # no module registers one as a side effect of being imported.
    assert list(STRUCTURES)[:len(BUILTIN_STRUCTURES)] == [
        "iid", "orthogonal", "structured", "fastfood", "quadrature", "principal"]
    assert all(STRUCTURES[s.name] is s for s in BUILTIN_STRUCTURES)
    maps_dir = Path(kernelmaps.maps.__file__).parent
    callers = sorted(
        path.name for path in Path(kernelmaps.__file__).parent.rglob("*.py")
        if any(line.lstrip().startswith("register_structure(")
               for line in path.read_text(encoding="utf-8").splitlines()))
    assert callers == ["__init__.py"]
    assert "register_structure(_structure)" in (maps_dir / "__init__.py").read_text(
        encoding="utf-8")


def test_the_compare_registry_reads_the_structures():
    rbf = get_kernel("rbf")
    names = {name for name, method in evaluate.METHODS.items()
             if method.supports(rbf)
             and isinstance(method.build(rbf, 8, 0, 3), RandomFourierFeatures)}
    assert len(names) == len(STRUCTURES)  # one method per registered structure
    for name in names:
        method = evaluate.METHODS[name]
        rff = method.build(rbf, 8, 0, 3)
        assert method.kernels == RandomFourierFeatures.approximated_kernels(rff.structure)
        for n_components, d in ((37, 6), (1000, 784), (3, 1)):
            fitted = method.build(rbf, n_components, 0, d).fit(
                np.random.RandomState(0).normal(size=(3, d)))
            assert method.n_features_out(rbf, n_components, d) == fitted.n_features_out_
    assert evaluate.METHODS["nystroem"].n_features_out(rbf, 10, 3) is None  # known at fit


def test_approximated_kernels_follow_the_spectral_densities():
    every = RandomFourierFeatures.approximated_kernels("iid")
    assert every == {"rbf", "laplacian", "matern", "student"}
    assert RandomFourierFeatures.approximated_kernels("orthogonal") == every - {"laplacian"}
    assert RandomFourierFeatures.approximated_kernels() == every  # "auto" falls back to iid
