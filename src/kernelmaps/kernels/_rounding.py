r"""Rounding-error bounds of kernel evaluations: the pieces each kernel's bound is made of.

A kernel family declares, once, how far its computed values can be from the exact ones:
:meth:`Kernel.rounding_error(X, Y, K) <kernelmaps.kernels.Kernel.rounding_error>` returns
:math:`E` with :math:`|\hat K_{ij} - k(x_i, y_j)| \le E_{ij}` for :math:`\hat K` =
``kernel.evaluate(X, Y)``, to first order in the machine epsilon :math:`\epsilon` of
:math:`\hat K`'s dtype. The bounds are the standard ones of Higham, *Accuracy and Stability
of Numerical Algorithms* (2nd ed., SIAM 2002), written with :math:`\epsilon = 2u`, twice the
unit roundoff, so that the factor 2 also covers the second-order terms:

* an inner product of length :math:`d`, in any summation order (so for any BLAS kernel,
  block size or thread count): :math:`|fl(x^\top y) - x^\top y| \le d\,\epsilon\,|x|^\top|y|`
  (Higham, eq. 3.5);
* a sum of :math:`d` non-negative terms, each computed to a relative :math:`c\,u`:
  relative error :math:`(d + c)\,\epsilon/2`;
* :math:`\exp` of an exponent :math:`t` known to :math:`\delta t`:
  :math:`|e^{\hat t}(1+\epsilon) - e^{t}| \le \hat k\,(\delta t\,e^{\delta t} + 2\epsilon)`.

:mod:`kernelmaps.kernels.mercer` judges symmetry and positive semi-definiteness against
these bounds; ``docs/kernels.md`` has the derivation of each kernel's bound.

All helpers work on validated NumPy or SciPy-sparse inputs and return float64 arrays
(computed from float64 copies, so the bound does not itself overflow in float32).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kernelmaps.kernels._ops import dense_block

__all__ = [
    "abs_inner_products",
    "affine_inner_product",
    "default_error",
    "dense64",
    "eps_of",
    "exp_error",
    "exp_of_sum_error",
    "inner_product_error",
    "inner_products",
    "row_sums",
    "sq_distance_error",
    "sq_norms",
]


def eps_of(K: Any) -> float:
    """Return the machine epsilon of the dtype the values ``K`` were computed in.

    Parameters
    ----------
    K : ndarray
        Computed kernel values.

    Returns
    -------
    float
        ``np.finfo(K.dtype).eps`` (twice the unit roundoff, the ε of the bounds).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import eps_of
    >>> eps_of(np.zeros(2, dtype=np.float32))
    1.1920928955078125e-07
    """
    return float(np.finfo(K.dtype).eps)


def dense64(X: Any) -> np.ndarray:
    """A dense float64 copy (or view) of a validated block."""
    return np.asarray(dense_block(X), dtype=np.float64)


def row_sums(X: Any) -> np.ndarray:
    """Sums of the rows, in float64."""
    return dense64(X).sum(axis=1)


def sq_norms(X: Any) -> np.ndarray:
    """Squared Euclidean norms of the rows, in float64."""
    X = dense64(X)
    return np.einsum("ij,ij->i", X, X)


def inner_products(X: Any, Y: Any) -> np.ndarray:
    r""":math:`X Y^\top` in float64 (a reference for the bounds, not the kernel's values)."""
    return dense64(X) @ dense64(Y).T


def abs_inner_products(X: Any, Y: Any) -> np.ndarray:
    r""":math:`|X|\,|Y|^\top`: the magnitude each inner product's rounding scales with."""
    return np.abs(dense64(X)) @ np.abs(dense64(Y)).T


def inner_product_error(X: Any, Y: Any, eps: float) -> np.ndarray:
    r"""Bound the rounding error of the inner products :math:`x^\top y`, in any order.

    The bound is :math:`d\,\epsilon\,|x|^\top|y|` (Higham, eq. 3.5), for any BLAS kernel,
    block size or thread count.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_X, d)
        Validated rows.
    Y : {ndarray, sparse matrix} of shape (n_Y, d)
        Validated rows.
    eps : float
        The machine epsilon of the computed values (:func:`eps_of`).

    Returns
    -------
    ndarray of shape (n_X, n_Y), float64
        The bound for each pair.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import inner_product_error
    >>> X = np.array([[1.0, 2.0], [3.0, -1.0]])
    >>> float(inner_product_error(X, X, eps=2.0 ** -52)[0, 0])  # 2 · ε · (1 + 4)
    2.220446049250313e-15
    """
    return X.shape[1] * eps * abs_inner_products(X, Y)


def sq_distance_error(X: Any, Y: Any, eps: float) -> np.ndarray:
    r"""Bound the rounding error of squared distances as the kernels compute them.

    :math:`\|x\|^2 + \|y\|^2 - 2x^\top y` (one GEMM, two norms, two additions) is within
    :math:`(d + 3)\,\epsilon\,(2|x|^\top|y| + \|x\|^2 + \|y\|^2)` of the exact value.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_X, d)
        Validated rows.
    Y : {ndarray, sparse matrix} of shape (n_Y, d)
        Validated rows.
    eps : float
        The machine epsilon of the computed values (:func:`eps_of`).

    Returns
    -------
    ndarray of shape (n_X, n_Y), float64
        The bound for each pair.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import sq_distance_error
    >>> X = np.array([[1.0, 2.0], [3.0, -1.0]])
    >>> float(sq_distance_error(X, X, eps=2.0 ** -52)[0, 0])  # 5 · ε · (2·5 + 5 + 5)
    2.220446049250313e-14
    """
    magnitude = 2.0 * abs_inner_products(X, Y)
    magnitude += sq_norms(X)[:, None]
    magnitude += sq_norms(Y)[None, :]
    return (X.shape[1] + 3) * eps * magnitude


def exp_error(K: Any, exponent_error: np.ndarray, eps: float, *,
              at_most_one: bool = False) -> np.ndarray:
    r"""Bound the rounding error of kernel values computed as an exponential.

    For :math:`\hat k = fl(e^{\hat t})` with :math:`|\hat t - t| \le \delta t`, the bound on
    :math:`|\hat k - e^t|` is :math:`\max(\hat k, \tau)\,(\delta t\, e^{\delta t} +
    2\epsilon) + \tau` (mean value theorem, :math:`|e^a - e^b| \le e^{\max(a, b)}|a - b|`),
    with :math:`\tau` the smallest normal number of ``K``'s dtype: a value that underflowed
    (to 0 or a subnormal) only says :math:`e^{\hat t} < \tau`.

    Parameters
    ----------
    K : ndarray of shape (n_X, n_Y)
        The computed values :math:`\hat k`.
    exponent_error : ndarray of shape (n_X, n_Y)
        The bound :math:`\delta t` on the error of the exponent.
    eps : float
        The machine epsilon of ``K`` (:func:`eps_of`).
    at_most_one : bool, default=False
        Whether the exact and computed values lie in [0, 1], so that no error exceeds
        :math:`\max(\hat k, 1)` — the bound where the exponent has no correct digit left
        (unscaled data in float32 at a large γ); without it the bound is infinite there:
        no check can judge those values.

    Returns
    -------
    ndarray of shape (n_X, n_Y), float64
        The bound for each value.

    Examples
    --------
    The bound of a Gaussian kernel, as a :class:`~kernelmaps.kernels.Kernel` subclass's
    ``rounding_error`` would compute it (the exponent is γ times a squared distance):

    >>> import numpy as np
    >>> from kernelmaps.kernels import eps_of, exp_error, get_kernel, sq_distance_error
    >>> X = np.array([[1.0, 2.0], [3.0, -1.0]])
    >>> kernel = get_kernel("rbf", gamma=0.5)
    >>> K = kernel(X)
    >>> eps = eps_of(K)
    >>> E = exp_error(K, 0.5 * sq_distance_error(X, X, eps), eps, at_most_one=True)
    >>> bool(np.allclose(E, kernel.rounding_error(X, X, K)))
    True
    """
    K = np.asarray(K)
    tiny = float(np.finfo(K.dtype).smallest_normal)
    values = np.abs(K.astype(np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        bound = np.maximum(values, tiny) * (exponent_error * np.exp(exponent_error) + 2 * eps)
    bound = np.nan_to_num(bound, nan=np.inf) + tiny
    return np.minimum(bound, np.maximum(values, 1.0)) if at_most_one else bound


def exp_of_sum_error(K: Any, n_terms: float, eps: float) -> np.ndarray:
    r"""Bound for :math:`k = e^{t}` with :math:`t` (−γ times) a sum of non-negative terms
    computed to a relative :math:`n\epsilon` (Laplacian: L1 distance; χ²), so that
    :math:`0 \le k \le 1`: the exponent is recovered from the value itself, :math:`\hat t =
    \log\hat k` (at least :math:`|\log\tau|` for a value that underflowed below the
    smallest normal number :math:`\tau`), and :math:`\delta t = n\,\epsilon\,|\hat t|`."""
    K = np.asarray(K)
    tiny = float(np.finfo(K.dtype).smallest_normal)
    exponent = np.abs(np.log(np.maximum(K.astype(np.float64), tiny)))
    return exp_error(K, n_terms * eps * exponent, eps, at_most_one=True)


def default_error(K: Any) -> np.ndarray:
    r"""The bound assumed for a kernel that declares none: :math:`\sqrt{\epsilon}\max|K|` for
    every value.

    Without knowing how a user's function computes its values nothing smaller is safe: the
    error of, e.g., :math:`\exp(-\gamma\|x-y\|^2)` grows with :math:`\gamma\|x\|^2`, which
    the values do not show. :math:`\sqrt\epsilon` (1.5e-8 in float64, 3.5e-4 in float32)
    is the point past which half the significant digits are lost; a kernel whose values are
    less accurate than that is not computed meaningfully, and an asymmetry or a negative
    eigenvalue above it is not rounding. Declare :meth:`Kernel.rounding_error` on a
    :class:`~kernelmaps.kernels.Kernel` subclass for a sharper check.
    """
    K = np.asarray(K)
    scale = float(np.abs(K).max(initial=0.0))
    return np.full(K.shape, math.sqrt(eps_of(K)) * scale)


def affine_inner_product(X: Any, Y: Any, gamma: float, coef0: float,
                         eps: float) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`p = \gamma x^\top y + c_0` (in float64) and the bound on its computed value's
    error, :math:`\delta p = \gamma (d + 2)\epsilon |x|^\top|y| + \epsilon |c_0|` (the inner
    product, the scaling and the addition)."""
    p = gamma * inner_products(X, Y) + coef0
    delta = (gamma * (X.shape[1] + 2) * eps) * abs_inner_products(X, Y) + eps * abs(coef0)
    return p, delta
