"""BLAS's own threads: one process-wide limit shared by overlapping scopes, and the rule that
keeps BLAS on one thread around work too small to pay for its threads."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import threadpoolctl
from threadpoolctl import ThreadpoolController

from kernelmaps._engine._tasks import task_cap

__all__ = [
    "FLOPS_FOR_BLAS_THREADS",
    "blas_controller",
    "blas_for_work",
    "blas_threads",
    "single_threaded_blas",
]

#: Work below which BLAS runs on one thread (about 15 ms on one core). BLAS's threads
#: synchronise inside every call and, once woken, spin on a core for tens of milliseconds
#: after it (taking it from the work that follows); on a busy 2-core machine a 100 × 100
#: eigendecomposition took 166 ms on BLAS's two threads against 0.8 ms on one.
FLOPS_FOR_BLAS_THREADS = 2**30
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


@contextmanager
def blas_threads(threads: int) -> Iterator[None]:
    """Context manager: BLAS on ``threads`` threads, from any thread of the process, and the
    count there was before restored after it.

    threadpoolctl (>= 3.6) lets only the thread that set an OpenBLAS limit change it again
    and silently ignores the others. A limit set from a thread other than the one whose
    scope is open was therefore lost: ``compare``'s exact baseline, run on a thread beside
    the worker processes while the calling thread held its one-thread scope, factorised its
    15,000² kernel matrix on one BLAS thread (17.9 s) instead of two (9.6 s). This scope
    takes control first, as :func:`single_threaded_blas` does.
    """
    controller = blas_controller()
    with _blas_lock:
        _release_openblas_control()
        limiter = controller.limit(limits=threads, user_api="blas")
    try:
        yield
    finally:
        with _blas_lock:
            _release_openblas_control()
            limiter.restore_original_limits()
            _release_openblas_control()


def blas_for_work(flops: float) -> Any:
    """Context manager: BLAS on one thread around work of ``flops`` operations (e.g. the
    eigendecomposition of a small matrix) when that is below :data:`FLOPS_FOR_BLAS_THREADS`,
    or when this thread runs inside the engine's blocks or an outer scheduler's task; else
    nothing is changed."""
    if flops < FLOPS_FOR_BLAS_THREADS or task_cap() is not None:
        return single_threaded_blas()
    return nullcontext()


def _forget_lock_after_fork() -> None:
    # A forked child has none of its parent's threads: the lock may have been held by a
    # parent thread at the fork.
    global _blas_lock
    _blas_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_lock_after_fork)
