"""The chunked transform engine: blocks, threads, memory bound, settings."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_info

import kernelmaps as km
from kernelmaps import _engine
from kernelmaps._engine import reduce_blocks, run_blocks, threads_per_task
from tests._estimators import ENTRIES, by_id, one_per_class
from tests._helpers import peak_bytes

#: One registry entry per feature-map class (row-block and thread invariance of every
#: registered estimator is in tests/test_contract.py).
MAPS = one_per_class(e for e in ENTRIES if e.kind == "transformer" and not e.two_views)


def test_blocks_cover_rows_once_in_order(rng):
    X = rng.normal(size=(1000, 3))
    seen = []

    def block_fn(xb, out):
        seen.append(xb.shape[0])
        out[...] = xb.sum(axis=1, keepdims=True)

    with km.config_context(block_bytes=4096):
        out = run_blocks(X, n_out=1, dtype=np.dtype(np.float64), block_fn=block_fn,
                         n_threads=1)
    assert seen == [512, 488]  # 4096 bytes / 8 bytes per output row
    np.testing.assert_array_equal(out[:, 0], X.sum(axis=1))


@pytest.mark.blas_default_threads
def test_transform_is_thread_safe(rng):
    X = rng.uniform(size=(3000, 5))
    est = km.RBFSampler(n_components=300, random_state=0).fit(X)
    reference = est.transform(X)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: est.transform(X), range(8)))
    for result in results:
        np.testing.assert_array_equal(result, reference)


def _extra_peak_bytes(est, X) -> int:
    """Peak bytes allocated by transform beyond its output."""
    out, peak = peak_bytes(lambda: est.transform(X))
    return peak - out.nbytes


@by_id(MAPS)
def test_transform_memory_bounded_by_block_not_n(e, rng):
    X_small = rng.uniform(size=(8_000, 10))
    X_large = rng.uniform(size=(32_000, 10))
    est = e.make(**({"n_components": 256} if "n_components" in e.params else {}))
    est.fit(X_small)
    with km.config_context(n_threads=2, block_bytes=256 * 1024):
        extra_small = _extra_peak_bytes(est, X_small)
        extra_large = _extra_peak_bytes(est, X_large)
    out_large = X_large.shape[0] * est.transform(X_large[:1]).shape[1] * 8
    # Four times the rows, (about) the same working memory: a few blocks per thread.
    assert extra_large < 4 * 1024 * 1024
    assert extra_large < 0.1 * out_large
    assert extra_large < 2 * extra_small + 512 * 1024


def test_sparse_rows_are_blocked_too(rng):
    X = sp.random(5000, 50, density=0.05, format="csr", random_state=0)
    est = km.RBFSampler(n_components=64, random_state=0).fit(X)
    with km.config_context(block_bytes=4096):
        blocked = est.transform(X)
    np.testing.assert_allclose(blocked, est.transform(X.toarray()), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("setting", "value"), [
    ("n_threads", 0), ("n_threads", -3), ("n_threads", 1.5), ("block_bytes", 10),
    ("block_bytes", "big"), ("jit", 1), ("jit", "yes"),
])
def test_bad_settings_rejected(setting, value):
    with pytest.raises(ValueError, match=setting):
        km.set_config(**{setting: value})


def test_jit_without_numba_names_the_extra_before_any_work(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    with pytest.raises(ImportError, match=r"kernelmaps\[jit\]"):
        km.set_config(jit=True)
    with pytest.raises(ImportError, match=r"kernelmaps\[jit\]"), km.config_context(jit=True):
        pytest.fail("the block ran without its prerequisite")  # pragma: no cover
    assert km.get_config()["jit"] is False


def test_config_context_restores():
    before = km.get_config()
    with km.config_context(n_threads=1, block_bytes=8192, device_block_bytes=4096):
        assert km.get_config() == {"n_threads": 1, "block_bytes": 8192,
                                   "device_block_bytes": 4096, "kernel_cache_bytes": None,
                                   "jit": False}
    assert km.get_config() == before


def test_empty_output_shape():
    out = run_blocks(np.empty((0, 3)), n_out=5, dtype=np.dtype(np.float32),
                     block_fn=lambda xb, o: None)
    assert out.shape == (0, 5) and out.dtype == np.float32


# ------------------------------------------------------------------------------ thread rule
F = _engine.FLOPS_PER_THREAD


@pytest.fixture
def free_cores(monkeypatch):
    """Set how many cores the engine sees free of other processes' work (the load average
    of a shared test machine would otherwise decide)."""
    def set_free(cores: float) -> None:
        monkeypatch.setattr(_engine, "_free_cores", lambda available: float(cores))
    set_free(64)
    return set_free


def plan(n_rows, flops_per_row, *, n_threads=2, bytes_per_row=8, n_features=4):
    return _engine._Plan(np.empty((n_rows, n_features)), n_rows, bytes_per_row,
                         flops_per_row, n_threads)


def test_blocks_are_cut_for_the_work_and_the_working_set(free_cores):
    # 10,000 rows of 3.5 threads' work: four blocks, whatever the working set.
    assert plan(10_000, 3.5 * F / 10_000).rows == 2500
    # Much work: 16 blocks at the most for its sake, at least 128 rows each.
    assert plan(10_000, 100 * F / 10_000).rows == 625
    assert plan(1000, 100 * F / 1000).rows == 128
    # Cheap rows, or a large working set: the working-set budget (block_bytes) decides.
    with km.config_context(block_bytes=8192):
        assert plan(10_000, 1.0).rows == 1024
        assert plan(10_000, 100 * F / 10_000, bytes_per_row=16).rows == 512
    # The work per row, when the caller does not give it: per 8 bytes of working set one
    # inner product over the features and element-wise passes (2 · 4 + 300 here).
    assert _engine._estimated_flops_per_row(np.empty((3, 4)), 16) == 2 * (2 * 4 + 300)


@pytest.mark.parametrize(("work", "n_threads", "free", "expected"), [
    (1.9 * F, 8, 64, 1),   # less than two threads' work: the caller's thread only
    (2.0 * F, 8, 64, 2),
    (5.5 * F, 8, 64, 5),
    (100 * F, 3, 64, 3),   # the thread setting caps
    (100 * F, 8, 2.6, 3),
    # A busy machine, no core free for a second thread: only long work gets one.
    (1.9 * _engine.FLOPS_PER_THREAD_BUSY, 8, 1.4, 1),
    (2.0 * _engine.FLOPS_PER_THREAD_BUSY, 8, 1.4, 2),
])
def test_threads_follow_the_work_the_setting_and_the_free_cores(free_cores, work, n_threads,
                                                                free, expected):
    free_cores(free)
    assert plan(100_000, work / 100_000, n_threads=n_threads).threads == expected


def test_threads_never_exceed_the_blocks_or_an_outer_schedulers_cap(free_cores):
    assert plan(300, F, n_threads=8).threads == 3  # 300 rows: blocks of 128, 128 and 44
    with threads_per_task(1):
        assert plan(100_000, F, n_threads=8).threads == 1


@pytest.mark.parametrize(("n_rows", "flops_per_row", "pinned"), [
    (200, 1.0, True),                                    # small work
    (1000, F / 100, True),                               # several blocks
    (100, 2 * _engine.FLOPS_FOR_BLAS_THREADS / 100, False),  # one large block: BLAS's threads
])
def test_blas_runs_on_one_thread_except_in_one_large_block(free_cores, n_rows, flops_per_row,
                                                           pinned):
    assert plan(n_rows, flops_per_row).single_threaded_blas is pinned
    with threads_per_task(1):  # inside an outer scheduler's task (or an engine block)
        assert plan(n_rows, flops_per_row).single_threaded_blas


def _blas_threads() -> set[int]:
    return {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}


@pytest.mark.blas_default_threads
def test_small_calls_never_wake_blas_threads(free_cores):
    # The product runs as users run it here (BLAS at its own thread count, see conftest.py).
    default = _blas_threads()
    assert max(default) > 1 or km._config.available_cores() == 1  # the marker lifted the pin
    seen = []

    def block(xb, out):
        seen.append(_blas_threads())
        np.matmul(xb, np.ones((xb.shape[1], out.shape[1])), out=out)

    run_blocks(np.ones((300, 4)), n_out=3, dtype=np.dtype(np.float64), block_fn=block)
    assert seen == [{1}]
    assert _blas_threads() == default  # and the count is given back


class _Barrier:
    """Two blocks that wait for each other: they must run on two threads at once."""

    def __init__(self):
        self._barrier = threading.Barrier(2, timeout=30)
        self.threads = set()

    def block(self, xb, out):
        self.threads.add(threading.current_thread().name)
        if xb[0, 0] < 2:  # the first two blocks
            self._barrier.wait()
        out[...] = xb[:, :1]


@pytest.mark.blas_default_threads
def test_blocks_run_on_the_callers_thread_and_one_kept_worker(free_cores):
    X = np.repeat(np.arange(4.0), 128)[:, None] * np.ones((1, 3))  # 4 blocks of 128 rows

    def workers():
        return {t.ident for t in threading.enumerate() if t.name.startswith("kernelmaps-engine")}

    started = []
    for _ in range(3):
        barrier = _Barrier()
        out = run_blocks(X, n_out=1, dtype=np.dtype(np.float64), block_fn=barrier.block,
                         flops_per_row=F / 128, n_threads=2)
        np.testing.assert_array_equal(out[:, 0], X[:, 0])
        assert len(barrier.threads) == 2 and threading.current_thread().name in barrier.threads
        assert any(name.startswith("kernelmaps-engine") for name in barrier.threads)
        started.append(workers())
    # The workers are kept (with their scratch buffers), not started again for each call.
    assert started[0] == started[1] == started[2]


def test_work_started_inside_a_block_runs_serially(free_cores):
    X = np.repeat(np.arange(4.0), 128)[:, None] * np.ones((1, 3))
    inner_threads = []

    def inner(xb, out):
        inner_threads.append(threading.get_ident())
        out[...] = 1.0

    def outer(xb, out):
        run_blocks(np.ones((1024, 3)), n_out=1, dtype=np.dtype(np.float64), block_fn=inner,
                   flops_per_row=F, n_threads=2)
        out[...] = 0.0

    run_blocks(X, n_out=1, dtype=np.dtype(np.float64), block_fn=outer, flops_per_row=F / 128,
               n_threads=2)
    # Each inner call ran its 8 blocks on the thread of the outer block that made it.
    assert len(inner_threads) == 4 * 8
    for i in range(4):
        assert len(set(inner_threads[8 * i:8 * (i + 1)])) == 1


@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_the_first_failing_blocks_error_is_raised_whatever_the_threads(free_cores, n_threads):
    X = np.repeat(np.arange(8.0), 128)[:, None] * np.ones((1, 3))

    def block(xb, out):
        if xb[0, 0] in (2.0, 5.0):
            raise ValueError(f"block {int(xb[0, 0])}")
        out[...] = 0.0

    with pytest.raises(ValueError, match="block 2"):
        run_blocks(X, n_out=1, dtype=np.dtype(np.float64), block_fn=block,
                   flops_per_row=F / 128, n_threads=n_threads)


@pytest.mark.blas_default_threads
def test_results_are_identical_for_any_thread_count(free_cores, rng):
    # The same call on the same arrays: the same blocks, one BLAS thread in each, scratch
    # at the same alignment on every thread, so bitwise the same whatever runs a block.
    X, W = rng.normal(size=(3000, 40)), rng.normal(size=(40, 70))

    def block(xb, out):
        scratch = _engine.scratch_buffer("test_identical", (xb.shape[0], 70), np.float64)
        np.matmul(xb, W, out=scratch)
        np.exp(-np.abs(scratch), out=out)

    def reduce(xb, weights):
        return (xb * weights[:, None]).T @ xb

    weights = rng.uniform(size=3000)
    results = []
    for n_threads in (1, 2, 3, 8):
        results.append((
            run_blocks(X, n_out=70, dtype=np.dtype(np.float64), block_fn=block,
                       flops_per_row=F / 200, n_threads=n_threads),
            reduce_blocks(X, reduce, bytes_per_row=8 * 40, flops_per_row=F / 200,
                          n_threads=n_threads, aligned=(weights,)),
        ))
    for out, total in results[1:]:
        np.testing.assert_array_equal(out, results[0][0])
        np.testing.assert_array_equal(total, results[0][1])


def test_scratch_buffers_are_aligned_on_every_thread():
    def addresses():
        return [_engine.scratch_buffer(f"test_aligned_{n}", (n, 3), dtype).ctypes.data % 64
                for n in (1, 7, 1000) for dtype in (np.float32, np.float64, np.complex128)]

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(addresses).result() == addresses() == [0] * 9


def test_free_cores_discount_this_processs_own_load(monkeypatch):
    # The load average counts this process's own threads too; its CPU use is taken off.
    monkeypatch.setattr(_engine.os, "getloadavg", lambda: (3.0, 3.0, 3.0))
    monkeypatch.setattr(_engine, "_runnable_elsewhere", lambda: None)  # the average alone
    monkeypatch.setitem(_engine._usage, "cores", 2.0)
    monkeypatch.setitem(_engine._usage, "wall", time.monotonic() + 60)  # no update now
    assert _engine._free_cores(2) == 1.0
    monkeypatch.setitem(_engine._usage, "cores", 0.0)
    assert _engine._free_cores(2) == -1.0  # three other threads want the two cores


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_a_forked_child_runs_threaded_calls_on_a_pool_of_its_own():
    # The child has none of its parent's threads (the pool's worker among them); it must
    # not wait for them. In a fresh process, so no other test's threads are forked.
    script = textwrap.dedent("""
        import os
        import numpy as np
        from kernelmaps import _engine

        _engine._free_cores = lambda cores: 2.0

        def call():
            X = np.arange(1024.0)[:, None] * np.ones((1, 3))
            out = _engine.run_blocks(X, n_out=1, dtype=np.dtype(np.float64),
                                     block_fn=lambda xb, o: np.copyto(o, xb[:, :1]),
                                     flops_per_row=_engine.FLOPS_PER_THREAD / 128, n_threads=2)
            return bool((out[:, 0] == X[:, 0]).all())

        assert call()  # the parent's pool now exists
        pid = os.fork()
        if pid == 0:
            os._exit(0 if call() else 1)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120, check=True)
    assert result.stdout.strip() == "0", result.stderr


def test_run_blocks_fills_a_given_output_and_refuses_a_wrong_one(rng):
    X = rng.normal(size=(300, 5))

    def double(X_block, out):
        np.multiply(X_block, 2.0, out=out)

    buffer = np.full((300, 5), np.nan)
    assert run_blocks(X, n_out=5, dtype=np.dtype(np.float64), block_fn=double,
                      out=buffer) is buffer
    np.testing.assert_array_equal(buffer, 2.0 * X)
    for wrong in (np.empty((299, 5)), np.empty((300, 5), dtype=np.float32),
                  np.empty((300, 5), order="F")):
        with pytest.raises(ValueError, match=r"out must be a C-contiguous \(300, 5\) array"):
            run_blocks(X, n_out=5, dtype=np.dtype(np.float64), block_fn=double, out=wrong)


def test_run_tasks_runs_each_task_once_and_raises_the_first_failure():
    from kernelmaps._engine import run_tasks

    seen: list[int] = []
    lock = threading.Lock()
    threads: set[int] = set()

    def task(index):
        with lock:
            seen.append(index)
            threads.add(threading.get_ident())
        time.sleep(0.01)

    run_tasks(6, task, 2)
    assert sorted(seen) == list(range(6))

    def failing(index):
        if index >= 2:
            raise ValueError(f"task {index}")

    with pytest.raises(ValueError, match="task 2"):
        run_tasks(5, failing, 2)
    inside: list[int] = []
    with threads_per_task(1):  # inside an outer task: on the caller's thread only
        run_tasks(4, lambda index: inside.append(threading.get_ident()), 2)
    assert set(inside) == {threading.get_ident()}


def test_a_finished_jobs_load_does_not_keep_the_engine_on_one_thread(monkeypatch):
    # The 1-minute load average still shows a job that ended; the runnable count does not.
    monkeypatch.setattr(_engine.os, "getloadavg", lambda: (1.9, 1.9, 1.6))
    monkeypatch.setitem(_engine._usage, "cores", 0.0)  # a process that just started
    monkeypatch.setitem(_engine._usage, "wall", time.monotonic() + 60)  # no update now
    monkeypatch.setattr(_engine, "_runnable_elsewhere", lambda: 0.0)
    assert _engine._free_cores(2) == 2.0
    # Another process really busy on one core: both estimates say so.
    monkeypatch.setattr(_engine, "_runnable_elsewhere", lambda: 1.0)
    assert _engine._free_cores(2) == pytest.approx(1.0, abs=0.2)
    # No /proc (not Linux): the load average alone, as before.
    monkeypatch.setattr(_engine, "_runnable_elsewhere", lambda: None)
    assert _engine._free_cores(2) < 0.2


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="Linux's /proc only")
def test_runnable_elsewhere_reads_proc():
    value = _engine._runnable_elsewhere()
    assert value is not None and value >= 0
    assert _engine._runnable_elsewhere() == value  # cached for a quarter of a second


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
