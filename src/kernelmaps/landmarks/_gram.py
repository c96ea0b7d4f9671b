"""Kernel access of the selection strategies, shared by all of them: rows addressed by index."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
from sklearn.utils.validation import check_array

from kernelmaps._array_api import is_device_array, to_numpy
from kernelmaps._engine import FLOAT_DTYPES
from kernelmaps.kernels import Kernel, PrecomputedKernel, resolve_kernel


# ------------------------------------------------------------------------ kernel access
class _Gram:
    """Kernel values between rows of the training set, addressed by row index.

    The selection algorithms need only k(x_i, x_j) for index sets and the diagonal, so they
    are written once against this interface; the :class:`~kernelmaps.kernels.Kernel` does the
    rest, a :class:`~kernelmaps.kernels.PrecomputedKernel` included (its columns are
    addressed by index). Blocks are returned in float64: the selections accumulate sums over
    thousands of kernel values, where float32 rounding would decide swaps.
    """

    def __init__(self, X: Any, kernel: Kernel) -> None:
        self.X = X
        self.kernel = kernel
        self.precomputed = isinstance(kernel, PrecomputedKernel)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def rows(self, idx: Any) -> Any:
        """The data of the rows ``idx`` (points, or rows of the kernel matrix)."""
        return self.X[idx]

    def columns(self, idx: Any = None) -> Any:
        """A handle on the columns ``idx`` (``None``: all) to pass to :meth:`cross`."""
        if self.precomputed:
            return np.arange(self.n) if idx is None else np.asarray(idx)
        return self.X if idx is None else self.X[idx]

    def cross(self, rows: Any, columns: Any) -> np.ndarray:
        """The block k(rows, columns) as a float64 array."""
        with np.errstate(over="ignore", invalid="ignore"):
            block = np.asarray(self.kernel.evaluate(rows, columns), dtype=np.float64)
            finite = np.isfinite(block.sum()) or np.isfinite(block).all()
        if not finite:
            raise ValueError(
                f"The kernel {self.kernel} has non-finite values on X while selecting "
                "landmarks: check the kernel's parameters (e.g. a non-integer polynomial "
                "degree on negative inner products) or rescale X."
            )
        return block

    def diag(self) -> np.ndarray:
        """k(x_i, x_i) for every row, float64."""
        return np.asarray(self.kernel.diag(self.X), dtype=np.float64)


def _as_gram(X: Any, kernel: Kernel | str) -> _Gram:
    """Validate ``X`` and ``kernel`` of a public selection function."""
    if not isinstance(kernel, (str, Kernel)):
        raise TypeError(
            "kernel must be a kernel name such as 'rbf', a kernelmaps.kernels.Kernel such as "
            f"get_kernel('rbf', gamma=0.5), or 'precomputed'; got {kernel!r}."
        )
    kernel = resolve_kernel(kernel, owner="landmark selection")
    X = check_array(_on_host(X), accept_sparse="csr", dtype=list(FLOAT_DTYPES), input_name="X")
    kernel = kernel.resolve(X)  # gamma="scale": on the rows selected from
    if isinstance(kernel, PrecomputedKernel) and X.shape[0] != X.shape[1]:
        raise ValueError(
            "With kernel='precomputed', X must be the square kernel matrix of the "
            f"training data, shape (n_samples, n_samples); got shape {X.shape}."
        )
    return _Gram(X, kernel)


def _on_host(X: Any) -> Any:
    """A device array as NumPy (the strategies other than uniform compute on the host)."""
    return to_numpy(X) if is_device_array(X) else X


def _check_n_components(n_components: Any, n_samples: int) -> int:
    if (not isinstance(n_components, Integral) or isinstance(n_components, bool)
            or n_components < 1):
        raise ValueError(f"n_components must be a positive int; got {n_components!r}.")
    if n_components > n_samples:
        raise ValueError(
            f"n_components={n_components} exceeds the number of rows of X ({n_samples}): a "
            "subset cannot be larger than the set. Lower n_components (Nystroem clamps it "
            "to n_samples with a warning)."
        )
    return int(n_components)


def _check_positive_int(name: str, value: Any) -> int:
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}.")
    return int(value)
