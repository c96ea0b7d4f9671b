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
``blas_for_work``
    BLAS on one thread around a computation too small to pay for BLAS's threads;
``check_finite_output``
    refuses to return NaN/inf produced by overflow, with a clear error;
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
"""

from __future__ import annotations

import contextvars
import ctypes
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from math import prod
from typing import Any

import numpy as np
import scipy.sparse as sp
import threadpoolctl
from threadpoolctl import ThreadpoolController

from kernelmaps._array_api import is_device_array, reduce_blocks_device, run_blocks_device
from kernelmaps._config import available_cores, get_config

# The Dask dispatch registry, kept in a module of its own (standard library only) so that
# kernelmaps.distributed registers without loading NumPy; re-exported here.
from kernelmaps._handlers import collection_handler, register_collection_handler

__all__ = [
    "FLOAT_DTYPES",
    "FLOPS_FOR_BLAS_THREADS",
    "FLOPS_PER_THREAD",
    "FLOPS_PER_THREAD_BUSY",
    "blas_controller",
    "blas_for_work",
    "block_rows_for",
    "check_finite_output",
    "collection_handler",
    "is_dask_collection",
    "reduce_blocks",
    "register_collection_handler",
    "run_blocks",
    "scratch_buffer",
    "single_threaded_blas",
    "sparse_container_like",
    "threads_per_task",
    "written_once_buffer",
]

#: The dtype policy: float32 is kept, every other input is computed in float64.
FLOAT_DTYPES = (np.float64, np.float32)

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
#: Work below which BLAS runs on one thread (about 15 ms on one core). BLAS's threads
#: synchronise inside every call and, once woken, spin on a core for tens of milliseconds
#: after it (taking it from the work that follows); on a busy 2-core machine a 100 × 100
#: eigendecomposition took 166 ms on BLAS's two threads against 0.8 ms on one.
FLOPS_FOR_BLAS_THREADS = 2**30
_MIN_BLOCK_ROWS = 128
#: The most blocks a call is cut into for its work's sake (a call whose working set is
#: larger has more): enough to spread work over the threads it pays for, few enough that
#: the NumPy calls of a block stay long. Python runs between them holding the GIL, and on a
#: busy machine a thread descheduled while holding it stalls the others for a time slice
#: (AdditiveChi2Sampler on 10,000 rows, 2 threads, load 7-13, against scikit-learn: 1.9-2.5×
#: in 60 blocks, 2.0-3.3× in 11, 2.2-3.1× in 16).
_WORK_BLOCKS = 16
#: Scratch buffers start at this alignment on every thread, so a block's arithmetic (which
#: SIMD and BLAS code paths run) does not depend on which thread runs it.
_ALIGNMENT = 64
_threadpool_controller: ThreadpoolController | None = None
#: The process-wide BLAS limit shared by every active :func:`single_threaded_blas` scope:
#: how many scopes are active, and the limiter that restores the count when none is.
_blas_lock = threading.Lock()
_blas_scopes = 0
_blas_limiter: Any = None


def blas_controller() -> ThreadpoolController:
    """threadpoolctl's controller of the loaded BLAS libraries, made once per process.

    Inspecting the libraries costs about a millisecond and allocates about 0.4 MB for a
    moment; callers that measure memory (``evaluate``'s runs) make it before they measure.
    """
    global _threadpool_controller
    with _blas_lock:
        if _threadpool_controller is None:
            _threadpool_controller = ThreadpoolController().select(user_api="blas")
    return _threadpool_controller


_OVERFLOW_HINT = (
    "the input is too large in magnitude for this map's arithmetic (it overflowed). Rescale "
    "the features first, e.g. with sklearn.preprocessing.StandardScaler or MaxAbsScaler."
)


_scratch = threading.local()
_task = threading.local()


def is_dask_collection(X: Any) -> bool:
    """Whether ``X`` is a lazy Dask collection (array, DataFrame, …), without importing Dask.

    Dask collections implement the ``__dask_graph__`` protocol; anything else is data.
    """
    return callable(getattr(type(X), "__dask_graph__", None))


@contextmanager
def threads_per_task(n_threads: int) -> Iterator[None]:
    """Cap the engine's threads for work started on this thread (thread-local).

    Inside a task of an outer scheduler that already runs one task per core (a Dask worker),
    row blocks run on the task's own thread instead of starting a pool per task, and BLAS
    on one thread. The cap is per thread, so concurrent tasks of one worker process do not
    see each other's setting.
    """
    previous = getattr(_task, "max_threads", None)
    _task.max_threads = n_threads
    try:
        yield
    finally:
        _task.max_threads = previous


def _task_cap() -> int | None:
    return getattr(_task, "max_threads", None)


def scratch_buffer(name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A reusable per-thread work array of ``shape`` (contents undefined), 64-byte aligned.

    Blocks run one after another on each thread, so a block's temporaries can live in the
    same memory as the previous block's. Allocating them afresh costs more than the work
    for cache-sized blocks: multi-megabyte allocations come from ``mmap`` and every page
    is faulted in and zeroed again. Buffers are per thread (transform stays thread-safe),
    live as long as the thread (the caller's, or a worker of the engine's pool) and start
    at the same alignment on every thread (see the module docstring, "Determinism").
    """
    dtype = np.dtype(dtype)
    buffers = _scratch.__dict__.setdefault("buffers", {})
    size = prod(shape)
    buffer = buffers.get((name, dtype))
    if buffer is None or buffer.size < size:
        raw = np.empty(size * dtype.itemsize + _ALIGNMENT, dtype=np.uint8)
        offset = -raw.ctypes.data % _ALIGNMENT
        buffer = raw[offset:offset + size * dtype.itemsize].view(dtype)
        buffers[(name, dtype)] = buffer
    return buffer[:size].reshape(shape)


#: ``madvise``'s advice for base pages (Linux ``MADV_NOHUGEPAGE``).
_MADV_NOHUGEPAGE = 15
_PAGE = 4096
#: Arrays from this size on get base pages from :func:`written_once_buffer`.
WRITTEN_ONCE_MIN_BYTES = 64 << 20


def written_once_buffer(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A new array (contents undefined) for data written once and then read in passes —
    FALKON's kernel-block cache — in base pages rather than transparent huge pages.

    NumPy advises transparent huge pages for every allocation of 4 MB or more
    (``MADV_HUGEPAGE``): fewer page faults and TLB misses. A streaming read hardly misses
    the TLB, so for an array written once and then streamed only the first touch matters,
    and there huge pages are the risk: measured on the 2-core development VM (a
    Firecracker guest), fresh memory the host had taken back cost 1.8–2.5 ms/MB in huge
    pages (a 5 ms fault per 2 MB) against 0.5–0.7 ms/MB in base pages — 2.1 GB first
    touched in 2.5–5.3 s against 1.0–1.5 s, an 8 GB cache ≈ 8 s more — while a streaming
    read of 2.1 GB on two threads took 85–110 ms against 86–88 ms. Memory the process had
    just freed was faster in huge pages (0.1 against 0.5 ms/MB: 0.1 s on a 240 MB cache);
    on bare metal huge pages save about 0.1 ms/MB (estimated from page-zeroing rates, not
    measured here: ≈ 0.5 s on 8 GB). A probe of a few MB cannot tell which case a large
    array will meet (16 MB probes came out fast while the next gigabyte was slow), so the
    advice is withdrawn (``MADV_NOHUGEPAGE``) for arrays of :data:`WRITTEN_ONCE_MIN_BYTES`
    or more, over their whole pages, before anything is written. Elsewhere than Linux it is
    NumPy's array unchanged.
    """
    array = np.empty(shape, dtype=dtype)
    if array.nbytes >= WRITTEN_ONCE_MIN_BYTES and _madvise is not None:
        start = -(-array.ctypes.data // _PAGE) * _PAGE
        stop = (array.ctypes.data + array.nbytes) // _PAGE * _PAGE
        if stop > start:
            _madvise(start, stop - start, _MADV_NOHUGEPAGE)  # advice: a failure changes nothing
    return array


def _libc_madvise() -> Callable[[int, int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):  # pragma: no cover - a libc without madvise
        return None
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    madvise.restype = ctypes.c_int
    return madvise


_madvise = _libc_madvise()


def _release_openblas_control() -> None:
    # threadpoolctl >= 3.6 lets only the thread that set an OpenBLAS limit change it again;
    # the scope that restores the count may run on another thread than the one that set it.
    openblas = getattr(threadpoolctl, "OpenBLASController", None)
    release = getattr(openblas, "clear_controlling_thread", None)
    if release is not None:
        release(force=True)


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Context manager limiting BLAS to one thread (for work that is already parallel, or
    small products where thread start-up costs more than it saves).

    The BLAS thread count is process-wide, and concurrent calls (transforms of one
    estimator from the threads of a service) open scopes that overlap without nesting. So
    the scopes share one limit: the first to start sets it, the last to end restores the
    count there was before, whatever the order they end in.
    """
    global _blas_scopes, _blas_limiter
    controller = blas_controller()
    with _blas_lock:
        if _blas_scopes == 0:
            # A threadpool_limits scope of another thread (the caller's main thread, say)
            # would make threadpoolctl ignore this limit; that scope still restores its own
            # count when it ends.
            _release_openblas_control()
            _blas_limiter = controller.limit(limits=1, user_api="blas")
        _blas_scopes += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_scopes -= 1
            if _blas_scopes == 0:
                _release_openblas_control()
                _blas_limiter.restore_original_limits()
                _release_openblas_control()
                _blas_limiter = None


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


def block_rows_for(n_rows: int, bytes_per_row: int, flops_per_row: float | None = None) -> int:
    """Rows per block: a working set of about ``block_bytes``, and when the work per row is
    known, at least one block per :data:`FLOPS_PER_THREAD` of work, up to 16 blocks; at
    least 128 rows."""
    rows = get_config()["block_bytes"] // max(1, bytes_per_row)
    if flops_per_row:
        blocks = min(_WORK_BLOCKS, math.ceil(n_rows * flops_per_row / FLOPS_PER_THREAD))
        rows = min(rows, math.ceil(n_rows / blocks))
    return int(min(max(1, n_rows), max(_MIN_BLOCK_ROWS, rows)))


def _estimated_flops_per_row(X: Any, bytes_per_row: int) -> float | None:
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


#: This process's CPU use (cores' worth), smoothed over about a minute like the load
#: average it is compared with, and the (wall, CPU) clock readings it was last updated at.
_usage_lock = threading.Lock()
_usage = {"wall": time.monotonic(), "cpu": time.process_time(), "cores": 0.0}


def _free_cores(cores: int) -> float:
    """Cores not taken by other processes: ``cores`` less the 1-minute load average (runnable
    threads of every process) that is not this process's own CPU use.

    A second engine thread pays only where a core is free for it: on a machine whose cores
    are all busy, the threads of one call wait for each other (and for the GIL between
    NumPy calls) a scheduler time slice at a time — measured on a 2-core VM at load 8, two
    threads took 3-5× longer than one at 0.5-2 ms of work. Where the load average is not
    available (Windows), every core counts as free.

    The load average lags by about a minute: a process started after a heavy job (or this
    process's own earlier work, before its usage is known) would see the finished job's
    load and run single-threaded for that minute — measured on a 2-core VM: a new process
    started right after a 30 s two-core job saw a load average of 1.37, so 0.63 free cores
    (one thread), with no thread of any other process runnable. Where Linux says how many
    threads are runnable right now (:func:`_runnable_elsewhere`), the estimate of the other
    processes' use cannot exceed that instantaneous count.
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - platform-dependent
        return float(cores)
    wall, cpu = time.monotonic(), time.process_time()
    with _usage_lock:
        elapsed = wall - _usage["wall"]
        if elapsed >= 1.0:
            recent = math.exp(-elapsed / 60.0)  # the load average's own time constant
            rate = (cpu - _usage["cpu"]) / elapsed
            _usage.update(wall=wall, cpu=cpu,
                          cores=recent * _usage["cores"] + (1.0 - recent) * rate)
        own = _usage["cores"]
    busy = max(0.0, load - own)
    now = _runnable_elsewhere()
    return cores - (busy if now is None else min(busy, now))


#: The last reading of :func:`_runnable_elsewhere` and when it was taken (monotonic s):
#: read at most every 0.25 s, so a stream of small calls does not walk /proc each time.
_runnable = {"at": -1.0, "value": None}


def _runnable_elsewhere() -> float | None:
    """Threads of other processes runnable now (Linux: the running count of /proc/loadavg
    less this process's threads in state R), or None where /proc is not there."""
    now = time.monotonic()
    with _usage_lock:
        if now - _runnable["at"] < 0.25:
            return _runnable["value"]
    try:
        with open("/proc/loadavg", encoding="ascii") as file:
            running = int(file.read().split()[3].split("/")[0])
        own = 0
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/stat", encoding="ascii",
                          errors="replace") as file:
                    stat = file.read()
            except OSError:  # the thread ended meanwhile
                continue
            own += stat[stat.rindex(")") + 2:].startswith("R")
        value: float | None = float(max(0, running - own))
    except (OSError, ValueError, IndexError):
        value = None
    with _usage_lock:
        _runnable.update(at=now, value=value)
    return value


class _Plan:
    """How one call runs: its block boundaries, threads and BLAS threads."""

    def __init__(self, X: Any, n_rows: int, bytes_per_row: int, flops_per_row: float | None,
                 n_threads: int) -> None:
        if flops_per_row is None:
            flops_per_row = _estimated_flops_per_row(X, bytes_per_row)
        self.rows = block_rows_for(n_rows, bytes_per_row, flops_per_row)
        self.starts = range(0, n_rows, self.rows)
        n_blocks = len(self.starts)
        cap = _task_cap()
        threads = min(n_threads if cap is None else min(n_threads, cap), n_blocks)
        work = None if flops_per_row is None else n_rows * flops_per_row
        if work is not None:  # unknown work: every block may use a thread
            threads = min(threads, int(work // FLOPS_PER_THREAD))
        if threads > 1:
            free = round(_free_cores(available_cores()))
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


def blas_for_work(flops: float) -> Any:
    """Context manager: BLAS on one thread around work of ``flops`` operations (e.g. the
    eigendecomposition of a small matrix) when that is below :data:`FLOPS_FOR_BLAS_THREADS`,
    or when this thread runs inside the engine's blocks or an outer scheduler's task; else
    nothing is changed."""
    if flops < FLOPS_FOR_BLAS_THREADS or _task_cap() is not None:
        return single_threaded_blas()
    return nullcontext()


# ------------------------------------------------------------------------------ the pool
_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_workers = 0


def _serial_inside_worker() -> None:
    # Engine calls made from inside a block run serially: the call's threads are busy.
    _task.max_threads = 1


def _worker_pool(n_workers: int) -> ThreadPoolExecutor:
    """The process's pool of engine workers, with at least ``n_workers`` threads.

    Kept for the process rather than started per call: starting threads costs about 100 µs
    per call, and each new thread would fault in its scratch buffers afresh.
    """
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None or _pool_workers < n_workers:
            previous = _pool
            _pool = ThreadPoolExecutor(max_workers=n_workers, initializer=_serial_inside_worker,
                                       thread_name_prefix="kernelmaps-engine")
            _pool_workers = n_workers
            if previous is not None:
                previous.shutdown(wait=False)
        return _pool


def _forget_pool_after_fork() -> None:
    # A forked child has none of its parent's threads; its first parallel call starts a
    # pool of its own. The locks may have been held by a parent thread at the fork.
    global _pool, _pool_workers, _pool_lock, _blas_lock
    _pool, _pool_workers = None, 0
    _pool_lock, _blas_lock = threading.Lock(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


class _BlockQueue:
    """The blocks of one call, each taken once, in order, by whichever thread is free.

    The caller takes blocks too, so a call never waits for a worker to start: if the pool's
    workers are busy (other calls) or slow to wake (a busy machine), the caller runs every
    block itself, as it would serially. It then waits only for blocks other threads took.
    """

    def __init__(self, n_blocks: int, run_block: Callable[[int], None]) -> None:
        self._n_blocks = n_blocks
        self._run_block = run_block
        self._next = 0
        self._running = 0
        self._errors: dict[int, BaseException] = {}
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)

    def work(self) -> None:
        """Run blocks until none is left or one has failed."""
        while True:
            with self._lock:
                if self._next >= self._n_blocks or self._errors:
                    return
                index = self._next
                self._next += 1
                self._running += 1
            try:
                self._run_block(index)
            except BaseException as error:  # re-raised by the caller, in wait()
                with self._lock:
                    self._errors[index] = error
            finally:
                with self._lock:
                    self._running -= 1
                    if self._running == 0:
                        self._idle.notify_all()

    def wait(self) -> None:
        """Wait for the blocks other threads took; raise the error of the first block
        that failed (every block before it ran, so it is the one a serial run raises)."""
        with self._idle:
            while self._running:
                self._idle.wait()
        if self._errors:
            raise self._errors[min(self._errors)]

    def cancel(self) -> None:
        """Let no thread take another block (the caller stops: e.g. KeyboardInterrupt)."""
        with self._lock:
            self._next = self._n_blocks


def _run_planned(plan: _Plan, run_block: Callable[[int], None]) -> None:
    """Run ``run_block(i)`` for every block of ``plan``, on its threads, under its BLAS limit."""
    _run_queue(_BlockQueue(len(plan.starts), run_block), plan.threads, plan.blas())


def run_tasks(n_tasks: int, task: Callable[[int], None], n_threads: int) -> None:
    """Run ``task(i)`` once for every ``i`` in ``range(n_tasks)``, on up to ``n_threads``
    threads — the caller's and the engine's pool workers, taking tasks in order as they
    are free — with BLAS on one thread per task when more than one thread runs.

    For callers that cut their work themselves (the ridge accumulator's lanes): whichever
    thread runs a task, the task's result is the same. Inside an engine block or an outer
    scheduler's task the tasks run on the caller's thread. The error of the first failing
    task is raised after the others stopped.
    """
    cap = _task_cap()
    threads = max(1, min(n_threads, n_tasks, cap if cap is not None else n_threads))
    _run_queue(_BlockQueue(n_tasks, task), threads,
               single_threaded_blas() if threads > 1 else nullcontext())


def _run_queue(queue: _BlockQueue, threads: int, blas: Any) -> None:
    with blas:
        try:
            if threads > 1:
                pool = _worker_pool(threads - 1)
                for _ in range(threads - 1):
                    # Each worker in a copy of the caller's context: it sees the caller's
                    # config_context settings.
                    pool.submit(contextvars.copy_context().run, queue.work)
                with threads_per_task(1):
                    queue.work()
            else:
                queue.work()
            queue.wait()
        except BaseException:
            queue.cancel()
            raise


def run_blocks(
    X: Any,
    *,
    n_out: int,
    dtype: np.dtype,
    block_fn: Callable[[Any, np.ndarray], None],
    temp_bytes_per_row: int = 0,
    flops_per_row: float | None = None,
    n_threads: int = 1,
    name: str = "transform",
    nonfinite_hint: str = _OVERFLOW_HINT,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The chunked transform engine.

    Allocates the ``(n_samples, n_out)`` output once, cuts the rows into blocks (see the
    module docstring: about ``block_bytes`` of working set — output rows + temporaries —
    and enough blocks for the threads the work pays for), and calls
    ``block_fn(X[start:stop], out[start:stop])`` for each block, on as many of ``n_threads``
    threads as the work pays for. The result is identical for any ``n_threads``. Memory
    beyond the output is bounded by (number of threads) × (block working set).
    ``flops_per_row`` is the work of one row (floating-point operations; an exp or cos counts
    as about 10); by default it is estimated as one inner product over the row's features
    per 8 bytes of working set. An array on a device (array API dispatch) goes to
    :func:`kernelmaps._array_api.run_blocks_device` instead.

    ``out``, if given, is the output to fill (host arrays only): a C-contiguous
    ``(n_samples, n_out)`` array of ``dtype``, e.g. a buffer a caller reuses across calls
    (a fresh multi-megabyte output is fresh memory from the OS, whose first touch costs page
    faults on every call).
    """
    if is_device_array(X):
        return run_blocks_device(X, n_out=n_out, dtype=dtype, block_fn=block_fn,
                                 temp_bytes_per_row=temp_bytes_per_row, name=name,
                                 nonfinite_hint=nonfinite_hint)
    n_samples = X.shape[0]
    if out is None:
        out = np.empty((n_samples, n_out), dtype=dtype)
    elif (out.shape != (n_samples, n_out) or out.dtype != dtype
          or not out.flags.c_contiguous):
        raise ValueError(
            f"{name}: out must be a C-contiguous ({n_samples}, {n_out}) array of {dtype}, "
            f"got a {'C' if out.flags.c_contiguous else 'non-C'}-contiguous {out.shape} "
            f"array of {out.dtype}.")
    if n_samples == 0:
        return out
    plan = _Plan(X, n_samples, n_out * dtype.itemsize + temp_bytes_per_row, flops_per_row,
                 n_threads)

    def run_block(index: int) -> None:
        start = plan.starts[index]
        stop = min(start + plan.rows, n_samples)
        block = out[start:stop]
        with np.errstate(over="ignore", invalid="ignore"):
            block_fn(X[start:stop], block)
        check_finite_output(block, name, start, nonfinite_hint)

    _run_planned(plan, run_block)
    return out


def reduce_blocks(
    X: Any,
    block_fn: Callable[..., np.ndarray],
    *,
    bytes_per_row: int,
    flops_per_row: float | None = None,
    n_threads: int = 1,
    aligned: tuple = (),
) -> np.ndarray:
    """Sum ``block_fn(X[start:stop], *(a[start:stop] for a in aligned))`` over row blocks.

    The reduction counterpart of :func:`run_blocks` (same blocks, threads and BLAS limit),
    for passes over the data that produce a small result (e.g. ``K_bᵀ (K_b v)`` in kernel
    ridge's conjugate gradient): memory stays at one block per thread whatever ``n`` is.
    ``aligned`` are arrays with one row per row of ``X`` (weights, targets) cut into the
    same blocks. Partial sums are accumulated in float64 in block order, so the result is
    identical for any thread count. An array on a device goes to
    :func:`kernelmaps._array_api.reduce_blocks_device`.
    """
    if is_device_array(X):
        return reduce_blocks_device(X, block_fn, bytes_per_row=bytes_per_row, aligned=aligned)
    n_samples = X.shape[0]
    plan = _Plan(X, n_samples, bytes_per_row, flops_per_row, n_threads)
    partials: list[Any] = [None] * len(plan.starts)

    def run_block(index: int) -> None:
        start = plan.starts[index]
        stop = start + plan.rows
        parts = tuple(a[start:stop] for a in aligned)
        partials[index] = np.asarray(block_fn(X[start:stop], *parts), dtype=np.float64)

    _run_planned(plan, run_block)
    total = partials[0].copy()
    for part in partials[1:]:  # in block order, so the sum is deterministic
        total += part
    return total


def sparse_container_like(X: Any, result: sp.spmatrix | sp.sparray) -> Any:
    """Return ``result`` in the same sparse interface (matrix vs array) as ``X``, as CSR."""
    if sp.isspmatrix(X):
        return sp.csr_matrix(result)
    return sp.csr_array(result)
