"""Shared machinery of every feature map: validation, dtype policy and the transform engine.

A map implements three things only:

``_fit(X, random_state)``
    draw its randomness / pick its landmarks from validated ``X`` and return the output
    dimension;
``_transform_block(X_block, out_block)``
    write the features of a block of rows into the preallocated ``out_block`` (a view of
    the final output), using in-place operations;
``_block_temp_bytes_per_row(n_features)`` (optional)
    how many bytes of temporaries one row needs inside ``_transform_block``, so the engine
    can size blocks to stay in cache.

Everything else — parameter validation, input validation at the boundary, the dtype policy
(float32 in → float32 out, anything else → float64), the choice of block size, running
blocks on threads, and refusing to return non-finite values — lives here, once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from math import prod
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import ThreadpoolController

from kernelmaps._config import get_config, resolve_n_threads

__all__ = ["FLOAT_DTYPES", "FeatureMap", "check_finite_output"]

#: The dtype policy: float32 is kept, every other input is computed in float64.
FLOAT_DTYPES = (np.float64, np.float32)

#: Constraints of the two parameters every randomised map shares (scikit-learn's names).
RANDOM_MAP_CONSTRAINTS: dict = {
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}

_MIN_BLOCK_ROWS = 128
_threadpool_controller: ThreadpoolController | None = None


def _blas_controller() -> ThreadpoolController:
    # Inspecting the loaded BLAS libraries costs milliseconds; do it once per process.
    global _threadpool_controller
    if _threadpool_controller is None:
        _threadpool_controller = ThreadpoolController()
    return _threadpool_controller


_OVERFLOW_HINT = (
    "the input is too large in magnitude for this map's arithmetic (it overflowed). Rescale "
    "the features first, e.g. with sklearn.preprocessing.StandardScaler or MaxAbsScaler."
)


_scratch = threading.local()


def scratch_buffer(name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A reusable per-thread work array of ``shape`` (contents undefined).

    Blocks run one after another on each thread, so a block's temporaries can live in the
    same memory as the previous block's. Allocating them afresh costs more than the work
    for cache-sized blocks: multi-megabyte allocations come from ``mmap`` and every page
    is faulted in and zeroed again. Buffers are per thread (transform stays thread-safe)
    and are freed with the thread.
    """
    dtype = np.dtype(dtype)
    buffers = _scratch.__dict__.setdefault("buffers", {})
    size = prod(shape)
    buffer = buffers.get((name, dtype))
    if buffer is None or buffer.size < size:
        buffer = np.empty(size, dtype=dtype)
        buffers[(name, dtype)] = buffer
    return buffer[:size].reshape(shape)


def single_threaded_blas():
    """Context manager limiting BLAS to one thread (for work that is already parallel, or
    small products where thread start-up costs more than it saves)."""
    return _blas_controller().limit(limits=1, user_api="blas")


def check_finite_output(block: np.ndarray, what: str, start: int,
                        hint: str = _OVERFLOW_HINT) -> None:
    """Raise a clear error instead of returning NaN/inf produced by overflow.

    The sum is a cheap single pass over a block that is still in cache; only if it is not
    finite do we look element-wise (a finite block whose sum overflows is not an error).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        total = block.sum()
    if np.isfinite(total) or np.isfinite(block).all():
        return
    bad = np.argwhere(~np.isfinite(block))[0]
    raise ValueError(
        f"{what} produced a non-finite value ({block[tuple(bad)]}) at row {start + bad[0]}, "
        f"column {bad[1]}: {hint}"
    )


class FeatureMap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class of every kernelmaps feature map z(x) with z(x)·z(y) ≈ k(x, y).

    Subclasses implement ``_fit`` and ``_transform_block``; see the module docstring.
    """

    #: Sparse formats accepted (``False``: dense only). CSR is what row blocks need.
    _accept_sparse: str | bool = "csr"
    #: ``n_jobs``-like attribute name that overrides the global thread setting, if any.
    _n_jobs_attr: str | None = None

    # ------------------------------------------------------------------ validation
    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        """Validate ``X`` at the fit/transform boundary and apply the dtype policy."""
        try:
            X = validate_data(
                self,
                X,
                reset=reset,
                accept_sparse=self._accept_sparse,
                dtype=list(FLOAT_DTYPES),
            )
        except ValueError as error:
            if "could not convert" in str(error) or "strings" in str(error):
                raise ValueError(
                    f"X passed to {type(self).__name__} must be numeric, but it holds strings "
                    f"({error}). Encode text or categorical columns first, e.g. with "
                    "sklearn.preprocessing.OneHotEncoder."
                ) from error
            raise
        self._check_X_values(X)
        return X

    def _check_X_values(self, X: Any) -> None:
        """Map-specific domain checks (e.g. non-negativity); default: none."""

    # ------------------------------------------------------------------ fitting
    def _fit(self, X: Any, random_state: np.random.RandomState) -> int:  # pragma: no cover
        raise NotImplementedError

    def _fit_validated(self, X: Any) -> None:
        random_state = check_random_state(getattr(self, "random_state", None))
        self._n_features_out = int(self._fit(X, random_state))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> FeatureMap:
        """Fit the feature map to ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted map.
        """
        X = self._validate_X(X, reset=True)
        self._fit_validated(X)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Fit to ``X`` and return its features, validating ``X`` only once.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.
        **fit_params : dict
            Ignored; accepted for API compatibility.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            The features z(X).
        """
        X = self._validate_X(X, reset=True)
        self._fit_validated(X)
        return self._transform_validated(X)

    # ------------------------------------------------------------------ transform
    def transform(self, X: Any) -> Any:
        """Map ``X`` to the approximate kernel feature space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New data.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            The features z(X); float32 if ``X`` is float32, else float64.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return self._transform_validated(X)

    def _transform_validated(self, X: Any) -> Any:
        return run_blocks(
            X,
            n_out=self._n_out(X),
            dtype=self._output_dtype(X),
            block_fn=self._transform_block,
            temp_bytes_per_row=self._block_temp_bytes_per_row(X.shape[1]),
            n_threads=resolve_n_threads(
                getattr(self, self._n_jobs_attr) if self._n_jobs_attr else None
            ),
            name=f"{type(self).__name__}.transform",
        )

    def _n_out(self, X: Any) -> int:
        """Output dimension for ``X`` (fitted maps: fixed at fit time)."""
        return self._n_features_out

    def _output_dtype(self, X: Any) -> np.dtype:
        return np.dtype(np.float32) if X.dtype == np.float32 else np.dtype(np.float64)

    def _block_temp_bytes_per_row(self, n_features: int) -> int:
        """Bytes of temporaries per row inside ``_transform_block`` (default: none)."""
        return 0

    def _transform_block(self, X_block: Any, out: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = bool(self._accept_sparse)
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def block_rows_for(n_rows: int, bytes_per_row: int) -> int:
    """Rows per block so one block's working set is about ``block_bytes``."""
    target = get_config()["block_bytes"]
    rows = max(_MIN_BLOCK_ROWS, target // max(1, bytes_per_row))
    return int(min(max(1, n_rows), rows))


def run_blocks(
    X: Any,
    *,
    n_out: int,
    dtype: np.dtype,
    block_fn: Callable[[Any, np.ndarray], None],
    temp_bytes_per_row: int = 0,
    n_threads: int = 1,
    name: str = "transform",
    nonfinite_hint: str = _OVERFLOW_HINT,
) -> np.ndarray:
    """The chunked transform engine.

    Allocates the ``(n_samples, n_out)`` output once, cuts the rows into blocks whose
    working set (output rows + temporaries) is about ``block_bytes``, and calls
    ``block_fn(X[start:stop], out[start:stop])`` for each block — on a thread pool when
    ``n_threads > 1`` and there is more than one block. Block boundaries depend only on the
    sizes, never on the thread count, so the result is identical for any ``n_threads``.
    Memory beyond the output is bounded by (number of threads) × (block working set).
    """
    n_samples = X.shape[0]
    out = np.empty((n_samples, n_out), dtype=dtype)
    if n_samples == 0:
        return out
    bytes_per_row = n_out * dtype.itemsize + temp_bytes_per_row
    rows = block_rows_for(n_samples, bytes_per_row)
    starts = range(0, n_samples, rows)

    def work(start: int) -> None:
        stop = min(start + rows, n_samples)
        block = out[start:stop]
        with np.errstate(over="ignore", invalid="ignore"):
            block_fn(X[start:stop], block)
        check_finite_output(block, name, start, nonfinite_hint)

    n_threads = min(n_threads, len(starts))
    if n_threads <= 1:
        for start in starts:
            work(start)
        return out
    # Blocks run concurrently; BLAS inside each block runs single-threaded so the
    # machine is not oversubscribed (NumPy ufuncs and BLAS calls release the GIL).
    with single_threaded_blas(), ThreadPoolExecutor(max_workers=n_threads) as pool:
        for _ in pool.map(work, starts):
            pass
    return out


def reduce_blocks(
    X: Any,
    block_fn: Callable[[Any], np.ndarray],
    *,
    bytes_per_row: int,
    n_threads: int = 1,
) -> np.ndarray:
    """Sum ``block_fn(X[start:stop])`` over cache-sized row blocks, on threads.

    The reduction counterpart of :func:`run_blocks`, for passes over the data that produce a
    small result (e.g. ``K_bᵀ (K_b v)`` in kernel ridge's conjugate gradient): memory stays
    at one block per thread whatever ``n`` is. Partial sums are accumulated in float64 in a
    fixed block order, so the result does not depend on the thread count.
    """
    n_samples = X.shape[0]
    rows = block_rows_for(n_samples, bytes_per_row)
    starts = list(range(0, n_samples, rows))

    def work(start: int) -> np.ndarray:
        return np.asarray(block_fn(X[start:start + rows]), dtype=np.float64)

    def accumulate(partials) -> np.ndarray:
        total = None
        for part in partials:  # in block order, so the sum is deterministic
            if total is None:
                total = part.copy()
            else:
                total += part
        return total

    n_threads = min(n_threads, len(starts))
    if n_threads <= 1:
        return accumulate(map(work, starts))
    with single_threaded_blas(), ThreadPoolExecutor(max_workers=n_threads) as pool:
        return accumulate(pool.map(work, starts))


def sparse_container_like(X: Any, result: sp.spmatrix | sp.sparray) -> Any:
    """Return ``result`` in the same sparse interface (matrix vs array) as ``X``, as CSR."""
    if sp.isspmatrix(X):
        return sp.csr_matrix(result)
    return sp.csr_array(result)
