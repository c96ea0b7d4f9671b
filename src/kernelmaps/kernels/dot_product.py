r"""Dot-product kernels: functions of :math:`\langle x, y\rangle` (and the norms).

Linear, polynomial, exponential, sigmoid, cosine and arc-cosine. Each is one BLAS call plus
in-place ufuncs on the block and keeps float32.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from kernelmaps._array_api import unary
from kernelmaps._engine import clamp
from kernelmaps.kernels import _rounding
from kernelmaps.kernels._base import Kernel
from kernelmaps.kernels._ops import (
    check_gamma,
    check_real,
    dot_device,
    dot_into,
    row_sq_norms,
    row_sq_norms_device,
)
from kernelmaps.kernels._resolve import register_kernel

__all__ = [
    "ArcCosineKernel",
    "CosineKernel",
    "ExponentialKernel",
    "LinearKernel",
    "PolynomialKernel",
    "SigmoidKernel",
]

@register_kernel
class LinearKernel(Kernel):
    r"""Linear kernel :math:`k(x, y) = \langle x, y\rangle`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import LinearKernel
    >>> LinearKernel()(np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[ 5., 11.],
           [11., 25.]])
    """

    name = "linear"

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)

    def rounding_error(self, X, Y, K):
        # One inner product: d ε |x|ᵀ|y| (docs/kernels.md, "The Mercer check").
        return _rounding.inner_product_error(X, Y, _rounding.eps_of(K))

    def _diag(self, X):
        if sp.issparse(X):
            return np.asarray(X.multiply(X).sum(axis=1), dtype=X.dtype).ravel()
        return np.einsum("ij,ij->i", X, X)

    def _evaluate_device(self, xp, X, Y):
        return dot_device(xp, X, Y)

    def _diag_device(self, xp, X):
        return row_sq_norms_device(xp, X)


@register_kernel(aliases=('polynomial',))
class PolynomialKernel(Kernel):
    r"""Polynomial kernel :math:`k(x, y) = (\gamma\langle x, y\rangle + c_0)^d`.

    Parameters
    ----------
    gamma : float or None, default=None
        Scale of the inner product; ``None`` means ``1 / n_features``.
    degree : float or None, default=None
        Degree ``d``; ``None`` means 3.
    coef0 : float or None, default=None
        Offset ``c_0``; ``None`` means 1.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import polynomial_kernel
    >>> from kernelmaps.kernels import PolynomialKernel
    >>> X = np.random.RandomState(0).normal(size=(4, 3))
    >>> K = PolynomialKernel(gamma=0.5, degree=2, coef0=1.0)(X)
    >>> bool(np.allclose(K, polynomial_kernel(X, gamma=0.5, degree=2, coef0=1.0)))
    True
    >>> PolynomialKernel()(np.array([[1.0, 1.0]]))  # defaults: γ = 1/2, c₀ = 1, d = 3
    array([[8.]])
    """

    name = "poly"
    param_names = ("gamma", "degree", "coef0")

    def __init__(self, gamma: float | None = None, degree: float | None = None,
                 coef0: float | None = None) -> None:
        check_gamma(gamma, "polynomial")
        check_real("coef0", coef0, "polynomial")
        if degree is not None:
            check_real("degree", degree, "polynomial")
            if degree < 1:
                raise ValueError(f"polynomial kernel: degree must be >= 1; got {degree!r}.")
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)
        out *= self._gamma(X.shape[1])
        out += 1.0 if self.coef0 is None else self.coef0
        out **= 3 if self.degree is None else self.degree

    def rounding_error(self, X, Y, K):
        # p = γxᵀy + c₀ to δp, then p^d: d·max|p|^(d−1)·δp, plus d roundings of the power.
        eps = _rounding.eps_of(K)
        degree = 3.0 if self.degree is None else float(self.degree)
        p, delta = _rounding.affine_inner_product(
            X, Y, self._gamma(X.shape[1]), 1.0 if self.coef0 is None else float(self.coef0), eps)
        return (degree * (np.abs(p) + 2.0 * delta) ** (degree - 1.0) * delta
                + degree * eps * np.abs(K))

    def _finish_device(self, xp, inner, n_features):
        inner *= self._gamma(n_features)
        inner += 1.0 if self.coef0 is None else float(self.coef0)
        degree = 3 if self.degree is None else self.degree
        return inner ** (int(degree) if float(degree).is_integer() else float(degree))

    def _evaluate_device(self, xp, X, Y):
        return self._finish_device(xp, dot_device(xp, X, Y), X.shape[1])

    def _diag_device(self, xp, X):
        return self._finish_device(xp, row_sq_norms_device(xp, X), X.shape[1])


@register_kernel
class ExponentialKernel(Kernel):
    r"""Exponential dot-product kernel :math:`k(x, y) = \exp(\gamma\langle x, y\rangle)`.

    Positive definite: its Maclaurin coefficients :math:`\gamma^n/n!` are all positive
    (Schoenberg; the kernel :class:`~kernelmaps.RandomMaclaurin` approximates, Kar & Karnick
    2012). Note :math:`\exp(-\gamma\|x-y\|^2/2) = e^{-\gamma\|x\|^2/2}\,
    \exp(\gamma\langle x, y\rangle)\,e^{-\gamma\|y\|^2/2}`. Large
    :math:`\gamma\langle x, y\rangle` overflow: a clear error, never inf.

    Parameters
    ----------
    gamma : float or None, default=None
        Scale; ``None`` means ``1 / n_features``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import ExponentialKernel, RBFKernel
    >>> X = np.random.RandomState(0).normal(size=(4, 3))
    >>> K = ExponentialKernel(gamma=2.0)(X)  # exp(2⟨x, y⟩)
    >>> d = np.exp(-np.sum(X ** 2, axis=1))  # exp(-γ‖x‖²/2)
    >>> bool(np.allclose(d[:, None] * K * d[None, :], RBFKernel(gamma=1.0)(X)))
    True
    """

    name = "exponential"
    param_names = ("gamma",)

    def __init__(self, gamma: float | None = None) -> None:
        check_gamma(gamma, "exponential")
        self.gamma = gamma

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)
        out *= self._gamma(X.shape[1])
        np.exp(out, out=out)

    def rounding_error(self, X, Y, K):
        # exp of γxᵀy, known to γ(d + 1)ε|x|ᵀ|y|.
        eps = _rounding.eps_of(K)
        _, delta = _rounding.affine_inner_product(X, Y, self._gamma(X.shape[1]), 0.0, eps)
        return _rounding.exp_error(K, delta, eps)

    def _diag(self, X):
        return np.exp(self._gamma(X.shape[1]) * row_sq_norms(X))

    def _evaluate_device(self, xp, X, Y):
        inner = dot_device(xp, X, Y)
        inner *= self._gamma(X.shape[1])
        return unary(xp, "exp", inner)

    def _diag_device(self, xp, X):
        return xp.exp(self._gamma(X.shape[1]) * row_sq_norms_device(xp, X))


@register_kernel
class SigmoidKernel(Kernel):
    r"""Sigmoid kernel :math:`k(x, y) = \tanh(\gamma\langle x, y\rangle + c_0)`.

    Not positive semi-definite in general (Lin & Lin, 2003): Nystroem warns when its
    landmark matrix turns out indefinite.

    Parameters
    ----------
    gamma : float, {'scale', 'auto'} or None, default=None
        The scale γ of the inner product; None: ``1 / n_features``.
    coef0 : float or None, default=None
        The offset :math:`c_0`; None: 1, as scikit-learn's ``sigmoid_kernel``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import sigmoid_kernel
    >>> from kernelmaps.kernels import SigmoidKernel
    >>> X = np.random.RandomState(0).normal(size=(4, 3))
    >>> bool(np.allclose(SigmoidKernel(gamma=0.5, coef0=-1.0)(X),
    ...                  sigmoid_kernel(X, gamma=0.5, coef0=-1.0)))
    True
    >>> SigmoidKernel.is_psd
    False
    """

    name = "sigmoid"
    param_names = ("gamma", "coef0")
    is_psd = False

    def __init__(self, gamma: float | None = None, coef0: float | None = None) -> None:
        check_gamma(gamma, "sigmoid")
        check_real("coef0", coef0, "sigmoid")
        self.gamma = gamma
        self.coef0 = coef0

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)
        out *= self._gamma(X.shape[1])
        out += 1.0 if self.coef0 is None else self.coef0
        np.tanh(out, out=out)

    def rounding_error(self, X, Y, K):
        # tanh is 1-Lipschitz and |tanh| <= 1: δp plus the rounding of tanh.
        eps = _rounding.eps_of(K)
        _, delta = _rounding.affine_inner_product(
            X, Y, self._gamma(X.shape[1]), 1.0 if self.coef0 is None else float(self.coef0), eps)
        return delta + 2.0 * eps

    def _finish_device(self, xp, inner, n_features):
        inner *= self._gamma(n_features)
        inner += 1.0 if self.coef0 is None else float(self.coef0)
        return unary(xp, "tanh", inner)

    def _evaluate_device(self, xp, X, Y):
        return self._finish_device(xp, dot_device(xp, X, Y), X.shape[1])

    def _diag_device(self, xp, X):
        return self._finish_device(xp, row_sq_norms_device(xp, X), X.shape[1])


@register_kernel
class CosineKernel(Kernel):
    r"""Cosine similarity :math:`k(x, y) = \langle x, y\rangle / (\|x\|\|y\|)`.

    Rows of zeros give 0, as in scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import CosineKernel
    >>> CosineKernel()(np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 0.0]]))
    array([[1. , 0.6, 0. ],
           [0.6, 1. , 0. ],
           [0. , 0. , 0. ]])
    """

    name = "cosine"

    def evaluate_into(self, X, Y, out):
        dot_into(normalize(X), normalize(Y), out)

    def rounding_error(self, X, Y, K):
        # Each normalised coordinate to (d/2 + 2)ε relative, then an inner product of unit
        # vectors: (2d + 4)ε.
        return np.full(K.shape, (2 * X.shape[1] + 4) * _rounding.eps_of(K))

    def _evaluate_device(self, xp, X, Y):
        return dot_device(xp, _normalize_device(xp, X), _normalize_device(xp, Y))

    def _diag_device(self, xp, X):
        return xp.astype(row_sq_norms_device(xp, X) > 0, X.dtype)


def _normalize_device(xp, X):
    """Rows divided by their Euclidean norms; zero rows stay zero (as sklearn's normalize)."""
    norms = xp.sqrt(row_sq_norms_device(xp, X))
    return X / xp.where(norms > 0, norms, xp.ones_like(norms))[:, None]


@register_kernel
class ArcCosineKernel(Kernel):
    r"""Arc-cosine kernel of degree :math:`n \in \{0, 1, 2\}` (Cho & Saul, NeurIPS 2009).

    .. math::

        k_n(x, y) = \tfrac1\pi\|x\|^n\|y\|^n J_n(\theta),\quad
        \theta = \arccos\frac{\langle x,y\rangle}{\|x\|\|y\|},

    with :math:`J_0 = \pi-\theta`, :math:`J_1 = \sin\theta + (\pi-\theta)\cos\theta`,
    :math:`J_2 = 3\sin\theta\cos\theta + (\pi-\theta)(1+2\cos^2\theta)`. It is the kernel of
    an infinitely wide layer of step (n=0), ReLU (n=1) or squared-ReLU (n=2) units with
    Gaussian weights, :math:`k_n(x,y) = 2\,\mathbb E_w[\Theta(w^\top x)\Theta(w^\top y)
    (w^\top x)^n(w^\top y)^n]`. A zero vector is given :math:`\cos\theta = 0`.

    Parameters
    ----------
    degree : {0, 1, 2}, default=1

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import ArcCosineKernel
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0]])  # at a right angle: θ = π/2
    >>> ArcCosineKernel(degree=0)(X)  # 1 − θ/π
    array([[1. , 0.5],
           [0.5, 1. ]])
    >>> float(ArcCosineKernel(degree=1)(X)[0, 1] * np.pi)  # ‖x‖‖y‖ J₁(π/2) = 2 · 1
    2.0
    """

    name = "arccos"
    param_names = ("degree",)

    def __init__(self, degree: int = 1) -> None:
        if degree not in (0, 1, 2) or isinstance(degree, bool):
            raise ValueError(f"arccos kernel: degree must be 0, 1 or 2; got {degree!r}.")
        self.degree = degree

    def evaluate_into(self, X, Y, out):
        dot_into(X, Y, out)
        norms_x = np.sqrt(row_sq_norms(X))
        norms_y = np.sqrt(row_sq_norms(Y))
        denominator = norms_x[:, None] * norms_y[None, :]
        cos = np.divide(out, denominator, out=np.zeros_like(out), where=denominator > 0)
        clamp(cos, low=-1.0, high=1.0)
        theta = np.arccos(cos)
        angle = np.pi - theta
        if self.degree == 0:
            np.divide(angle, np.pi, out=out)
            return
        sin = np.sqrt(1.0 - cos * cos)
        if self.degree == 1:
            j = sin + angle * cos
        else:
            j = 3.0 * sin * cos + angle * (1.0 + 2.0 * cos * cos)
        np.multiply(denominator ** self.degree, j, out=out)
        out /= np.pi

    def _temp_bytes_per_row(self, Y):
        return 48 * Y.shape[0]

    def rounding_error(self, X, Y, K):
        # cos θ to δc = (2d + 4)ε; arccos is ½-Hölder, |arccos a − arccos b| <= (π/2)√|a − b|,
        # and 1/√(1 − c²)-Lipschitz away from ±1; J_n is L_n-Lipschitz in θ.
        eps = _rounding.eps_of(K)
        norms = np.sqrt(_rounding.sq_norms(X))[:, None] * np.sqrt(_rounding.sq_norms(Y))[None, :]
        cos = np.divide(_rounding.inner_products(X, Y), norms,
                        out=np.zeros_like(norms), where=norms > 0)
        delta_cos = (2 * X.shape[1] + 4) * eps
        room = 1.0 - np.minimum(np.abs(cos) + delta_cos, 1.0) ** 2
        with np.errstate(divide="ignore"):
            delta_theta = np.minimum(0.5 * np.pi * np.sqrt(delta_cos),
                                     delta_cos / np.sqrt(room)) + np.pi * eps
        lipschitz, largest = {0: (1.0, np.pi), 1: (np.pi, np.pi),
                              2: (6.0 + 2.0 * np.pi, 3.0 * np.pi)}[self.degree]
        return (norms ** self.degree / np.pi * (lipschitz * delta_theta + 10.0 * eps * largest)
                + self.degree * (X.shape[1] + 3) * eps * np.abs(K))

    def _evaluate_device(self, xp, X, Y):
        norms_x = xp.sqrt(row_sq_norms_device(xp, X))
        norms_y = xp.sqrt(row_sq_norms_device(xp, Y))
        denominator = norms_x[:, None] * norms_y[None, :]
        positive = denominator > 0
        cos = dot_device(xp, X, Y) / xp.where(positive, denominator,
                                              xp.ones_like(denominator))
        cos = xp.clip(xp.where(positive, cos, xp.zeros_like(cos)), min=-1.0, max=1.0)
        angle = math.pi - xp.acos(cos)
        if self.degree == 0:
            return angle / math.pi
        sin = xp.sqrt(1.0 - cos * cos)
        if self.degree == 1:
            j = sin + angle * cos
        else:
            j = 3.0 * sin * cos + angle * (1.0 + 2.0 * cos * cos)
        return denominator ** self.degree * j / math.pi

    _exact_diagonal = True

    def _diag_device(self, xp, X):
        return row_sq_norms_device(xp, X) ** self.degree * {0: 1.0, 1: 1.0, 2: 3.0}[self.degree]

    def _fix_diagonal(self, X, K):
        # arccos is ill-conditioned at 1 (θ ≈ √(2ε) from rounding): use the exact θ = 0.
        np.fill_diagonal(K, self._diag(X))

    def _diag(self, X):
        sq = row_sq_norms(X)
        return (sq ** self.degree) * {0: 1.0, 1: 1.0, 2: 3.0}[self.degree]
