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

**Precision.** float64 data is computed in float64 throughout. float32 data has its blocks
multiplied in float32 — over sub-blocks of :func:`sweep_rows` rows (64 at M = 1,000-
3,000), with ``V`` and the weights rounded to float32 — and the sub-blocks' M × t results
summed in float64, so a sweep reads the float32 cache once and widens nothing. Each product
is then known to about :math:`(\sqrt M + \sqrt b)\,\varepsilon_{32}` relative (random-walk
rounding of sums of M and b terms), not the :math:`\sqrt{n}\,\varepsilon_{32}` of float32
sums over whole blocks that issue 17 fixed with float64 accumulation; CG reaches the relative
residual :func:`attainable_residual` gives, and recomputes its residual periodically
(:func:`kernelmaps.models._cg.conjugate_gradient`, ``true_residual_every``) so that it does
not drift from the system on the way there. Cached and recomputed passes compute the same
numbers up to the order of float64 sums.

Arrays of another library (array API dispatch) take the recompute path on their device.
"""

from __future__ import annotations

import time
from typing import Any

import array_api_compat
import numpy as np

from kernelmaps._array_api import is_device_array, matmul, namespace_and_device
from kernelmaps._config import available_memory, get_config, resolve_n_threads
from kernelmaps._engine import reduce_blocks, run_blocks, scratch_buffer, written_once_buffer
from kernelmaps.kernels import Kernel, RBFKernel
from kernelmaps.kernels.interface import effective_gamma, row_sq_norms
from kernelmaps.models._common import as_float64

__all__ = ["KERNEL_CACHE_FRACTION", "NystromSystem", "attainable_residual", "cache_budget",
           "cross_block", "gram_block", "kernel_times", "sweep_rows", "widened_gram_block"]

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


#: Bytes of the sub-block a pass multiplies at a time: small enough to stay in a core's L2
#: cache between its two products (K_b v, then K_bᵀ u), large enough for BLAS. Measured on
#: one thread (CPU time, float32, 2026-11): 64-row sub-blocks sweep 60,000 × 1,000 with 10
#: targets in 0.048 s against 0.081 s for 131 rows, and 100,000 × 2,000 with one target
#: equally fast from 64 to 262 rows; with 26 targets at M = 3,000, 64 rows beat 21 (the
#: second product's inner dimension).
SWEEP_BYTES = 1 << 18
#: The fewest and the most rows of a sub-block: at least 64 for BLAS, at most 64 so that a
#: float32 sub-block's sums of b terms stay at √b·ε₃₂ ≈ 1e-6 relative (256-row sub-blocks
#: left CG at M = 80 to stall at 1e-4 and 10× the float32 error bound; 64 rows at 0.06-0.09
#: of it, tests/models/test_ridge.py).
MIN_SWEEP_ROWS, MAX_SWEEP_ROWS = 64, 64


def sweep_rows(M: int, itemsize: int) -> int:
    """Rows of a sub-block of an ``(·, M)`` block of ``itemsize``-byte values:
    :data:`SWEEP_BYTES` of them, clipped to [:data:`MIN_SWEEP_ROWS`,
    :data:`MAX_SWEEP_ROWS`]."""
    return int(min(MAX_SWEEP_ROWS, max(MIN_SWEEP_ROWS, SWEEP_BYTES // (itemsize * max(1, M)))))


def attainable_residual(dtype: Any, n_centres: int) -> float:
    r"""The relative residual CG can reach on kernel blocks of ``dtype`` with ``n_centres``
    centres: below it the iterates follow rounding, not the system.

    Products over a block are done in the blocks' dtype (float32 products for float32 data,
    float64 sums across sub-blocks of :func:`sweep_rows` rows): each entry of
    :math:`K_bV` is a sum of :math:`M` terms, each entry of :math:`K_b^\top U` one of
    :math:`b` terms, with rounding errors that add up like a random walk, so the operator is
    known to about :math:`(\sqrt M + \sqrt b)\,\varepsilon` relative. The preconditioned
    system's condition number is :math:`O(1)`, but the preconditioner's triangular solves
    add their own :math:`\sqrt M\varepsilon_{64}` and the Gram's rounding is correlated
    across entries of one sign (a kernel is non-negative), so the stated floor carries a
    factor 10 of margin: :math:`10(\sqrt M + \sqrt b)\,\varepsilon`. For float32 and
    M = 1,000-3,000 that is 5e-5 to 7.5e-5; for float64 (whose floor is below any useful
    ``tol``) 1e-13.
    """
    dtype = np.dtype(dtype)
    eps = float(np.finfo(dtype).eps)
    b = sweep_rows(n_centres, dtype.itemsize)
    return 10.0 * (np.sqrt(max(1, n_centres)) + np.sqrt(b)) * eps


# The products over sub-blocks call ``np.dot``, not ``np.matmul``: for products this small
# (64 rows) NumPy's matmul keeps the GIL, so the engine's threads took turns — measured on 2
# cores, 400,000 × 2,000 float32, t = 1: two threads 0.40 s per pass against 0.39 s for one;
# ``np.dot`` releases the GIL around its BLAS call.
def _sub_blocks(K_b: np.ndarray):
    """``(start, rows)`` of ``K_b`` in sub-blocks of :func:`sweep_rows` rows (views, in the
    block's dtype: a float32 block is multiplied in float32, no widened copy)."""
    rows = sweep_rows(K_b.shape[1], K_b.dtype.itemsize)
    for start in range(0, K_b.shape[0], rows):
        yield start, K_b[start:start + rows]


def _operand(V: np.ndarray, dtype: Any) -> np.ndarray:
    """``V`` in the blocks' dtype, C-contiguous (a float32 copy of a small M × t array)."""
    return np.ascontiguousarray(V, dtype=dtype)


def _scaled_operand(V: np.ndarray, dtype: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """``(V / s, s)`` with ``V / s`` in the blocks' dtype and ``s`` a power of two per column
    (exact to divide and multiply back) that brings the column's largest entry to [0.5, 1):
    a float64 CG vector beyond float32's range (the preconditioner's T⁻¹ of a numerically
    singular K_MM reaches 1e40 and more) or below its normal range is then represented to
    float32's relative precision instead of overflowing. ``s`` is None for float64."""
    if np.dtype(dtype) == np.float64:
        return _operand(V, dtype), None
    peak = np.max(np.abs(V), axis=0) if V.size else np.ones(V.shape[1])
    scale = np.exp2(np.ceil(np.log2(np.where(peak > 0, peak, 1.0)))).astype(np.float64)
    return _operand(V / scale, dtype), scale


def cross_block(K_b: Any, w_b: Any, Y_b: Any) -> Any:
    r""":math:`K_b^\top W_b Y_b` (float64): a product in K_b's dtype per sub-block of
    :func:`sweep_rows` rows, the sub-blocks summed in float64. ``w_b`` may be ``None``
    (unit weights)."""
    if not isinstance(K_b, np.ndarray):
        xp = array_api_compat.array_namespace(K_b)
        WY = Y_b if w_b is None else Y_b * w_b[:, None]
        return xp.astype(K_b, Y_b.dtype, copy=False).T @ WY
    M, t = K_b.shape[1], Y_b.shape[1]
    total = np.zeros((M, t))
    WY, scale = _scaled_operand(Y_b if w_b is None else Y_b * w_b[:, None], K_b.dtype)
    if scale is None:
        return np.matmul(K_b.T, WY, out=total)
    part = scratch_buffer("nystrom_part", (M, t), K_b.dtype)
    for start, sub in _sub_blocks(K_b):
        np.dot(sub.T, WY[start:start + sub.shape[0]], out=part)
        total += part
    return total * scale


def gram_block(K_b: Any, w_b: Any, V: Any) -> Any:
    r""":math:`K_b^\top W_b K_b V` (float64): one sweep over the block, each sub-block of
    :func:`sweep_rows` rows used for both products while it is in cache.

    The products are in K_b's dtype — float32 for float32 data (``V`` and ``w_b`` are
    rounded to it), with a relative error of about :math:`(\sqrt M+\sqrt b)\,
    \varepsilon_{32}` per sub-block (:func:`attainable_residual`) — and the sub-blocks'
    results are summed in float64. ``w_b`` may be ``None`` (unit weights)."""
    if not isinstance(K_b, np.ndarray):
        K_b = array_api_compat.array_namespace(K_b).astype(K_b, V.dtype, copy=False)
        KV = K_b @ V
        if w_b is not None:
            KV *= w_b[:, None]
        return K_b.T @ KV
    dtype = K_b.dtype
    M, t = K_b.shape[1], V.shape[1]
    scale = None
    if V.dtype != dtype:
        V, scale = _scaled_operand(V, dtype)
    if w_b is not None and w_b.dtype != dtype:
        w_b = w_b.astype(dtype)
    total = np.zeros((M, t))
    part = scratch_buffer("nystrom_part", (M, t), dtype)
    # The loop runs 15,625 times a pass at 1M rows and its Python work holds the GIL the
    # other thread waits for: the buffers are fetched once, not per sub-block.
    kv = scratch_buffer("nystrom_kv", (sweep_rows(M, dtype.itemsize), t), dtype)
    for start, sub in _sub_blocks(K_b):
        KV = kv[: sub.shape[0]]
        np.dot(sub, V, out=KV)
        if w_b is not None:
            KV *= w_b[start:start + sub.shape[0], None]
        np.dot(sub.T, KV, out=part)
        total += part
    return total if scale is None else total * scale


def widened_gram_block(K_b: np.ndarray, w_b: Any, V: np.ndarray) -> np.ndarray:
    r""":math:`K_b^\top W_b K_b V` with float64 products whatever K_b's dtype: each sub-block
    widened into a per-thread float64 scratch buffer first (the path before issue 26, kept
    for systems whose preconditioner would amplify float32 products' rounding, see
    :meth:`NystromSystem.widen`)."""
    M, t = K_b.shape[1], V.shape[1]
    V = _operand(V, np.float64)
    total = np.zeros((M, t))
    part = scratch_buffer("nystrom_part", (M, t), np.float64)
    rows = sweep_rows(M, K_b.dtype.itemsize)  # as _sub_blocks cuts K_b
    wide_rows = scratch_buffer("nystrom_float64", (rows, M), np.float64)
    kv = scratch_buffer("nystrom_kv", (rows, t), np.float64)
    for start, sub in _sub_blocks(K_b):
        wide = wide_rows[: sub.shape[0]]
        np.copyto(wide, sub)
        KV = kv[: sub.shape[0]]
        np.dot(wide, V, out=KV)
        if w_b is not None:
            KV *= w_b[start:start + sub.shape[0], None]
        np.dot(wide.T, KV, out=part)
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
    block_dtype : dtype or None, default=None
        The dtype of the cached blocks (and so of the products over them); ``None``: X's.
        :class:`~kernelmaps.models.KernelRidgeClassifier` passes float32 for float64 data
        where its tolerance is far above float32's floor.

    Attributes
    ----------
    rhs : array of shape (M, t)
        :math:`K_{nM}^\top W Y`.
    info : dict
        ``path`` (``"cached"``, ``"partly cached"`` or ``"recompute"``), ``cached_rows``,
        ``cache_bytes`` (held), ``cache_budget_bytes``, ``first_pass_s``.
    attainable_residual : float
        The relative residual CG can reach with this system's products
        (:func:`attainable_residual` of the blocks' dtype and M).
    """

    def __init__(self, kernel: Kernel, X: Any, columns: Any, weights: Any, Y: Any, *,
                 cache_bytes: int | None = None, block_dtype: Any = None) -> None:
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
        }

    def _weights_to(self, stop: int) -> tuple[Any, ...]:
        """The weights of the first ``stop`` rows as an aligned array, or none (unit)."""
        return () if self._block_weights is None else (self._block_weights[:stop],)

    def _first_pass_block(self, X_b: Any, cache_b: np.ndarray, *rest: np.ndarray) -> np.ndarray:
        w_b, Y_b = rest if len(rest) == 2 else (None, rest[0])
        if self._rbf is not None:
            return _rbf_first_pass(X_b, cache_b, w_b, Y_b, *self._rbf)
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
        if self._block_weights is None:
            def block(K_b, w_b=None):
                return product(K_b, w_b, operand)
        else:
            def block(K_b, w_b):
                return product(K_b, w_b, operand)
        if cached:
            scale = None
            if self._cache.dtype != V.dtype and not wide:  # scaled and rounded once
                operand, scale = _scaled_operand(V, self._cache.dtype)
            total = self._sweep_cache(block, *self._weights_to(cached))
            if scale is not None:
                total *= scale
            operand = V
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
        self.attainable_residual = attainable_residual(np.float64, self.columns.shape[0])
        return self.attainable_residual

    def release(self) -> None:
        """Drop the cached blocks (the fitted model keeps no reference to the system)."""
        self._cache = None


#: The fused RBF first pass takes the norms into its GEMM (rows augmented with
#: ``(−γ‖x‖², 1)``) and runs that GEMM per sub-block up to this many features: below it the
#: element-wise passes cost as much as the GEMM and keeping them in cache pays (100,000 × 20,
#: M = 2,000: 0.39 s against 0.44 s of CPU on one thread); above it the GEMM dominates and its
#: 64-row sub-blocks run slower than a whole block's (20,000 × 784, M = 1,000: 0.47 s against
#: 0.36 s), so the GEMM covers the whole block and the element-wise passes run per sub-block.
FUSED_RBF_MAX_FEATURES = 64


def _rbf_operands(kernel: Kernel, X: Any, columns: Any, dtype: Any) -> tuple | None:
    """What the fused RBF first pass needs, computed once — for a dense NumPy ``X`` (with
    many features, one whose cache has its dtype); ``None`` otherwise (the kernel's own
    ``evaluate_into`` then fills the cache). Up to :data:`FUSED_RBF_MAX_FEATURES` features
    the centres' side of the augmented GEMM, ``[2γCᵀ; 1; −γ‖c‖²]`` of shape (d + 2, M) in
    the blocks' ``dtype``; beyond, the centres scaled by 2γ, shape (M, d), and ``γ‖c‖²``
    (as :meth:`~kernelmaps.kernels.RBFKernel.evaluate_into` computes them). And γ."""
    if not (type(kernel) is RBFKernel and isinstance(X, np.ndarray)
            and isinstance(columns, np.ndarray) and X.dtype == columns.dtype
            and X.dtype in (np.float32, np.float64)):
        return None
    gamma = effective_gamma(kernel, X.shape[1])
    d, M = X.shape[1], columns.shape[0]
    if d > FUSED_RBF_MAX_FEATURES:
        if np.dtype(dtype) != X.dtype:  # a classifier's float32 cache of float64 rows
            return None
        return (columns * (2.0 * gamma), gamma * row_sq_norms(columns)), gamma
    right = np.empty((d + 2, M), dtype=dtype)
    right[:d] = (columns * (2.0 * gamma)).T
    right[d] = 1.0
    right[d + 1] = -gamma * row_sq_norms(columns)
    return right, gamma


def _rbf_first_pass(X_b: np.ndarray, cache_b: np.ndarray, w_b: Any, Y_b: np.ndarray,
                    right: Any, gamma: float) -> np.ndarray:
    r"""Fill ``cache_b`` with :math:`\exp(\min(2\gamma\langle x,c\rangle - \gamma\|x\|^2
    - \gamma\|c\|^2, 0))` and return :math:`K_b^\top W_b Y_b` (float64), the element-wise
    work and the right-hand side's product one sub-block of :func:`sweep_rows` rows at a
    time, while the sub-block is in the core's cache.

    Few features (``right`` an array): the whole exponent comes out of one GEMM per
    sub-block, of the rows augmented with :math:`(-\gamma\|x\|^2, 1)` against ``right``
    (no element-wise pass for the norms), into a per-thread scratch buffer; the clip at 0
    runs there and the exponential — float32 for float32 data — writes each cache entry
    once. Many features (``right`` the pair of scaled centres and their norms): one GEMM
    of the whole block straight into the cache (a 64-row GEMM of depth d would run slower),
    then per sub-block the two norm terms, the clip and the exponential in place — the
    operations of :meth:`~kernelmaps.kernels.RBFKernel.evaluate_into` in the same order
    (equal to rounding: a GEMM of another block shape may sum in another order), with one
    read of the block from memory instead of four."""
    dtype, M = cache_b.dtype, cache_b.shape[1]
    d = X_b.shape[1]
    WY, scale = _scaled_operand(Y_b if w_b is None else Y_b * w_b[:, None], dtype)
    t = WY.shape[1]
    rows = sweep_rows(M, dtype.itemsize)
    part = scratch_buffer("nystrom_part", (M, t), dtype)
    total = np.zeros((M, t))
    if isinstance(right, tuple):
        centres, centre_terms = right
        np.matmul(X_b, centres.T, out=cache_b)
        row_terms = gamma * row_sq_norms(X_b)
        for start in range(0, X_b.shape[0], rows):
            stop = min(start + rows, X_b.shape[0])
            e = cache_b[start:stop]
            e -= row_terms[start:stop, None]
            e -= centre_terms[None, :]
            np.minimum(e, 0.0, out=e)
            np.exp(e, out=e)
            np.dot(e.T, WY[start:stop], out=part)
            total += part
        return total if scale is None else total * scale
    left = scratch_buffer("nystrom_rows", (X_b.shape[0], d + 2), dtype)
    left[:, :d] = X_b
    left[:, d] = -gamma * row_sq_norms(X_b)
    left[:, d + 1] = 1.0
    exponent = scratch_buffer("nystrom_exponent", (rows, M), dtype)
    for start in range(0, X_b.shape[0], rows):
        stop = min(start + rows, X_b.shape[0])
        e = exponent[: stop - start]
        np.dot(left[start:stop], right, out=e)
        np.minimum(e, 0.0, out=e)
        np.exp(e, out=cache_b[start:stop])
        np.dot(cache_b[start:stop].T, WY[start:stop], out=part)
        total += part
    return total if scale is None else total * scale


def _copy_into(out: np.ndarray, a: np.ndarray) -> np.ndarray:
    np.copyto(out, a)
    return out


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
        K_b = kernel.evaluate(xb, columns)
        if K_b.dtype != np.float64:  # widened into this thread's scratch buffer
            K_b = _copy_into(scratch_buffer("nystrom_float64", K_b.shape, np.float64), K_b)
        np.matmul(K_b, V, out=out)

    result = run_blocks(X, n_out=V.shape[1], dtype=np.dtype(np.float64), block_fn=block,
                        temp_bytes_per_row=12 * V.shape[0], n_threads=resolve_n_threads(),
                        name=name)
    return result[:, 0] if coef.ndim == 1 else result
