"""The engine's scheduler: blocks cover the rows once, threads, memory bound, settings,
identical results for any thread count, a forked child, ``out``, ``run_tasks``."""

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

import kernelmaps as km
from kernelmaps import _engine
from kernelmaps._engine import _buffers, reduce_blocks, run_blocks, threads_per_task
from tests._estimators import ENTRIES, by_id, one_per_class
from tests._helpers import peak_bytes

#: One registry entry per feature-map class (row-block and thread invariance of every
#: registered estimator is in tests/test_contract.py).
MAPS = one_per_class(e for e in ENTRIES if e.kind == "transformer" and not e.two_views)
F = _engine.FLOPS_PER_THREAD



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
    assert km.get_config()["jit"] == "auto"  # the default, unchanged


def test_config_context_restores():
    before = km.get_config()
    with km.config_context(n_threads=1, block_bytes=8192, device_block_bytes=4096):
        assert km.get_config() == {"n_threads": 1, "block_bytes": 8192,
                                   "device_block_bytes": 4096, "kernel_cache_bytes": None,
                                   "jit": "auto"}
    assert km.get_config() == before


def test_empty_output_shape():
    out = run_blocks(np.empty((0, 3)), n_out=5, dtype=np.dtype(np.float32),
                     block_fn=lambda xb, o: None)
    assert out.shape == (0, 5) and out.dtype == np.float32


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
        scratch = _buffers.scratch_buffer("test_identical", (xb.shape[0], 70), np.float64)
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

@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_a_forked_child_runs_threaded_calls_on_a_pool_of_its_own():
    # The child has none of its parent's threads (the pool's worker among them); it must
    # not wait for them. In a fresh process, so no other test's threads are forked.
    script = textwrap.dedent("""
        import os
        import numpy as np
        from kernelmaps import _engine
        from kernelmaps._engine import _blocks

        _blocks.free_cores = lambda cores: 2.0

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
