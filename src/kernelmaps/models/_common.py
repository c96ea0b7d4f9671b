"""Machinery shared by the kernel machines: kernel resolution, blocked evaluation, centres."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from kernelmaps._config import resolve_n_threads
from kernelmaps._engine import FLOAT_DTYPES, reduce_blocks, run_blocks
from kernelmaps.kernels import KERNELS, Kernel, resolve_kernel

__all__ = ["KERNEL_PARAMETER_CONSTRAINTS", "KernelModelMixin"]

#: Constraints of the scikit-learn-style kernel arguments every model takes.
KERNEL_PARAMETER_CONSTRAINTS: dict = {
    "kernel": [StrOptions(set(KERNELS) | {"precomputed"}), callable, Kernel],
    "gamma": [Interval(Real, 0, None, closed="neither"), None],
    "degree": [Interval(Real, 1, None, closed="left"), None],
    "coef0": [Interval(Real, None, None, closed="neither"), None],
    "kernel_params": [dict, None],
}


class KernelModelMixin:
    """Kernel evaluation for models: ``k(A, B)`` for names, Kernel objects, callables and
    ``"precomputed"``, in bounded-memory row blocks."""

    kernel: Any
    gamma: Any
    degree: Any
    coef0: Any
    kernel_params: Any

    @property
    def _precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _resolved(self) -> Kernel | Any:
        return resolve_kernel(self.kernel, gamma=self.gamma, degree=self.degree,
                              coef0=self.coef0, kernel_params=self.kernel_params)

    def _kernel_block(self, A: Any, B: Any) -> np.ndarray:
        """k(A, B) for one block of validated rows A against the (small) set B."""
        return self._resolved().evaluate(A, B)

    def _kernel_matrix(self, A: Any, B: Any | None = None) -> np.ndarray:
        """The full k(A, B) (``B=None``: symmetric k(A, A)), blocked over rows of A."""
        if self._precomputed:
            return A.toarray() if sp.issparse(A) else np.asarray(A)
        return self._resolved()(A, B)

    def _kernel_diag(self, A: Any) -> np.ndarray:
        return self._resolved().diag(A)

    def _kernel_times(self, X: Any, centers: Any, coefficients: np.ndarray) -> np.ndarray:
        """``k(X, centers) @ coefficients`` in row blocks, never holding k(X, centers)."""
        coefficients = np.asarray(coefficients)
        squeeze = coefficients.ndim == 1
        coefficients = coefficients.reshape(coefficients.shape[0], -1)
        dtype = np.float32 if X.dtype == np.float32 else np.float64

        def block(xb, out):
            Kb = xb.toarray() if self._precomputed and sp.issparse(xb) else (
                xb if self._precomputed else self._kernel_block(xb, centers))
            np.matmul(Kb, coefficients.astype(dtype, copy=False), out=out)

        result = run_blocks(X, n_out=coefficients.shape[1], dtype=np.dtype(dtype),
                            block_fn=block, temp_bytes_per_row=8 * centers.shape[0],
                            n_threads=resolve_n_threads(None),
                            name=f"{type(self).__name__}.predict")
        return result[:, 0] if squeeze else result

    def _reduce_kernel_blocks(self, X: Any, centers: Any, fn, extra: tuple = ()) -> np.ndarray:
        """Σ over row blocks b of ``fn(k(X_b, centers), *extra_b)``; extras are row-aligned."""
        n = X.shape[0]
        stacked = np.arange(n)

        def block(index_block):
            start, stop = index_block[0], index_block[-1] + 1
            Kb = self._kernel_block(X[start:stop], centers)
            return fn(Kb, *(e[start:stop] for e in extra))

        return reduce_blocks(stacked, block, bytes_per_row=16 * centers.shape[0],
                             n_threads=resolve_n_threads(None))


def float_dtypes() -> list:
    """The dtype policy of every estimator: float32 kept, everything else float64."""
    return list(FLOAT_DTYPES)
