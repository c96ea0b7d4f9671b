"""Block helpers of the kernels: inner products, squared norms and distances of row blocks,
parameter checks, on NumPy/SciPy (dense or CSR) and on any array-API device."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot

from kernelmaps._array_api import (
    float_dtypes,
    is_device_array,
    namespace_and_device,
)
from kernelmaps._config import get_config
from kernelmaps._engine import FLOAT_DTYPES, clamp
from kernelmaps.kernels._gamma import check_gamma_heuristic


def check_positive(name: str, value: Any, kernel: str, *, allow_none: bool = True,
                   allow_zero: bool = False) -> None:
    """Validate a positive (or non-negative) real kernel parameter."""
    if value is None and allow_none:
        return
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        raise TypeError(f"{kernel} kernel: {name} must be a real number; got {value!r}.")
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{kernel} kernel: {name} must be finite and {bound}; got {value!r}.")


def check_gamma(value: Any, kernel: str, *, allow_zero: bool = False) -> None:
    """Validate a kernel's ``gamma``: a positive number, None, or ``"scale"``/``"auto"``
    (resolved later on the training data, :meth:`Kernel.resolve`)."""
    if isinstance(value, str):
        check_gamma_heuristic(value, f"{kernel} kernel")
        return
    check_positive("gamma", value, kernel, allow_zero=allow_zero)


def check_real(name: str, value: Any, kernel: str) -> None:
    """Validate a finite real kernel parameter (``None`` allowed)."""
    if value is None:
        return
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool) \
            or not np.isfinite(value):
        raise ValueError(f"{kernel} kernel: {name} must be a finite real number; got {value!r}.")


def dot_into(X: Any, Y: Any, out: np.ndarray) -> None:
    """``out[...] = X @ Y.T`` for dense or sparse operands (BLAS writes in place if dense)."""
    if sp.issparse(X) or sp.issparse(Y):
        out[...] = safe_sparse_dot(X, Y.T, dense_output=True)
    else:
        np.matmul(X, Y.T, out=out)


def row_sq_norms(X: Any) -> np.ndarray:
    """Squared Euclidean norms of the rows of a dense or sparse matrix."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel().astype(X.dtype, copy=False)
    return np.einsum("ij,ij->i", X, X)


def sq_dist_into(X: Any, Y: Any, out: np.ndarray) -> None:
    """Squared Euclidean distances ``‖x−y‖²`` into ``out``, clipped at 0 against rounding."""
    dot_into(X, Y, out)
    out *= -2.0
    out += row_sq_norms(X)[:, None]
    out += row_sq_norms(Y)[None, :]
    clamp(out, low=0.0)


def dense_block(X: Any) -> np.ndarray:
    """A row block as a dense array (sparse blocks are small enough to densify)."""
    return X.toarray() if sp.issparse(X) else X


# ----------------------------------------------------------------- the same, on a device
def _float_dtypes_of(X: Any) -> list[Any]:
    """The dtypes ``check_array`` may keep: NumPy's, or those of a device array's namespace."""
    if is_device_array(X):
        return float_dtypes(*namespace_and_device(X))
    return list(FLOAT_DTYPES)


def dot_device(xp: Any, X: Any, Y: Any) -> Any:
    """``X @ Y.T`` as a new array."""
    return X @ Y.T


def row_sq_norms_device(xp: Any, X: Any) -> Any:
    """Squared Euclidean norms of the rows."""
    return xp.sum(X * X, axis=1)


def sq_dist_device(xp: Any, X: Any, Y: Any) -> Any:
    """Squared Euclidean distances, clipped at 0 against rounding (as :func:`sq_dist_into`)."""
    out = dot_device(xp, X, Y)
    out *= -2.0
    out += row_sq_norms_device(xp, X)[:, None]
    out += row_sq_norms_device(xp, Y)[None, :]
    return xp.clip(out, min=0.0)


def feature_chunks(xp: Any, X: Any, Y: Any, bytes_per_element: int = 8) -> list[slice]:
    """Feature ranges for ``(n_X, n_Y, chunk)`` broadcasts within the device block budget
    (the kernels without a matrix product: L1 distance, the χ² family)."""
    budget = get_config()["device_block_bytes"]
    per_feature = max(1, X.shape[0] * Y.shape[0] * bytes_per_element)
    chunk = int(max(1, min(X.shape[1], budget // per_feature)))
    return [slice(start, min(start + chunk, X.shape[1])) for start in range(0, X.shape[1], chunk)]
