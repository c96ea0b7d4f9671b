r"""Spectral measures of shift-invariant kernels, the laws random Fourier features sample.

By Bochner's theorem a continuous shift-invariant PSD kernel is
:math:`k(x - y) = k(0)\,\mathbb E_{\omega\sim p}[\cos\omega^\top(x-y)]`; each class here
is one such :math:`p` (Rahimi & Recht, 2007; Rasmussen & Williams, 2006, §4.2).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "CauchyProductDensity",
    "GaussianDensity",
    "GaussianScaleMixtureDensity",
    "MultivariateTDensity",
    "SpectralDensity",
]

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

    def sample(self, n_features: int, size: int, random_state: np.random.RandomState
               ) -> np.ndarray:
        """``size`` frequencies, shape ``(size, n_features)``."""
        if not self.isotropic:  # pragma: no cover - overridden by non-isotropic densities
            raise NotImplementedError
        directions = random_state.normal(size=(size, n_features))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return directions * self.sample_radii(n_features, size, random_state)[:, None]

    def sample_radii(self, n_features: int, size: int, random_state: np.random.RandomState
                     ) -> np.ndarray:  # pragma: no cover - abstract
        """``size`` draws of ‖ω‖, shape ``(size,)``."""
        raise NotImplementedError


class GaussianDensity(SpectralDensity):
    r"""ω ~ N(0, s² I): the Gaussian kernel :math:`\exp(-s^2\|\delta\|^2/2)`.

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


class MultivariateTDensity(SpectralDensity):
    r"""ω = z / (ℓ √(u/ν')), z ~ N(0, I), u ~ χ²_ν': the Matérn kernel with ν = ν'/2.

    The Matérn spectral density is :math:`\propto (2\nu/\ell^2 + \|\omega\|^2)^{-(\nu + d/2)}`,
    a multivariate Student t with :math:`2\nu` degrees of freedom and scale :math:`1/\ell`,
    i.e. :math:`\omega = z\,/\,(\ell\sqrt{u/2\nu})` (Rasmussen & Williams, 2006, eq. 4.15).

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


class GaussianScaleMixtureDensity(SpectralDensity):
    r"""ω | s ~ N(0, 2s I), s ~ Exponential(rate α): the Student kernel 1/(α + ‖δ‖²).

    From :math:`1/(\alpha + r^2) = \int_0^\infty e^{-s\alpha} e^{-s r^2}\,ds
    = \tfrac1\alpha\,\mathbb E_{s\sim\mathrm{Exp}(\alpha)}[e^{-s r^2}]`: a mixture of
    Gaussians with total mass ``scale`` = 1/α.

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


class CauchyProductDensity(SpectralDensity):
    r"""iid Cauchy(0, γ) coordinates: the L1 Laplacian :math:`\exp(-\gamma\|\delta\|_1)`.

    Not isotropic (its level sets are not spheres), so orthogonal constructions that draw
    radii do not apply.

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
