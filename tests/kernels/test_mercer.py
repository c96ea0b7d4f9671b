"""The Mercer check judged against the rounding error of the kernel's evaluation.

Both sides on scikit-learn's bundled data sets, unscaled (wine's proline is ~10³, so
γ‖x‖² is far above 1 and the Gaussian kernel's rounding far above ε) and standardised:
every Mercer kernel passes at the median-heuristic scale × 2^[−4..4]; sigmoid and an
asymmetric callable fail, naming the offending pair. The declared bounds are checked to be
bounds (float32 evaluations against float64 ones of the same inputs, with hypothesis) and
to be what the check uses (perturbations just above a bound fail, just below pass). Run
under ``OPENBLAS_CORETYPE=Sandybridge`` and ``=Prescott`` as well: nothing here depends on
the BLAS kernels. (``kernelmaps check-kernel`` on the same data sets:
tests/cli/test_check_kernel.py.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import datasets
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

from kernelmaps.evaluate import median_heuristic
from kernelmaps.kernels import KERNELS, Kernel, LinearKernel, RBFKernel, check_mercer, get_kernel

DATASETS = ("iris", "wine", "breast_cancer", "digits", "diabetes")
NON_NEGATIVE = {"chi2", "additive_chi2", "additive_chi2_psd", "skewed_chi2"}
NOT_MERCER = {"sigmoid", "additive_chi2"}
MERCER = sorted({KERNELS[name].name for name in KERNELS} - NOT_MERCER)
#: The kernels whose scale parameter the median heuristic sets (the others: see _kernel).
HEURISTIC = {"rbf", "laplacian", "chi2", "poly", "student", "matern"}
MULTIPLIERS = [2.0 ** e for e in range(-4, 5, 2)]


def load(name: str, scaled: bool) -> np.ndarray:
    X = getattr(datasets, f"load_{name}")().data
    return StandardScaler().fit_transform(X) if scaled else X


def _kernel(name: str, X: np.ndarray, multiplier: float) -> Kernel:
    """``name`` at its data-driven scale × ``multiplier`` (a narrower kernel for > 1)."""
    if name in HEURISTIC:
        try:
            choice = median_heuristic(X, name)
        except ValueError:  # most pairs identical: no median scale, the default one
            return get_kernel(name)
        value = choice.value * (multiplier if choice.name == "gamma" else 1.0 / multiplier)
        extra = {"nu": 0.5} if name == "matern" else {}  # the roughest Matérn: e^{−r}
        return get_kernel(name, **{choice.name: value}, **extra)
    if name == "exponential":  # exp(γ⟨x, y⟩) at γ = 1/max|⟨x, y⟩|: no overflow
        return get_kernel(name, gamma=min(1.0, multiplier) / float(np.abs(X @ X.T).max()))
    if name == "skewed_chi2":
        return get_kernel(name, skewedness=float(np.median(X[X > 0])) / multiplier)
    return get_kernel(name)


def _multipliers(name: str) -> list[float]:
    scaled = name in HEURISTIC or name in ("exponential", "skewed_chi2")
    return MULTIPLIERS if scaled else [1.0]


# --------------------------------------------------------------------------- Mercer kernels
@pytest.mark.parametrize("scaled", [False, True], ids=["unscaled", "scaled"])
@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("name", MERCER)
def test_mercer_kernels_pass_on_real_data(name, dataset, scaled):
    X = load(dataset, scaled)
    if name in NON_NEGATIVE:
        X = X - X.min(axis=0)
    for multiplier in _multipliers(name):
        kernel = _kernel(name, X, multiplier)
        report = check_mercer(kernel, X, max_samples=400, random_state=0)
        assert report.passed, f"{kernel!r} ×{multiplier}\n{report.summary()}"
        assert report.worst_pair is None and report.worst_eigenvector is None
        assert report.error_bound.startswith(f"{type(kernel).__name__}.rounding_error")


def test_gaussian_on_unscaled_wine_needs_the_bound():
    # The failure the fixed 10·ε threshold gave: wine's asymmetry is ~1e-12 of max|K|,
    # thousands of ε, and within the rbf kernel's bound γ(d+3)ε(2|x|ᵀ|y| + ‖x‖² + ‖y‖²).
    X = load("wine", scaled=False)
    report = check_mercer(get_kernel("rbf"), X)
    assert report.passed, report.summary()
    assert report.max_asymmetry > 100 * np.finfo(np.float64).eps
    assert report.asymmetry_ratio <= 1.0


# --------------------------------------------------------------------------- non-Mercer
@pytest.mark.parametrize("scaled", [False, True], ids=["unscaled", "scaled"])
@pytest.mark.parametrize("dataset", DATASETS)
def test_sigmoid_fails_on_real_data_naming_the_points(dataset, scaled):
    X = load(dataset, scaled)
    gamma = median_heuristic(X, "sigmoid").value
    for multiplier, coef0 in ((1.0, -1.0), (4.0, -1.0), (1.0, 1.0)):
        kernel = get_kernel("sigmoid", gamma=gamma * multiplier, coef0=coef0)
        report = check_mercer(kernel, X, max_samples=400, random_state=0)
        assert not report.passed and report.is_symmetric
        assert report.min_eigenvalue < -report.tolerance
        # The named points are indefinite on their own, beyond the rounding of their
        # entries: a pair (or one point, k(x, x) < 0) where a 2×2 witness exists.
        points = X[report.sample_indices[list(report.witness)]]
        minor = kernel.evaluate(points, points)
        rounding = kernel.rounding_error(points, points, minor).sum(axis=1).max()
        assert np.linalg.eigvalsh(minor)[0] < -rounding
        if report.worst_pair is not None:
            assert report.witness == tuple(sorted(set(report.worst_pair)))
    # At the median scale with c₀ = −1 a witness pair exists on every data set.
    report = check_mercer(get_kernel("sigmoid", gamma=gamma, coef0=-1.0), X, max_samples=400,
                          random_state=0)
    assert report.worst_pair is not None, report.summary()
    assert "worst offending pair of sample points" in report.summary()


def _asymmetric(feature: int):
    """k(x, y) = exp(−|x|²)(1 + xᵀy) + 0.1 x_f: asymmetric through the last term."""
    def kernel(A, B):
        return np.exp(-(A * A).sum(axis=1))[:, None] * (1.0 + A @ B.T) \
            + 0.1 * A[:, feature, None]
    return kernel


@pytest.mark.parametrize("scaled", [False, True], ids=["unscaled", "scaled"])
@pytest.mark.parametrize("dataset", DATASETS)
def test_asymmetric_callable_fails_naming_the_pair(dataset, scaled):
    X = load(dataset, scaled)
    # The feature with the most distinct values (digits' first pixel is always 0).
    feature = int(np.argmax([np.unique(column).size for column in X.T]))
    report = check_mercer(_asymmetric(feature), X, max_samples=400, random_state=0)
    assert not report.passed and not report.is_symmetric
    assert report.error_bound.startswith("none declared by CallableKernel")
    i, j = report.worst_pair
    x, y = X[report.sample_indices[[i, j]]]
    k = _asymmetric(feature)
    gap = abs(float(k(x[None], y[None])[0, 0] - k(y[None], x[None])[0, 0]))
    assert gap > report.max_error * 2  # the named pair really is asymmetric, beyond E
    assert report.asymmetry_ratio > 10


def test_a_callable_without_a_bound_gets_the_documented_default():
    # scikit-learn's rbf_kernel as a user's callable on unscaled wine: asymmetric by ~1e-12
    # of max|K|, within √ε · max|K|.
    X = load("wine", scaled=False)
    report = check_mercer(lambda A, B: rbf_kernel(A, B, gamma=1 / X.shape[1]), X)
    assert report.passed, report.summary()
    assert report.max_error == pytest.approx(np.sqrt(np.finfo(np.float64).eps))
    assert "sqrt(eps)·max|K| (float64)" in report.summary()


# --------------------------------------------------------------------------- the thresholds
class _AsymmetricAbove(RBFKernel):
    """The rbf kernel plus ``scale`` × its own bound, antisymmetric (k_ij − k_ji = 2·scale·E)."""

    def __init__(self, gamma, scale):
        super().__init__(gamma=gamma)
        self.scale = scale

    def evaluate_into(self, X, Y, out):
        super().evaluate_into(X, Y, out)
        bound = super().rounding_error(X, Y, out.copy())
        out += self.scale * bound * np.sign(np.subtract.outer(np.arange(len(X)),
                                                              np.arange(len(Y))))


@pytest.mark.parametrize("scale, symmetric", [(0.4, True), (3.0, False)])
def test_symmetry_is_judged_at_the_declared_bound(scale, symmetric):
    # |k_ij − k_ji| = 2·scale·E_ij + what rounding gives (< 0.2·(E_ij + E_ji) on wine).
    X = load("wine", scaled=False)
    gamma = median_heuristic(X, "rbf").value
    report = check_mercer(_AsymmetricAbove(gamma, scale), X)
    assert report.is_symmetric is symmetric, report.summary()


class _Shifted(LinearKernel):
    """The linear kernel minus ``shift`` on the diagonal of a square evaluation."""

    def __init__(self, shift):
        self.shift = shift

    def evaluate_into(self, X, Y, out):
        super().evaluate_into(X, Y, out)
        out.flat[:: out.shape[1] + 1] -= self.shift


@pytest.mark.parametrize("fraction, passed", [(0.5, True), (2.0, False)])
def test_psd_is_judged_at_the_row_sum_of_the_bound(fraction, passed):
    # The linear kernel on digits has rank <= 64 < n: its smallest eigenvalue is 0 up to
    # rounding. Lowering it by a fraction of the tolerance passes; by twice, fails.
    X = load("digits", scaled=True)[:300]
    plain = check_mercer(get_kernel("linear"), X)
    assert plain.passed and abs(plain.min_eigenvalue) < 0.1 * plain.tolerance
    assert plain.rounding_tolerance <= plain.n_samples * plain.max_error  # (n · max E)
    report = check_mercer(_Shifted(fraction * plain.tolerance), X)
    assert report.passed is passed, report.summary()
    assert report.tolerance == pytest.approx(plain.tolerance, rel=1e-6)


def test_summary_states_the_bound_and_the_thresholds():
    X = load("iris", scaled=False)
    lines = check_mercer(get_kernel("rbf", gamma=0.1), X).summary().splitlines()
    assert lines[1].startswith("  rounding bound E: RBFKernel.rounding_error (float64)")
    assert "max |K_ij - K_ji| / (E_ij + E_ji) =" in lines[2]
    assert "largest row sum of E" in lines[3] and "eigensolver" in lines[3]
    summary32 = check_mercer(get_kernel("rbf", gamma=0.1), X.astype(np.float32)).summary()
    assert "RBFKernel.rounding_error (float32)" in summary32


class _BadBound(RBFKernel):
    def rounding_error(self, X, Y, K):
        return np.zeros(3)


def test_a_malformed_declared_bound_is_a_clear_error():
    with pytest.raises(ValueError, match=r"_BadBound\.rounding_error must return"):
        check_mercer(_BadBound(gamma=1.0), np.eye(4))


def test_every_registered_kernel_declares_a_bound():
    X = np.abs(np.random.RandomState(0).normal(size=(5, 3)))
    for name in sorted(KERNELS):
        kernel = get_kernel(name)
        K = kernel.evaluate(X, X)
        bound = kernel.rounding_error(X, X, K)
        assert bound is not None and bound.shape == K.shape and (bound >= 0).all(), name


# --------------------------------------------------------------------------- properties
@st.composite
def samples(draw):
    """Points at any scale and offset (unscaled features are large and far from 0)."""
    n, d = draw(st.integers(2, 12)), draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2 ** 16))
    scale = 10.0 ** draw(st.floats(-2, 4))
    offset = 10.0 ** draw(st.floats(-1, 4)) * draw(st.sampled_from([0.0, 1.0]))
    X = np.random.RandomState(seed).uniform(-1, 1, size=(n, d)) * scale + offset
    if draw(st.booleans()):  # a repeated point: K singular, still PSD
        X[-1] = X[0]
    return X


@settings(max_examples=60, deadline=None)
@given(X=samples(), name=st.sampled_from(sorted(KERNELS)),
       multiplier=st.sampled_from(MULTIPLIERS))
def test_declared_bounds_bound_the_float32_error(X, name, multiplier):
    # The float32 values of the float32 inputs against float64 values of the same inputs:
    # |K32 − k| <= E32 and |K64 − k| <= E64, so |K32 − K64| <= E32 + E64.
    if name in NON_NEGATIVE:
        X = np.abs(X)
    X32 = X.astype(np.float32)
    X64 = X32.astype(np.float64)
    kernel = _kernel(KERNELS[name].name, X64, multiplier)
    with np.errstate(over="ignore", invalid="ignore"):
        K32 = kernel.evaluate(X32, X32)
    if not np.isfinite(K32).all():  # float32 overflow: no values to bound
        return
    K64 = kernel.evaluate(X64, X64)
    error = np.abs(K32.astype(np.float64) - K64)
    bound = kernel.rounding_error(X32, X32, K32) + kernel.rounding_error(X64, X64, K64)
    assert (error <= bound).all(), (name, float((error / np.maximum(bound, 1e-300)).max()))


@pytest.mark.parametrize("name, X", [
    # Tightly clustered points near 6708 in float32: the median heuristic's γ is huge, and
    # the rbf exponent −γ(‖x‖² + ‖y‖² − 2xᵀy) keeps no correct digit (k̂ may be 0 where k
    # is 0.08).
    ("rbf", 6707.92 + np.random.RandomState(0).uniform(-0.02, 0.02, size=(7, 3))),
    # One feature at γ × 16: values underflow float32, exactly 0 where k is 1e-49.
    ("chi2", np.random.RandomState(0).uniform(0.3, 5.3, size=(9, 1))),
    ("laplacian", np.random.RandomState(0).uniform(0.3, 5.3, size=(9, 1))),
])
def test_declared_bounds_hold_through_underflow_and_lost_digits(name, X):
    X32 = X.astype(np.float32)
    X64 = X32.astype(np.float64)
    kernel = _kernel(name, X64, 16.0)
    K32, K64 = kernel.evaluate(X32, X32), kernel.evaluate(X64, X64)
    bound = kernel.rounding_error(X32, X32, K32) + kernel.rounding_error(X64, X64, K64)
    assert (np.abs(K32.astype(np.float64) - K64) <= bound).all()


@settings(max_examples=60, deadline=None)
@given(X=samples(), name=st.sampled_from(MERCER), multiplier=st.sampled_from(MULTIPLIERS),
       dtype=st.sampled_from([np.float64, np.float32]))
def test_mercer_kernels_pass_at_any_scale(X, name, multiplier, dtype):
    if name in NON_NEGATIVE:
        X = np.abs(X)
    kernel = _kernel(name, X, multiplier)
    with np.errstate(over="ignore", invalid="ignore"):
        values = kernel.evaluate(X.astype(dtype), X.astype(dtype))
    if not np.isfinite(values).all():
        return
    report = check_mercer(kernel, X.astype(dtype))
    assert report.passed, f"{kernel!r}\n{report.summary()}"


def test_without_a_witness_pair_the_report_names_a_witness_set():
    # Saturated sigmoid on standardised digits: k(x, x) ≈ 1 and |k(x, y)| <= 1, so no 2×2
    # minor is indefinite; a larger set of points is.
    X = load("digits", scaled=True)
    gamma = 4.0 * median_heuristic(X, "sigmoid").value
    report = check_mercer(get_kernel("sigmoid", gamma=gamma, coef0=-1.0), X, max_samples=400,
                          random_state=0)
    assert not report.passed and report.worst_pair is None
    assert 2 < len(report.witness) < report.n_samples
    assert "no 2×2 witness; the Gram matrix of sample points [" in report.summary()


def test_a_precomputed_matrix_is_checked_with_the_default_bound():
    X = load("wine", scaled=True)
    K = get_kernel("rbf", gamma=0.1)(X)
    report = check_mercer("precomputed", K, max_samples=100, random_state=0)
    assert report.passed and report.n_samples == 100
    assert report.error_bound.startswith("none declared by PrecomputedKernel")
    broken = K.copy()
    broken[3, 7] += 1e-3  # asymmetric far beyond √ε·max|K|
    report = check_mercer("precomputed", broken)
    assert not report.is_symmetric and set(report.worst_pair) == {3, 7}
    with pytest.raises(ValueError, match="square kernel matrix"):
        check_mercer("precomputed", X)
