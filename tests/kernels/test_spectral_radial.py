"""The inverse transforms of the spectral densities (kernels/spectral.py): radial CDFs and
their inverses, checked against the densities' own random draws, against numerical
integration, and against each other; the frequencies built from uniforms have the law p."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from kernelmaps.kernels import GaussianScaleMixtureDensity, get_kernel
from kernelmaps.kernels.spectral import _bessel_survival, invert_cdf

#: One kernel per isotropic density, with non-default parameters.
ISOTROPIC = {
    "rbf": get_kernel("rbf", gamma=0.3),
    "matern-0.5": get_kernel("matern", nu=0.5, length_scale=1.7),
    "matern-1.5": get_kernel("matern", nu=1.5),
    "matern-2.5": get_kernel("matern", nu=2.5, length_scale=0.4),
    "student": get_kernel("student", alpha=2.5),
}
DIMENSIONS = (1, 2, 3, 5, 16, 100, 784)


@pytest.mark.parametrize("d", DIMENSIONS)
@pytest.mark.parametrize("name", ISOTROPIC)
def test_radial_cdf_is_the_law_of_the_sampled_radii(name, d):
    # The density's own draws (sample_radii: products of χ² draws) against the derived CDF.
    # Fixed seeds, so the test is deterministic; a wrong law (a wrong degree of freedom or
    # scale) gives p-values far below 1e-6 at 20,000 draws.
    density = ISOTROPIC[name].spectral_density(d)
    radii = density.sample_radii(d, 20_000, np.random.RandomState(d))
    assert stats.kstest(radii, lambda r: density.radius_cdf(d, r)).pvalue > 1e-4


@pytest.mark.parametrize("d", DIMENSIONS)
@pytest.mark.parametrize("name", ISOTROPIC)
def test_radial_ppf_inverts_the_cdf(name, d):
    density = ISOTROPIC[name].spectral_density(d)
    q = np.random.RandomState(0).uniform(size=500)
    q = np.concatenate([q, [1e-12, 1e-6, 0.5, 1 - 1e-6, 1 - 1e-12]])
    radii = density.radius_ppf(d, q)
    assert np.all(np.isfinite(radii)) and np.all(radii > 0)
    assert np.all(np.diff(radii[np.argsort(q)]) >= 0)  # increasing
    # In probability, to 1e-11: the inverses (scipy's incomplete-gamma/beta inverses,
    # Newton on the Bessel law) are accurate to a few ulps of r, and the heavy Cauchy-like
    # tail of the Matérn-½ radius (d = 1) turns that into ~1e-11 of q near q = 1.
    np.testing.assert_allclose(density.radius_cdf(d, radii), q, rtol=0, atol=1e-10)


@pytest.mark.parametrize("d", [1, 2, 3, 7, 64, 784, 3000])
def test_student_radial_cdf_equals_numerical_integration(d):
    # P(‖ω‖ ≤ r) = 1 − E_C[exp(−α r²/2C)], C ~ χ²_d, integrated over C's quantiles.
    density = GaussianScaleMixtureDensity(alpha=2.5)
    for r in np.quantile(density.sample_radii(d, 2000, np.random.RandomState(1)),
                         [0.001, 0.1, 0.5, 0.9, 0.999]):
        exponent = density.alpha * r * r / 2.0
        with warnings.catch_warnings():  # quad may report roundoff at 1e-13
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            survival = integrate.quad(lambda v, e=exponent: np.exp(-e / stats.chi2.ppf(v, d)), 0,
                                      1, epsabs=1e-13, epsrel=1e-12, limit=500)[0]
        # quad's own tolerance is 1e-12; the recurrence is accurate to a few ulps.
        assert abs((1.0 - survival) - density.radius_cdf(d, r)) < 1e-11


def test_student_radial_law_has_the_matern_closed_forms():
    # The survival function g_ν(u) = 1 − F(r), u = √α r: g_{1/2}(u) = e^{-u},
    # g_{3/2}(u) = (1 + u) e^{-u}, g_{5/2}(u) = (1 + u + u²/3) e^{-u}; the recurrence adds
    # positive terms, so relative accuracy holds deep in the tail (a few ulps per step).
    u = np.linspace(0.01, 300, 200)
    for nu, closed in [(0.5, np.exp(-u)), (1.5, (1 + u) * np.exp(-u)),
                       (2.5, (1 + u + u * u / 3) * np.exp(-u))]:
        np.testing.assert_allclose(_bessel_survival(nu, u)[0], closed, rtol=1e-13)
    density = GaussianScaleMixtureDensity(alpha=4.0)
    np.testing.assert_allclose(density.radius_cdf(3, u / 2.0), 1 - (1 + u) * np.exp(-u),
                               rtol=0, atol=4e-16)  # 1 − g: absolute, a few ulps of 1


def test_student_radial_law_does_not_overflow_in_high_dimension():
    # u up to thousands (e^{-u} underflows) and ν = d/2 up to 5,000 (K_ν overflows).
    density = GaussianScaleMixtureDensity(alpha=1.0)
    for d in (2000, 10_000):
        q = np.array([1e-9, 0.3, 0.999999])
        radii = density.radius_ppf(d, q)
        assert np.all(np.isfinite(radii))
        np.testing.assert_allclose(density.radius_cdf(d, radii), q, rtol=0, atol=1e-13)


@pytest.mark.parametrize("d", [1, 4, 33])
@pytest.mark.parametrize("name", [*ISOTROPIC, "laplacian"])
def test_frequencies_from_uniforms_have_the_law_of_the_draws(name, d):
    kernel = get_kernel("laplacian", gamma=0.7) if name == "laplacian" else ISOTROPIC[name]
    density = kernel.spectral_density(d)
    rng = np.random.RandomState(d)
    from_uniforms = density.from_uniforms(d, rng.uniform(size=(20_000,
                                                               density.uniform_dims(d))))
    drawn = density.sample(d, 20_000, rng)
    assert from_uniforms.shape == drawn.shape
    # One coordinate (every law here is symmetric in its coordinates) and the norms.
    assert stats.ks_2samp(from_uniforms[:, 0], drawn[:, 0]).pvalue > 1e-4
    if density.isotropic:
        assert stats.ks_2samp(np.linalg.norm(from_uniforms, axis=1),
                              np.linalg.norm(drawn, axis=1)).pvalue > 1e-4


def test_exact_zero_and_one_coordinates_stay_finite():
    # A randomised QMC point may carry an exact 0; the inverse CDFs clip into (0, 1).
    for name in ISOTROPIC:
        density = ISOTROPIC[name].spectral_density(3)
        U = np.zeros((2, density.uniform_dims(3)))
        U[1] = 1.0
        assert np.isfinite(density.from_uniforms(3, U)).all()
        assert np.isfinite(density.radius_ppf(3, np.array([0.0, 1.0]))).all()


@settings(max_examples=40, deadline=None)
@given(scale=st.floats(0.01, 100.0), shape=st.floats(0.2, 20.0),
       q=st.lists(st.floats(1e-9, 1 - 1e-9), min_size=1, max_size=20))
def test_invert_cdf_solves_any_gamma_cdf(scale, shape, q):
    q = np.array(q)
    law = stats.gamma(shape, scale=scale)
    x = invert_cdf(lambda v: (law.cdf(v), law.pdf(v)), q, np.full(len(q), scale))
    np.testing.assert_allclose(law.cdf(x), q, rtol=0, atol=1e-12)
