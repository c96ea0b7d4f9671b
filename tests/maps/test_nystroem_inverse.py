"""Nystroem.inverse_transform: pre-images learned by kernel ridge regression, as KernelPCA."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.decomposition import PCA, KernelPCA
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import Nystroem as SklearnNystroem
from sklearn.pipeline import make_pipeline

import kernelmaps.maps._preimage as preimage_module
from kernelmaps import Nystroem
from kernelmaps.kernels import DegenerateKernelWarning


@pytest.fixture
def X(rng):
    return rng.uniform(size=(60, 4))


@pytest.mark.parametrize("rows", ["landmarks", "all"])
def test_with_every_row_a_landmark_the_pre_images_are_kernel_pcas(X, rows):
    # KernelPCA keeping every component preserves the feature-space distances, which are
    # those of the Nyström features when every row is a landmark: the same ridge system.
    n = X.shape[0]
    kpca = KernelPCA(n_components=n, kernel="rbf", gamma=0.7, fit_inverse_transform=True,
                     alpha=0.05, eigen_solver="dense").fit(X)
    ny = Nystroem(gamma=0.7, n_components=n, random_state=0, fit_inverse_transform=True,
                  alpha=0.05, inverse_fit_rows=rows).fit(X)
    expected = kpca.inverse_transform(kpca.transform(X))
    np.testing.assert_allclose(ny.inverse_transform(ny.transform(X)), expected, atol=1e-6)
    assert ny.dual_coef_.shape == (n, 4) and ny.X_transformed_fit_.shape == (n, n)


def test_nystroem_pca_denoises_as_kernel_pca_at_a_fraction_of_the_landmarks(rng):
    from sklearn.datasets import load_digits

    digits = load_digits().data[:600] / 16
    noisy = digits + rng.normal(scale=0.25, size=digits.shape)
    kpca = KernelPCA(n_components=24, kernel="rbf", gamma=0.02, fit_inverse_transform=True,
                     alpha=0.1, eigen_solver="dense").fit(noisy)
    kpca_error = np.mean((kpca.inverse_transform(kpca.transform(noisy)) - digits) ** 2)
    pipeline = make_pipeline(Nystroem(gamma=0.02, n_components=100, random_state=0,
                                      fit_inverse_transform=True, alpha=0.1),
                             PCA(n_components=24)).fit(noisy)
    error = np.mean((pipeline.inverse_transform(pipeline.transform(noisy)) - digits) ** 2)
    noise = np.mean((noisy - digits) ** 2)
    assert error < 0.5 * noise          # it denoises
    assert error < 1.1 * kpca_error     # about as well as KernelPCA


def test_default_has_no_inverse_as_scikit_learn_and_says_which_parameter(X):
    ny = Nystroem(n_components=10, random_state=0).fit(X)
    assert not hasattr(ny, "inverse_transform")
    assert not hasattr(SklearnNystroem(n_components=10).fit(X), "inverse_transform")
    assert not hasattr(make_pipeline(Nystroem(n_components=10), PCA(2)).fit(X),
                       "inverse_transform")
    with pytest.raises(NotFittedError, match=r"Nystroem\(fit_inverse_transform=True\)"):
        ny.inverse_transform(ny.transform(X))
    with pytest.raises(ValueError, match="fit_inverse_transform=False"):  # also a ValueError
        ny.inverse_transform(ny.transform(X))
    # Default parameters and fitted attributes are scikit-learn's: nothing new is fitted.
    assert not hasattr(ny, "dual_coef_") and not hasattr(ny, "X_transformed_fit_")
    theirs = SklearnNystroem(n_components=10, random_state=0).fit(X)
    np.testing.assert_allclose(ny.transform(X), theirs.transform(X), atol=1e-12)


def test_switched_on_after_fit_says_to_refit_and_a_refit_without_drops_the_map(X):
    ny = Nystroem(n_components=10, random_state=0).fit(X)
    ny.set_params(fit_inverse_transform=True)
    with pytest.raises(NotFittedError, match="fit it again"):
        ny.inverse_transform(ny.transform(X))
    with pytest.raises(NotFittedError):
        Nystroem(fit_inverse_transform=True).inverse_transform(X)
    ny.fit(X)
    assert ny.inverse_transform(ny.transform(X)).shape == X.shape
    ny.set_params(fit_inverse_transform=False).fit(X)
    assert not hasattr(ny, "dual_coef_")


def test_pre_images_reconstruct_the_data(X):
    ny = Nystroem(gamma=1.0, n_components=40, random_state=0, fit_inverse_transform=True,
                  alpha=1e-4).fit(X)
    X_back = ny.inverse_transform(ny.transform(X))
    # Nearly exact for the fit rows with a small ridge; a larger ridge shrinks them.
    assert np.mean((X_back - X) ** 2) < 1e-2 * np.var(X)
    ny_smooth = Nystroem(gamma=1.0, n_components=40, random_state=0,
                         fit_inverse_transform=True, alpha=10.0).fit(X)
    assert np.mean((ny_smooth.inverse_transform(ny.transform(X)) - X) ** 2) > \
        10 * np.mean((X_back - X) ** 2)


def test_all_rows_in_blocks_equals_one_block(X, monkeypatch):
    params = dict(gamma=0.5, n_components=15, random_state=0, fit_inverse_transform=True,
                  alpha=0.01)
    whole = Nystroem(**params).fit(X)
    monkeypatch.setattr(preimage_module, "_INVERSE_BLOCK_ROWS", 7)
    blocks = Nystroem(**params).fit(X)
    # Sums in another order: equal to the rounding of the (ridge-conditioned) solve.
    np.testing.assert_allclose(blocks.dual_coef_, whole.dual_coef_, rtol=1e-7)


def test_float32_sparse_and_feature_names(X):
    params = dict(n_components=15, random_state=0, fit_inverse_transform=True, alpha=0.01)
    ny64 = Nystroem(**params).fit(X)
    ny32 = Nystroem(**params).fit(X.astype(np.float32))
    assert ny32.dual_coef_.dtype == np.float32
    back32 = ny32.inverse_transform(ny32.transform(X.astype(np.float32)))
    assert back32.dtype == np.float32
    np.testing.assert_allclose(back32, ny64.inverse_transform(ny64.transform(X)), atol=1e-4)
    nysp = Nystroem(**params).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(nysp.inverse_transform(nysp.transform(sp.csr_matrix(X))),
                               ny64.inverse_transform(ny64.transform(X)), atol=1e-10)
    np.testing.assert_array_equal(ny64.get_feature_names_out(),
                                  Nystroem(n_components=15, random_state=0).fit(X)
                                  .get_feature_names_out())


def test_works_after_set_output_pandas(X):
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    pipeline = make_pipeline(Nystroem(n_components=20, random_state=0,
                                      fit_inverse_transform=True, alpha=0.01),
                             PCA(n_components=3)).set_output(transform="pandas").fit(frame)
    projected = pipeline.transform(frame)
    assert isinstance(projected, pd.DataFrame)
    back = pipeline.inverse_transform(projected)
    plain = make_pipeline(Nystroem(n_components=20, random_state=0,
                                   fit_inverse_transform=True, alpha=0.01),
                          PCA(n_components=3)).fit(X)
    np.testing.assert_allclose(np.asarray(back), plain.inverse_transform(plain.transform(X)),
                               atol=1e-10)


def test_bad_uses_are_refused_with_the_reason(X):
    K = X @ X.T
    with pytest.raises(ValueError, match="precomputed"):
        Nystroem(kernel="precomputed", n_components=10, fit_inverse_transform=True).fit(K)
    with pytest.raises(ValueError, match="non-negative"):
        Nystroem(kernel="chi2", n_components=10, fit_inverse_transform=True).fit(X)
    ny = Nystroem(n_components=10, random_state=0, fit_inverse_transform=True).fit(X)
    with pytest.raises(ValueError, match="expects 10"):
        ny.inverse_transform(X)
    with pytest.raises(ValueError, match="alpha"):
        Nystroem(fit_inverse_transform=True, alpha=-1.0).fit(X)
    with pytest.raises(ValueError, match="inverse_fit_rows"):
        Nystroem(fit_inverse_transform=True, inverse_fit_rows="some").fit(X)


def test_a_singular_pre_image_system_is_solved_by_least_squares_without_a_warning(monkeypatch):
    # Every fit row a target and a nearly constant kernel (tiny gamma): alpha·G + K_nmᵀK_nm
    # is numerically singular. _linalg's one solver falls back to least squares there — the
    # minimum-norm pre-image map, asked for without its warning (the map warns about a
    # degenerate kernel itself) — and the pre-images stay finite.
    import kernelmaps.maps._preimage as preimage

    systems = []

    def spy(system, target, **kwargs):
        systems.append(system.copy())
        return preimage_solve(system, target, **kwargs)

    preimage_solve = preimage.solve_psd
    monkeypatch.setattr(preimage, "solve_psd", spy)
    X = np.random.RandomState(0).rand(60, 2)
    model = Nystroem(gamma=1e-6, n_components=30, fit_inverse_transform=True, alpha=0.1,
                     inverse_fit_rows="all", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        # the map's own warning about the kernel (issue 34: too small a gamma warns)
        warnings.simplefilter("ignore", DegenerateKernelWarning)
        model.fit(X)
    assert np.linalg.eigvalsh(systems[0]).min() <= 0  # not positive definite: least squares
    assert np.isfinite(model.inverse_transform(model.transform(X))).all()
