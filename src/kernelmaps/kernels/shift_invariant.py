r"""Shift-invariant kernels :math:`k(x, y) = \kappa(x - y)`: Gaussian, Laplacian, Student, Matérn.

Each also gives its spectral density (Bochner's theorem, :mod:`kernelmaps.kernels.spectral`),
which random Fourier features sample from.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from array_api_compat import is_torch_array
from sklearn.metrics.pairwise import manhattan_distances

from kernelmaps._array_api import matmul, unary
from kernelmaps._engine import clamp
from kernelmaps.kernels import _rounding
from kernelmaps.kernels._base import Kernel
from kernelmaps.kernels._ops import (
    check_gamma,
    check_positive,
    dot_into,
    feature_chunks,
    row_sq_norms,
    row_sq_norms_device,
    sq_dist_device,
    sq_dist_into,
)
from kernelmaps.kernels._resolve import register_kernel
from kernelmaps.kernels.spectral import (
    CauchyProductDensity,
    GaussianDensity,
    GaussianScaleMixtureDensity,
    MultivariateTDensity,
    SpectralDensity,
)

__all__ = ["LaplacianKernel", "MaternKernel", "RBFKernel", "StudentKernel"]

class _ConstantDiagonal:
    """k(x, x) is the same constant for every x (1 unless ``_diagonal_value`` says otherwise):
    the diagonal is known exactly, so a symmetric evaluation writes it instead of the
    rounded ‖x − x‖² value."""

    _exact_diagonal = True

    def _diagonal_value(self) -> float:
        return 1.0

    def _fix_diagonal(self, X, K):
        np.fill_diagonal(K, self._diagonal_value())

    def _diag(self, X):
        return np.full(X.shape[0], self._diagonal_value(), dtype=X.dtype)

    def _diag_device(self, xp, X):
        return xp.full(X.shape[0], self._diagonal_value(), dtype=X.dtype, device=X.device)


@register_kernel
class RBFKernel(_ConstantDiagonal, Kernel):
    r"""Gaussian (RBF) kernel :math:`k(x, y) = \exp(-\gamma\|x-y\|^2) = \exp(-\|x-y\|^2/2\sigma^2)`.

    The squared distance is expanded as :math:`\|x\|^2 + \|y\|^2 - 2\langle x,y\rangle` (one
    BLAS call) and clipped at zero against rounding, as scikit-learn does.

    Parameters
    ----------
    gamma : float or None, default=None
        Inverse squared length scale (>= 0; 0 is the constant kernel 1, the limit γ → 0);
        ``None`` means ``1 / n_features`` (unless ``sigma``).
    sigma : float or None, default=None
        Bandwidth σ; gives ``gamma = 1 / (2 σ²)``. Pass ``gamma`` or ``sigma``, not both.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from kernelmaps.kernels import RBFKernel
    >>> X = np.random.RandomState(0).normal(size=(4, 3))
    >>> bool(np.allclose(RBFKernel(gamma=0.5)(X), rbf_kernel(X, gamma=0.5)))
    True
    >>> bool(np.allclose(RBFKernel(sigma=1.0)(X), RBFKernel(gamma=0.5)(X)))  # γ = 1/(2σ²)
    True
    """

    name = "rbf"
    param_names = ("gamma", "sigma")

    def __init__(self, gamma: float | None = None, sigma: float | None = None) -> None:
        check_gamma(gamma, "rbf", allow_zero=True)
        check_positive("sigma", sigma, "rbf")
        if gamma is not None and sigma is not None:
            raise ValueError("rbf kernel: pass gamma or sigma (gamma = 1/(2 sigma²)), not both.")
        self.gamma = gamma
        self.sigma = sigma

    def _gamma(self, n_features: int) -> float:
        if self.sigma is not None:
            return 1.0 / (2.0 * float(self.sigma) ** 2)
        return super()._gamma(n_features)

    def spectral_density(self, n_features: int) -> SpectralDensity:
        """Return the normal frequencies, ω ~ N(0, 2γ I) (Rahimi & Recht, 2007).

        Parameters
        ----------
        n_features : int
            The input dimension ``d`` (a ``gamma`` of None means ``1/d``).

        Returns
        -------
        GaussianDensity
            The isotropic normal of standard deviation :math:`\\sqrt{2\\gamma}`.
        """
        return GaussianDensity(np.sqrt(2.0 * self._gamma(n_features)))

    def evaluate_into(self, X, Y, out):
        # exp(-γ‖x−y‖²) = exp(min(2γ⟨x,y⟩ − γ‖x‖² − γ‖y‖², 0)): the scale −2γ rides on the
        # (small) Y operand of the BLAS call, saving one pass over the block.
        scaled_columns, column_terms = self.column_terms(Y)
        dot_into(X, scaled_columns, out)
        self.values_from_products(out, self.row_terms(X), column_terms)

    # The pieces of evaluate_into, for a caller that arranges the products itself (FALKON's
    # fused first pass: the columns' side once per fit, the element-wise passes per cached
    # sub-block): the formula stays here, in one place.
    def column_terms(self, Y: Any) -> tuple[Any, np.ndarray]:
        r"""The columns' side of a block: :math:`2\gamma y` and :math:`\gamma\|y\|^2`.

        Parameters
        ----------
        Y : {ndarray, sparse matrix} of shape (n_Y, n_features)
            Validated columns.

        Returns
        -------
        scaled_columns : {ndarray, sparse matrix} of shape (n_Y, n_features)
            :math:`2\gamma Y`, the right operand of the block's inner products.
        column_terms : ndarray of shape (n_Y,)
            :math:`\gamma\|y_j\|^2`.
        """
        gamma = self._gamma(Y.shape[1])
        return Y * (2.0 * gamma), gamma * row_sq_norms(Y)

    def row_terms(self, X: Any) -> np.ndarray:
        r"""The rows' side of a block: :math:`\gamma\|x_i\|^2`.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_X, n_features)
            Validated rows.

        Returns
        -------
        ndarray of shape (n_X,)
            :math:`\gamma\|x_i\|^2`, in the dtype of ``X``.
        """
        return self._gamma(X.shape[1]) * row_sq_norms(X)

    def values_from_products(self, out: np.ndarray, row_terms: np.ndarray,
                             column_terms: np.ndarray) -> None:
        r"""Turn :math:`2\gamma\langle x_i, y_j\rangle` into :math:`k(x_i, y_j)`, in place.

        Subtracts the :meth:`row_terms` and the column terms of :meth:`column_terms`, clips
        at 0 against rounding and exponentiates: the operations of :meth:`evaluate_into`
        after its inner products, in the same order.

        Parameters
        ----------
        out : ndarray of shape (n_X, n_Y)
            The inner products :math:`\langle x_i, 2\gamma y_j\rangle`, overwritten with
            the kernel values.
        row_terms : ndarray of shape (n_X,)
            :math:`\gamma\|x_i\|^2` (:meth:`row_terms`).
        column_terms : ndarray of shape (n_Y,)
            :math:`\gamma\|y_j\|^2` (:meth:`column_terms`).
        """
        out -= row_terms[:, None]
        out -= column_terms[None, :]
        self.values_from_exponent(out, out)

    def values_from_exponent(self, exponent: np.ndarray, out: np.ndarray) -> None:
        r"""Write :math:`\exp(\min(e, 0))` into ``out``, clipping ``exponent`` in place.

        :math:`e = 2\gamma\langle x, y\rangle - \gamma\|x\|^2 - \gamma\|y\|^2`, the
        expanded :math:`-\gamma\|x-y\|^2`; the clip at 0 undoes rounding, which can make the
        expanded squared distance negative. ``out`` may be ``exponent`` itself.

        Parameters
        ----------
        exponent : ndarray
            :math:`2\gamma\langle x, y\rangle - \gamma\|x\|^2 - \gamma\|y\|^2`.
        out : ndarray of the shape of ``exponent``
            The kernel values written.
        """
        clamp(exponent, high=0.0)
        np.exp(exponent, out=out)

    def rounding_error(self, X, Y, K):
        # The exponent −γ‖x − y‖², expanded, is known to γ(d + 3)ε(2|x|ᵀ|y| + ‖x‖² + ‖y‖²):
        # for unscaled features far more than ε (docs/kernels.md, "The Mercer check").
        eps = _rounding.eps_of(K)
        return _rounding.exp_error(
            K, self._gamma(X.shape[1]) * _rounding.sq_distance_error(X, Y, eps), eps,
            at_most_one=True)

    def _evaluate_device(self, xp, X, Y):
        # As evaluate_into: 2γ⟨x, y⟩ − γ‖x‖² in one GEMM (PyTorch: addmm with the row
        # term as its bias), then in-place passes.
        gamma = self._gamma(X.shape[1])
        out = matmul(xp, X, (Y * (2.0 * gamma)).T,
                     bias=-(gamma * row_sq_norms_device(xp, X))[:, None])
        out -= (gamma * row_sq_norms_device(xp, Y))[None, :]
        return unary(xp, "exp", unary(xp, "clip", out, max=0.0))


@register_kernel
class LaplacianKernel(Kernel):
    r"""Laplacian kernel :math:`k(x, y) = \exp(-\gamma\|x-y\|_1)`.

    Parameters
    ----------
    gamma : float or None, default=None
        Inverse length scale; ``None`` means ``1 / n_features``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import laplacian_kernel
    >>> from kernelmaps.kernels import LaplacianKernel
    >>> X = np.random.RandomState(0).normal(size=(4, 3))
    >>> bool(np.allclose(LaplacianKernel(gamma=0.5)(X), laplacian_kernel(X, gamma=0.5)))
    True
    """

    name = "laplacian"
    param_names = ("gamma",)

    def __init__(self, gamma: float | None = None) -> None:
        check_gamma(gamma, "laplacian")
        self.gamma = gamma

    def spectral_density(self, n_features: int) -> SpectralDensity:
        """Return iid Cauchy(0, γ) coordinates: the L1 Laplacian is a product of 1-D ones.

        Parameters
        ----------
        n_features : int
            The input dimension ``d`` (a ``gamma`` of None means ``1/d``).

        Returns
        -------
        CauchyProductDensity
            The product of ``d`` Cauchy densities of scale γ.
        """

        return CauchyProductDensity(self._gamma(n_features))

    def evaluate_into(self, X, Y, out):
        # scikit-learn's compiled L1 distance (dense: scipy cdist, sparse: Cython).
        out[...] = manhattan_distances(X, Y)
        out *= -self._gamma(X.shape[1])
        np.exp(out, out=out)

    def rounding_error(self, X, Y, K):
        # γ × a sum of d non-negative |x_i − y_i|: relative (d + 2)ε, then exp.
        return _rounding.exp_of_sum_error(K, X.shape[1] + 2, _rounding.eps_of(K))

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0]

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _evaluate_device(self, xp, X, Y):
        if is_torch_array(X):
            import torch  # only reached with torch tensors

            distances = torch.cdist(X, Y, p=1.0)
        else:  # no L1 distance in the standard: broadcast over chunks of features
            distances = xp.zeros((X.shape[0], Y.shape[0]), dtype=X.dtype, device=X.device)
            for chunk in feature_chunks(xp, X, Y):
                distances += xp.sum(xp.abs(X[:, None, chunk] - Y[None, :, chunk]), axis=2)
        distances *= -self._gamma(X.shape[1])
        return unary(xp, "exp", distances)


def _pairwise_euclidean(X: Any, Y: Any, out: np.ndarray) -> None:
    sq_dist_into(X, Y, out)
    np.sqrt(out, out=out)


@register_kernel
class StudentKernel(_ConstantDiagonal, Kernel):
    r"""Student (inverse multiquadric-type) kernel :math:`k(x, y) = 1/(\alpha + \|x-y\|^2)`.

    Positive definite for every :math:`\alpha > 0`: it is a mixture of Gaussians (see
    :class:`GaussianScaleMixtureDensity`). :math:`k(x, x) = 1/\alpha`.

    Parameters
    ----------
    alpha : float, default=1.0
        The offset :math:`\alpha > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import StudentKernel
    >>> X = np.random.RandomState(0).normal(size=(4, 3))
    >>> squared_distances = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
    >>> bool(np.allclose(StudentKernel(alpha=2.0)(X), 1.0 / (2.0 + squared_distances)))
    True
    >>> StudentKernel(alpha=2.0).diag(X)
    array([0.5, 0.5, 0.5, 0.5])
    """

    name = "student"
    param_names = ("alpha",)

    def __init__(self, alpha: float = 1.0) -> None:
        check_positive("alpha", alpha, "student", allow_none=False)
        self.alpha = alpha

    def evaluate_into(self, X, Y, out):
        sq_dist_into(X, Y, out)
        out += self.alpha
        np.reciprocal(out, out=out)

    def rounding_error(self, X, Y, K):
        # q = α + ‖x − y‖² to δq; |1/q̂ − 1/q| <= δq / (q̂ · min q), and q >= α exactly.
        eps = _rounding.eps_of(K)
        K = np.asarray(K, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):  # K = 0: q̂ overflowed
            q = 1.0 / K
            delta = _rounding.sq_distance_error(X, Y, eps) + eps * q
            bound = K * delta / np.maximum(q * (1.0 - eps) - delta, float(self.alpha))
        return np.where(K > 0, bound + 2 * eps * K, 0.0)

    def _diagonal_value(self) -> float:
        return 1.0 / float(self.alpha)

    def _evaluate_device(self, xp, X, Y):
        out = sq_dist_device(xp, X, Y)
        out += float(self.alpha)
        return 1.0 / out

    def spectral_density(self, n_features: int) -> SpectralDensity:
        return GaussianScaleMixtureDensity(self.alpha)


@register_kernel
class MaternKernel(_ConstantDiagonal, Kernel):
    r"""Matérn kernel with :math:`\nu \in \{1/2, 3/2, 5/2\}` and length scale :math:`\ell`.

    With :math:`r = \|x-y\|/\ell`:
    :math:`\nu=1/2`: :math:`e^{-r}`;
    :math:`\nu=3/2`: :math:`(1+\sqrt3 r)e^{-\sqrt3 r}`;
    :math:`\nu=5/2`: :math:`(1+\sqrt5 r+5r^2/3)e^{-\sqrt5 r}`
    (Rasmussen & Williams, *Gaussian Processes for Machine Learning*, 2006, eq. 4.17). Values
    equal :class:`sklearn.gaussian_process.kernels.Matern`.

    Parameters
    ----------
    nu : {0.5, 1.5, 2.5}, default=1.5
        Smoothness.
    length_scale : float, default=1.0
        Length scale :math:`\ell > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> from kernelmaps.kernels import MaternKernel
    >>> X = np.random.RandomState(0).normal(size=(4, 3))
    >>> bool(np.allclose(MaternKernel(nu=2.5, length_scale=0.8)(X),
    ...                  Matern(nu=2.5, length_scale=0.8)(X)))
    True
    """

    name = "matern"
    param_names = ("nu", "length_scale")
    _SUPPORTED_NU = (0.5, 1.5, 2.5)

    def __init__(self, nu: float = 1.5, length_scale: float = 1.0) -> None:
        if nu not in self._SUPPORTED_NU:
            raise ValueError(
                f"matern kernel: nu={nu!r} is not supported; use one of {self._SUPPORTED_NU} "
                "(the closed forms), or the rbf kernel for nu=inf."
            )
        check_positive("length_scale", length_scale, "matern", allow_none=False)
        self.nu = nu
        self.length_scale = length_scale

    def evaluate_into(self, X, Y, out):
        _pairwise_euclidean(X, Y, out)
        root = {0.5: 1.0, 1.5: np.sqrt(3.0), 2.5: np.sqrt(5.0)}[self.nu]
        out *= root / self.length_scale  # out = c·r
        if self.nu == 0.5:
            np.negative(out, out=out)
            np.exp(out, out=out)
            return
        scaled = out.copy()
        np.negative(out, out=out)
        np.exp(out, out=out)  # e^{-c r}
        polynomial = 1.0 + scaled
        if self.nu == 2.5:
            polynomial += scaled * scaled / 3.0  # (√5 r)²/3 = 5r²/3
        out *= polynomial

    def _temp_bytes_per_row(self, Y):
        return 16 * Y.shape[0]

    def rounding_error(self, X, Y, K):
        # r = ‖x − y‖: the squared distance to δD (the computed and a float64 one), then
        # |√a − √b| <= min(√|a − b|, |a − b| / √max(a, b)); z = c·r/ℓ; every g_ν(z) here
        # has |g'(z)| <= min(1.2, (1 + z + z²)e^{−z}); six roundings of g.
        eps = _rounding.eps_of(K)
        distance = np.maximum(_rounding.sq_norms(X)[:, None] + _rounding.sq_norms(Y)[None, :]
                              - 2.0 * _rounding.inner_products(X, Y), 0.0)
        delta = _rounding.sq_distance_error(X, Y, eps) \
            + _rounding.sq_distance_error(X, Y, float(np.finfo(np.float64).eps))
        with np.errstate(divide="ignore", invalid="ignore"):
            delta_root = np.minimum(np.sqrt(delta),
                                    delta / np.sqrt(np.maximum(distance - delta, 0.0)))
        factor = {0.5: 1.0, 1.5: math.sqrt(3.0), 2.5: math.sqrt(5.0)}[self.nu] / self.length_scale
        z = factor * np.sqrt(distance)
        delta_z = factor * delta_root + eps * z
        low = np.maximum(z - delta_z, 0.0)
        slope = np.where(low > 1.0, (1.0 + low + low * low) * np.exp(-low), 1.2)
        underflow = float(np.finfo(np.asarray(K).dtype).smallest_normal)  # e^{−z} below it
        return slope * delta_z + 6.0 * eps * np.abs(np.asarray(K, dtype=np.float64)) + underflow

    def _evaluate_device(self, xp, X, Y):
        root = {0.5: 1.0, 1.5: math.sqrt(3.0), 2.5: math.sqrt(5.0)}[self.nu]
        scaled = xp.sqrt(sq_dist_device(xp, X, Y)) * (root / float(self.length_scale))  # c·r
        decay = xp.exp(-scaled)
        if self.nu == 0.5:
            return decay
        polynomial = 1.0 + scaled
        if self.nu == 2.5:
            polynomial += scaled * scaled / 3.0
        return decay * polynomial

    def spectral_density(self, n_features: int) -> SpectralDensity:
        return MultivariateTDensity(2.0 * self.nu, self.length_scale)
