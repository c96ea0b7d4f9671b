r"""The data side of Nyström kernel ridge: passes over :math:`K_{nM}`, cached within a budget.

FALKON (:func:`kernelmaps.models._falkon.falkon_solve`) needs two things from the data:
the right-hand side :math:`K_{nM}^\top W Y` once, and :math:`K_{nM}^\top W K_{nM} V` in every
conjugate-gradient iteration. :class:`NystromSystem` provides both for rows held in memory —
a whole data set (:class:`~kernelmaps.models.KernelRidge`), or one row chunk of a Dask
collection on the worker that holds it (:mod:`kernelmaps.distributed._falkon` makes one per
chunk and sums their results):

* the **first pass** computes the kernel blocks :math:`K_b = k(X_b, C)` and the right-hand
  side, and keeps the blocks — in ``X``'s dtype, in one ``(rows, M)`` array — for as many
  leading rows as the memory budget allows
  (:func:`~kernelmaps.models._kernel_blocks.cache_budget`, the ``kernel_cache_bytes``
  setting);
* every **CG pass** is then one fused sweep over the cached blocks (:math:`K_b V`, scaled by
  the weights, then :math:`K_b^\top(\cdot)` while the block is still in cache) at memory
  bandwidth, and recomputes only the rows beyond the budget (a kernel evaluation per
  block: for the RBF kernel a GEMM of depth d and one exponential per entry).

**Precision.** float64 data is computed in float64 throughout; float32 data has its blocks
multiplied in float32 over sub-blocks, summed in float64
(:mod:`kernelmaps.models._kernel_blocks`), and CG reaches the relative residual
:func:`~kernelmaps.models._kernel_blocks.attainable_residual` gives, recomputing its
residual periodically (:func:`kernelmaps.models._cg.conjugate_gradient`,
``true_residual_every``) so that it does not drift from the system on the way there. Cached
and recomputed passes compute the same numbers up to the order of float64 sums.

Arrays of another library (array API dispatch) take the recompute path on their device.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from kernelmaps._array_api import is_device_array
from kernelmaps._config import resolve_n_threads
from kernelmaps._engine import (
    first_touch,
    reduce_blocks,
    release_written_once,
    scratch_buffer,
    written_once_buffer,
)
from kernelmaps.kernels import Kernel, RBFKernel
from kernelmaps.models._kernel_blocks import (
    attainable_residual,
    cache_budget,
    compiled_sweep_loading,
    cross_block,
    gram_block,
    scaled_operand,
    sweep_rows,
    widened_gram_block,
)

__all__ = ["FUSED_RBF_MAX_FEATURES", "NystromSystem"]


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
    block_dtype : dtype or None, default=None
        The dtype of the cached blocks (and so of the products over them); ``None``: X's.
        :class:`~kernelmaps.models.KernelRidgeClassifier` passes float32 for float64 data
        where its tolerance is far above float32's floor.
    passes : int or None, default=None
        The most passes (:meth:`gram_times` calls) the solver will make — its ``max_iter``
        — from which ``jit="auto"`` decides whether the cache's sweeps run compiled
        (:func:`~kernelmaps.models._kernel_blocks.compiled_sweep`); ``None``: unknown, so
        only ``jit=True`` compiles them.

    Attributes
    ----------
    rhs : array of shape (M, t)
        :math:`K_{nM}^\top W Y`.
    info : dict
        ``path`` (``"cached"``, ``"partly cached"`` or ``"recompute"``), ``cached_rows``,
        ``cache_bytes`` (held), ``cache_budget_bytes``, ``first_pass_s``,
        ``first_touch_s`` (the part of it that faulted the cache's pages in:
        :func:`~kernelmaps._engine.first_touch`), and ``sweep``: how
        a pass multiplies the cache — ``"compiled"`` (the Numba kernel), ``"blas"`` (two
        BLAS calls per sub-block), ``"float64"`` (widened, :meth:`widen`) or ``None``
        (nothing cached).
    attainable_residual : float
        The relative residual CG can reach with this system's products
        (:func:`attainable_residual` of the blocks' dtype and M).
    """

    def __init__(self, kernel: Kernel, X: Any, columns: Any, weights: Any, Y: Any, *,
                 cache_bytes: int | None = None, block_dtype: Any = None,
                 passes: int | None = None) -> None:
        start = time.perf_counter()
        self.kernel, self.X, self.columns, self.weights = kernel, X, columns, weights
        n, M = X.shape[0], columns.shape[0]
        # Unit weights (no sample_weight) skip the multiplication of every sub-block.
        self._block_weights = (None if isinstance(weights, np.ndarray)
                               and bool(np.all(weights == 1)) else weights)
        budget = cache_budget() if cache_bytes is None else int(cache_bytes)
        if is_device_array(X) or n == 0:
            cached = 0
            dtype = None
        else:
            dtype = kernel.evaluate(X[:1], columns).dtype  # the blocks' dtype (X's)
            if block_dtype is not None:  # cached blocks rounded to it (a classifier's float32)
                dtype = np.dtype(block_dtype)
            cached = int(min(n, max(budget, 0) // max(1, M * dtype.itemsize)))
        self._cached_rows = cached
        self._wide = False
        self._rbf = _rbf_operands(kernel, X, columns, dtype) if cached else None
        product_dtype = np.float64 if dtype is None else dtype
        self.attainable_residual = attainable_residual(product_dtype, M)
        self._cache = written_once_buffer((cached, M), dtype) if cached else None
        # Its pages faulted in first, on the first pass's threads and blocks (faster than
        # inside the pass: first_touch); the seconds are the fit's first-touch floor.
        touch_s = first_touch(self._cache, bytes_per_row=M * dtype.itemsize,
                              n_threads=resolve_n_threads()) if cached else 0.0
        # Decided from the fit's known work (never the process's history); the compiled
        # kernel, when chosen, loads on another thread during the first pass.
        ready = compiled_sweep_loading(dtype, elements=cached * M, columns=Y.shape[1],
                                       passes=passes or 0) if cached else None
        rhs = None
        if cached:
            rhs = self._sweep_cache(self._first_pass_block, *self._weights_to(cached), Y[:cached],
                                    fill=True)
        if cached < n:
            rows, w_rows, Y_rows = _rows_from(cached, X, weights, Y)
            if self._block_weights is None:
                rest = kernel.reduce(rows, columns, lambda K_b, Y_b: cross_block(K_b, None, Y_b),
                                     Y_rows)
            else:
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
            "first_touch_s": touch_s,
        }
        self._compiled = ready is not None and ready()
        self.info["sweep"] = (None if not cached else "compiled" if self._compiled
                              else "blas")

    def _weights_to(self, stop: int) -> tuple[Any, ...]:
        """The weights of the first ``stop`` rows as an aligned array, or none (unit)."""
        return () if self._block_weights is None else (self._block_weights[:stop],)

    def _first_pass_block(self, X_b: Any, cache_b: np.ndarray, *rest: np.ndarray) -> np.ndarray:
        w_b, Y_b = rest if len(rest) == 2 else (None, rest[0])
        if self._rbf is not None:
            return _rbf_first_pass(self.kernel, X_b, cache_b, w_b, Y_b, self._rbf)
        if self.kernel.evaluate(X_b[:1], self.columns).dtype != cache_b.dtype:
            cache_b[...] = self.kernel.evaluate(X_b, self.columns)  # rounded to block_dtype
        else:
            self.kernel.evaluate_into(X_b, self.columns, cache_b)  # straight into the cache
        return cross_block(cache_b, w_b, Y_b)  # while the block is in cache

    def _sweep_cache(self, block_fn, *aligned: Any, fill: bool = False) -> np.ndarray:
        """Sum ``block_fn`` over row blocks of the cache (and of X while filling it), on
        the engine's threads; a block is its cached rows (and, filling, its X rows)."""
        M = self._cache.shape[1]
        bytes_per_row = M * self._cache.dtype.itemsize
        source = self.X[: self._cached_rows] if fill else self._cache
        extra = (self._cache,) if fill else ()
        return reduce_blocks(source, block_fn, aligned=extra + aligned,
                             bytes_per_row=bytes_per_row, n_threads=resolve_n_threads())

    def gram_times(self, V: Any, *, wide: bool | None = None) -> Any:
        r""":math:`K_{nM}^\top W K_{nM} V` (float64), in one pass over the rows; ``wide``:
        float64 products (default: as :meth:`widen` left them)."""
        cached = self._cached_rows
        total = None
        operand = V
        wide = self._wide if wide is None else wide
        product = widened_gram_block if wide else gram_block
        compiled = False
        if self._block_weights is None:
            def block(K_b, w_b=None):
                return product(K_b, w_b, operand, compiled=compiled)
        else:
            def block(K_b, w_b):
                return product(K_b, w_b, operand, compiled=compiled)
        if cached:
            scale = None
            if self._cache.dtype != V.dtype and not wide:  # scaled and rounded once
                operand, scale = scaled_operand(V, self._cache.dtype)
            # The cache's float32 blocks swept by the compiled kernel where it was chosen.
            compiled = not wide and self._compiled
            total = self._sweep_cache(block, *self._weights_to(cached))
            if scale is not None:
                total *= scale
            operand, compiled = V, False
        if cached < self.X.shape[0]:
            X, weights = _rows_from(cached, self.X, self.weights)
            aligned = () if self._block_weights is None else (weights,)
            rest = self.kernel.reduce(X, self.columns, block, *aligned)
            total = rest if total is None else total + rest
        return total

    def widen(self) -> float:
        """Multiply in float64 from now on (each float32 sub-block widened first) and return
        the new :attr:`attainable_residual`: for a system whose preconditioner's factor T
        is so ill-conditioned that float32 products' rounding would swamp CG (a numerically
        singular K_MM: a tiny ``gamma``, more centres than the kernel's rank; see
        :func:`~kernelmaps.models._falkon.falkon_solve`)."""
        self._wide = True
        if self.info["sweep"] is not None:
            self.info["sweep"] = "float64"
        self.attainable_residual = attainable_residual(np.float64, self.columns.shape[0])
        return self.attainable_residual

    @property
    def cache(self) -> np.ndarray | None:
        """The cached kernel blocks :math:`K_{nM}` of the first ``info["cached_rows"]`` rows
        (``None`` when nothing is cached, or after :meth:`release`): what a pass reads, for
        measurements beside it (``python -m benchmarks ridge``'s read of the cache). Not to
        be written."""
        return self._cache

    def release(self) -> None:
        """Drop the cached blocks (the fitted model keeps no reference to the system); their
        pages go back to the system on a background thread
        (:func:`~kernelmaps._engine.release_written_once`: 0.55-0.59 s for an 8 GB cache
        on the development VM that the fit no longer waits for)."""
        cache, self._cache = self._cache, None
        if cache is not None:
            release_written_once(cache)


#: The fused RBF first pass takes the norms into its GEMM (rows augmented with
#: ``(−γ‖x‖², 1)``) and runs that GEMM per sub-block up to this many features: below it the
#: element-wise passes cost as much as the GEMM and keeping them in cache pays (100,000 × 20,
#: M = 2,000: 0.39 s against 0.44 s of CPU on one thread); above it the GEMM dominates and its
#: 64-row sub-blocks run slower than a whole block's (20,000 × 784, M = 1,000: 0.47 s against
#: 0.36 s), so the GEMM covers the whole block and the element-wise passes run per sub-block.
FUSED_RBF_MAX_FEATURES = 64


def _rbf_operands(kernel: Kernel, X: Any, columns: Any, dtype: Any) -> tuple | None:
    """What the fused RBF first pass needs from the kernel, computed once — for a dense NumPy
    ``X`` (with many features, one whose cache has its dtype); ``None`` otherwise (the
    kernel's own ``evaluate_into`` then fills the cache). Up to
    :data:`FUSED_RBF_MAX_FEATURES` features the centres' side of the augmented GEMM,
    ``[2γCᵀ; 1; −γ‖c‖²]`` of shape (d + 2, M) in the blocks' ``dtype``; beyond, the kernel's
    :meth:`~kernelmaps.kernels.RBFKernel.column_terms` of the centres (2γC, γ‖c‖²)."""
    if not (type(kernel) is RBFKernel and isinstance(X, np.ndarray)
            and isinstance(columns, np.ndarray) and X.dtype == columns.dtype
            and X.dtype in (np.float32, np.float64)):
        return None
    d, M = X.shape[1], columns.shape[0]
    scaled_columns, column_terms = kernel.column_terms(columns)
    if d > FUSED_RBF_MAX_FEATURES:
        if np.dtype(dtype) != X.dtype:  # a classifier's float32 cache of float64 rows
            return None
        return scaled_columns, column_terms
    right = np.empty((d + 2, M), dtype=dtype)
    right[:d] = scaled_columns.T
    right[d] = 1.0
    right[d + 1] = -column_terms
    return right


def _rbf_first_pass(kernel: RBFKernel, X_b: np.ndarray, cache_b: np.ndarray, w_b: Any,
                    Y_b: np.ndarray, right: Any) -> np.ndarray:
    r"""Fill ``cache_b`` with the RBF kernel's values and return :math:`K_b^\top W_b Y_b`
    (float64), the element-wise work and the right-hand side's product one sub-block of
    :func:`~kernelmaps.models._kernel_blocks.sweep_rows` rows at a time, while the sub-block
    is in the core's cache; the kernel's formula comes from the kernel
    (:meth:`~kernelmaps.kernels.RBFKernel.row_terms`, ``column_terms``,
    ``values_from_products``, ``values_from_exponent``).

    Few features (``right`` an array): the whole exponent
    :math:`2\gamma\langle x,c\rangle - \gamma\|x\|^2 - \gamma\|c\|^2` comes out of one
    GEMM per sub-block, of the rows augmented with :math:`(-\gamma\|x\|^2, 1)` against
    ``right`` (no element-wise pass for the norms), into a per-thread scratch buffer; the
    clip at 0 runs there and the exponential — float32 for float32 data — writes each cache
    entry once. Many features (``right`` the pair of scaled centres and their terms): one
    GEMM of the whole block straight into the cache (a 64-row GEMM of depth d would run
    slower), then per sub-block the kernel's ``values_from_products`` in place — the
    operations of :meth:`~kernelmaps.kernels.RBFKernel.evaluate_into` in the same order
    (equal to rounding: a GEMM of another block shape may sum in another order), with one
    read of the block from memory instead of four."""
    dtype, M = cache_b.dtype, cache_b.shape[1]
    d = X_b.shape[1]
    WY, scale = scaled_operand(Y_b if w_b is None else Y_b * w_b[:, None], dtype)
    t = WY.shape[1]
    rows = sweep_rows(M, dtype.itemsize)
    part = scratch_buffer("nystrom_part", (M, t), dtype)
    total = np.zeros((M, t))
    row_terms = kernel.row_terms(X_b)
    if isinstance(right, tuple):
        centres, centre_terms = right
        np.matmul(X_b, centres.T, out=cache_b)
        for start in range(0, X_b.shape[0], rows):
            stop = min(start + rows, X_b.shape[0])
            e = cache_b[start:stop]
            kernel.values_from_products(e, row_terms[start:stop], centre_terms)
            np.dot(e.T, WY[start:stop], out=part)
            total += part
        return total if scale is None else total * scale
    left = scratch_buffer("nystrom_rows", (X_b.shape[0], d + 2), dtype)
    left[:, :d] = X_b
    left[:, d] = -row_terms
    left[:, d + 1] = 1.0
    exponent = scratch_buffer("nystrom_exponent", (rows, M), dtype)
    for start in range(0, X_b.shape[0], rows):
        stop = min(start + rows, X_b.shape[0])
        e = exponent[: stop - start]
        np.dot(left[start:stop], right, out=e)
        kernel.values_from_exponent(e, cache_b[start:stop])
        np.dot(cache_b[start:stop].T, WY[start:stop], out=part)
        total += part
    return total if scale is None else total * scale


def _rows_from(start: int, *arrays: Any) -> tuple[Any, ...]:
    """The arrays from row ``start`` on (themselves for 0: a device array of a strict
    namespace cannot be sliced on its first axis alone)."""
    if start == 0:
        return arrays
    return tuple(a[start:] for a in arrays)
