"""Scratch buffers (aligned on every thread) and written-once buffers (base pages)."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from kernelmaps._engine import _buffers
from tests._estimators import ENTRIES, one_per_class

#: One registry entry per feature-map class (row-block and thread invariance of every
#: registered estimator is in tests/test_contract.py).
MAPS = one_per_class(e for e in ENTRIES if e.kind == "transformer" and not e.two_views)


def test_scratch_buffers_are_aligned_on_every_thread():
    def addresses():
        return [_buffers.scratch_buffer(f"test_aligned_{n}", (n, 3), dtype).ctypes.data % 64
                for n in (1, 7, 1000) for dtype in (np.float32, np.float64, np.complex128)]

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(addresses).result() == addresses() == [0] * 9

# ------------------------------------------------------------------- written-once buffers
def _vm_flags(address: int) -> list[str]:
    """The VmFlags of the mapping of this process that holds ``address`` (Linux)."""
    flags, inside = [], False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and all(c in "0123456789abcdef-" for c in head):
                low, high = (int(part, 16) for part in head.split("-"))
                inside = low <= address < high
            elif inside and head == "VmFlags:":
                flags = line.split()[1:]
    return flags


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise and smaps: Linux")
def test_written_once_buffers_withdraw_the_huge_page_advice_numpy_gives():
    from kernelmaps._engine import WRITTEN_ONCE_MIN_BYTES, written_once_buffer

    big = written_once_buffer((WRITTEN_ONCE_MIN_BYTES // 4 + 4096, 1), np.float32)
    assert big.shape == (WRITTEN_ONCE_MIN_BYTES // 4 + 4096, 1) and big.dtype == np.float32
    big[...] = 1.0  # written after the advice: usable as any array
    middle = big.ctypes.data + big.nbytes // 2
    assert "nh" in _vm_flags(middle) and "hg" not in _vm_flags(middle)
    small = written_once_buffer((1000,), np.float64)  # below the size: NumPy's array
    assert small.shape == (1000,)


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise and statm: Linux")
def test_a_released_buffer_gives_its_pages_back_on_another_thread():
    from kernelmaps._engine import (
        WRITTEN_ONCE_MIN_BYTES,
        release_written_once,
        wait_for_releases,
        written_once_buffer,
    )

    size = 4 * WRITTEN_ONCE_MIN_BYTES
    cache = written_once_buffer((size // 4,), np.float32)
    cache[...] = 1.0  # resident
    before = _resident_bytes()
    thread = release_written_once(cache)
    del cache  # the caller's reference was the only one
    assert thread is not None and thread.name == "kernelmaps-release"
    wait_for_releases()
    assert not thread.is_alive()
    # Other threads may allocate meanwhile; a quarter of the buffer is far above that.
    assert before - _resident_bytes() > 0.75 * size


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise: Linux")
def test_a_buffer_with_another_reference_is_left_to_numpy():
    # A view (or any other name) keeps the buffer: its contents must survive the release.
    from kernelmaps._engine import WRITTEN_ONCE_MIN_BYTES, release_written_once, written_once_buffer

    cache = written_once_buffer((WRITTEN_ONCE_MIN_BYTES // 4,), np.float32)
    cache[...] = 2.0
    view = cache[1:]
    assert release_written_once(cache) is None
    other = cache
    del cache
    assert release_written_once(other) is None  # the view still refers to it
    assert float(view.min()) == float(view.max()) == 2.0
    small = np.ones(1000)
    assert release_written_once(small) is None  # below the size: NumPy's free
    part = np.ones(WRITTEN_ONCE_MIN_BYTES // 4)[1:]
    assert release_written_once(part) is None  # not the owner


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="statm: Linux")
@pytest.mark.parametrize("n_threads", [1, 2])
def test_first_touch_faults_every_page_in(n_threads):
    from kernelmaps._engine import WRITTEN_ONCE_MIN_BYTES, first_touch, written_once_buffer

    rows, width = WRITTEN_ONCE_MIN_BYTES // 4000 * 2, 1000  # two minimum sizes of float32
    before = _resident_bytes()
    cache = written_once_buffer((rows, width), np.float32)
    assert _resident_bytes() - before < 0.1 * cache.nbytes  # reserved, not yet resident
    seconds = first_touch(cache, bytes_per_row=width * 4, n_threads=n_threads)
    assert seconds >= 0.0
    # Other threads may free memory meanwhile; 90 % of the buffer is far above that.
    assert _resident_bytes() - before > 0.9 * cache.nbytes
    assert first_touch(cache[:0], bytes_per_row=width * 4, n_threads=n_threads) >= 0.0

