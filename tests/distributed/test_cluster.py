"""On a real dask.distributed LocalCluster: two worker processes with small memory limits.

Everything here runs on worker processes (not the threaded scheduler): the transform and the
fits give the in-memory numbers, the fitted map reaches each worker once, a fit whose feature
matrix is larger than a worker's memory limit succeeds, and killing a worker in the middle of a
fit changes nothing (Dask recomputes the lost chunks).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import threading
import time

import cloudpickle
import dask
import dask.array as da
import numpy as np
import pytest
from dask.distributed import Client, Event, LocalCluster
from distributed.utils import get_mp_context

import kernelmaps as km
from kernelmaps.distributed import FeatureRidge, transform
from kernelmaps.models import KernelRidge
from tests.conftest import assert_same_numbers

# The workers are fresh processes: ship this module's helpers by value, not by import path.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

WORKER_MEMORY = 400 * 2**20
GATE = "kernelmaps-test-gate"


@pytest.fixture(scope="module")
def client():
    # Workers fork from Dask's fork server, a clean single-threaded process that imports
    # NumPy, SciPy, scikit-learn and kernelmaps once: a worker (and a restarted one) starts
    # in a fraction of a second, where a spawned one imports everything again. Forking this
    # multi-threaded test process itself instead could deadlock a child.
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        get_mp_context().set_forkserver_preload(
            ["distributed", "kernelmaps.distributed._ridge_dask", "kernelmaps.distributed._falkon"])
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          memory_limit=WORKER_MEMORY, dashboard_address=":0",
                          silence_logs=40) as cluster, Client(cluster) as client:
            yield client


class CountedRBF(km.RBFSampler):
    """An RBFSampler that records each deserialisation in a file named by the process id."""

    def __setstate__(self, state):
        super().__setstate__(state)
        folder = state.get("count_dir_")
        if folder is not None:
            with open(os.path.join(folder, str(os.getpid())), "a") as log:
                log.write("+")


def test_transform_on_workers_ships_the_map_once_per_worker(client, tmp_path):
    X = np.random.RandomState(0).normal(size=(3000, 8)).astype(np.float32)
    dX = da.from_array(X, chunks=(250, 8))  # 12 chunks
    rff = CountedRBF(n_components=64, random_state=0).fit(X)
    rff.count_dir_ = str(tmp_path)
    result = transform(rff, dX).compute()
    assert result.dtype == np.float32
    # float32 products round differently at other row-block edges: float32 accuracy.
    np.testing.assert_allclose(result, rff.transform(X), rtol=1e-5, atol=1e-6)
    worker_pids = set(client.run(os.getpid).values())
    per_worker = {int(path.name): len(path.read_text()) for path in tmp_path.iterdir()
                  if int(path.name) in worker_pids}
    assert per_worker and all(count == 1 for count in per_worker.values()), per_worker


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def test_fit_with_features_larger_than_a_worker(client):
    # z(X) is 600,000 × 100 float64 = 480 MB, more than a worker's whole memory limit: the
    # fit never holds it (the data itself is generated on the workers, chunk by chunk).
    n, D = 600_000, 100
    assert n * D * 8 > WORKER_MEMORY
    pids = client.run(os.getpid)
    dX = da.random.RandomState(0).uniform(-1, 1, size=(n, 4), chunks=(50_000, 4))
    y = da.sin(2 * dX[:, 0]) + dX[:, 1] * dX[:, 2]
    rff = km.RBFSampler(gamma=0.5, n_components=D, random_state=0)
    model = FeatureRidge(rff, alpha=1e-4).fit(dX, y)
    X_check, y_check = dX[:20_000].compute(), y[:20_000].compute()
    assert model.score(X_check, y_check) > 0.99
    peaks = client.run(_peak_rss_bytes)
    assert client.run(os.getpid) == pids  # no worker was restarted for memory
    assert all(peak < WORKER_MEMORY for peak in peaks.values()), peaks


def test_kernel_ridge_falkon_on_workers(client):
    # The CG's K_nM passes on the worker processes give the local scheduler's solution.
    rng = np.random.RandomState(2)
    X = rng.uniform(-1, 1, size=(8_000, 3))
    y = np.cos(2 * X[:, 0]) * X[:, 1]
    dX = da.from_array(X, chunks=(1_000, 3))
    params = dict(alpha=1.0, kernel="rbf", gamma=1.0, solver="nystrom", n_components=80,
                  tol=1e-3, random_state=0)  # a dozen CG iterations, each a cluster round trip
    on_workers = KernelRidge(**params).fit(dX, y)
    with dask.config.set(scheduler="threads"):
        local = KernelRidge(**params).fit(dX, y)
    np.testing.assert_array_equal(on_workers.center_indices_, local.center_indices_)
    assert on_workers.n_iter_ == local.n_iter_ > 1
    assert_same_numbers(on_workers.dual_coef_, local.dual_coef_, rtol=1e-10)
    np.testing.assert_allclose(on_workers.predict(dX).compute(), local.predict(X), atol=1e-8)


def _jit_setting(block):
    return np.full((1, 1), km.get_config()["jit"] is True)


def test_settings_belong_to_each_worker_process(client):
    # docs/dask.md: a worker keeps its own process's settings; client.run sets them there.
    pytest.importorskip("numba")
    client.wait_for_workers(2)  # a worker restarted by another test has joined
    X = da.random.default_rng(0).standard_normal((2_000, 5), chunks=(500, 5))
    probe = X.map_blocks(_jit_setting, chunks=((1,) * 4, (1,)), dtype=bool)
    rff = km.RBFSampler(n_components=64, random_state=0).fit(X[:10].compute())
    with km.config_context(jit=True):
        assert not probe.compute().any()  # the client's setting stays in the client
    try:
        client.run(km.set_config, jit=True)
        assert probe.compute().all()
        # Chunks of 500 rows against one pass: other GEMM shapes, equal to rounding.
        assert_same_numbers(transform(rff, X).compute(), rff.transform(X.compute()))
    finally:
        client.run(km.set_config, jit="auto")


def test_falkon_chunks_sweep_by_the_clients_jit_setting_and_max_iter(client):
    # A FALKON fit's chunks, built on the worker processes, choose their float32 cache's
    # sweep under the client's jit setting (as they take its cache budget), not the
    # workers' own, with max_iter as their passes: the local scheduler's choice and numbers.
    pytest.importorskip("numba")
    from kernelmaps._fastmath import JIT_AUTO_ELEMENTS
    from kernelmaps.models.interface import COMPILED_SWEEP_SAVING

    client.wait_for_workers(2)  # a worker restarted by another test has joined
    rng = np.random.RandomState(2)
    X = rng.uniform(-1, 1, size=(8_000, 3)).astype(np.float32)
    y = np.cos(2 * X[:, 0]) * X[:, 1]
    dX = da.from_array(X, chunks=(1_000, 3))
    # gamma=4: K_MM well conditioned, so the products stay float32 (no widen()).
    params = dict(alpha=1.0, kernel="rbf", gamma=4.0, solver="nystrom", n_components=80,
                  tol=1e-3, random_state=0)
    # Under "auto", enough passes for one chunk's 1,000 × 80 values to repay loading Numba.
    enough = int(np.ceil(JIT_AUTO_ELEMENTS / (COMPILED_SWEEP_SAVING * 1_000 * 80)))
    cases = [(False, True, 100, "blas"), (True, False, 100, "compiled"),
             ("auto", False, enough, "compiled"), ("auto", True, 100, "blas")]
    try:
        for client_jit, workers_jit, max_iter, sweep in cases:
            client.run(km.set_config, jit=workers_jit)
            with km.config_context(jit=client_jit):
                on_workers = KernelRidge(max_iter=max_iter, **params).fit(dX, y)
                with dask.config.set(scheduler="threads"):
                    local = KernelRidge(max_iter=max_iter, **params).fit(dX, y)
            case = (client_jit, workers_jit, max_iter)
            assert on_workers.fit_info_["sweep"] == local.fit_info_["sweep"] == sweep, case
            assert on_workers.fit_info_["chunk_sweeps"] == {sweep: 8}, case
            assert_same_numbers(on_workers.dual_coef_, local.dual_coef_, rtol=1e-10)
    finally:
        client.run(km.set_config, jit="auto")


def _gated_chunk(block, block_id=None, gated_block=None):
    """The chunk itself; the chunk ``gated_block`` waits for the gate first (so the fit
    cannot finish before the test has killed a worker, while one thread at most waits)."""
    if block_id[0] == gated_block:
        Event(GATE).wait(timeout=60)
    return block


def test_worker_killed_mid_fit_changes_nothing(client):
    rng = np.random.RandomState(1)
    X = rng.uniform(-1, 1, size=(12_000, 5))
    y = X[:, 0] - np.cos(3 * X[:, 1])
    rff = km.RBFSampler(gamma=1.0, n_components=100, random_state=0)
    reference = FeatureRidge(rff, alpha=1e-2).fit(X, y)
    dX = da.from_array(X, chunks=(1_000, 5))
    dX = dX.map_blocks(_gated_chunk, gated_block=dX.numblocks[0] - 1, dtype=X.dtype)
    pids = client.run(os.getpid)
    gate = Event(GATE, client=client)
    gate.clear()
    fitted = {}

    def fit_in_background():
        try:
            fitted["model"] = FeatureRidge(rff, alpha=1e-2).fit(dX, y)
        except BaseException as error:  # reported by the assertion below
            fitted["error"] = error

    runner = threading.Thread(target=fit_in_background)
    runner.start()
    # Wait until a worker holds finished results of this fit (nothing else runs on the
    # cluster), then kill it (SIGKILL: no goodbye; its results are lost with it).
    deadline = time.monotonic() + 60
    victim = None
    while victim is None and time.monotonic() < deadline:
        victim = next((addr for addr, keys in client.has_what().items()
                       if addr in pids and keys), None)
        time.sleep(0.01)
    assert victim is not None, "no worker finished a chunk"
    assert runner.is_alive()  # the fit is still running: the gate holds its last chunk
    os.kill(pids[victim], signal.SIGKILL)
    deadline = time.monotonic() + 60
    while victim in client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.05)
    gate.set()
    runner.join(timeout=120)
    assert not runner.is_alive() and "error" not in fitted, fitted.get("error")
    assert victim not in client.scheduler_info()["workers"]
    assert_same_numbers(fitted["model"].coef_, reference.coef_, rtol=1e-8)
    np.testing.assert_allclose(fitted["model"].intercept_, reference.intercept_, atol=1e-10)
