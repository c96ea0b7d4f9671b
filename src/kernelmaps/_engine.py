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
``check_finite_output``
    refuses to return NaN/inf produced by overflow, with a clear error;
``is_dask_collection`` / ``threads_per_task``
    how the engine meets an outer scheduler (Dask): recognise its lazy collections without
    importing it, and run one engine thread per task where it already runs one task per core.

Block boundaries depend only on the sizes, never on the thread count, so every result is
identical for any number of threads.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from math import prod
from typing import Any

import numpy as np
import scipy.sparse as sp
import threadpoolctl
from threadpoolctl import ThreadpoolController

from kernelmaps._array_api import is_device_array, reduce_blocks_device, run_blocks_device
from kernelmaps._config import get_config

__all__ = [
    "FLOAT_DTYPES",
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
]

#: The dtype policy: float32 is kept, every other input is computed in float64.
FLOAT_DTYPES = (np.float64, np.float32)

_MIN_BLOCK_ROWS = 128
_threadpool_controller: ThreadpoolController | None = None
#: The process-wide BLAS limit shared by every active :func:`single_threaded_blas` scope:
#: how many scopes are active, and the limiter that restores the count when none is.
_blas_lock = threading.Lock()
_blas_scopes = 0
_blas_limiter: Any = None


def _blas_controller() -> ThreadpoolController:
    # Inspecting the loaded BLAS libraries costs milliseconds; do it once per process.
    global _threadpool_controller
    with _blas_lock:
        if _threadpool_controller is None:
            _threadpool_controller = ThreadpoolController()
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


#: What to do with a lazy (Dask) collection, by operation name. ``kernelmaps.distributed``
#: registers its functions here when it is imported (``import kernelmaps`` imports it), so
#: maps and models dispatch a Dask input without importing the layer above them.
_COLLECTION_HANDLERS: dict[str, Callable[..., Any]] = {}


def register_collection_handler(operation: str, handler: Callable[..., Any]) -> None:
    """Make ``handler`` what :func:`collection_handler` returns for ``operation``."""
    _COLLECTION_HANDLERS[operation] = handler


def collection_handler(operation: str) -> Callable[..., Any]:
    """The registered function for ``operation`` on a Dask collection."""
    try:
        return _COLLECTION_HANDLERS[operation]
    except KeyError:
        raise TypeError(
            f"a Dask collection was passed ({operation}), but kernelmaps.distributed, which "
            "handles them, is not loaded: pip install 'kernelmaps[dask]' and import kernelmaps."
        ) from None


@contextmanager
def threads_per_task(n_threads: int) -> Iterator[None]:
    """Cap the engine's threads for work started on this thread (thread-local).

    Inside a task of an outer scheduler that already runs one task per core (a Dask worker),
    row blocks run on the task's own thread instead of starting a pool per task. The cap is
    per thread, so concurrent tasks of one worker process do not see each other's setting.
    """
    previous = getattr(_task, "max_threads", None)
    _task.max_threads = n_threads
    try:
        yield
    finally:
        _task.max_threads = previous


def _capped(n_threads: int) -> int:
    cap = getattr(_task, "max_threads", None)
    return n_threads if cap is None else min(n_threads, cap)


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
    controller = _blas_controller()
    with _blas_lock:
        if _blas_scopes == 0:
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


def block_rows_for(n_rows: int, bytes_per_row: int) -> int:
    """Rows per block so one block's working set is about ``block_bytes``."""
    target = get_config()["block_bytes"]
    rows = max(_MIN_BLOCK_ROWS, target // max(1, bytes_per_row))
    return int(min(max(1, n_rows), rows))


def _map_in_context(pool: ThreadPoolExecutor, fn: Callable[[int], Any],
                    starts: Iterable[int]) -> Iterator[Any]:
    """``pool.map(fn, starts)`` with each call in a copy of the caller's context, so the
    workers see the caller's :func:`~kernelmaps.config_context` settings."""
    futures = [pool.submit(contextvars.copy_context().run, fn, start) for start in starts]
    return (future.result() for future in futures)


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
    An array on a device (array API dispatch) goes to
    :func:`kernelmaps._array_api.run_blocks_device` instead.
    """
    if is_device_array(X):
        return run_blocks_device(X, n_out=n_out, dtype=dtype, block_fn=block_fn,
                                 temp_bytes_per_row=temp_bytes_per_row, name=name,
                                 nonfinite_hint=nonfinite_hint)
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

    n_threads = min(_capped(n_threads), len(starts))
    if n_threads <= 1:
        for start in starts:
            work(start)
        return out
    # Blocks run concurrently; BLAS inside each block runs single-threaded so the
    # machine is not oversubscribed (NumPy ufuncs and BLAS calls release the GIL).
    with single_threaded_blas(), ThreadPoolExecutor(max_workers=n_threads) as pool:
        for _ in _map_in_context(pool, work, starts):
            pass
    return out


def reduce_blocks(
    X: Any,
    block_fn: Callable[..., np.ndarray],
    *,
    bytes_per_row: int,
    n_threads: int = 1,
    aligned: tuple = (),
) -> np.ndarray:
    """Sum ``block_fn(X[start:stop], *(a[start:stop] for a in aligned))`` over row blocks.

    The reduction counterpart of :func:`run_blocks`, for passes over the data that produce a
    small result (e.g. ``K_bᵀ (K_b v)`` in kernel ridge's conjugate gradient): memory stays
    at one block per thread whatever ``n`` is. ``aligned`` are arrays with one row per row
    of ``X`` (weights, targets) cut into the same blocks. Partial sums are accumulated in
    float64 in a fixed block order, so the result does not depend on the thread count.
    An array on a device goes to :func:`kernelmaps._array_api.reduce_blocks_device`.
    """
    if is_device_array(X):
        return reduce_blocks_device(X, block_fn, bytes_per_row=bytes_per_row, aligned=aligned)
    n_samples = X.shape[0]
    rows = block_rows_for(n_samples, bytes_per_row)
    starts = list(range(0, n_samples, rows))

    def work(start: int) -> np.ndarray:
        stop = start + rows
        parts = tuple(a[start:stop] for a in aligned)
        return np.asarray(block_fn(X[start:stop], *parts), dtype=np.float64)

    def accumulate(partials) -> np.ndarray:
        total = None
        for part in partials:  # in block order, so the sum is deterministic
            if total is None:
                total = part.copy()
            else:
                total += part
        return total

    n_threads = min(_capped(n_threads), len(starts))
    if n_threads <= 1:
        return accumulate(map(work, starts))
    with single_threaded_blas(), ThreadPoolExecutor(max_workers=n_threads) as pool:
        return accumulate(_map_in_context(pool, work, starts))


def sparse_container_like(X: Any, result: sp.spmatrix | sp.sparray) -> Any:
    """Return ``result`` in the same sparse interface (matrix vs array) as ``X``, as CSR."""
    if sp.isspmatrix(X):
        return sp.csr_matrix(result)
    return sp.csr_array(result)
