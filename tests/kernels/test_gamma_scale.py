"""gamma="scale" / "auto" (issue 18 item 4) and kernel aliases in the estimators' ``kernel=``.

scikit-learn's definition (sklearn.svm.SVC, ``_gamma``): ``1 / (n_features * X.var())`` with the
variance over all entries, ``X.multiply(X).mean() - X.mean() ** 2`` for sparse X, and 1 when
the variance is 0; ``"auto"`` is ``1 / n_features``. Every estimator and kernel that takes
``gamma`` resolves it once on the whole training array.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, load_wine
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from kernelmaps.kernels import check_mercer, gamma_value, get_kernel
from kernelmaps.maps import (
    Nystroem,
    PolynomialCountSketch,
    PolynomialKernelMap,
    RandomFourierFeatures,
    RandomMaclaurin,
    RBFSampler,
    TensorSRHT,
)
from kernelmaps.models import (
    FeatureRidge,
    KernelCCA,
    KernelFisherDiscriminant,
    KernelMeanDistance,
    KernelRidge,
    KernelRidgeClassifier,
)
from tests._rounding import assert_equal_to_rounding

EPS32 = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)


def sklearn_gamma(X, y=None) -> float:
    """scikit-learn's own value: SVC(gamma="scale")._gamma after fit."""
    X = np.asarray(X) if not sp.issparse(X) else X
    y = np.arange(X.shape[0]) % 2 if y is None else y
    return float(SVC(gamma="scale", max_iter=1).fit(X, y)._gamma)


def formula(X) -> float:
    variance = X.multiply(X).mean() - X.mean() ** 2 if sp.issparse(X) else X.var()
    return 1.0 / (X.shape[1] * variance) if variance != 0 else 1.0


@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True)


@pytest.fixture(scope="module")
def digits():
    return load_digits(return_X_y=True)


# Every estimator taking gamma, built with gamma=g; γ used is kernel_'s after fit.
ESTIMATORS = {
    "Nystroem": lambda g: Nystroem(gamma=g, n_components=30, random_state=0),
    "RBFSampler": lambda g: RBFSampler(gamma=g, n_components=30, random_state=0),
    "RandomFourierFeatures": lambda g: RandomFourierFeatures(gamma=g, n_components=30,
                                                             random_state=0),
    "RandomMaclaurin": lambda g: RandomMaclaurin(gamma=g, n_components=30, random_state=0),
    "TensorSRHT": lambda g: TensorSRHT(gamma=g, n_components=30, random_state=0),
    "PolynomialCountSketch": lambda g: PolynomialCountSketch(gamma=g, n_components=30,
                                                             random_state=0),
    "PolynomialKernelMap": lambda g: PolynomialKernelMap(gamma=g),
    "KernelRidge": lambda g: KernelRidge(kernel="rbf", gamma=g),
    "KernelRidgeClassifier": lambda g: KernelRidgeClassifier(gamma=g),
    "KernelFisherDiscriminant": lambda g: KernelFisherDiscriminant(gamma=g),
    "KernelMeanDistance": lambda g: KernelMeanDistance(gamma=g),
}
NEEDS_Y = {"KernelRidge", "KernelRidgeClassifier", "KernelFisherDiscriminant"}


def fitted_gamma(name, gamma, X, y):
    estimator = ESTIMATORS[name](gamma)
    estimator.fit(X, y) if name in NEEDS_Y else estimator.fit(X)
    return estimator.kernel_.gamma


# ------------------------------------------------------------------------ the definition
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_scale_is_sklearns_svc_gamma_on_unscaled_wine(name, wine):
    X, y = wine  # features from 0.1 to 1680: Var X is dominated by proline
    expected = sklearn_gamma(X, y)
    # Same formula, same float64 variance: only the last division may round differently.
    assert fitted_gamma(name, "scale", X, y) == pytest.approx(expected, rel=4 * EPS64)
    assert fitted_gamma(name, "auto", X, y) == pytest.approx(1.0 / X.shape[1], rel=EPS64)


@pytest.mark.parametrize("name", ["Nystroem", "RBFSampler", "KernelRidge",
                                  "KernelMeanDistance"])
def test_scale_on_sparse_digits_is_sklearns(name, digits):
    X, y = digits
    Xs = sp.csr_matrix(X)
    expected = sklearn_gamma(Xs, y)
    assert expected == pytest.approx(formula(Xs), rel=4 * EPS64)
    assert fitted_gamma(name, "scale", Xs, y) == pytest.approx(expected, rel=4 * EPS64)
    # Sparse E[X²] − E[X]² and dense Var X are the same number up to cancellation in the
    # former: E[X²] ≈ 2·Var X on digits, so a few ulps of E[X²].
    assert fitted_gamma(name, "scale", X, y) == pytest.approx(expected, rel=16 * EPS64)


@pytest.mark.parametrize("name", ["Nystroem", "RandomFourierFeatures", "KernelRidge"])
def test_float32_data_keeps_float32_and_gets_sklearns_gamma(name, digits):
    X, y = digits
    X32 = X.astype(np.float32)
    estimator = ESTIMATORS[name]("scale")
    estimator.fit(X32, y)
    # Var X is taken in X's dtype, as scikit-learn's RBFSampler does (SVC converts to
    # float64): numpy's pairwise float32 sum of 1.2e5 entries errs by ≲ log2(n)·eps32.
    assert estimator.kernel_.gamma == pytest.approx(sklearn_gamma(X32, y), rel=32 * EPS32)
    out = estimator.kernel_(X32[:5]) if name == "KernelRidge" else estimator.transform(X32[:5])
    assert out.dtype == np.float32


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_scale_on_constant_data_is_one_as_in_svc(name):
    X = np.full((12, 3), 2.5)  # Var X == 0
    y = np.arange(12) % 2
    assert sklearn_gamma(X, y) == 1.0
    if name == "KernelFisherDiscriminant":
        # No direction separates identical rows: a clear error, which names the kernel the
        # fit resolved (γ = 1, as SVC's) rather than failing inside the variance.
        with pytest.raises(ValueError, match=r"same mean.*RBFKernel\(gamma=1\.0"):
            fitted_gamma(name, "scale", X, y)
        return
    assert fitted_gamma(name, "scale", X, y) == 1.0


def test_gamma_value_doctest_numbers():
    X = np.array([[0.0, 2.0], [2.0, 0.0]])
    assert gamma_value("scale", X) == 0.5
    assert gamma_value(0.25, X) == 0.25 and gamma_value(None, X) is None


# ------------------------------------------------------------------------ kernels
def test_kernel_with_scale_resolves_once_and_refuses_evaluation_before(wine):
    X, y = wine
    kernel = get_kernel("rbf", gamma="scale")
    with pytest.raises(ValueError, match=r"gamma='scale'.*resolve\(X_train\)"):
        kernel(X[:5])
    resolved = kernel.resolve(X)
    assert resolved.gamma == pytest.approx(sklearn_gamma(X, y), rel=4 * EPS64)
    assert kernel.gamma == "scale"  # the original is untouched
    assert resolved.resolve(X[:3]) is resolved  # a number is never re-resolved
    expected = np.exp(-resolved.gamma * ((X[:4, None] - X[None, :4]) ** 2).sum(-1))
    # Expanded squared distances of wine (‖x‖² ≈ 10⁶) cancel to about d·eps·‖x‖²·γ.
    assert_equal_to_rounding(resolved(X[:4]), expected, ulps=1e4)


@pytest.mark.parametrize("name", ["rbf", "laplacian", "poly", "sigmoid", "exponential", "chi2"])
def test_every_kernel_with_gamma_takes_scale_and_auto(name, digits):
    X = digits[0] / 16.0
    scale = get_kernel(name, gamma="scale").resolve(X)
    assert scale.gamma == pytest.approx(formula(X), rel=4 * EPS64)
    assert get_kernel(name, gamma="auto").resolve(X).gamma == 1.0 / 64


def test_a_kernel_object_with_scale_in_an_estimator_is_resolved_on_all_of_x(wine):
    X, y = wine
    expected = sklearn_gamma(X, y)
    nystroem = Nystroem(get_kernel("rbf", gamma="scale"), n_components=20, random_state=0)
    assert nystroem.fit(X).kernel_.gamma == pytest.approx(expected, rel=4 * EPS64)
    assert nystroem.kernel.gamma == "scale"  # parameters are not changed by fit
    model = KernelRidge(kernel=get_kernel("laplacian", gamma="scale")).fit(X, y)
    assert model.kernel_.gamma == pytest.approx(expected, rel=4 * EPS64)


def test_check_mercer_resolves_on_x(wine):
    X, _ = wine
    report = check_mercer(get_kernel("rbf", gamma="scale"), X)
    assert report.passed


# ------------------------------------------------------------------------ bad strings
@pytest.mark.parametrize("make", [
    lambda: Nystroem(gamma="scael"), lambda: RBFSampler(gamma="scael"),
    lambda: RandomFourierFeatures(gamma="scael"), lambda: KernelRidge(gamma="scael"),
    lambda: KernelFisherDiscriminant(gamma="scael"), lambda: TensorSRHT(gamma="scael"),
])
def test_misspelt_gamma_is_refused_with_did_you_mean(make):
    X = np.random.RandomState(0).normal(size=(10, 3))
    estimator = make()
    with pytest.raises(InvalidParameterError, match=r"gamma.*did you mean 'scale'"):
        estimator.fit(X, np.arange(10) % 2)


def test_misspelt_gamma_in_a_kernel_is_refused_with_did_you_mean():
    with pytest.raises(ValueError, match=r"did you mean 'auto'"):
        get_kernel("rbf", gamma="atuo")


# ------------------------------------------------------------------------ defaults
def test_defaults_sklearn_drop_ins_keep_sklearns_non_sklearn_use_scale():
    assert Nystroem().gamma is None and RBFSampler().gamma == 1.0
    assert PolynomialCountSketch().gamma == 1.0 and KernelRidge().gamma is None
    for cls in (RandomFourierFeatures, RandomMaclaurin, TensorSRHT, PolynomialKernelMap,
                KernelRidgeClassifier, KernelFisherDiscriminant, KernelMeanDistance):
        assert cls().gamma == "scale", cls.__name__


def test_fisher_default_works_on_unscaled_digits(digits):
    from sklearn.model_selection import cross_val_score

    X, y = digits
    # With γ = 1/d the kernel matrix of unscaled digits is nearly the identity (0.134
    # before); γ = "scale" puts γ‖x − y‖² at order one (0.97 measured with 3 folds).
    assert cross_val_score(KernelFisherDiscriminant(), X, y, cv=3).mean() > 0.9


def test_default_maps_of_feature_ridge_and_cca_use_scale(wine):
    X, y = wine
    expected = sklearn_gamma(X, y)
    assert FeatureRidge(random_state=0).fit(X, y).kernel_.gamma == pytest.approx(
        expected, rel=4 * EPS64)
    cca = KernelCCA(n_components=1, random_state=0).fit(X[:, :6], X[:, 6:])
    assert cca.kernel_.gamma == pytest.approx(sklearn_gamma(X[:, :6], y), rel=4 * EPS64)
    assert cca.y_kernel_.gamma == pytest.approx(sklearn_gamma(X[:, 6:], y), rel=4 * EPS64)


def test_rff_scale_default_is_ignored_for_kernels_without_gamma():
    X = np.random.RandomState(0).normal(size=(20, 3))
    rff = RandomFourierFeatures("matern", kernel_params={"nu": 1.5}, n_components=8,
                                random_state=0).fit(X)
    assert rff.kernel_.name == "matern"
    with pytest.raises(ValueError, match="gamma does not apply"):
        RandomFourierFeatures("matern", gamma=0.5, n_components=8).fit(X)
    rff = RandomFourierFeatures(get_kernel("rbf", sigma=2.0), n_components=8).fit(X)
    assert rff.kernel_.sigma == 2.0


# ------------------------------------------------------------------------ kernel aliases
@pytest.mark.parametrize("make", [
    lambda k: Nystroem(k, gamma=0.1, n_components=20, random_state=0),
    lambda k: RandomFourierFeatures(k, gamma=0.1, n_components=20, random_state=0),
    lambda k: KernelRidge(kernel=k, gamma=0.1),
])
def test_kernel_alias_gaussian_equals_rbf(make):
    X = np.random.RandomState(0).normal(size=(30, 4))
    y = X[:, 0]
    rbf, gaussian = make("rbf"), make("gaussian")
    if isinstance(rbf, KernelRidge):
        a, b = rbf.fit(X, y).predict(X), gaussian.fit(X, y).predict(X)
    else:
        a, b = rbf.fit_transform(X), gaussian.fit_transform(X)
    assert gaussian.kernel_ == rbf.kernel_
    # Same kernel, same draws, same arrays: the same computation.
    np.testing.assert_array_equal(a, b)


def test_misspelt_kernel_in_an_estimator_gets_did_you_mean():
    with pytest.raises(InvalidParameterError, match=r"did you mean 'gaussian'"):
        Nystroem("gausian").fit(np.ones((5, 2)))


# ------------------------------------------------------------------------ Dask
@pytest.mark.parametrize("name", ["Nystroem", "RBFSampler", "RandomFourierFeatures",
                                  "TensorSRHT", "KernelRidge-nystrom", "KernelRidgeClassifier"])
def test_dask_fit_takes_the_variance_of_all_of_x(name, digits):
    da = pytest.importorskip("dask.array")
    X, y = digits
    Xd, yd = da.from_array(X, chunks=(400, 64)), da.from_array(y, chunks=400)
    if name.startswith("KernelRidge"):
        cls = KernelRidge if name == "KernelRidge-nystrom" else KernelRidgeClassifier
        make = lambda: cls(kernel="rbf", gamma="scale", solver="nystrom",  # noqa: E731
                           n_components=50, random_state=0)
        in_memory, on_dask = make().fit(X, y), make().fit(Xd, yd)
    else:
        in_memory, on_dask = ESTIMATORS[name]("scale").fit(X), ESTIMATORS[name]("scale").fit(Xd)
    # Dask's chunked two-pass variance (float64) against numpy's pairwise one: the two sums
    # of 1.2e5 terms agree to a few ulps of the sum of squares, ≈ 2·Var X here.
    assert on_dask.kernel_.gamma == pytest.approx(in_memory.kernel_.gamma, rel=64 * EPS64)
    assert on_dask.kernel_.gamma == pytest.approx(sklearn_gamma(X, y), rel=64 * EPS64)
    assert on_dask.gamma == "scale"  # the parameter is not replaced by the fit


def test_dask_fit_resolves_a_kernel_object_on_all_of_x(digits):
    da = pytest.importorskip("dask.array")
    X, y = digits
    Xd = da.from_array(X, chunks=(400, 64))
    kernel = get_kernel("rbf", gamma="scale")
    nystroem = Nystroem(kernel, n_components=20, random_state=0).fit(Xd)
    # Reason as above: chunked against pairwise variance, a few ulps.
    assert nystroem.kernel_.gamma == pytest.approx(sklearn_gamma(X, y), rel=64 * EPS64)
    assert nystroem.kernel is kernel


def test_a_kernel_registered_after_import_is_a_valid_kernel_name():
    from kernelmaps.kernels import KERNELS, Kernel, register_kernel

    @register_kernel
    class DoubledLinear(Kernel):  # 2⟨x, y⟩
        name = "test_doubled_linear"

        def evaluate_into(self, X, Y, out):
            np.matmul(X, 2.0 * Y.T, out=out)

    try:
        X = np.random.RandomState(0).normal(size=(15, 3))
        model = Nystroem("test_doubled_linear", n_components=15, random_state=0).fit(X)
        Z = model.transform(X)
        # Z Zᵀ reproduces the rank-3 Gram matrix of all 15 points up to the pseudo-inverse's
        # rounding, κ·n·eps of the scale with κ ≲ 1e2 on its range and n = 15: 1e4 ulps.
        assert_equal_to_rounding(Z @ Z.T, 2.0 * X @ X.T, ulps=1e4)
    finally:
        del KERNELS["test_doubled_linear"]


# ------------------------------------------------------------------------ sample weights
def test_weighted_scale_equals_repeated_rows(wine):
    X, y = wine
    weights = np.tile([1.0, 2.0, 3.0], len(y) // 3 + 1)[: len(y)]
    repeated = np.repeat(np.arange(len(y)), weights.astype(int))
    by_weight = KernelRidge(kernel="rbf", gamma="scale").fit(X, y, sample_weight=weights)
    by_rows = KernelRidge(kernel="rbf", gamma="scale").fit(X[repeated], y[repeated])
    # Weighted two-pass variance against numpy's pairwise one on the repeated rows: a few
    # ulps of the sum of squares (wine's Var X is dominated by proline, no cancellation).
    assert by_weight.kernel_.gamma == pytest.approx(by_rows.kernel_.gamma, rel=64 * EPS64)
    assert by_rows.kernel_.gamma == pytest.approx(sklearn_gamma(X[repeated], y[repeated]),
                                                  rel=4 * EPS64)
    sparse = KernelRidge(kernel="rbf", gamma="scale").fit(sp.csr_matrix(X), y,
                                                          sample_weight=weights)
    # Sparse E_w[X²] − μ²: E[X²] ≈ 1.6·Var X on wine, so a few ulps more.
    assert sparse.kernel_.gamma == pytest.approx(by_rows.kernel_.gamma, rel=64 * EPS64)


def test_weighted_scale_on_dask_equals_in_memory(wine):
    da = pytest.importorskip("dask.array")
    X, y = wine
    weights = np.linspace(0.5, 2.0, len(y))
    make = lambda: KernelRidge(kernel="rbf", gamma="scale", solver="nystrom",  # noqa: E731
                               n_components=30, random_state=0)
    in_memory = make().fit(X, y, sample_weight=weights)
    on_dask = make().fit(da.from_array(X, chunks=(50, 13)), da.from_array(y, chunks=50),
                         sample_weight=da.from_array(weights, chunks=50))
    # Same two-pass weighted formula, sums in another order (chunks): a few ulps.
    assert on_dask.kernel_.gamma == pytest.approx(in_memory.kernel_.gamma, rel=64 * EPS64)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_scale_on_non_finite_data_names_x_not_gamma(bad):
    X = np.ones((4, 3))
    X[0, 0] = bad
    with pytest.raises(ValueError, match=r"gamma='scale'.*X contains NaN or infinity"):
        get_kernel("rbf", gamma="scale").resolve(X)
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        gamma_value("scale", X)
