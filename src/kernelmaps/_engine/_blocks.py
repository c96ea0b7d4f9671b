"""The block-size rule and the plan of one call: block boundaries from the working set and the
work per row, threads from the work and the free cores, BLAS's threads inside a block."""

from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import scipy.sparse as sp

from kernelmaps._config import available_cores, get_config
from kernelmaps._engine._blas import FLOPS_FOR_BLAS_THREADS, single_threaded_blas
from kernelmaps._engine._load import free_cores
from kernelmaps._engine._tasks import task_cap

__all__ = ["FLOPS_PER_THREAD", "FLOPS_PER_THREAD_BUSY", "LANE_BYTES", "MAX_LANES",
           "MIN_BLOCK_ROWS", "RANK_UPDATE_MAX_BYTES", "RANK_UPDATE_MIN_ROWS", "LanePlan",
           "Plan", "block_rows_for", "estimated_flops_per_row", "rank_update_plan"]

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
#: Rows per block at least, so BLAS calls stay efficient (chosen with the engine's first
#: block rule, 420b349; not measured on its own).
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


# ----------------------------------------------------------- blocks folded by rank updates
#: Rows per block at least where each block is folded into a shared square matrix by a
#: rank-b update (the ridge accumulator's Gram): the update reads and writes the whole
#: matrix (and NumPy's AᵀA adds a product of that size), so thin blocks spend their time on
#: memory, not on flops. Measured (n = 100,000, d = 20, D = 1,000, one thread, quiet 2-core
#: machine): 21,500 rows/s at 256 rows, 26,600 at 2,048, 31,000 at 4,096 (two threads:
#: 39,700, 48,300, 50,400).
RANK_UPDATE_MIN_ROWS = 4096
#: ... but a block's copy (rows × matrix width) stays within this many bytes (D = 1,000:
#: 4,096 rows, 33 MB; D = 10,000: 838 rows), never fewer than 256 rows (chosen, not measured).
RANK_UPDATE_MAX_BYTES = 64 * 2**20
#: Partial sums (lanes) a pass folds its blocks into, at most (fewer for few blocks or a
#: large matrix): the most threads one pass uses, fixed by the sizes so the result does not
#: depend on the thread count (four: the cores of the machines measured, not more).
MAX_LANES = 4
#: The lanes' matrices together stay within this many bytes (D = 1,000: four lanes of
#: 8 MB; D = 4,000: two of 128 MB; beyond D ≈ 5,800 one lane, no threads).
LANE_BYTES = 256 * 2**20


@dataclass(frozen=True)
class LanePlan:
    """How a pass of rank updates runs: ``rows`` per block, the blocks' ``starts``, and the
    ``lanes`` the blocks are dealt to (block j to lane j mod ``lanes``)."""

    rows: int
    starts: list[int]
    lanes: int


def rank_update_plan(n_rows: int, bytes_per_row: int, row_bytes: int,
                     matrix_bytes: int) -> LanePlan:
    """The blocks and lanes of a pass folding ``n_rows`` rows into a square matrix of
    ``matrix_bytes`` by rank updates, a block's working set being ``bytes_per_row`` per row
    and its copy for the update ``row_bytes`` per row.

    Blocks hold about ``block_bytes`` of working set (:func:`block_rows_for`), at least
    :data:`RANK_UPDATE_MIN_ROWS` rows (fewer where the copy would pass
    :data:`RANK_UPDATE_MAX_BYTES`, never fewer than 256); an odd number of blocks is made
    even and equal where two lanes fit, so two threads get equal work. Everything depends on
    the sizes only, never on the thread count: the sums are the same, bitwise, for any.
    """
    floor_rows = max(256, min(RANK_UPDATE_MIN_ROWS, RANK_UPDATE_MAX_BYTES // row_bytes))
    rows = max(block_rows_for(n_rows, bytes_per_row), min(n_rows, floor_rows))
    count = -(-n_rows // rows)
    if count % 2 and count > 1 and LANE_BYTES // matrix_bytes >= 2:
        # An even number of equal blocks, so two threads get equal work: a 10,000-row
        # partial_fit batch is 4 blocks of 2,500 rows, not 4,096 + 4,096 + 1,808 (which
        # left one thread idle a third of the time: two threads 1.47× one, now ≥ 1.8×).
        rows = -(-n_rows // (count + 1))
    starts = list(range(0, n_rows, rows))
    lanes = min(MAX_LANES, len(starts), max(1, LANE_BYTES // matrix_bytes))
    return LanePlan(rows, starts, lanes)
