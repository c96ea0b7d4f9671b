r"""The data side of Nyström kernel ridge: passes over :math:`K_{nM}`, cached within a budget.

FALKON (:func:`kernelmaps.models._falkon.falkon_solve`) needs two things from the data:
the right-hand side :math:`K_{nM}^\top W Y` once, and :math:`K_{nM}^\top W K_{nM} V` in every
conjugate-gradient iteration. :class:`NystromSystem` provides both for rows held in memory —
a whole data set (:class:`~kernelmaps.models.KernelRidge`), or one row chunk of a Dask
collection on the worker that holds it (:mod:`kernelmaps.distributed._falkon` makes one per
chunk and sums their results):

* the **first pass** computes the kernel blocks :math:`K_b = k(X_b, C)` and the right-hand
  side, and keeps the blocks — in ``X``'s dtype, in one ``(rows, M)`` array — for as many
  leading rows as the memory budget allows (:func:`cache_budget`, the ``kernel_cache_bytes``
  setting);
* every **CG pass** is then one fused sweep over the cached blocks (:math:`K_b V`, scaled by
  the weights, then :math:`K_b^\top(\cdot)` while the block is still in cache) at memory
  bandwidth, and recomputes only the rows beyond the budget (a kernel evaluation per
  block: for the RBF kernel a GEMM of depth d and one exponential per entry).

The products over a block are accumulated in float64 whatever the blocks' dtype (a float32
block is widened into a per-thread scratch buffer first): float32 sums of M and block-rows
terms make the CG operator inconsistent at :math:`\sqrt M\varepsilon_{32}|K||V|`, which the
preconditioner amplifies (issue 17). Cached and recomputed passes compute the same numbers up
to the order of float64 sums (block boundaries differ).

Arrays of another library (array API dispatch) take the recompute path on their device.
"""

from __future__ import annotations

import time
from typing import Any

import array_api_compat
import numpy as np

from kernelmaps._array_api import is_device_array, matmul, namespace_and_device
from kernelmaps._config import available_memory, get_config, resolve_n_threads
from kernelmaps._engine import reduce_blocks, run_blocks, scratch_buffer
from kernelmaps.kernels import Kernel
from kernelmaps.models._common import as_float64

__all__ = ["KERNEL_CACHE_FRACTION", "NystromSystem", "cache_budget", "cross_block", "gram_block",
           "kernel_times"]

#: ``kernel_cache_bytes=None`` (the default) lets the kernel blocks use this fraction of the
#: memory available when a fit starts.
KERNEL_CACHE_FRACTION = 0.5


def cache_budget() -> int:
    """Bytes the kernel-block caches of one fit may hold: the ``kernel_cache_bytes`` setting,
    or :data:`KERNEL_CACHE_FRACTION` of the memory available now when it is ``None``."""
    setting = get_config()["kernel_cache_bytes"]
    if setting is not None:
        return int(setting)
    available = available_memory()
    return int(KERNEL_CACHE_FRACTION * available) if np.isfinite(available) else 0


#: Bytes of the float64 sub-block a pass multiplies at a time: small enough to stay in a
#: core's L2 cache between its two products (K_b v, then K_bᵀ u), large enough for BLAS.
#: Measured on 60,000 float32 rows, one thread: 32-64-row sub-blocks at M = 1,000-2,000
#: sweep 1.5-2× faster than 256-row ones; with 26 targets at M = 3,000, 64 rows beat 21
#: (the second product's inner dimension), hence at least 64.
SWEEP_BYTES = 1 << 19


def _widened(K_b: np.ndarray) -> np.ndarray:
    """``K_b`` as float64: itself, or a copy in this thread's scratch buffer (no allocation)."""
    if K_b.dtype == np.float64:
        return K_b
    wide = scratch_buffer("nystrom_float64", K_b.shape, np.float64)
    np.copyto(wide, K_b)
    return wide


def _sub_blocks(K_b: np.ndarray):
    """``(start, float64 rows)`` of ``K_b`` in sub-blocks of about :data:`SWEEP_BYTES`."""
    rows = max(64, SWEEP_BYTES // (8 * max(1, K_b.shape[1])))
    for start in range(0, K_b.shape[0], rows):
        yield start, _widened(K_b[start:start + rows])


def cross_block(K_b: Any, w_b: Any, Y_b: Any) -> Any:
    r""":math:`K_b^\top W_b Y_b`, accumulated in Y's dtype (float64)."""
    if not isinstance(K_b, np.ndarray):
        xp = array_api_compat.array_namespace(K_b)
        return xp.astype(K_b, Y_b.dtype, copy=False).T @ (Y_b * w_b[:, None])
    total = np.zeros((K_b.shape[1], Y_b.shape[1]))
    for start, wide in _sub_blocks(K_b):
        stop = start + wide.shape[0]
        total += wide.T @ (Y_b[start:stop] * w_b[start:stop, None])
    return total


def gram_block(K_b: Any, w_b: Any, V: Any) -> Any:
    r""":math:`K_b^\top W_b K_b V`, accumulated in V's dtype: one sweep over the block, each
    float64 sub-block used for both products while it is in cache."""
    if not isinstance(K_b, np.ndarray):
        K_b = array_api_compat.array_namespace(K_b).astype(K_b, V.dtype, copy=False)
        KV = K_b @ V
        KV *= w_b[:, None]
        return K_b.T @ KV
    M, t = K_b.shape[1], V.shape[1]
    total = np.zeros((M, t))
    part = scratch_buffer("nystrom_part", (M, t), np.float64)
    for start, wide in _sub_blocks(K_b):
        KV = scratch_buffer("nystrom_kv", (wide.shape[0], t), np.float64)
        np.matmul(wide, V, out=KV)
        KV *= w_b[start:start + wide.shape[0], None]
        np.matmul(wide.T, KV, out=part)
        total += part
    return total


class NystromSystem:
    r"""The passes over :math:`K_{nM}` of Nyström kernel ridge, for rows held in memory.

    Built by the first pass over the data, which computes the right-hand side
    :math:`K_{nM}^\top W Y` (:attr:`rhs`) and caches the kernel blocks of the first
    ``min(n, cache_bytes // (M · itemsize))`` rows; :meth:`gram_times` then gives
    :math:`K_{nM}^\top W K_{nM} V` in one pass: a sweep over the cached blocks plus a
    recomputation of the other rows.

    Parameters
    ----------
    kernel : Kernel
        The fitted kernel.
    X : {ndarray, sparse matrix, device array} of shape (n, d)
        The rows (validated; for a precomputed kernel, the (n, n) kernel matrix).
    columns : array
        What ``kernel`` takes as its second argument for the centres (the centres, or their
        indices for a precomputed kernel).
    weights : array of shape (n,)
        Sample weights (float64 where the device has it).
    Y : array of shape (n, t)
        Targets (float64 where the device has it).
    cache_bytes : int or None, default=None
        Budget of the cache; ``None``: :func:`cache_budget`.

    Attributes
    ----------
    rhs : array of shape (M, t)
        :math:`K_{nM}^\top W Y`.
    info : dict
        ``path`` (``"cached"``, ``"partly cached"`` or ``"recompute"``), ``cached_rows``,
        ``cache_bytes`` (held), ``cache_budget_bytes``, ``first_pass_s``.
    """

    def __init__(self, kernel: Kernel, X: Any, columns: Any, weights: Any, Y: Any, *,
                 cache_bytes: int | None = None) -> None:
        start = time.perf_counter()
        self.kernel, self.X, self.columns, self.weights = kernel, X, columns, weights
        n, M = X.shape[0], columns.shape[0]
        budget = cache_budget() if cache_bytes is None else int(cache_bytes)
        if is_device_array(X) or n == 0:
            cached = 0
            dtype = None
        else:
            dtype = kernel.evaluate(X[:1], columns).dtype  # the blocks' dtype (X's)
            cached = int(min(n, max(budget, 0) // max(1, M * dtype.itemsize)))
        self._cached_rows = cached
        self._cache = np.empty((cached, M), dtype=dtype) if cached else None
        rhs = None
        if cached:
            rhs = self._sweep_cache(self._first_pass_block, weights[:cached], Y[:cached],
                                    fill=True)
        if cached < n:
            rows, w_rows, Y_rows = _rows_from(cached, X, weights, Y)
            rest = kernel.reduce(rows, columns, cross_block, w_rows, Y_rows)
            rhs = rest if rhs is None else rhs + rest
        self.rhs = rhs
        self.info = {
            "path": ("cached" if cached == n else "recompute" if cached == 0
                     else "partly cached"),
            "cached_rows": cached,
            "cache_bytes": 0 if self._cache is None else int(self._cache.nbytes),
            "cache_budget_bytes": budget,
            "first_pass_s": time.perf_counter() - start,
        }

    def _first_pass_block(self, X_b: Any, cache_b: np.ndarray, w_b: np.ndarray,
                          Y_b: np.ndarray) -> np.ndarray:
        self.kernel.evaluate_into(X_b, self.columns, cache_b)  # straight into the cache
        return cross_block(cache_b, w_b, Y_b)

    def _sweep_cache(self, block_fn, *aligned: Any, fill: bool = False) -> np.ndarray:
        """Sum ``block_fn`` over row blocks of the cache (and of X while filling it), on
        the engine's threads; a block is its float32 rows plus their float64 copy."""
        M = self._cache.shape[1]
        bytes_per_row = M * (self._cache.dtype.itemsize + 8)
        source = self.X[: self._cached_rows] if fill else self._cache
        extra = (self._cache,) if fill else ()
        return reduce_blocks(source, block_fn, aligned=extra + aligned,
                             bytes_per_row=bytes_per_row, n_threads=resolve_n_threads())

    def gram_times(self, V: Any) -> Any:
        r""":math:`K_{nM}^\top W K_{nM} V` (float64), in one pass over the rows."""
        cached = self._cached_rows
        total = None
        if cached:
            total = self._sweep_cache(lambda K_b, w_b: gram_block(K_b, w_b, V),
                                      self.weights[:cached])
        if cached < self.X.shape[0]:
            X, weights = _rows_from(cached, self.X, self.weights)
            rest = self.kernel.reduce(X, self.columns, lambda K_b, w_b: gram_block(K_b, w_b, V),
                                      weights)
            total = rest if total is None else total + rest
        return total

    def release(self) -> None:
        """Drop the cached blocks (the fitted model keeps no reference to the system)."""
        self._cache = None


def _rows_from(start: int, *arrays: Any) -> tuple[Any, ...]:
    """The arrays from row ``start`` on (themselves for 0: a device array of a strict
    namespace cannot be sliced on its first axis alone)."""
    if start == 0:
        return arrays
    return tuple(a[start:] for a in arrays)


def kernel_times(kernel: Kernel, X: Any, columns: Any, coef: Any, *,
                 name: str = "predict") -> Any:
    """``K(X, columns) @ coef`` in row blocks, each kernel block in X's dtype and the product
    accumulated in float64 (where X's device has it): a float32 sum of M terms
    ``k(x, c_j) β_j`` loses up to M·eps32·Σ|k(x, c_j)||β_j|, far more than the float32
    rounding of the kernel values when β has cancelling entries."""
    if is_device_array(X):
        xp, _ = namespace_and_device(X)
        coef = as_float64(coef, X)
        V = coef if coef.ndim == 2 else coef[:, None]

        def device_block(xb, out):
            return matmul(xp, xp.astype(kernel.evaluate(xb, columns), V.dtype, copy=False),
                          V, out=out)
        result = run_blocks(X, n_out=V.shape[1], dtype=V.dtype, block_fn=device_block,
                            temp_bytes_per_row=16 * V.shape[0], name=name)
        return result[:, 0] if coef.ndim == 1 else result
    coef = np.asarray(coef, dtype=np.float64)
    V = coef.reshape(coef.shape[0], -1)

    def block(xb, out):
        np.matmul(_widened(kernel.evaluate(xb, columns)), V, out=out)

    result = run_blocks(X, n_out=V.shape[1], dtype=np.dtype(np.float64), block_fn=block,
                        temp_bytes_per_row=12 * V.shape[0], n_threads=resolve_n_threads(),
                        name=name)
    return result[:, 0] if coef.ndim == 1 else result
