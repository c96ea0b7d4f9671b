"""The scheduler: a call's blocks on the caller's thread and the process's pool of engine
workers (each taking the next block when free), and the two drivers built on it —
:func:`run_blocks` fills a preallocated output, :func:`reduce_blocks` sums a small result."""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from typing import Any

import numpy as np

from kernelmaps._array_api import is_device_array, reduce_blocks_device, run_blocks_device
from kernelmaps._engine._blas import single_threaded_blas
from kernelmaps._engine._blocks import Plan
from kernelmaps._engine._checks import OVERFLOW_HINT, check_finite_output
from kernelmaps._engine._tasks import serial_inside_worker, task_cap, threads_per_task

__all__ = ["reduce_blocks", "run_blocks", "run_tasks"]

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_workers = 0


def _worker_pool(n_workers: int) -> ThreadPoolExecutor:
    """The process's pool of engine workers, with at least ``n_workers`` threads.

    Kept for the process rather than started per call: starting threads costs about 100 µs
    per call, and each new thread would fault in its scratch buffers afresh.
    """
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None or _pool_workers < n_workers:
            previous = _pool
            _pool = ThreadPoolExecutor(max_workers=n_workers, initializer=serial_inside_worker,
                                       thread_name_prefix="kernelmaps-engine")
            _pool_workers = n_workers
            if previous is not None:
                previous.shutdown(wait=False)
        return _pool


def _forget_pool_after_fork() -> None:
    # A forked child has none of its parent's threads; its first parallel call starts a
    # pool of its own. The locks may have been held by a parent thread at the fork.
    global _pool, _pool_workers, _pool_lock
    _pool, _pool_workers = None, 0
    _pool_lock = threading.Lock()


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


def _run_planned(plan: Plan, run_block: Callable[[int], None]) -> None:
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
    cap = task_cap()
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
    nonfinite_hint: str = OVERFLOW_HINT,
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
    plan = Plan(X, n_samples, n_out * dtype.itemsize + temp_bytes_per_row, flops_per_row,
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
    plan = Plan(X, n_samples, bytes_per_row, flops_per_row, n_threads)
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

