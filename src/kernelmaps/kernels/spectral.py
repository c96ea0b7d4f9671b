r"""Spectral measures of shift-invariant kernels, the laws random Fourier features sample.

By Bochner's theorem a continuous shift-invariant PSD kernel is
:math:`k(x - y) = k(0)\,\mathbb E_{\omega\sim p}[\cos\omega^\top(x-y)]`; each class here
is one such :math:`p` (Rahimi & Recht, 2007; Rasmussen & Williams, 2006, §4.2).

Besides random draws, every density maps points of the unit cube to frequencies by inverse
transforms (:meth:`SpectralDensity.from_uniforms`, :meth:`SpectralDensity.radius_ppf`), so
that randomised quasi-Monte Carlo points (scrambled Sobol', Halton) can replace uniform
random numbers: each point of a randomised QMC set is uniform on the cube, so each frequency
keeps the law :math:`p` and the features stay unbiased (Avron, Sindhwani, Yang & Mahoney,
JMLR 2016). The isotropic densities here are all Gaussian scale mixtures,
:math:`\omega = \sigma z` with :math:`z\sim\mathcal N(0, I)` and :math:`\sigma` a scalar
with its own law, and their radial laws (the laws of :math:`\|\omega\|`) are derived below,
each with its inverse CDF.

The distribution functions come from :mod:`scipy.special` (regularised incomplete gamma and
beta functions and their inverses, modified Bessel functions); :mod:`scipy.stats` is not
needed, which keeps ``import kernelmaps`` light.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from kernelmaps._docstrings import inherit_docstrings

__all__ = [
    "CauchyProductDensity",
    "GaussianDensity",
    "GaussianScaleMixtureDensity",
    "MultivariateTDensity",
    "SpectralDensity",
    "invert_cdf",
    "open_unit_interval",
]

#: Uniform coordinates are clipped into (0, 1) before an inverse CDF: a randomised QMC point
#: can carry an exact 0 in some coordinate (a probability-zero event for random numbers),
#: and the normal or Cauchy inverse CDF of 0 is infinite.
_LOWEST = np.finfo(np.float64).tiny
_HIGHEST = np.nextafter(1.0, 0.0)


def open_unit_interval(u: np.ndarray) -> np.ndarray:
    """``u`` clipped into the open interval (0, 1) (see :data:`_LOWEST`), as float64."""
    return np.clip(np.asarray(u, dtype=np.float64), _LOWEST, _HIGHEST)


def invert_cdf(cdf_and_pdf: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
               q: np.ndarray, start: np.ndarray, *, lower: float = 0.0,
               rtol: float = 4e-15, max_iter: int = 200) -> np.ndarray:
    r"""Solve :math:`F(x) = q` elementwise for an increasing CDF on :math:`(\text{lower}, \infty)`.

    Safeguarded Newton (Press et al., *Numerical Recipes*, ``rtsafe``): Newton steps from
    ``start`` while they stay inside the bracket known so far, bisection otherwise, so it
    converges for any continuous increasing :math:`F` (quadratically near the root). The
    upper end of the bracket is found by doubling ``start``.

    Parameters
    ----------
    cdf_and_pdf : callable
        ``x ↦ (F(x), F'(x))`` on arrays.
    q : ndarray
        Probabilities in (0, 1).
    start : ndarray
        First guesses, ``> lower``.
    lower : float, default=0.0
        Left end of the support.
    rtol : float, default=4e-15
        Stop when every step is below ``rtol·x``.
    max_iter : int, default=200

    Returns
    -------
    x : ndarray
        The quantiles.
    """
    q = np.asarray(q, dtype=np.float64)
    x = np.asarray(start, dtype=np.float64) + 0.0 * q
    unit = 1.0 + abs(lower)
    x = np.where(np.isfinite(x) & (x > lower), x, lower + unit)  # a usable first guess
    lo = np.full_like(x, lower)
    hi = x.copy()
    while True:  # the upper end: double the distance to `lower` until F(hi) >= q
        below = cdf_and_pdf(hi)[0] < q
        if not below.any():
            break
        lo = np.where(below, hi, lo)
        hi = np.where(below, lower + 2.0 * np.maximum(hi - lower, 1e-8 * unit), hi)
    for _ in range(max_iter):
        value, density = cdf_and_pdf(x)
        low_side = value < q
        lo = np.where(low_side, x, lo)
        hi = np.where(low_side, hi, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = x - (value - q) / density
        inside = np.isfinite(newton) & (newton > lo) & (newton < hi)
        step_to = np.where(inside, newton, 0.5 * (lo + hi))
        done = np.abs(step_to - x) <= rtol * np.abs(x)
        x = step_to
        if done.all():
            break
    return x

class SpectralDensity:
    r"""Spectral measure of a shift-invariant kernel, for random Fourier features.

    By Bochner's theorem :math:`k(x - y) = k(0)\,\mathbb E_{\omega\sim p}[\cos\omega^\top(x-y)]`
    for a probability density :math:`p`. ``scale`` is :math:`k(0)`; ``sample`` draws
    frequencies; for isotropic densities (:math:`p` depends on :math:`\|\omega\|` only)
    ``sample_radii`` draws :math:`\|\omega\|`, which orthogonal random features need
    (Yu et al., 2016): directions from orthogonal blocks, lengths from this law.

    Examples
    --------
    Bochner's theorem, checked by Monte Carlo for the Gaussian kernel's density:

    >>> import numpy as np
    >>> from kernelmaps.kernels import get_kernel
    >>> kernel = get_kernel("rbf", gamma=0.5)
    >>> density = kernel.spectral_density(n_features=2)
    >>> omega = density.sample(2, 100_000, np.random.RandomState(0))
    >>> x, y = np.array([[0.3, -0.2]]), np.array([[1.0, 0.4]])
    >>> estimate = density.scale * np.cos(omega @ (x - y)[0]).mean()
    >>> bool(abs(estimate - kernel(x, y)[0, 0]) < 0.01)  # Monte Carlo error ~ 1/√100000
    True
    """

    #: Whether p(ω) depends on ‖ω‖ only.
    isotropic: bool = True
    #: k(0), the total mass of the spectral measure.
    scale: float = 1.0
    #: Whether ω = σ z needs a random σ (a scale mixture) or σ is a constant (Gaussian).
    mixture: bool = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # The densities' overrides implement the contracts documented here.
        inherit_docstrings(cls)

    def sample(self, n_features: int, size: int, random_state: np.random.RandomState
               ) -> np.ndarray:
        """Draw frequencies from the density.

        Parameters
        ----------
        n_features : int
            The input dimension ``d``.
        size : int
            The number of frequencies.
        random_state : numpy.random.RandomState
            The generator drawn from.

        Returns
        -------
        ndarray of shape (size, n_features)
            The frequencies ω, one per row.
        """
        if not self.isotropic:  # pragma: no cover - overridden by non-isotropic densities
            raise NotImplementedError
        directions = random_state.normal(size=(size, n_features))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return directions * self.sample_radii(n_features, size, random_state)[:, None]

    def sample_radii(self, n_features: int, size: int, random_state: np.random.RandomState
                     ) -> np.ndarray:  # pragma: no cover - abstract
        """Draw lengths ‖ω‖ of frequencies (isotropic densities).

        Parameters
        ----------
        n_features : int
            The input dimension ``d``.
        size : int
            The number of lengths.
        random_state : numpy.random.RandomState
            The generator drawn from.

        Returns
        -------
        ndarray of shape (size,)
            The lengths.
        """
        raise NotImplementedError

    # ------------------------------------------------------------- inverse transforms
    def uniform_dims(self, n_features: int) -> int:
        """Count the coordinates of the unit cube one frequency takes in :meth:`from_uniforms`.

        Parameters
        ----------
        n_features : int
            The input dimension ``d``.

        Returns
        -------
        int
            ``n_features`` (one per coordinate of z), plus one for σ in a scale mixture.
        """
        return n_features + int(self.mixture)

    def from_uniforms(self, n_features: int, U: np.ndarray) -> np.ndarray:
        r"""Map points of the unit cube to frequencies, by inverse transforms.

        For the isotropic densities (Gaussian scale mixtures) a row
        :math:`u = (u_0, u_1, \dots, u_d)` gives :math:`\omega = \sigma(u_0)\,
        (\Phi^{-1}(u_1), \dots, \Phi^{-1}(u_d))` (no :math:`u_0` when σ is constant), so a
        row uniform on the cube gives a frequency of law :math:`p` exactly.

        Parameters
        ----------
        n_features : int
            The input dimension ``d``.
        U : ndarray of shape (size, uniform_dims(n_features))
            Points of the open unit cube (values at 0 or 1 are clipped inside).

        Returns
        -------
        ndarray of shape (size, n_features)
            The frequencies, one per row of ``U``.
        """
        U = open_unit_interval(U)
        if self.mixture:
            return special.ndtri(U[:, 1:]) * self.scale_ppf(U[:, 0])[:, None]
        return special.ndtri(U) * self.scale_ppf(np.full(1, 0.5))[0]

    def scale_ppf(self, q: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Evaluate the inverse CDF of σ in ω = σ z (a constant for the Gaussian).

        Parameters
        ----------
        q : ndarray
            Probabilities in (0, 1).

        Returns
        -------
        ndarray
            The σ at each probability, of ``q``'s shape.
        """
        raise NotImplementedError

    def radius_cdf(self, n_features: int, r: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Evaluate the CDF of ‖ω‖ (isotropic densities).

        Parameters
        ----------
        n_features : int
            The input dimension ``d``.
        r : ndarray
            Lengths.

        Returns
        -------
        ndarray
            :math:`P(\\|\\omega\\| \\le r)`, of ``r``'s shape.
        """
        raise NotImplementedError

    def radius_ppf(self, n_features: int, q: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Evaluate the inverse CDF of ‖ω‖, the law of :meth:`sample_radii`.

        Parameters
        ----------
        n_features : int
            The input dimension ``d``.
        q : ndarray
            Probabilities in (0, 1).

        Returns
        -------
        ndarray
            The lengths at each probability, of ``q``'s shape.
        """
        raise NotImplementedError


class GaussianDensity(SpectralDensity):
    r"""Normal frequencies ω ~ N(0, s² I), of the Gaussian kernel.

    The kernel is :math:`\exp(-s^2\|\delta\|^2/2)`.

    Parameters
    ----------
    std : float
        The standard deviation ``s`` of each coordinate.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import GaussianDensity
    >>> delta = np.array([0.5, -0.3])
    >>> omega = GaussianDensity(std=1.5).sample(2, 100_000, np.random.RandomState(0))
    >>> exact = np.exp(-1.5 ** 2 * (delta @ delta) / 2)
    >>> bool(abs(np.cos(omega @ delta).mean() - exact) < 0.01)
    True
    """

    def __init__(self, std: float) -> None:
        self.std = float(std)

    def sample(self, n_features, size, random_state):
        return self.std * random_state.normal(size=(size, n_features))

    def sample_radii(self, n_features, size, random_state):
        return self.std * np.sqrt(random_state.chisquare(n_features, size=size))

    def scale_ppf(self, q):
        return np.full(np.shape(q), self.std)

    def radius_cdf(self, n_features, r):
        # ‖ω‖ = s·χ_d: P(‖ω‖ ≤ r) = P(d/2, r²/2s²), the regularised lower incomplete gamma.
        return special.gammainc(n_features / 2.0, 0.5 * (np.asarray(r) / self.std) ** 2)

    def radius_ppf(self, n_features, q):
        return self.std * np.sqrt(2.0 * special.gammaincinv(n_features / 2.0,
                                                            open_unit_interval(q)))


class MultivariateTDensity(SpectralDensity):
    r"""Student t frequencies ω = z / (ℓ √(u/ν')), of the Matérn kernel with ν = ν'/2.

    Here z ~ N(0, I) and u ~ χ²_ν'. The Matérn spectral density is
    :math:`\propto (2\nu/\ell^2 + \|\omega\|^2)^{-(\nu + d/2)}`,
    a multivariate Student t with :math:`2\nu` degrees of freedom and scale :math:`1/\ell`,
    i.e. :math:`\omega = z\,/\,(\ell\sqrt{u/2\nu})` (Rasmussen & Williams, 2006, eq. 4.15).
    Its radius :math:`\|\omega\| = \chi_d/(\ell\sqrt{u/\nu'})` has
    :math:`\ell^2\|\omega\|^2/d = (\chi^2_d/d)/(\chi^2_{\nu'}/\nu')`, Snedecor's
    :math:`F(d, \nu')`, so :math:`P(\|\omega\|\le r) = F_{d,\nu'}(\ell^2 r^2/d)`.

    Parameters
    ----------
    dof : float
        The degrees of freedom ν' = 2ν.
    length_scale : float
        The kernel's length scale ℓ.

    Examples
    --------
    With 1 degree of freedom (ν = 1/2) the kernel is :math:`e^{-\|\delta\|/\ell}`:

    >>> import numpy as np
    >>> from kernelmaps.kernels import MultivariateTDensity
    >>> delta = np.array([0.5, -0.3])
    >>> density = MultivariateTDensity(dof=1.0, length_scale=2.0)
    >>> omega = density.sample(2, 100_000, np.random.RandomState(0))
    >>> exact = np.exp(-np.linalg.norm(delta) / 2.0)
    >>> bool(abs(np.cos(omega @ delta).mean() - exact) < 0.01)
    True
    """

    mixture = True

    def __init__(self, dof: float, length_scale: float) -> None:
        self.dof = float(dof)
        self.length_scale = float(length_scale)

    def _inverse_scales(self, size, random_state):
        return 1.0 / (self.length_scale * np.sqrt(random_state.chisquare(self.dof, size=size)
                                                  / self.dof))

    def sample(self, n_features, size, random_state):
        z = random_state.normal(size=(size, n_features))
        return z * self._inverse_scales(size, random_state)[:, None]

    def sample_radii(self, n_features, size, random_state):
        chi = np.sqrt(random_state.chisquare(n_features, size=size))
        return chi * self._inverse_scales(size, random_state)

    def scale_ppf(self, q):
        # σ = 1/(ℓ√(u/ν')) with u ~ χ²_ν': the inverse CDF of σ at q is the one of u at 1 − q.
        u = 2.0 * special.gammainccinv(self.dof / 2.0, open_unit_interval(q))
        return 1.0 / (self.length_scale * np.sqrt(u / self.dof))

    def radius_cdf(self, n_features, r):
        # Snedecor's F(d, ν'), see the class docstring.
        ratio = (self.length_scale * np.asarray(r)) ** 2 / n_features
        return special.fdtr(n_features, self.dof, ratio)

    def radius_ppf(self, n_features, q):
        ratio = special.fdtri(n_features, self.dof, open_unit_interval(q))
        return np.sqrt(n_features * ratio) / self.length_scale


class GaussianScaleMixtureDensity(SpectralDensity):
    r"""Gaussian scale-mixture frequencies, of the Student kernel 1/(α + ‖δ‖²).

    ω | s ~ N(0, 2s I) with s ~ Exponential(rate α), from
    :math:`1/(\alpha + r^2) = \int_0^\infty e^{-s\alpha} e^{-s r^2}\,ds
    = \tfrac1\alpha\,\mathbb E_{s\sim\mathrm{Exp}(\alpha)}[e^{-s r^2}]`: a mixture of
    Gaussians with total mass ``scale`` = 1/α.

    Parameters
    ----------
    alpha : float
        The kernel's α.

    Notes
    -----
    The radial law: :math:`\|\omega\|^2 = 2sC` with :math:`s\sim\mathrm{Exp}(\alpha)` and
    :math:`C\sim\chi^2_d` independent, so
    :math:`P(\|\omega\|\le r) = 1 - \mathbb E_C[e^{-\alpha r^2/2C}]`, and with
    :math:`\int_0^\infty x^{\nu-1}e^{-\beta/x-x/2}dx = 2(2\beta)^{\nu/2}K_\nu(\sqrt{2\beta})`
    (Gradshteyn & Ryzhik 3.471.9) at :math:`\nu = d/2`, :math:`\beta = \alpha r^2/2`:

    .. math::

        P(\|\omega\|\le r) = 1 - g_\nu(\sqrt\alpha\,r), \qquad
        g_\nu(u) = \frac{u^\nu K_\nu(u)}{2^{\nu-1}\Gamma(\nu)} .

    :math:`g_\nu` is a survival function, :math:`g_{1/2}(u) = e^{-u}`,
    :math:`g_{3/2}(u) = (1+u)e^{-u}` (the Matérn correlations), and from
    :math:`K_{\nu+1} = K_{\nu-1} + (2\nu/u)K_\nu`,

    .. math:: g_{\nu+1}(u) = g_\nu(u) + \frac{u^2}{4\nu(\nu-1)}\,g_{\nu-1}(u),

    a sum of positive terms, evaluated stably for any d.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import GaussianScaleMixtureDensity
    >>> delta = np.array([0.5, -0.3])
    >>> density = GaussianScaleMixtureDensity(alpha=2.0)
    >>> omega = density.sample(2, 100_000, np.random.RandomState(0))
    >>> estimate = density.scale * np.cos(omega @ delta).mean()
    >>> bool(abs(estimate - 1.0 / (2.0 + delta @ delta)) < 0.01)
    True
    """

    mixture = True

    def __init__(self, alpha: float) -> None:
        self.alpha = float(alpha)
        self.scale = 1.0 / self.alpha

    def _stds(self, size, random_state):
        return np.sqrt(2.0 * random_state.exponential(1.0 / self.alpha, size=size))

    def sample(self, n_features, size, random_state):
        z = random_state.normal(size=(size, n_features))
        return z * self._stds(size, random_state)[:, None]

    def sample_radii(self, n_features, size, random_state):
        chi = np.sqrt(random_state.chisquare(n_features, size=size))
        return chi * self._stds(size, random_state)

    def scale_ppf(self, q):
        # σ = √(2s), s ~ Exponential(rate α): s = −log(1 − q)/α.
        return np.sqrt(-2.0 * np.log1p(-open_unit_interval(q)) / self.alpha)

    def radius_cdf(self, n_features, r):
        # 1 − g_ν(√α r), derived in the class docstring (Notes).
        survival, _ = _bessel_survival(n_features / 2.0, np.sqrt(self.alpha) * np.asarray(r))
        return 1.0 - survival

    def radius_ppf(self, n_features, q):
        q = open_unit_interval(q)
        nu = n_features / 2.0
        root_alpha = np.sqrt(self.alpha)

        def cdf_and_pdf(u):
            survival, density = _bessel_survival(nu, u)
            return 1.0 - survival, density

        # Start: for large d, C ≈ d and ‖ω‖²α ≈ 2d·Exp(1).
        start = np.sqrt(2.0 * n_features * -np.log1p(-q)) + 1e-3
        return invert_cdf(cdf_and_pdf, q, start) / root_alpha


def _bessel_survival(nu: float, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`g_\nu(u) = u^\nu K_\nu(u)/(2^{\nu-1}\Gamma(\nu))` and :math:`-g_\nu'(u)`.

    ``nu`` is a positive multiple of 1/2 (d/2). Upward recurrence from :math:`g_{1/2},
    g_{3/2}` or :math:`g_1, g_2` (see :class:`GaussianScaleMixtureDensity`, Notes); the
    terms are positive, so the recurrence adds no cancellation. Values are carried scaled by
    :math:`e^u` with a running power-of-two exponent, so neither the :math:`e^{-u}` factor
    (u up to thousands) nor the growth in ν over- or underflows. The derivative is
    :math:`-g_\nu'(u) = u\,g_{\nu-1}(u)/(2(\nu-1))` for ν > 1 (from
    :math:`(u^\nu K_\nu)' = -u^\nu K_{\nu-1}`), :math:`uK_0(u)` for ν = 1 and
    :math:`e^{-u}` for ν = 1/2.
    """
    u = np.asarray(u, dtype=np.float64)
    if nu == 0.5:
        value = np.exp(-u)
        return value, value
    if nu == 1.0:
        return u * special.k1(u), u * special.k0(u)
    half_integer = (2 * nu) % 2 == 1
    if half_integer:  # g_{1/2} = e^{-u}, g_{3/2} = (1 + u) e^{-u}; scaled by e^u
        previous, current, order = np.ones_like(u), 1.0 + u, 1.5
    else:  # g_1 = u K_1(u), g_2 = u² K_2(u) / 2; kve(ν, u) = K_ν(u) e^u
        previous, current, order = u * special.kve(1, u), 0.5 * u * u * special.kve(2, u), 2.0
    exponent = np.zeros_like(u)  # values are scaled by 2^-exponent
    quarter_u2 = 0.25 * u * u
    while order < nu:
        previous, current = current, current + quarter_u2 / (order * (order - 1.0)) * previous
        order += 1.0
        large = current > 1e250
        if large.any():  # keep both terms representable; their ratio is what matters
            _, shift = np.frexp(np.where(large, current, 1.0))
            previous = np.ldexp(previous, -shift)
            current = np.ldexp(current, -shift)
            exponent += shift
    with np.errstate(over="ignore", under="ignore"):
        factor = np.exp(exponent * np.log(2.0) - u)
        value = np.minimum(current * factor, 1.0)
        derivative = u * previous * factor / (2.0 * (nu - 1.0))
    return value, derivative


class CauchyProductDensity(SpectralDensity):
    r"""Independent Cauchy(0, γ) coordinates, of the L1 Laplacian kernel.

    The kernel is :math:`\exp(-\gamma\|\delta\|_1)`.

    Not isotropic (its level sets are not spheres), so orthogonal constructions that draw
    radii do not apply. :meth:`from_uniforms` maps each coordinate by the Cauchy(0, γ)
    inverse CDF, γ·tan(π(u − ½)).

    Parameters
    ----------
    gamma : float
        The kernel's γ, the scale of each coordinate.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import CauchyProductDensity
    >>> delta = np.array([0.5, -0.3])
    >>> omega = CauchyProductDensity(gamma=0.7).sample(2, 100_000, np.random.RandomState(0))
    >>> exact = np.exp(-0.7 * np.abs(delta).sum())
    >>> bool(abs(np.cos(omega @ delta).mean() - exact) < 0.01)
    True
    >>> CauchyProductDensity.isotropic
    False
    """

    isotropic = False

    def __init__(self, gamma: float) -> None:
        self.gamma = float(gamma)

    def sample(self, n_features, size, random_state):
        return self.gamma * random_state.standard_cauchy(size=(size, n_features))

    def sample_radii(self, n_features, size, random_state):
        raise ValueError(
            "The L1 Laplacian kernel's spectral density is not isotropic, so it has no radial "
            "law: use the 'iid' structure for it."
        )

    def uniform_dims(self, n_features):
        return n_features

    def from_uniforms(self, n_features, U):
        # Coordinates γ·tan(π(u − ½)), the Cauchy(0, γ) inverse CDF, one per column.
        return self.gamma * np.tan(np.pi * (open_unit_interval(U) - 0.5))

    def radius_cdf(self, n_features, r):
        return self.sample_radii(n_features, 0, None)

    def radius_ppf(self, n_features, q):
        return self.sample_radii(n_features, 0, None)
