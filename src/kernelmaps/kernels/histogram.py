r"""Histogram kernels for non-negative data: χ², additive χ² (both meanings), skewed χ².

``chi2`` and ``additive_chi2`` reuse scikit-learn's compiled pairwise routine block by
block: it is well kept and faster than a broadcast (n × m × d temporaries) version.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.metrics.pairwise import additive_chi2_kernel

from kernelmaps._array_api import min_value, unary
from kernelmaps.kernels import _rounding
from kernelmaps.kernels._base import Kernel
from kernelmaps.kernels._ops import (
    check_gamma,
    check_real,
    dense_block,
    feature_chunks,
)
from kernelmaps.kernels._resolve import register_kernel

__all__ = ["AdditiveChi2Kernel", "AdditiveChi2PSDKernel", "Chi2Kernel", "SkewedChi2Kernel"]

def _additive_chi2_into(X: Any, Y: Any, out: np.ndarray) -> None:
    # scikit-learn's compiled kernel needs dense input; a row block is small.
    out[...] = additive_chi2_kernel(dense_block(X), dense_block(Y))


def _additive_chi2_device(xp: Any, X: Any, Y: Any) -> Any:
    """−Σ_i (x_i − y_i)²/(x_i + y_i) on the device, 0/0 := 0 (scikit-learn's convention),
    broadcast over chunks of features within the device block budget."""
    out = xp.zeros((X.shape[0], Y.shape[0]), dtype=xp.result_type(X.dtype, Y.dtype),
                   device=X.device)
    for chunk in feature_chunks(xp, X, Y, bytes_per_element=24):
        x, y = X[:, None, chunk], Y[None, :, chunk]
        total = x + y
        difference = x - y
        out -= xp.sum(difference * difference
                      / xp.where(total > 0, total, xp.ones_like(total)), axis=2)
    return out


@register_kernel
class AdditiveChi2Kernel(Kernel):
    r"""The additive chi² kernel of scikit-learn, :math:`k(x, y) = -\sum_i (x_i-y_i)^2/(x_i+y_i)`.

    Defined for non-negative data. It is only conditionally positive definite (it is the
    negative of a squared distance), kept under this name for compatibility with
    ``sklearn.metrics.pairwise.additive_chi2_kernel``; ``exp(gamma * k)`` is the ``chi2``
    kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import additive_chi2_kernel
    >>> from kernelmaps.kernels import AdditiveChi2Kernel
    >>> X = np.random.RandomState(0).uniform(size=(4, 3))
    >>> bool(np.allclose(AdditiveChi2Kernel()(X), additive_chi2_kernel(X)))
    True
    >>> AdditiveChi2Kernel.is_psd
    False
    """

    name = "additive_chi2"
    is_psd = False
    requires_non_negative = True

    def evaluate_into(self, X, Y, out):
        _additive_chi2_into(X, Y, out)

    def rounding_error(self, X, Y, K):
        # −Σ of d non-negative terms (x−y)²/(x+y), each to 3 roundings: relative (d + 3)ε.
        return (X.shape[1] + 3) * _rounding.eps_of(K) * np.abs(np.asarray(K, np.float64))

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0] + 8 * Y.shape[1]

    def _diag(self, X):
        return np.zeros(X.shape[0], dtype=X.dtype)

    def _evaluate_device(self, xp, X, Y):
        return _additive_chi2_device(xp, X, Y)

    def _diag_device(self, xp, X):
        return xp.zeros(X.shape[0], dtype=X.dtype, device=X.device)


@register_kernel
class Chi2Kernel(Kernel):
    r"""Exponentiated chi² kernel :math:`k(x, y) = \exp(-\gamma\sum_i (x_i-y_i)^2/(x_i+y_i))`.

    Parameters
    ----------
    gamma : float or None, default=None
        Scale; ``None`` means 1 (scikit-learn's default for this kernel).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import chi2_kernel
    >>> from kernelmaps.kernels import Chi2Kernel
    >>> X = np.random.RandomState(0).uniform(size=(4, 3))
    >>> bool(np.allclose(Chi2Kernel(gamma=0.5)(X), chi2_kernel(X, gamma=0.5)))
    True
    """

    name = "chi2"
    param_names = ("gamma",)
    requires_non_negative = True

    def __init__(self, gamma: float | None = None) -> None:
        check_gamma(gamma, "chi2")
        self.gamma = gamma

    def _chi2_gamma(self) -> float:
        # None means 1 here (scikit-learn's chi2_kernel), not 1/n_features.
        return 1.0 if self.gamma is None else self._numeric_gamma()

    def evaluate_into(self, X, Y, out):
        _additive_chi2_into(X, Y, out)
        out *= self._chi2_gamma()
        np.exp(out, out=out)

    def rounding_error(self, X, Y, K):
        # exp of γ × the additive χ² sum (relative (d + 3)ε) scaled by γ: (d + 4)ε.
        return _rounding.exp_of_sum_error(K, X.shape[1] + 4, _rounding.eps_of(K))

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0] + 8 * Y.shape[1]

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _evaluate_device(self, xp, X, Y):
        out = _additive_chi2_device(xp, X, Y)
        out *= self._chi2_gamma()
        return unary(xp, "exp", out)

    def _diag_device(self, xp, X):
        return xp.ones(X.shape[0], dtype=X.dtype, device=X.device)


@register_kernel
class AdditiveChi2PSDKernel(Kernel):
    r"""The additive chi² kernel :math:`k(x, y) = \sum_i 2x_iy_i/(x_i+y_i)` (0/0 := 0).

    Positive definite on non-negative data; this is the kernel
    :class:`~kernelmaps.AdditiveChi2Sampler` approximates (Vedaldi & Zisserman, 2012). It is
    computed from scikit-learn's compiled ``additive_chi2`` through
    :math:`4xy/(x+y) = (x + y) - (x-y)^2/(x+y)`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import AdditiveChi2PSDKernel
    >>> X = np.random.RandomState(0).uniform(size=(4, 3))
    >>> x, y = X[:, None, :], X[None, :, :]
    >>> bool(np.allclose(AdditiveChi2PSDKernel()(X), (2 * x * y / (x + y)).sum(axis=-1)))
    True
    >>> bool(np.allclose(AdditiveChi2PSDKernel().diag(X), X.sum(axis=1)))  # k(x, x) = Σ x_i
    True
    """

    name = "additive_chi2_psd"
    requires_non_negative = True

    def evaluate_into(self, X, Y, out):
        # 4xy/(x+y) = (x+y) − (x−y)²/(x+y), and scikit-learn's kernel is −Σ(x−y)²/(x+y).
        _additive_chi2_into(X, Y, out)
        out += np.asarray(X.sum(axis=1)).reshape(-1, 1)
        out += np.asarray(Y.sum(axis=1)).reshape(1, -1)
        out *= 0.5

    def rounding_error(self, X, Y, K):
        # ½(Σx + Σy − Σ(x−y)²/(x+y)) with every part <= Σx + Σy: (d + 4)ε(Σx + Σy).
        totals = _rounding.row_sums(X)[:, None] + _rounding.row_sums(Y)[None, :]
        return (X.shape[1] + 4) * _rounding.eps_of(K) * totals

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0] + 8 * Y.shape[1]

    def _diag(self, X):
        return np.asarray(X.sum(axis=1), dtype=X.dtype).ravel()

    def _evaluate_device(self, xp, X, Y):
        out = _additive_chi2_device(xp, X, Y)
        out += xp.sum(X, axis=1)[:, None]
        out += xp.sum(Y, axis=1)[None, :]
        out *= 0.5
        return out

    def _diag_device(self, xp, X):
        return xp.sum(X, axis=1)


@register_kernel
class SkewedChi2Kernel(Kernel):
    r"""Skewed chi² kernel :math:`k(x, y) = \prod_i 2\sqrt{(x_i+c)(y_i+c)}/(x_i+y_i+2c)`.

    Defined for :math:`x_i, y_i > -c`; the kernel :class:`~kernelmaps.SkewedChi2Sampler`
    approximates (Li, Ionescu & Sminchisescu, 2010). Evaluated in log space, one feature at a
    time, so memory stays at one output block.

    Parameters
    ----------
    skewedness : float, default=1.0
        The skewedness :math:`c > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import SkewedChi2Kernel
    >>> X = np.random.RandomState(0).uniform(size=(4, 3))
    >>> c, x, y = 0.5, X[:, None, :], X[None, :, :]
    >>> direct = np.prod(2 * np.sqrt((x + c) * (y + c)) / (x + y + 2 * c), axis=-1)
    >>> bool(np.allclose(SkewedChi2Kernel(skewedness=c)(X), direct))
    True
    """

    name = "skewed_chi2"
    param_names = ("skewedness",)

    def __init__(self, skewedness: float = 1.0) -> None:
        check_real("skewedness", skewedness, "skewed_chi2")
        self.skewedness = skewedness

    def _check(self, X, name):
        X = super()._check(X, name)
        if min_value(X) <= -self.skewedness:
            raise ValueError(
                f"{name} contains values <= -skewedness ({-self.skewedness}); the skewed chi² "
                "kernel is defined for x > -skewedness. Increase skewedness or shift the data."
            )
        return X

    def evaluate_into(self, X, Y, out):
        c = self.skewedness
        X, Y = dense_block(X), dense_block(Y)
        # log k = Σ_i [½log(x_i+c) + ½log(y_i+c) + log 2 − log(x_i+y_i+2c)]
        out.fill(0.0)
        for i in range(X.shape[1]):
            out -= np.log(X[:, i, None] + Y[None, :, i] + 2 * c)
        out += (0.5 * np.log(X + c).sum(axis=1) + X.shape[1] * np.log(2.0))[:, None]
        out += 0.5 * np.log(Y + c).sum(axis=1)[None, :]
        np.exp(out, out=out)

    def rounding_error(self, X, Y, K):
        # log k is a sum of about 3d logarithms, each to ε of its size plus ε from its
        # argument; |log(x+y+2c)| <= log 2 + |log(x+c)| + |log(y+c)| bounds their sizes.
        eps = _rounding.eps_of(K)
        c, d = float(self.skewedness), X.shape[1]
        sizes = [np.abs(np.log(_rounding.dense64(Z) + c)).sum(axis=1) for Z in (X, Y)]
        magnitude = 2 * d * math.log(2.0) + 1.5 * (sizes[0][:, None] + sizes[1][None, :])
        return _rounding.exp_error(K, (d + 4) * eps * magnitude + 2 * d * eps, eps,
                                   at_most_one=True)  # 2√(ab)/(a + b) <= 1

    def _temp_bytes_per_row(self, Y):
        return 8 * Y.shape[0]

    def _diag(self, X):
        return np.ones(X.shape[0], dtype=X.dtype)

    def _evaluate_device(self, xp, X, Y):
        c = float(self.skewedness)
        out = xp.zeros((X.shape[0], Y.shape[0]), dtype=xp.result_type(X.dtype, Y.dtype),
                       device=X.device)
        for chunk in feature_chunks(xp, X, Y):
            out -= xp.sum(xp.log(X[:, None, chunk] + Y[None, :, chunk] + 2 * c), axis=2)
        out += (0.5 * xp.sum(xp.log(X + c), axis=1) + X.shape[1] * math.log(2.0))[:, None]
        out += 0.5 * xp.sum(xp.log(Y + c), axis=1)[None, :]
        return unary(xp, "exp", out)

    def _diag_device(self, xp, X):
        return xp.ones(X.shape[0], dtype=X.dtype, device=X.device)
