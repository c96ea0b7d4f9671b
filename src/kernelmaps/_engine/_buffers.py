"""Memory the engine's callers reuse or write once: per-thread scratch buffers at one alignment,
and base-page arrays for data written once and then streamed."""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np

from kernelmaps._engine._scheduler import reduce_blocks

__all__ = ["WRITTEN_ONCE_MIN_BYTES", "first_touch", "release_written_once", "scratch_buffer",
           "wait_for_releases", "written_once_buffer"]

#: Scratch buffers start at this alignment on every thread, so a block's arithmetic (which
#: SIMD and BLAS code paths run) does not depend on which thread runs it.
_ALIGNMENT = 64
_scratch = threading.local()


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
    FALKON's kernel-block cache — or factorised in place — ``compare``'s exact kernel
    matrix — in base pages rather than transparent huge pages.

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
    NumPy's array unchanged. A matrix factorised in place pays a little for the TLB misses
    of base pages: a 15,000² Cholesky factorisation took 9.61-9.84 s against 9.47-9.64 s in
    huge pages, after a build whose first touch took 1.2 s against 4.3 s (``compare``'s exact
    baseline at 15,000 training rows).
    """
    array = np.empty(shape, dtype=dtype)
    if array.nbytes >= WRITTEN_ONCE_MIN_BYTES and _madvise is not None:
        start = -(-array.ctypes.data // _PAGE) * _PAGE
        stop = (array.ctypes.data + array.nbytes) // _PAGE * _PAGE
        if stop > start:
            _madvise(start, stop - start, _MADV_NOHUGEPAGE)  # advice: a failure changes nothing
    return array


def first_touch(array: np.ndarray, *, bytes_per_row: int, n_threads: int) -> float:
    """Write one value in every page of a new ``(rows, ·)`` array — a
    :func:`written_once_buffer` about to be filled — on ``n_threads`` threads, in the row
    blocks :func:`~kernelmaps._engine.reduce_blocks` cuts for ``bytes_per_row`` (those of
    a pass that fills it), and return the seconds it took: the page faults of its first
    touch, taken together before the work that fills it.

    Measured on the 2-core development VM (issue 33, FALKON case B's 8 GB cache, fresh
    processes, alternated, load 1.1-1.5): the first pass took 3.32-3.65 s with this touch
    first (1.48-1.78 s of it) against 3.90-4.08 s with the faults taken inside the pass's
    GEMM and exponentials. The seconds are the fit's own first-touch floor
    (``fit_info_["first_touch_s"]``). The values written are zeros; the array's contents
    stay undefined for its caller.
    """
    step = max(1, _PAGE // array.itemsize)

    def touch(block: np.ndarray) -> np.ndarray:
        block.reshape(-1)[::step] = 0
        return _NOTHING

    start = time.perf_counter()
    if array.size:
        reduce_blocks(array, touch, bytes_per_row=bytes_per_row, n_threads=n_threads)
    return time.perf_counter() - start


_NOTHING = np.zeros(1)


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

#: ``madvise``'s advice to drop a range's pages now (Linux ``MADV_DONTNEED``): they go back
#: to the system and the mapping stays, so the free that follows unmaps an empty range.
_MADV_DONTNEED = 4


def _sole_references() -> int:
    """What ``sys.getrefcount`` reads, inside a function, of an object its caller passed
    from a local name and holds nowhere else: the caller's name, the parameter and the
    call's own argument on CPython 3.11-3.13 (3), fewer where the interpreter borrows
    references; measured on this interpreter by the same pattern of calls."""

    def inside(obj: object) -> int:
        return sys.getrefcount(obj)

    def caller() -> int:
        held = object()
        return inside(held)

    return caller()


#: References to an array inside :func:`release_written_once` when its caller passed its
#: only one (:func:`_sole_references`).
_SOLE_REFERENCES = _sole_references()
_releases: list[threading.Thread] = []
_releases_lock = threading.Lock()


def release_written_once(array: np.ndarray) -> threading.Thread | None:
    """Give the pages of a :func:`written_once_buffer` array back to the system on a
    background thread, so that the caller does not wait for it; the caller passes its only
    reference and drops it.

    Returning gigabytes to the system costs time in the kernel, page by page: measured on
    the 2-core development VM (issue 33), 0.55-0.59 s for FALKON case B's 8 GB cache, inside
    the fit, with the GIL held (NumPy frees an array's memory while it holds it). Here the
    pages are dropped by ``madvise(MADV_DONTNEED)`` through ctypes, which releases the GIL,
    on a daemon thread; the array itself is freed there afterwards (unmapping an empty
    range). The work is the same, on another core; the memory is back within that time
    (:func:`wait_for_releases` waits for it).

    Only an array that owns its data, of :data:`WRITTEN_ONCE_MIN_BYTES` or more, referenced
    by the caller alone (no view of it, no other name: its reference count), on Linux, is
    released this way; anything else is left to NumPy's free when the caller drops it (a
    view elsewhere keeps its contents).

    Parameters
    ----------
    array : ndarray
        The caller's only reference to an array from :func:`written_once_buffer`.

    Returns
    -------
    threading.Thread or None
        The thread releasing the pages, or None (the array is left as it was).
    """
    if (_madvise is None or array.base is not None or not array.flags.owndata
            or array.nbytes < WRITTEN_ONCE_MIN_BYTES
            or sys.getrefcount(array) > _SOLE_REFERENCES):
        return None
    start = -(-array.ctypes.data // _PAGE) * _PAGE
    stop = (array.ctypes.data + array.nbytes) // _PAGE * _PAGE
    holder = [array]

    def release() -> None:
        if stop > start:
            _madvise(start, stop - start, _MADV_DONTNEED)  # GIL released by ctypes
        holder.clear()  # the array's own free: an empty range now

    thread = threading.Thread(target=release, name="kernelmaps-release", daemon=True)
    with _releases_lock:
        _releases[:] = [t for t in _releases if t.is_alive()]
        _releases.append(thread)
    thread.start()
    return thread


def wait_for_releases() -> None:
    """Wait until the pages :func:`release_written_once` is giving back are back (for
    measurements and tests that read the memory in use)."""
    with _releases_lock:
        pending = list(_releases)
    for thread in pending:
        thread.join()
