"""What users bring as a kernel: a function (:class:`CallableKernel`) or their own kernel
matrix (:class:`PrecomputedKernel`), both seen as a :class:`~kernelmaps.kernels.Kernel`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils.validation import check_array

from kernelmaps._array_api import (
    is_device_array,
    namespace_and_device,
    on_device,
    to_numpy,
)
from kernelmaps.kernels._base import Kernel
from kernelmaps.kernels._ops import _float_dtypes_of, dense_block


class CallableKernel(Kernel):
    """A user's function seen as a :class:`Kernel`.

    ``vectorized=False`` (scikit-learn's convention, as in ``Nystroem(kernel=f)``): ``f(x, y,
    **params)`` takes two 1-D rows and returns a number; values come from scikit-learn's
    pairwise driver. ``vectorized=True``: ``f(X, Y, **params)`` returns the whole block.

    Parameters
    ----------
    function : callable
        The kernel function, ``f(x, y, **params)`` or ``f(X, Y, **params)`` (see above).
    params : dict or None, default=None
        Keyword arguments passed to ``function`` (a model's ``kernel_params``).
    n_jobs : int or None, default=None
        Parallelism of scikit-learn's pairwise driver (pairwise callables only).
    vectorized : bool, default=False
        Whether ``function`` computes whole blocks.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import laplacian_kernel
    >>> from kernelmaps.kernels import CallableKernel
    >>> X = np.random.RandomState(0).normal(size=(5, 3))
    >>> def k(x, y, scale=1.0):  # on two rows, as scikit-learn's callables
    ...     return np.exp(-scale * np.abs(x - y).sum())
    >>> pairwise = CallableKernel(k, {"scale": 0.5})
    >>> bool(np.allclose(pairwise(X), laplacian_kernel(X, gamma=0.5)))
    True
    >>> blocks = CallableKernel(lambda A, B: laplacian_kernel(A, B, gamma=0.5), vectorized=True)
    >>> bool(np.allclose(blocks(X, X[:2]), pairwise(X, X[:2])))
    True
    """

    name = "callable"
    is_psd = True  # unknown: assumed, and checked where it matters (Nystroem warns)

    def __init__(self, function: Callable[..., Any], params: dict | None = None, *,
                 n_jobs: int | None = None, vectorized: bool = False) -> None:
        if not callable(function):
            raise TypeError(f"function must be callable; got {function!r}.")
        self.function = function
        # Stored as given (scikit-learn's rule for constructor parameters): ``clone`` checks
        # that the object it passed is the one it reads back from ``get_params``.
        self.params = params
        self.n_jobs = n_jobs
        self.vectorized = vectorized

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"function": self.function, "params": self.params, "n_jobs": self.n_jobs,
                "vectorized": self.vectorized}

    @property
    def _keywords(self) -> dict[str, Any]:
        """The keyword arguments passed to ``function`` (``params=None``: none)."""
        return {} if self.params is None else self.params

    def __hash__(self) -> int:
        return hash((type(self), self.function, self.vectorized))

    def __call__(self, X: Any, Y: Any = None, *, out: np.ndarray | None = None) -> np.ndarray:
        if self.vectorized or Y is not None:
            return super().__call__(X, Y, out=out)
        # scikit-learn's driver evaluates a symmetric matrix once per unordered pair.
        X = self._check(X, "X")
        if out is not None and is_device_array(X):
            raise ValueError("out applies to host (NumPy) arrays only; a device array's "
                             "kernel matrix is returned on its device (drop out).")
        K = pairwise_kernels(X, None, metric=self.function, n_jobs=self.n_jobs, **self._keywords)
        if out is not None:
            out[...] = K
            return out
        return K if is_device_array(X) else np.asarray(K)

    def evaluate_into(self, X, Y, out):
        if not self.vectorized:
            out[...] = pairwise_kernels(X, Y, metric=self.function, n_jobs=self.n_jobs,
                                        **self._keywords)
            return
        block = np.asarray(self.function(X, Y, **self._keywords))
        if block.shape != out.shape:
            raise ValueError(
                f"the kernel function returned shape {block.shape} for blocks of {X.shape[0]} "
                f"and {Y.shape[0]} rows; a vectorised kernel must return the "
                f"({X.shape[0]}, {Y.shape[0]}) matrix k(X, Y)."
            )
        out[...] = block

    def _evaluate_device(self, xp, X, Y):
        if not self.vectorized:
            # scikit-learn's pairwise driver keeps the namespace under array API dispatch.
            return pairwise_kernels(X, Y, metric=self.function, n_jobs=self.n_jobs,
                                    **self._keywords)
        block = self.function(X, Y, **self._keywords)
        if tuple(block.shape) != (X.shape[0], Y.shape[0]):
            raise ValueError(
                f"the kernel function returned shape {tuple(block.shape)} for blocks of "
                f"{X.shape[0]} and {Y.shape[0]} rows; a vectorised kernel must return the "
                f"({X.shape[0]}, {Y.shape[0]}) matrix k(X, Y)."
            )
        return block


class PrecomputedKernel(Kernel):
    """Kernel values the user computed, ``kernel="precomputed"``.

    Rows of ``X`` are :math:`k(x_i, t_j)` against the training points :math:`t_1..t_n`.

    ``Y`` names training points by index: ``kernel(X, Y)`` and ``kernel.matmul(X, Y, V)``
    take the columns ``Y`` (an integer array; ``None``: all columns) of ``X``. So a model
    fitted on the square training matrix predicts from the rectangular ``k(X_new, X_train)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import PrecomputedKernel, RBFKernel
    >>> X = np.random.RandomState(0).normal(size=(5, 2))
    >>> K = RBFKernel(gamma=0.5)(X)  # k(x_i, t_j) with the training points t = X
    >>> pre = PrecomputedKernel()
    >>> bool(np.array_equal(pre(K, np.array([0, 3])), K[:, [0, 3]]))
    True
    >>> bool(np.allclose(pre.matmul(K, np.array([0, 3]), [1.0, -1.0]), K[:, 0] - K[:, 3]))
    True
    >>> pre.diag(K)  # k(t_i, t_i) from the square training matrix
    array([1., 1., 1., 1., 1.])
    """

    name = "precomputed"

    def _check(self, X: Any, name: str) -> Any:
        return check_array(X, accept_sparse="csr", dtype=_float_dtypes_of(X), input_name=name)

    def _check_pair(self, X: Any, Y: Any) -> tuple[Any, Any]:
        X = self._check(X, "X")
        if is_device_array(X) and Y is not None:
            xp, device = namespace_and_device(X)
            self._check_columns(X, to_numpy(Y))
            return X, on_device(Y, xp, device)
        columns = np.arange(X.shape[1]) if Y is None else np.asarray(Y)
        self._check_columns(X, columns)
        return X, columns

    def _check_columns(self, X: Any, columns: np.ndarray) -> None:
        if columns.ndim != 1 or (columns.size and (
                not np.issubdtype(columns.dtype, np.integer)
                or columns.min() < 0 or columns.max() >= X.shape[1])):
            raise ValueError(
                "With a precomputed kernel, Y must be the indices of training points (an "
                f"integer array of columns of X, each in [0, {X.shape[1]})); got {columns!r}."
            )

    def _n_columns(self, Y: Any) -> int:
        return Y.shape[0]

    def _result_dtype(self, X: Any, Y: Any) -> np.dtype:
        return np.dtype(X.dtype)

    def _temp_bytes_per_row(self, Y: Any) -> int:
        return 8 * Y.shape[0]

    def evaluate_into(self, X, Y, out):
        out[...] = dense_block(X[:, Y])

    def _diag(self, X):
        if X.shape[0] != X.shape[1]:
            raise ValueError(
                "k(x, x) of new points is not in a precomputed kernel matrix k(X_new, X_train); "
                f"only the square training matrix has it on its diagonal (got shape {X.shape})."
            )
        return np.asarray(dense_block(X).diagonal()).copy()

    def _device_columns(self, xp, X, Y):
        if Y is None:
            return xp.arange(X.shape[1], device=namespace_and_device(X)[1])
        return on_device(Y, xp, namespace_and_device(X)[1])

    def _device_dtype(self, xp, X, Y):
        return X.dtype

    def _evaluate_device(self, xp, X, Y):
        return xp.take(X, Y, axis=1)

    def _diag_device(self, xp, X):
        if X.shape[0] != X.shape[1]:
            return self._diag(X)  # the same clear error
        return xp.linalg.diagonal(X)
