"""The engine: row blocks on threads, reductions, scratch buffers and finiteness checks.

Everything that runs over the rows of a data set goes through here, so memory and speed are
solved once: kernels evaluate K(X, Y) and K(X, Y) @ V with it, feature maps transform with
it, landmark selection and the kernel machines reduce over the data with it. It knows
nothing of maps, kernels or models: a caller hands it a function of one row block.

``run_blocks``
    preallocates an ``(n, n_out)`` output and fills cache-sized row blocks, on threads;
``reduce_blocks``
    sums a function of row blocks (the reduction counterpart, for small results);
``scratch_buffer``
    reusable per-thread temporaries for block functions;
``written_once_buffer`` / ``first_touch`` / ``release_written_once``
    base-page arrays for data written once and streamed (FALKON's cache), their pages
    faulted in on the engine's threads, and given back on a background thread;
``blas_for_work``
    BLAS on one thread around a computation too small to pay for BLAS's threads;
``check_finite_output``
    refuses to return NaN/inf produced by overflow, with a clear error;
``clamp``
    a block clamped in place to bounds, in the form NumPy runs fastest;
``is_dask_collection`` / ``threads_per_task``
    how the engine meets an outer scheduler (Dask): recognise its lazy collections without
    importing it, and run one engine thread per task where it already runs one task per core.

Blocks
    A block holds about ``block_bytes`` of working set (output rows + the caller's declared
    temporaries, so it stays in cache) and at least 128 rows (so BLAS calls stay efficient);
    a call with work for several threads has at least one block per
    :data:`FLOPS_PER_THREAD` of work, up to 16. Boundaries depend on those sizes only.

Threads
    The blocks of a call run on ``t`` threads — the caller's own and ``t - 1`` workers of one
    pool kept for the process, each taking the next block when it is free — where ``t`` is
    the smallest of the thread setting, the number of blocks, the call's work divided by
    :data:`FLOPS_PER_THREAD` (the work a thread must get to pay for itself) and the cores
    free of other processes' work; where none is free, the work divided by the larger
    :data:`FLOPS_PER_THREAD_BUSY`. Inside a call of several blocks, and inside any call
    smaller than :data:`FLOPS_FOR_BLAS_THREADS`, BLAS runs on one thread; only one large
    block (a few rows with much work each) keeps BLAS's own threads, on the caller's thread
    alone. So, with the default settings, engine threads × BLAS threads never exceed the
    cores, and small calls never wake BLAS's threads, whose idle spinning after a call takes
    a core from the work that follows. Engine calls made inside the blocks of a call that
    runs on several threads run serially.

Determinism
    The same call on the same arrays gives bitwise identical results for any thread count:
    the block boundaries, BLAS's thread count inside a block (one whenever there are several
    blocks) and the 64-byte alignment of scratch buffers do not depend on it, so each block
    does the same arithmetic wherever it runs, and a reduction adds its partial sums in
    block order. (One large block runs on BLAS's own thread count, which is process-wide:
    another thread's BLAS limit during the call changes it.) Across block sizes
    (``block_bytes``) results agree to rounding only: other blocks are other BLAS calls.

Modules, one job each: ``_blocks`` (the block-size rule and a call's plan), ``_scheduler``
(the pool, ``run_blocks``, ``reduce_blocks``, ``run_tasks``), ``_blas`` (BLAS's threads),
``_load`` (the cores other processes leave free), ``_buffers`` (scratch and written-once
memory), ``_elementwise`` (element-wise passes), ``_checks`` (dtype policy, finiteness,
sparse containers) and ``_tasks`` (the thread-local cap an outer scheduler or an engine
worker sets). This package's namespace is
the engine's interface: callers import from ``kernelmaps._engine``, never from its modules.
"""

from __future__ import annotations

from kernelmaps._engine._blas import (
    FLOPS_FOR_BLAS_THREADS,
    blas_controller,
    blas_for_work,
    blas_threads,
    single_threaded_blas,
)
from kernelmaps._engine._blocks import (
    FLOPS_PER_THREAD,
    FLOPS_PER_THREAD_BUSY,
    MIN_BLOCK_ROWS,
    RANK_UPDATE_MIN_ROWS,
    LanePlan,
    block_rows_for,
    rank_update_plan,
)
from kernelmaps._engine._buffers import (
    WRITTEN_ONCE_MIN_BYTES,
    first_touch,
    release_written_once,
    scratch_buffer,
    wait_for_releases,
    written_once_buffer,
)
from kernelmaps._engine._checks import FLOAT_DTYPES, check_finite_output, sparse_container_like
from kernelmaps._engine._elementwise import clamp
from kernelmaps._engine._scheduler import reduce_blocks, run_blocks, run_tasks
from kernelmaps._engine._tasks import is_dask_collection, threads_per_task

# The Dask dispatch registry, kept in a module of its own (standard library only) so that
# kernelmaps.distributed registers without loading NumPy; re-exported here.
from kernelmaps._handlers import collection_handler, register_collection_handler

__all__ = [
    "FLOAT_DTYPES",
    "FLOPS_FOR_BLAS_THREADS",
    "FLOPS_PER_THREAD",
    "FLOPS_PER_THREAD_BUSY",
    "MIN_BLOCK_ROWS",
    "RANK_UPDATE_MIN_ROWS",
    "WRITTEN_ONCE_MIN_BYTES",
    "LanePlan",
    "blas_controller",
    "blas_for_work",
    "blas_threads",
    "block_rows_for",
    "check_finite_output",
    "clamp",
    "collection_handler",
    "first_touch",
    "is_dask_collection",
    "rank_update_plan",
    "reduce_blocks",
    "register_collection_handler",
    "release_written_once",
    "run_blocks",
    "run_tasks",
    "scratch_buffer",
    "single_threaded_blas",
    "sparse_container_like",
    "threads_per_task",
    "wait_for_releases",
    "written_once_buffer",
]
