"""The block-size rule and the plan of one call: block boundaries from the working set and the
work per row, threads from the work and the free cores, BLAS's threads inside a block."""

from __future__ import annotations

import math
from contextlib import nullcontext
from typing import Any

import scipy.sparse as sp

from kernelmaps._config import available_cores, get_config
from kernelmaps._engine._blas import FLOPS_FOR_BLAS_THREADS, single_threaded_blas
from kernelmaps._engine._load import free_cores
from kernelmaps._engine._tasks import task_cap

__all__ = ["FLOPS_PER_THREAD", "FLOPS_PER_THREAD_BUSY", "MIN_BLOCK_ROWS", "Plan",
           "block_rows_for", "estimated_flops_per_row"]

#: Work is counted in floating-point operations of a matrix product (about 70 GFLOP/s on
#: one Sapphire Rapids core); an element-wise pass costs about 40 of them per element, exp
#: or log 50-70, cos 400 (measured; benchmarks/bench_engine.py prints them).
#:
#: The work one thread must get for running it to pay: about 0.5 ms on one core. Waking a
#: pool worker, limiting BLAS and collecting the blocks cost 10-60 µs on a quiet machine
#: (see bench_engine.py for the crossover).
FLOPS_PER_THREAD = 2**25
#: The same where no core is free of other processes' work (about 7 ms on one core): each
#: thread then waits for scheduler time slices, so the threads of a call wait for each other
#: (and for the GIL between NumPy calls) milliseconds at a time; only long work gains by
#: the larger share of the cores its threads get. Measured on a 2-core VM at load 8-12: two
#: threads were 3-5× slower than one at 0.5-2 ms of work, from 1.25× slower to 1.15× faster
#: at 3-8 ms, and 1.8× faster at 15 ms (AdditiveChi2Sampler, 10,000 rows).
FLOPS_PER_THREAD_BUSY = 2**29
MIN_BLOCK_ROWS = 128
#: The most blocks a call is cut into for its work's sake (a call whose working set is
#: larger has more): enough to spread work over the threads it pays for, few enough that
#: the NumPy calls of a block stay long. Python runs between them holding the GIL, and on a
#: busy machine a thread descheduled while holding it stalls the others for a time slice
#: (AdditiveChi2Sampler on 10,000 rows, 2 threads, load 7-13, against scikit-learn: 1.9-2.5×
#: in 60 blocks, 2.0-3.3× in 11, 2.2-3.1× in 16).
WORK_BLOCKS = 16


def block_rows_for(n_rows: int, bytes_per_row: int, flops_per_row: float | None = None) -> int:
    """Rows per block: a working set of about ``block_bytes``, and when the work per row is
    known, at least one block per :data:`FLOPS_PER_THREAD` of work, up to 16 blocks; at
    least 128 rows."""
    rows = get_config()["block_bytes"] // max(1, bytes_per_row)
    if flops_per_row:
        blocks = min(WORK_BLOCKS, math.ceil(n_rows * flops_per_row / FLOPS_PER_THREAD))
        rows = min(rows, math.ceil(n_rows / blocks))
    return int(min(max(1, n_rows), max(MIN_BLOCK_ROWS, rows)))


def estimated_flops_per_row(X: Any, bytes_per_row: int) -> float | None:
    """Work per row when the caller does not say: per 8 bytes of working set, an inner
    product over the row's features (stored values, for sparse rows) and a few element-wise
    passes — a kernel value's cost. ``None`` for inputs that are not rows of features."""
    if sp.issparse(X):
        features = X.nnz / max(1, X.shape[0])
    elif getattr(X, "ndim", 0) == 2:
        features = X.shape[1]
    else:  # e.g. row indices (the caller's block function does the work): unknown
        return None
    return (2.0 * features + 300) * bytes_per_row / 8


class Plan:
    """How one call runs: its block boundaries, threads and BLAS threads."""

    def __init__(self, X: Any, n_rows: int, bytes_per_row: int, flops_per_row: float | None,
                 n_threads: int) -> None:
        if flops_per_row is None:
            flops_per_row = estimated_flops_per_row(X, bytes_per_row)
        self.rows = block_rows_for(n_rows, bytes_per_row, flops_per_row)
        self.starts = range(0, n_rows, self.rows)
        n_blocks = len(self.starts)
        cap = task_cap()
        threads = min(n_threads if cap is None else min(n_threads, cap), n_blocks)
        work = None if flops_per_row is None else n_rows * flops_per_row
        if work is not None:  # unknown work: every block may use a thread
            threads = min(threads, int(work // FLOPS_PER_THREAD))
        if threads > 1:
            free = round(free_cores(available_cores()))
            if free >= 2:
                threads = min(threads, free)
            else:  # no core is free for a second thread: only long work gains by one
                threads = min(threads, 1 if work is None else int(work // FLOPS_PER_THREAD_BUSY))
        self.threads = max(1, threads)
        small = work is not None and work < FLOPS_FOR_BLAS_THREADS
        # BLAS's thread count inside a block depends on the sizes only (see "Determinism").
        self.single_threaded_blas = n_blocks > 1 or small or cap is not None

    def blas(self) -> Any:
        return single_threaded_blas() if self.single_threaded_blas else nullcontext()
