"""What the kernels offer kernelmaps' other packages beyond the users' API.

The maps and the models compute with a :class:`~kernelmaps.kernels.Kernel` through its
public methods (``evaluate_into``, ``matmul``, …); a few of its facts and block helpers they
need besides are here, each named and documented once, instead of being read from the
kernel's private methods or from the kernels' private modules (``tests/test_boundaries.py``
refuses those).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelmaps.kernels._base import Kernel
from kernelmaps.kernels._ops import dense_block, row_sq_norms

__all__ = ["dense_block", "effective_gamma", "result_dtype", "row_sq_norms"]


def effective_gamma(kernel: Kernel, n_features: int) -> float:
    """The kernel's γ as a number on ``n_features`` features (``gamma=None``: 1/d).

    Parameters
    ----------
    kernel : Kernel
        A kernel with a ``gamma`` (RBF, Laplacian, polynomial, …), resolved: a
        ``"scale"``/``"auto"`` γ must have been resolved on the training data
        (:meth:`Kernel.resolve`), else ``ValueError``.
    n_features : int
        The input dimension d.

    Returns
    -------
    float
        The value of γ. The method registry of :mod:`kernelmaps.evaluate` builds a map of the kernel
        (RBFSampler, the sketches) with it; FALKON's fused RBF pass scales the centres by it.
    """
    return kernel._gamma(n_features)


def result_dtype(kernel: Kernel, X: Any, Y: Any) -> np.dtype:
    """The dtype of the kernel's values between the rows of ``X`` and of ``Y``.

    Parameters
    ----------
    kernel : Kernel
        Any kernel (a user's callable kernel decides its own).
    X, Y : array-like
        The two sides' rows.

    Returns
    -------
    numpy.dtype
        What ``kernel.evaluate_into(X, Y, out)`` expects ``out`` to be: Nyström's transform
        allocates its reused block buffer in it.
    """
    return kernel._result_dtype(X, Y)
