"""Where threads pay: the measurements behind the engine's thread rule.

``python -m benchmarks engine [--repeats N]`` prints, on this machine:

1. **Work units.** The engine counts work in floating-point operations of a matrix product;
   an element-wise pass, exp, log or cos is converted at what it costs here per element
   (one thread, best of the repeats, so other processes barely matter).
2. **Fixed costs.** What a call pays before any block runs: limiting BLAS to one thread and
   restoring it (threadpoolctl, with the libraries inspected once per process), that
   inspection itself (what ``threadpool_limits`` repeats on every call), and the
   engine's pool (a call of four trivial blocks on two threads, minus the same call on one).
3. **The crossover.** ``RBFSampler.transform`` and ``Nystroem.transform`` of ``n`` rows
   (digits-like, 64 features) cut into four blocks, on one engine thread and on two (the
   rule's work per thread set to a quarter of the call's and every core counted free, so
   two threads run whatever the work and the load): medians of interleaved repeats, the
   ratio (> 1: two threads faster) against the call's work. Two threads pay from a work
   ``W*`` on; the rule gives a call two threads from ``2 × FLOPS_PER_THREAD`` on where a
   core is free, from ``2 × FLOPS_PER_THREAD_BUSY`` on where none is (compare the load
   average printed). And one BLAS call on BLAS's own threads against one.

The engine's constants (:data:`kernelmaps._engine.FLOPS_PER_THREAD`,
:data:`~kernelmaps._engine.FLOPS_PER_THREAD_BUSY`,
:data:`~kernelmaps._engine.FLOPS_FOR_BLAS_THREADS`) were read off these tables on a 2-core
Sapphire Rapids VM; the load average is printed with each table, since threads pay only
where a core is free.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from unittest import mock

import numpy as np
from threadpoolctl import ThreadpoolController, threadpool_limits

import kernelmaps as km
from benchmarks._harness import machine_lines
from kernelmaps import _engine
from kernelmaps._engine import _blocks, run_blocks, single_threaded_blas
from kernelmaps._fastmath import cos_inplace
from kernelmaps.maps.interface import block_flops_per_row

N_FEATURES = 64
ROWS = (256, 512, 1024, 2048, 4096, 8192)


def _load() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def best_thread_time(fn: Callable[[], object], repeats: int) -> float:
    """Least CPU time of this thread over ``repeats`` calls (one-thread work only)."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        fn()
        best = min(best, time.thread_time() - start)
    return best


def interleaved_medians(fns: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Median wall time of each function, the calls interleaved so noise hits all alike."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, bucket in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return [statistics.median(bucket) for bucket in times]


def work_units(repeats: int) -> float:
    """Print GEMM speed and element-wise costs in GEMM operations; return GEMM flop/s."""
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((512, 100)), rng.standard_normal((100, 1000))
    C = np.empty((512, 1000))
    with single_threaded_blas():
        rate = 2 * A.shape[0] * A.shape[1] * B.shape[1] / best_thread_time(
            lambda: np.matmul(A, B, out=C), repeats)
    print(f"\n1. work units (one thread; load {_load()})")
    print(f"   matrix product 512 x 100 x 1000: {rate / 1e9:.1f} GFLOP/s")
    x = rng.uniform(0.1, 3.0, 32768)
    y = np.empty_like(x)
    for label, fn in [("pass (x * 2)", lambda: np.multiply(x, 2.0, out=y)),
                      ("exp", lambda: np.exp(x, out=y)), ("log", lambda: np.log(x, out=y)),
                      ("cos (kernelmaps cos_inplace)",
                       lambda: (np.copyto(y, x), cos_inplace(y)))]:
        seconds = best_thread_time(fn, repeats) / x.size
        print(f"   {label:30} {seconds * 1e9:6.2f} ns/element = {seconds * rate:5.0f} operations")
    return rate


def fixed_costs(repeats: int) -> None:
    """Print the costs a call pays before its blocks run."""
    print(f"\n2. fixed costs per call (median of {repeats}; load {_load()})")
    [inspect] = interleaved_medians([ThreadpoolController], max(5, repeats // 10))
    print(f"   ThreadpoolController() (inspects the loaded libraries) {inspect * 1e6:8.1f} µs")

    def limit_each_time() -> None:
        with threadpool_limits(limits=1, user_api="blas"):
            pass

    def engine_limit() -> None:
        with single_threaded_blas():
            pass

    X = np.zeros((512, N_FEATURES))
    with km.config_context(block_bytes=4096), mock.patch.object(_blocks, "FLOPS_PER_THREAD", 1), \
            mock.patch.object(_blocks, "free_cores", float):
        # 4096 bytes / (64 outputs × 8 bytes) → four blocks of 128 rows (zeroed: the
        # engine checks every block for non-finite values).
        calls = [lambda n=n: run_blocks(X, n_out=N_FEATURES, dtype=np.dtype(np.float64),
                                        block_fn=lambda xb, out: out.fill(0.0), n_threads=n)
                 for n in (1, 2)]
        limit, engine, serial, parallel = interleaved_medians(
            [limit_each_time, engine_limit, *calls], repeats)
    print(f"   threadpool_limits(1) scope (inspects each time)        {limit * 1e6:8.1f} µs")
    print(f"   engine's BLAS limit + restore (inspected once)         {engine * 1e6:8.1f} µs")
    print(f"   4 trivial blocks: 1 thread {serial * 1e6:.1f} µs, 2 threads {parallel * 1e6:.1f} µs"
          f" -> the pool costs {(parallel - serial) * 1e6:.1f} µs per call")


def crossover(repeats: int, rate: float) -> None:
    """Print 1 vs 2 engine threads, and BLAS's threads vs one, against the work."""
    rng = np.random.default_rng(0)
    X_fit = rng.uniform(size=(2000, N_FEATURES))
    maps = {"RBFSampler": km.RBFSampler(random_state=0).fit(X_fit),
            "Nystroem": km.Nystroem(random_state=0).fit(X_fit)}
    print(f"\n3. crossover: transform on 1 vs 2 engine threads (medians of {repeats} "
          f"interleaved; load {_load()} at start)")
    print(f"   {'map':11} {'rows':>6} {'Mop':>8} {'~ms 1 core':>10} {'1 thread':>9} "
          f"{'2 threads':>9} {'ratio':>6}")
    for name, est in maps.items():
        for n in ROWS:
            X = rng.uniform(size=(n, N_FEATURES))
            work = n * block_flops_per_row(est, X)
            fns = []
            for threads in (1, 2):
                def call(threads=threads, X=X, est=est, quarter=work / 4) -> None:
                    with km.config_context(n_threads=threads), \
                            mock.patch.object(_blocks, "FLOPS_PER_THREAD", quarter), \
                            mock.patch.object(_blocks, "free_cores", float):
                        est.transform(X)
                fns.append(call)
            one, two = interleaved_medians(fns, repeats)
            print(f"   {name:11} {n:6d} {work / 1e6:8.1f} {work / rate * 1e3:10.2f} "
                  f"{one * 1e3:9.3f} {two * 1e3:9.3f} {one / two:6.2f}")
    print(f"\n   one matrix product (n x 64 x 1000): BLAS's own threads vs one "
          f"(load {_load()})")
    W = rng.standard_normal((N_FEATURES, 1000))
    for n in ROWS:
        X = rng.standard_normal((n, N_FEATURES))
        pinned, default = interleaved_medians(
            [lambda X=X: _product(X, W, single_threaded_blas()),
             lambda X=X: _product(X, W, nullcontext())], repeats)
        work = 2 * n * N_FEATURES * W.shape[1]
        print(f"   {n:6d} rows {work / 1e6:8.1f} Mop: one thread {pinned * 1e3:8.3f} ms, "
              f"BLAS's threads {default * 1e3:8.3f} ms, ratio {pinned / default:5.2f}")


def _product(X: np.ndarray, W: np.ndarray, scope) -> None:
    with scope:
        X @ W


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31,
                        help="interleaved repeats per measurement (default 31)")
    args = parser.parse_args(argv)
    print(machine_lines())
    print(f"engine:     FLOPS_PER_THREAD = {_engine.FLOPS_PER_THREAD:.3g}, "
          f"FLOPS_PER_THREAD_BUSY = {_engine.FLOPS_PER_THREAD_BUSY:.3g}, "
          f"FLOPS_FOR_BLAS_THREADS = {_engine.FLOPS_FOR_BLAS_THREADS:.3g}")
    rate = work_units(args.repeats)
    fixed_costs(args.repeats * 10)
    crossover(args.repeats, rate)
    print(f"\nload avg at end: {_load()}")


if __name__ == "__main__":
    main()
