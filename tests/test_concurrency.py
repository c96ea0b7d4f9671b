"""One fitted estimator shared by many threads, as in a web service; every thread setting.

For every public estimator (the registry, ``tests/_estimators.py``):

* 16 threads call every output method at once on different inputs (the inputs span several
  row blocks of the engine, and each thread asks for a different engine thread count) and
  get exactly the serial result;
* fit and outputs are identical for every ``n_threads`` setting, and for every ``n_jobs``
  of :class:`~kernelmaps.maps.Nystroem`.

And the process-wide state threads share: a ``config_context`` in one thread neither leaks
into nor is undone by another thread's, and overlapping BLAS limits of concurrent
transforms give the BLAS thread count back when the last one ends.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import kernelmaps as km
from kernelmaps._engine import _blocks, single_threaded_blas
from kernelmaps.kernels import get_kernel
from kernelmaps.maps import Nystroem
from tests._estimators import ENTRIES, Entry, by_id, make_data
from tests._helpers import dense

N_CALLERS = 16
#: With 4096-byte blocks every estimator cuts inputs of a few hundred rows into several
#: row blocks (at least 128 rows each), so the engine's own threads run too.
SMALL_BLOCKS = 4096
THREAD_SETTINGS = (1, 2, 3, 4, 8, 16, -1, None)


@pytest.fixture(autouse=True)
def _engine_threads_whatever_the_work(monkeypatch):
    """The inputs here are small, so the engine would run them on the caller's thread: let it
    run its threads however little the work and however busy the machine (blocks of 128
    rows), so that its threads are what these tests exercise."""
    monkeypatch.setattr(_blocks, "FLOPS_PER_THREAD", 1)
    monkeypatch.setattr(_blocks, "free_cores", lambda cores: float(cores))


def outputs(e: Entry, est, X) -> dict[str, np.ndarray]:
    return {m: dense(getattr(est, m)(X)) for m in e.output_methods}


def assert_identical(got: dict, expected: dict, context: str) -> None:
    assert got.keys() == expected.keys()
    for method, result in got.items():
        np.testing.assert_array_equal(result, expected[method], err_msg=f"{context}: {method}")


def caller_inputs(e: Entry) -> list[np.ndarray]:
    """One input per caller, each different: 1 to 376 rows (one to three row blocks)."""
    return [make_data(e, n_samples=1 + 25 * i, seed=100 + i)[0] for i in range(N_CALLERS)]


# ------------------------------------------------------------------------------ shared estimator
@by_id(ENTRIES)
def test_one_fitted_estimator_from_16_threads_gives_the_serial_result(e):
    X, y = make_data(e, n_samples=200)
    inputs = caller_inputs(e)
    with km.config_context(n_threads=1, block_bytes=SMALL_BLOCKS):
        est = e.make().fit(X, y)
        serial = [outputs(e, est, Xi) for Xi in inputs]
    start = threading.Barrier(N_CALLERS)

    def caller(i: int) -> list[dict]:
        # Each caller its own engine thread count (config is per thread), all at once.
        with km.config_context(n_threads=1 + i % 4, block_bytes=SMALL_BLOCKS):
            start.wait()
            results = []
            for _ in range(2):  # twice: the second round overlaps other callers' first
                methods = e.output_methods[i % len(e.output_methods):] + \
                    e.output_methods[:i % len(e.output_methods)]
                results.append({m: dense(getattr(est, m)(inputs[i])) for m in methods})
            return results

    with ThreadPoolExecutor(max_workers=N_CALLERS) as pool:
        concurrent = list(pool.map(caller, range(N_CALLERS)))
    for i, rounds in enumerate(concurrent):
        for results in rounds:
            assert_identical(results, serial[i], f"caller {i}")


# ------------------------------------------------------------------------------ thread settings
@by_id(ENTRIES)
def test_fit_and_outputs_identical_for_every_n_threads(e):
    X, y = make_data(e, n_samples=400)
    with km.config_context(n_threads=1, block_bytes=SMALL_BLOCKS):
        reference = outputs(e, e.make().fit(X, y), X)
    for n_threads in THREAD_SETTINGS:
        with km.config_context(n_threads=n_threads, block_bytes=SMALL_BLOCKS):
            got = outputs(e, e.make().fit(X, y), X)
        assert_identical(got, reference, f"n_threads={n_threads}")


def _pairwise_rbf(x, y, gamma=0.5):
    return float(np.exp(-gamma * np.sum((x - y) ** 2)))


@pytest.mark.parametrize("params", [
    dict(),
    dict(kernel="laplacian", landmarks="leverage"),
    dict(kernel=get_kernel("matern", nu=1.5), landmarks="renyi", basis="eigen"),
    dict(kernel=_pairwise_rbf, n_components=15),  # scikit-learn's pairwise_kernels(n_jobs)
], ids=["rbf-uniform", "laplacian-leverage", "matern-renyi-eigen", "callable"])
def test_nystroem_identical_for_every_n_jobs(params):
    X = np.random.RandomState(0).normal(size=(300, 4))
    n_components = params.pop("n_components", 40)

    def run(n_jobs):
        ny = Nystroem(n_components=n_components, random_state=0, n_jobs=n_jobs, **params)
        return ny.fit(X).transform(X)

    with km.config_context(n_threads=1, block_bytes=SMALL_BLOCKS):
        reference = run(1)
        for n_jobs in (None, 2, 3, 16, -1, -2):
            np.testing.assert_array_equal(run(n_jobs), reference, err_msg=f"n_jobs={n_jobs}")
    # n_jobs overrides the process setting, whatever that is.
    with km.config_context(n_threads=7, block_bytes=SMALL_BLOCKS):
        np.testing.assert_array_equal(run(2), reference)


# ------------------------------------------------------------------------------ shared settings
def test_config_context_is_local_to_its_thread():
    before = km.get_config()
    a_entered, b_entered, a_left = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with km.config_context(n_threads=1):
            a_entered.set()
            b_entered.wait()
            seen["a inside"] = km.get_config()["n_threads"]
        a_left.set()

    def second():
        a_entered.wait()
        seen["b at start"] = km.get_config()["n_threads"]
        with km.config_context(n_threads=4, block_bytes=8192):
            b_entered.set()
            a_left.wait()  # the other context ends while this one is active
            seen["b inside"] = km.get_config()["n_threads"]

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"b at start": before["n_threads"], "a inside": 1, "b inside": 4}
    assert km.get_config() == before  # nothing leaked into the process


def test_set_config_reaches_every_thread_and_config_context_the_engine_threads():
    before = km.get_config()
    try:
        km.set_config(block_bytes=12288)
        with ThreadPoolExecutor(2) as pool:
            assert pool.submit(km.get_config).result()["block_bytes"] == 12288
    finally:
        km.set_config(**before)
    # The engine's worker threads see the caller's context: a kernel evaluated inside a
    # row block of a multi-threaded reduction reads the caller's block size.
    X = np.random.RandomState(0).normal(size=(600, 3))
    kernel = get_kernel("rbf", gamma=0.5)
    with km.config_context(n_threads=2, block_bytes=SMALL_BLOCKS):
        sizes = kernel.reduce(X, X[:5], lambda K_b: np.array(
            [float(km.get_config()["block_bytes"] == SMALL_BLOCKS)]))
    assert sizes[0] == np.ceil(600 / 128)  # every block saw the setting


def _blas_threads() -> list[int]:
    return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]


def test_overlapping_blas_limits_restore_the_thread_count():
    # Two concurrent transforms: the first limit ends while the second is still active
    # (not nested). The count must come back when the last one ends.
    with threadpool_limits(limits=2, user_api="blas"):
        assert _blas_threads() and set(_blas_threads()) == {2}
        first, second = single_threaded_blas(), single_threaded_blas()
        first.__enter__()
        second.__enter__()
        assert set(_blas_threads()) == {1}
        first.__exit__(None, None, None)
        assert set(_blas_threads()) == {1}  # the second transform still runs
        second.__exit__(None, None, None)
        assert set(_blas_threads()) == {2}


def test_concurrent_transforms_leave_blas_threads_as_they_were():
    # A fresh process, as a service is: its main thread never limited BLAS, so the
    # engine's threads do it themselves.
    script = textwrap.dedent("""
        from concurrent.futures import ThreadPoolExecutor
        import numpy as np
        from threadpoolctl import threadpool_info
        import kernelmaps as km
        from kernelmaps._engine import _blocks

        # Threads however small the work and busy the machine (as the fixture above does).
        _blocks.FLOPS_PER_THREAD = 1
        _blocks.free_cores = lambda cores: float(cores)

        def blas():
            return sorted({i["num_threads"] for i in threadpool_info()
                           if i["user_api"] == "blas"})

        X = np.random.RandomState(0).rand(400, 8)
        ny = km.Nystroem(n_components=30, random_state=0).fit(X)
        before = blas()
        km.set_config(n_threads=2, block_bytes=4096)
        for _ in range(3):
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda i: ny.transform(X[10 * i:]), range(16)))
        print(before, blas())
    """)
    env = {"OPENBLAS_NUM_THREADS": "2", "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env, timeout=120, check=True)
    before, after = result.stdout.strip().split("] [")
    assert before == "[2" and after == "2]", result.stdout
