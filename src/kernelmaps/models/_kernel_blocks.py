r"""Products over kernel blocks held in memory: sub-block sweeps in the block's dtype,
summed in float64, and the memory budget of kernel-block caches.

FALKON's system (:class:`kernelmaps.models._nystrom.NystromSystem`) and the Fisher
discriminant's passes over :math:`K` multiply each kernel block :math:`K_b` (rows × M) by
small M × t or rows × t operands:

* :func:`cross_block` gives :math:`K_b^\top W_b Y_b`, :func:`gram_block`
  :math:`K_b^\top W_b K_b V` in one sweep (each sub-block used for both products while it
  is in cache), :func:`widened_gram_block` the same with float64 products;
* :func:`cache_budget` is how many bytes of kernel blocks one fit may keep (the
  ``kernel_cache_bytes`` setting).

**Precision.** float64 blocks are multiplied in float64 throughout. float32 blocks are
multiplied in float32 — over sub-blocks of :func:`sweep_rows` rows (64 at M = 1,000-3,000),
with the operands and the weights rounded to float32 (:func:`scaled_operand`) — and the
sub-blocks' M × t results summed in float64, so a sweep reads a float32 block once and
widens nothing. Each product is then known to about :math:`(\sqrt M + \sqrt b)\,
\varepsilon_{32}` relative (random-walk rounding of sums of M and b terms), not the
:math:`\sqrt{n}\,\varepsilon_{32}` of float32 sums over whole blocks that issue 17 fixed
with float64 accumulation; CG reaches the relative residual :func:`attainable_residual`
gives.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import array_api_compat
import numpy as np

from kernelmaps._config import available_memory, get_config
from kernelmaps._engine import scratch_buffer
from kernelmaps._fastmath import compiled_pays, compiled_pays_loading
from kernelmaps._optional import import_optional

__all__ = ["COMPILED_SWEEP_MAX_COLUMNS", "COMPILED_SWEEP_SAVING", "KERNEL_CACHE_FRACTION",
           "attainable_residual", "cache_budget", "compiled_sweep", "compiled_sweep_loading",
           "cross_block", "gram_block", "scaled_operand", "sweep_rows", "widened_gram_block"]

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


def scaled_operand(V: np.ndarray, dtype: Any) -> tuple[np.ndarray, np.ndarray | None]:
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
    WY, scale = scaled_operand(Y_b if w_b is None else Y_b * w_b[:, None], K_b.dtype)
    if scale is None:
        return np.matmul(K_b.T, WY, out=total)
    part = scratch_buffer("nystrom_part", (M, t), K_b.dtype)
    for start, sub in _sub_blocks(K_b):
        np.dot(sub.T, WY[start:start + sub.shape[0]], out=part)
        total += part
    return total * scale


def gram_block(K_b: Any, w_b: Any, V: Any, *, compiled: bool = False) -> Any:
    r""":math:`K_b^\top W_b K_b V` (float64): one sweep over the block, each sub-block of
    :func:`sweep_rows` rows used for both products while it is in cache.

    The products are in K_b's dtype — float32 for float32 data (``V`` and ``w_b`` are
    rounded to it), with a relative error of about :math:`(\sqrt M+\sqrt b)\,
    \varepsilon_{32}` per sub-block (:func:`attainable_residual`) — and the sub-blocks'
    results are summed in float64. ``w_b`` may be ``None`` (unit weights). ``compiled``
    (:func:`compiled_sweep`; a C-contiguous float32 block): the same sub-blocks and sums by
    the Numba kernel :func:`_gram_rows` instead of two BLAS calls per sub-block — equal to
    rounding, not bit for bit (its sums of M terms run in SIMD lanes)."""
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
        V, scale = scaled_operand(V, dtype)
    if w_b is not None and w_b.dtype != dtype:
        w_b = w_b.astype(dtype)
    if compiled and dtype == np.float32 and K_b.flags.c_contiguous:
        rows = sweep_rows(M, dtype.itemsize)
        total_t = np.zeros((t, M))
        _compiled_gram_rows()(K_b, np.ascontiguousarray(V.T),
                              _NO_WEIGHTS if w_b is None else np.ascontiguousarray(w_b),
                              total_t, scratch_buffer("nystrom_kv", (rows, t), dtype),
                              scratch_buffer("nystrom_part_t", (t, M), dtype))
        return total_t.T if scale is None else total_t.T * scale
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


_NO_WEIGHTS = np.empty(0, dtype=np.float32)


#: ``jit="auto"`` compiles the sweep only up to this many columns (targets): with OpenBLAS's
#: AVX-512 (SkylakeX) kernels the two BLAS calls per sub-block are as fast from 4 columns on
#: (:func:`compiled_sweep`'s measurements).
COMPILED_SWEEP_MAX_COLUMNS = 3
#: What the compiled sweep saves per cache element and pass, up to
#: :data:`COMPILED_SWEEP_MAX_COLUMNS` columns, in the time of one NumPy float64 cosine — the
#: unit of :data:`kernelmaps._fastmath.JIT_AUTO_ELEMENTS`, the cost of loading Numba.
#: Measured in one process per BLAS kernel set (issue 33; one thread, CPU time, medians of
#: 7 interleaved, 100,000 × 1,000 float32, load 6.3-6.5 on the 2-core Zen 5 VM): NumPy's
#: cosine 3.19-3.26 ns an element; the sweep saves 0.039-0.043 ns an element at one column
#: (0.012-0.014 cosines), with SkylakeX kernels 0.021 ns at two (0.0064) and 0.035 at three
#: (0.011), with Haswell kernels 0.32-0.44 ns at two to three (0.10-0.14): the smallest,
#: rounded down. So ``"auto"`` compiles from 1.3e8 / 0.006 ≈ 2.2e10 cache elements × passes
#: (case B of ``python -m benchmarks ridge``, 2e9 elements × 20 passes, compiles; a 60,000 ×
#: 1,000 cache's 10 passes do not: there the load would cost more than the passes save).
COMPILED_SWEEP_SAVING = 0.006


def compiled_sweep(dtype: Any, elements: int = 0, columns: int = 1, passes: int = 0) -> bool:
    """Whether :func:`gram_block` sweeps a cache of ``dtype`` (``elements`` kernel values,
    ``columns`` targets, at most ``passes`` passes) with the compiled kernel; loads it
    (importing Numba) when the answer is yes.

    Float32 caches only (float64 products stay on BLAS). ``jit=True``: always (an
    ImportError naming the fix when Numba is missing); ``False``: never; ``"auto"`` (the
    default): when the call's work pays for loading Numba — up to
    :data:`COMPILED_SWEEP_MAX_COLUMNS` columns and ``elements × passes ×``
    :data:`COMPILED_SWEEP_SAVING` NumPy cosines' time saved reaching
    :data:`kernelmaps._fastmath.JIT_AUTO_ELEMENTS`
    (:func:`kernelmaps._fastmath.compiled_pays`, the one owner of that crossover). The
    rule reads the call's known work only, never the process's history, so a fit makes
    the same choice — and computes the same numbers — in every process; the two paths
    agree to the float32 bound of :func:`gram_block`, not bit for bit.

    Measured (one thread, CPU time, medians of 7, 100,000 × 1,000 float32 cache, load
    5.8-6.5, the 2-core Zen 5 VM; this NumPy's OpenBLAS picks its Haswell kernels there,
    ``OPENBLAS_CORETYPE=SkylakeX`` its AVX-512 ones; one read of the cache 12.3 ms):

    ======= ============================== ==============================
    columns Haswell: BLAS / compiled (ms)  SkylakeX: BLAS / compiled (ms)
    ======= ============================== ==============================
    1       19.8 / 15.5 (1.28×)            19.5 / 15.7 (1.25×)
    2       51.5 / 19.9 (2.59×)            22.0 / 19.9 (1.11×)
    3       70.5 / 26.9 (2.62×)            30.3 / 26.8 (1.13×)
    4       60.8 / 29.4 (2.07×)            28.7 / 29.5 (0.97×)
    10      83.6 / 54.5 (1.54×)            50.9 / 55.7 (0.91×)
    ======= ============================== ==============================

    From 4 columns the kernel takes 4 at a time (4 rows × 4 columns in both products; the
    table's 4 and 10 are before): 60,000 × 1,000, one thread, CPU time, load 1.7-2.2, one
    process each, old 4 × 2 kernel / new / BLAS: 4 columns 15.9 / 14.9 / 36.3 ms (Haswell),
    16.4 / 15.1 / 17.3 (SkylakeX); 8 columns 26.0 / 23.7 / 38.1, 25.9 / 23.0 / 24.6; 10
    columns 31.1 / 28.1 / 47.7, 29.9 / 27.6 / 28.6 — within 4-15 % of AVX-512 BLAS there, so
    ``"auto"`` keeps its limit of 3 columns. With each sub-block read linearly first from
    :data:`STREAM_COLUMNS` columns (60,000 × 1,000, one thread, CPU time, medians of 7, load
    1.9-2.2), SkylakeX BLAS / kernel: 1.11× at 4 columns, 1.02× at 5, 1.06× at 6, 1.07× at
    7, 1.08× at 8, 1.15× at 10 (Haswell: 1.8-2.4×) — no clear margin, so the limit stays.

    Earlier (load 3-4): 60,000 × 1,000, 10 columns, 29.7 ms against 50.0 (Haswell), 31.2
    against 29.0 (SkylakeX); 100,000 × 2,000, one column, 30.2 ms against 37.5 (one read
    24.6). Loading Numba and the kernel from its disk cache: 0.35-0.36 s of CPU in a fresh
    process (0.7-0.8 s wall at load 6)."""
    saving = _sweep_saving(dtype, elements, columns, passes)
    return saving is not None and compiled_pays(saving, load=_compiled_gram_rows)


def compiled_sweep_loading(dtype: Any, elements: int = 0, columns: int = 1,
                           passes: int = 0) -> Callable[[], bool] | None:
    """:func:`compiled_sweep`'s decision, with the kernel loaded on a background thread
    (:func:`kernelmaps._fastmath.compiled_pays_loading`) while the caller makes its first
    pass: None for the BLAS sweep, else ``ready()`` (waits; whether the kernel loaded).

    Measured (issue 33, FALKON case B, 2 threads, load 0.9-1.2): the first CG pass took
    0.455 s against 0.19-0.23 s for the others — the load of Numba and the kernel — when the
    load came after the first pass."""
    saving = _sweep_saving(dtype, elements, columns, passes)
    return None if saving is None else compiled_pays_loading(saving, load=_compiled_gram_rows)


def _sweep_saving(dtype: Any, elements: int, columns: int, passes: int) -> float | None:
    """What the compiled sweep saves over the call in NumPy cosines' time
    (:data:`COMPILED_SWEEP_SAVING`), or None where it is never run (float64 caches;
    beyond :data:`COMPILED_SWEEP_MAX_COLUMNS` columns under ``"auto"``)."""
    if np.dtype(dtype) != np.float32:
        return None
    if get_config()["jit"] == "auto" and columns > COMPILED_SWEEP_MAX_COLUMNS:
        return None
    return float(elements) * max(0, passes) * COMPILED_SWEEP_SAVING


#: From this many columns (targets) :func:`_gram_rows` first reads each sub-block in one
#: linear pass (a vector sum it discards) and then multiplies it from cache: its 4-row panels
#: read from memory as 4 interleaved streams hold the products to memory latency, one linear
#: stream runs at the read's full rate. Measured (issue 33; 60,000 × 1,000 float32, one
#: thread, CPU time, medians of 7 interleaved, load 1.4-2.7, the 2-core Zen 5 VM): the first
#: product alone 18.4 ms from memory against 8.3 in cache at 10 targets; the whole kernel
#: without / with the pass 24.6 / 20.5 ms at 8 targets, 27.2 / 23.3 at 10, 15.1 / 14.7 at 4,
#: 19.5 / 20.2 at 6, 25.1 / 24.6 at 7 (within noise) and 8.9 / 10.8, 11.0 / 13.2 at one and
#: two (slower: there the products keep up with memory). Prefetch instructions (LLVM's
#: ``llvm.prefetch``, a sub-block ahead) in their place saved nothing (27.0 against 27.8 ms).
STREAM_COLUMNS = 8


def _gram_rows(K: np.ndarray, Vt: np.ndarray, w: np.ndarray, total_t: np.ndarray,
               u: np.ndarray, part_t: np.ndarray) -> None:
    r"""``total_t += (Kᵀ W K V)ᵀ`` by sub-blocks of ``u.shape[0]`` rows (compiled by Numba;
    :func:`_compiled_gram_rows`): per sub-block — first read once linearly from
    :data:`STREAM_COLUMNS` columns on — :math:`U = W_b K_b V` (4 rows × 4 columns
    at a time, then 4 × 2, float32 sums of M terms), then :math:`K_b^\top U` (4 rows × 4
    columns, then 4 × 2, an odd last column 8 rows at a time) into
    the float32 ``part_t``, added to the float64 ``total_t`` — the sums of
    :func:`gram_block`'s BLAS path, with each sub-block read from memory once and not
    packed. ``Vt`` is Vᵀ (t × M), ``w`` the weights or empty (unit)."""
    n, M = K.shape
    t = Vt.shape[0]
    rows = u.shape[0]
    weighted = w.shape[0] > 0
    zero = K.dtype.type(0)
    sink = zero
    for s in range(0, n, rows):
        e = min(s + rows, n)
        if t >= STREAM_COLUMNS:  # one linear read brings the sub-block into cache
            for q in range(s, e):
                for j in range(M):
                    sink += K[q, j]
        i = s
        while i + 4 <= e:
            c = 0
            while c + 4 <= t:  # 4 rows × 4 columns
                a00 = zero; a10 = zero; a20 = zero; a30 = zero  # noqa: E702
                a01 = zero; a11 = zero; a21 = zero; a31 = zero  # noqa: E702
                a02 = zero; a12 = zero; a22 = zero; a32 = zero  # noqa: E702
                a03 = zero; a13 = zero; a23 = zero; a33 = zero  # noqa: E702
                for j in range(M):
                    k0 = K[i, j]
                    k1 = K[i + 1, j]
                    k2 = K[i + 2, j]
                    k3 = K[i + 3, j]
                    v = Vt[c, j]
                    a00 += k0 * v; a10 += k1 * v; a20 += k2 * v; a30 += k3 * v  # noqa: E702
                    v = Vt[c + 1, j]
                    a01 += k0 * v; a11 += k1 * v; a21 += k2 * v; a31 += k3 * v  # noqa: E702
                    v = Vt[c + 2, j]
                    a02 += k0 * v; a12 += k1 * v; a22 += k2 * v; a32 += k3 * v  # noqa: E702
                    v = Vt[c + 3, j]
                    a03 += k0 * v; a13 += k1 * v; a23 += k2 * v; a33 += k3 * v  # noqa: E702
                r = i - s
                u[r, c] = a00; u[r + 1, c] = a10; u[r + 2, c] = a20; u[r + 3, c] = a30  # noqa: E702
                u[r, c + 1] = a01; u[r + 1, c + 1] = a11  # noqa: E702
                u[r + 2, c + 1] = a21; u[r + 3, c + 1] = a31  # noqa: E702
                u[r, c + 2] = a02; u[r + 1, c + 2] = a12  # noqa: E702
                u[r + 2, c + 2] = a22; u[r + 3, c + 2] = a32  # noqa: E702
                u[r, c + 3] = a03; u[r + 1, c + 3] = a13  # noqa: E702
                u[r + 2, c + 3] = a23; u[r + 3, c + 3] = a33  # noqa: E702
                c += 4
            while c + 2 <= t:
                a00 = zero; a10 = zero; a20 = zero; a30 = zero  # noqa: E702
                a01 = zero; a11 = zero; a21 = zero; a31 = zero  # noqa: E702
                for j in range(M):
                    v0 = Vt[c, j]
                    v1 = Vt[c + 1, j]
                    k0 = K[i, j]
                    k1 = K[i + 1, j]
                    k2 = K[i + 2, j]
                    k3 = K[i + 3, j]
                    a00 += k0 * v0; a10 += k1 * v0; a20 += k2 * v0; a30 += k3 * v0  # noqa: E702
                    a01 += k0 * v1; a11 += k1 * v1; a21 += k2 * v1; a31 += k3 * v1  # noqa: E702
                u[i - s, c] = a00; u[i - s + 1, c] = a10  # noqa: E702
                u[i - s + 2, c] = a20; u[i - s + 3, c] = a30  # noqa: E702
                u[i - s, c + 1] = a01; u[i - s + 1, c + 1] = a11  # noqa: E702
                u[i - s + 2, c + 1] = a21; u[i - s + 3, c + 1] = a31  # noqa: E702
                c += 2
            if c < t:  # an odd last column: 4 rows × 1
                a00 = zero; a10 = zero; a20 = zero; a30 = zero  # noqa: E702
                for j in range(M):
                    v0 = Vt[c, j]
                    a00 += K[i, j] * v0; a10 += K[i + 1, j] * v0  # noqa: E702
                    a20 += K[i + 2, j] * v0; a30 += K[i + 3, j] * v0  # noqa: E702
                u[i - s, c] = a00; u[i - s + 1, c] = a10  # noqa: E702
                u[i - s + 2, c] = a20; u[i - s + 3, c] = a30  # noqa: E702
            i += 4
        while i < e:  # the last rows of a block one at a time
            for c in range(t):
                acc = zero
                for j in range(M):
                    acc += K[i, j] * Vt[c, j]
                u[i - s, c] = acc
            i += 1
        if weighted:
            for q in range(e - s):
                for c in range(t):
                    u[q, c] *= w[s + q]
        for c in range(t):
            for j in range(M):
                part_t[c, j] = zero
        paired = t - t % 2  # columns taken two at a time, 4 rows at a time
        i = s
        while i + 4 <= e:
            c = 0
            while c + 4 <= t:  # 4 rows × 4 columns
                r = i - s
                u00 = u[r, c]; u10 = u[r + 1, c]; u20 = u[r + 2, c]; u30 = u[r + 3, c]  # noqa: E702
                u01 = u[r, c + 1]; u11 = u[r + 1, c + 1]  # noqa: E702
                u21 = u[r + 2, c + 1]; u31 = u[r + 3, c + 1]  # noqa: E702
                u02 = u[r, c + 2]; u12 = u[r + 1, c + 2]  # noqa: E702
                u22 = u[r + 2, c + 2]; u32 = u[r + 3, c + 2]  # noqa: E702
                u03 = u[r, c + 3]; u13 = u[r + 1, c + 3]  # noqa: E702
                u23 = u[r + 2, c + 3]; u33 = u[r + 3, c + 3]  # noqa: E702
                for j in range(M):
                    k0 = K[i, j]
                    k1 = K[i + 1, j]
                    k2 = K[i + 2, j]
                    k3 = K[i + 3, j]
                    part_t[c, j] += (k0 * u00 + k1 * u10) + (k2 * u20 + k3 * u30)
                    part_t[c + 1, j] += (k0 * u01 + k1 * u11) + (k2 * u21 + k3 * u31)
                    part_t[c + 2, j] += (k0 * u02 + k1 * u12) + (k2 * u22 + k3 * u32)
                    part_t[c + 3, j] += (k0 * u03 + k1 * u13) + (k2 * u23 + k3 * u33)
                c += 4
            while c + 2 <= t:
                u00 = u[i - s, c]; u10 = u[i - s + 1, c]  # noqa: E702
                u20 = u[i - s + 2, c]; u30 = u[i - s + 3, c]  # noqa: E702
                u01 = u[i - s, c + 1]; u11 = u[i - s + 1, c + 1]  # noqa: E702
                u21 = u[i - s + 2, c + 1]; u31 = u[i - s + 3, c + 1]  # noqa: E702
                for j in range(M):
                    k0 = K[i, j]
                    k1 = K[i + 1, j]
                    k2 = K[i + 2, j]
                    k3 = K[i + 3, j]
                    part_t[c, j] += (k0 * u00 + k1 * u10) + (k2 * u20 + k3 * u30)
                    part_t[c + 1, j] += (k0 * u01 + k1 * u11) + (k2 * u21 + k3 * u31)
                c += 2
            i += 4
        while i < e:
            for c in range(paired):
                uc = u[i - s, c]
                for j in range(M):
                    part_t[c, j] += K[i, j] * uc
            i += 1
        if paired < t:  # the last column, 8 rows at a time
            c = t - 1
            i = s
            while i + 8 <= e:
                u0 = u[i - s, c]; u1 = u[i - s + 1, c]; u2 = u[i - s + 2, c]  # noqa: E702
                u3 = u[i - s + 3, c]; u4 = u[i - s + 4, c]; u5 = u[i - s + 5, c]  # noqa: E702
                u6 = u[i - s + 6, c]; u7 = u[i - s + 7, c]  # noqa: E702
                for j in range(M):
                    part_t[c, j] += (K[i, j] * u0 + K[i + 1, j] * u1 + K[i + 2, j] * u2
                                     + K[i + 3, j] * u3 + K[i + 4, j] * u4 + K[i + 5, j] * u5
                                     + K[i + 6, j] * u6 + K[i + 7, j] * u7)
                i += 8
            while i < e:
                uc = u[i - s, c]
                for j in range(M):
                    part_t[c, j] += K[i, j] * uc
                i += 1
        for c in range(t):
            for j in range(M):
                total_t[c, j] += part_t[c, j]
        u[0, 0] = sink  # keeps the read pass (u is scratch, rewritten per sub-block)


@functools.cache
def _compiled_gram_rows() -> Callable[..., None]:
    """:func:`_gram_rows` compiled by Numba (once per process; cached on disk, as
    :func:`kernelmaps._fastmath._compiled_cos_rows`), releasing the GIL so the engine's
    threads run it side by side. Reassociation lets it sum in SIMD lanes; contraction, fused
    multiply-adds (the float32 rounding stays within :func:`attainable_residual`'s)."""
    numba = import_optional("numba", extra="jit")
    options = {"nogil": True, "fastmath": {"reassoc", "contract"}}
    try:
        kernel = numba.njit(cache=True, **options)(_gram_rows)
    except RuntimeError:  # no writable cache directory (read-only install)
        kernel = numba.njit(**options)(_gram_rows)
    # Its one signature (C-contiguous float32 operands, float64 sums) loaded — or compiled —
    # now, on empty arrays: Numba does it at a first call, which would otherwise be the
    # first CG pass's (0.2-0.26 s of it, issue 33) rather than the loading thread's.
    empty = np.empty((0, 0), dtype=np.float32)
    kernel(empty, empty, _NO_WEIGHTS, np.empty((0, 0)), np.empty((1, 1), dtype=np.float32),
           empty)
    return kernel


def widened_gram_block(K_b: np.ndarray, w_b: Any, V: np.ndarray, *,
                       compiled: bool = False) -> np.ndarray:
    r""":math:`K_b^\top W_b K_b V` with float64 products whatever K_b's dtype: each sub-block
    widened into a per-thread float64 scratch buffer first (the path before issue 26, kept
    for systems whose preconditioner would amplify float32 products' rounding, see
    :meth:`NystromSystem.widen`). ``compiled`` is ignored (as :func:`gram_block`'s
    signature)."""
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
