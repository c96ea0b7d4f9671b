"""How the engine meets an outer scheduler and its own workers: the thread-local cap on the
engine's threads (one thread per task inside a Dask task, serial inside an engine worker), and
Dask's lazy collections recognised without importing Dask."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["is_dask_collection", "serial_inside_worker", "task_cap", "threads_per_task"]

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



def task_cap() -> int | None:
    """The cap :func:`threads_per_task` set on this thread, or None outside any task."""
    return getattr(_task, "max_threads", None)


def serial_inside_worker() -> None:
    """The engine pool's thread initialiser: engine calls made from inside a block run
    serially (the call's threads are busy)."""
    _task.max_threads = 1
