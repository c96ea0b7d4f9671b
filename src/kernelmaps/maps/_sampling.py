r"""Where the random numbers of a random-feature map come from: Monte Carlo or randomised QMC.

A map's frequencies are functions of points of the unit cube (inverse transforms, see
:meth:`kernelmaps.kernels.SpectralDensity.from_uniforms`). With ``sampling="mc"`` the points
are independent uniform draws; with ``"qmc"`` (scrambled Sobol') or ``"halton"`` (scrambled
Halton) they are a randomised low-discrepancy set from :mod:`scipy.stats.qmc`: every point is
still uniform on the cube (so each frequency keeps its law and the features stay unbiased),
while the set fills the cube far more evenly than independent draws (Owen, 1997; Avron,
Sindhwani, Yang & Mahoney, JMLR 2016). Scrambling seeds come from the map's
``random_state``, so a fit stays reproducible.

Sobol' sets are balanced for a power-of-two number of points; a map asking for another count
takes the first points of the next power of two (each point stays uniform, so this costs a
little evenness, never unbiasedness).
"""

from __future__ import annotations

import inspect
from functools import cache

import numpy as np
from scipy import special

from kernelmaps.kernels.spectral import open_unit_interval

__all__ = ["QMC_SAMPLINGS", "SAMPLINGS", "radii", "self_normalised_chi2", "uniform_points"]

#: Every value of a map's ``sampling`` parameter, and the randomised QMC ones among them.
SAMPLINGS = ("mc", "qmc", "halton")
QMC_SAMPLINGS = ("qmc", "halton")


#: Digits the Sobol' scrambling randomises beyond the log2(n) the net needs: scrambling costs
#: O(dims·bits²) (measured 4.5 ms for 65 coordinates at SciPy's default 30 bits — five
#: times ORF's whole fit at d = 64 — and 0.9 ms at 16 bits); below them a uniform jitter
#: makes every point exactly uniform.
_SOBOL_EXTRA_BITS = 8


@cache
def _seed_keyword(engine: type) -> str:
    # SciPy >= 1.15 calls the seed `rng`; older versions `seed`. Either takes a Generator.
    # (inspect.signature costs ~50 µs: once per engine class.)
    return "rng" if "rng" in inspect.signature(engine).parameters else "seed"


@cache
def _qmc_module():
    # scipy.stats (0.3–0.5 s to import) is loaded only when a map first asks for QMC points,
    # so that `import kernelmaps` stays light (tests/test_import_cost.py); cached, because
    # even a repeated `from scipy.stats import qmc` costs 1.5 ms (SciPy's lazy loader).
    from scipy.stats import qmc

    return qmc


def _qmc_engine(sampling: str, dims: int, random_state: np.random.RandomState,
                bits: int | None = None):
    qmc = _qmc_module()
    engine = qmc.Sobol if sampling == "qmc" else qmc.Halton
    generator = np.random.default_rng(random_state.randint(0, 2**32, size=4, dtype=np.uint64))
    keyword = _seed_keyword(engine)
    options = {keyword: generator} if bits is None else {keyword: generator, "bits": bits}
    return engine(dims, scramble=True, **options)


def uniform_points(sampling: str, size: int, dims: int,
                   random_state: np.random.RandomState) -> np.ndarray:
    """``size`` points of the unit cube ``[0, 1)^dims``, shape ``(size, dims)``.

    Parameters
    ----------
    sampling : {"mc", "qmc", "halton"}
        Independent uniform draws, scrambled Sobol' or scrambled Halton points.
    size, dims : int
    random_state : RandomState
        Source of the draws (``"mc"``) or of the scrambling.
    """
    if sampling == "mc":
        return random_state.uniform(size=(size, dims))
    if sampling not in QMC_SAMPLINGS:
        raise ValueError(f"sampling must be one of {SAMPLINGS}; got {sampling!r}.")
    if size == 0:
        return np.empty((0, dims))
    if sampling == "qmc":
        # The first `size` points of a balanced 2^m set (see the module docstring), scrambled
        # in m + 8 digits (an LMS scramble plus a digital shift makes each point's digits
        # uniform); the digits below them are independent uniform noise, so every point is
        # exactly uniform on the cube, as with SciPy's full 30-bit scrambling, at a fraction
        # of its cost.
        m = max(0, int(size - 1).bit_length())
        bits = min(64, m + _SOBOL_EXTRA_BITS)
        points = _qmc_engine(sampling, dims, random_state, bits).random_base2(m)[:size]
        points += random_state.uniform(size=points.shape) * 2.0 ** -bits
        return points
    return _qmc_engine(sampling, dims, random_state).random(size)


def radii(density, n_features: int, size: int, random_state: np.random.RandomState,
          sampling: str) -> np.ndarray:
    """``size`` draws of ‖ω‖ for an isotropic density in dimension ``n_features``.

    ``"mc"``: the density's own draws (:meth:`~kernelmaps.kernels.SpectralDensity.sample_radii`,
    so Monte Carlo maps keep their numbers); otherwise the radial inverse CDF of a
    one-dimensional randomised QMC set, i.e. radii stratified over the radial law, in the
    order of the sequence (consecutive points are spread, so every block of frequencies gets
    a spread of radii).
    """
    if sampling == "mc":
        return density.sample_radii(n_features, size, random_state)
    return density.radius_ppf(n_features, uniform_points(sampling, size, 1, random_state)[:, 0])


def self_normalised_chi2(dof: float, size: int, random_state: np.random.RandomState,
                         sampling: str) -> tuple[np.ndarray, np.ndarray]:
    r"""``size`` squared radii x and weights :math:`w_i = x_i^{-1}/\sum_j x_j^{-1}` with
    :math:`E[\sum_i w_i g(x_i)] = E[g(\chi^2_{\mathrm{dof}})]` for every g, exactly.

    Size-biased draws :math:`x \sim \chi^2_{\mathrm{dof}+2}` weighted by :math:`1/x` estimate
    a :math:`\chi^2_{\mathrm{dof}}` expectation (:math:`E_{\chi^2_{m+2}}[(m/x)\,h(x)] =
    E_{\chi^2_m}[h]`), and make :math:`w_i x_i` the same for every i — what makes a set of
    frequencies' weighted second moment exact. Normalising the weights to sum 1 (an explicit
    map has no centre term) would bias a plain ratio estimator; it does not bias this one,
    because the points are drawn from the law :math:`q(x) \propto S(x) H(x)`,
    :math:`S = \sum_j 1/x_j`, H any joint law of χ²_{dof+2} marginals: then
    :math:`E_q[\sum_i (1/x_i)/S \cdot g(x_i)] = \sum_i E_H[g(x_i)/x_i]/E_H[S] =
    E_{\chi^2_{\mathrm{dof}}}[g]`. Drawing from q: an index J uniformly, :math:`x_J \sim
    \chi^2_{\mathrm{dof}}`, the others from H given :math:`x_J` (the conditional-resampling
    construction of iterated sampling-importance resampling).

    ``"mc"``: H independent draws. Otherwise H is a stratified (Latin hypercube) set in
    random order — one point in each of ``size`` equiprobable strata of χ²_{dof+2} — so
    :math:`S` and every sum of the x are nearly exact; given :math:`x_J`, the other points
    fill the other strata.
    """
    a = dof / 2.0 + 1.0  # the proposal χ²_{dof+2} is Gamma(a, 2)
    target = 2.0 * special.gammaincinv(dof / 2.0, open_unit_interval(random_state.uniform()))
    if sampling == "mc":
        x = 2.0 * random_state.gamma(a, size=size)
        x[random_state.randint(size)] = target
    else:
        jitter = random_state.uniform(size=size)
        stratum = min(int(size * special.gammainc(a, target / 2.0)), size - 1)
        x = 2.0 * special.gammaincinv(a, open_unit_interval((np.arange(size) + jitter) / size))
        x[stratum] = target
        x = x[random_state.permutation(size)]
    weights = 1.0 / x
    weights /= weights.sum()
    return x, weights
