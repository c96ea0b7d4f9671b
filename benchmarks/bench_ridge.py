"""Kernel ridge at scale: FALKON with the cached kernel block beside the recompute path.

``python -m benchmarks ridge`` runs the three cases of issue 18's targets; each fits the same
model twice per repeat — ``kernel_cache_bytes=0`` (every CG iteration recomputes the n × M
kernel block, the only path before the cache) and the default budget (half the available
memory: the block is computed once and every iteration sweeps it) — interleaved, and reports
medians, the ratio, the accuracy of each, the path the fit took (``fit_info_``) and the load
average before and after. Times are wall-clock ``fit`` times (centre selection included).

``fashion``
    Fashion-MNIST (Debian's ``dataset-fashion-mnist``, or ``--fashion-dir`` with any MNIST
    IDX files), 60,000 × 784 float32 (grey levels / 255), M = 1,000, exactly 10 CG
    iterations (``max_iter=10``, ``tol=1e-12``), 10 one-vs-rest ±1 targets, rbf γ = 0.02,
    α = 1e-6·n; test error of the argmax on the 10,000 test images. Target: ≤ 2.0 s cached
    (5.83 s before), same test error. Peak memory of one fit per path by ``tracemalloc``.
``million``
    1,000,000 × 20 float32 (the synthetic regression of :func:`make_data`), M = 2,000, exactly
    20 CG iterations, test RMSE on 20,000 rows. Each fit runs in a fresh subprocess, which
    reports its fit time, its peak resident memory (``VmHWM``) and the resident memory
    with the data loaded; the float32 block is 8 GB, so check ``free -g`` first
    (``--million-repeats``, default 1). Target: ≤ 20 s cached (57.8 s before), same RMSE,
    peak within the budget.
``classifier``
    A 26-class problem of 15,000 × 16 training rows and 5,000 test rows
    (``sklearn.datasets.make_classification``, standardised; the shape of UCI letter), M =
    3,000, rbf γ = 0.1, α = 1e-6·n: ``KernelRidgeClassifier`` at its defaults beside
    ``KernelRidge`` on one-hot ±1 targets at its defaults (argmax), both cached, plus the
    one-hot ``KernelRidge`` on the recompute path. Target: accuracy within 0.5 % of the
    one-hot KernelRidge, in ≤ ½ its time.
``large-m`` (``--large-m``, not in the default run)
    Where M = 5,000–20,000 is limited: the time of the preconditioner's factorisations
    (potrf, lauum, potrf in one M × M buffer), of one CG iteration's triangular solves, and
    the M × M memory, on 40,000 × 20 float32 rows with 3 CG iterations.

    python -m benchmarks ridge                     # the three target cases
    python -m benchmarks ridge --cases fashion     # one case
    python -m benchmarks ridge --quick             # small smoke run of every case
    python -m benchmarks ridge --jit true          # the compiled sweep forced (false: BLAS)

``--peer falkon`` also fits Falkon 0.9.0 on ``fashion`` and ``million`` (benchmark-only, in
another Python): float32 like kernelmaps, ``penalty = α/n``, y centred by its training mean
and ``pc_epsilon_32 = ε₃₂``, so that both solve the same system; Falkon's defaults on
uncentred float32 y gave RMSE 0.51-0.56 on ``million`` against 0.18 (the comment "Falkon's
system" before :func:`falkon_child` has why).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

import kernelmaps as km
from benchmarks._harness import machine_lines
from kernelmaps.models import KernelRidge, KernelRidgeClassifier
from kernelmaps.models.interface import attainable_residual

N_FEATURES = 20
GAMMA = 0.05
LAMBDA = 1e-6  # alpha = LAMBDA * n_samples: the same regularisation per sample at every n
NOISE = 0.1
SEED = 0
PATHS = {"recompute": 0, "cached": None}  # kernel_cache_bytes of each path


def make_data(n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The synthetic regression problem (float64 X and y): a smooth non-linear target in 20
    dimensions plus Gaussian noise (the best possible RMSE is ≈ 0.1)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n_samples, N_FEATURES))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + np.cos(X[:, 3] + X[:, 4] + X[:, 5])
         + 0.5 * np.tanh(X[:, 6]) + NOISE * rng.normal(size=n_samples))
    return X, y


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _fit(model: Any, X: np.ndarray, Y: np.ndarray, budget: int | None) -> tuple[Any, float]:
    with warnings.catch_warnings(), km.config_context(kernel_cache_bytes=budget):
        warnings.simplefilter("ignore", ConvergenceWarning)  # fixed iteration counts
        start = time.perf_counter()
        model.fit(X, Y)
        return model, time.perf_counter() - start


def _peak_bytes(fit: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fit()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _compare_paths(name: str, model: Any, X: np.ndarray, Y: np.ndarray,
                   score: Callable[[Any], float], repeats: int, metric: str) -> dict:
    """Interleaved fits of both paths, medians, scores, one traced fit per path."""
    print(f"{name}: {load()}")
    times: dict[str, list[float]] = {path: [] for path in PATHS}
    fitted: dict[str, Any] = {}
    for _ in range(repeats):
        for path, budget in PATHS.items():
            fitted[path], seconds = _fit(clone(model), X, Y, budget)
            times[path].append(seconds)
    peaks = {path: _peak_bytes(lambda b=budget: _fit(clone(model), X, Y, b))
             for path, budget in PATHS.items()}
    rows = {}
    for path in PATHS:
        info = fitted[path].fit_info_
        rows[path] = {"fit_s": statistics.median(times[path]), "times": times[path],
                      metric: score(fitted[path]), "iterations": fitted[path].n_iter_,
                      "path": info["path"], "cache_bytes": info["cache_bytes"],
                      "budget_bytes": info["cache_budget_bytes"],
                      "peak_traced_bytes": peaks[path]}
    print(f"  {'path':10s} {'fit s (median)':>15s} {metric:>11s} {'CG it':>6s} "
          f"{'cache MB':>9s} {'peak MB':>8s}  fit_info_['path']")
    for path, row in rows.items():
        print(f"  {path:10s} {row['fit_s']:15.2f} {row[metric]:11.4f} {row['iterations']:6d} "
              f"{row['cache_bytes'] / 1e6:9.0f} {row['peak_traced_bytes'] / 1e6:8.0f}  "
              f"{row['path']}")
    print(f"  recompute / cached = {rows['recompute']['fit_s'] / rows['cached']['fit_s']:.2f}×"
          f"; {load()}\n")
    return rows


# ----------------------------------------------------------------------------- floors
def _median_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def floors(model: Any, X: np.ndarray, Y: np.ndarray, repeats: int = 3,
           first_repeats: int = 1) -> dict:
    """The cached path's passes beside their floors, in this process, on the fitted model's
    centres (issue 26): the first pass (kernel blocks + right-hand side into the cache)
    beside a bare GEMM + ``np.exp`` of the same shape on the same blocks and threads, and one
    CG data pass (``gram_times``) beside one multi-threaded read of the same cache (a sum
    over its rows, the same blocks and threads), and the GEMM + exp written into the
    touched cache (the whole fit's floor). Loads beside each."""
    from kernelmaps._config import resolve_n_threads
    from kernelmaps._engine import (
        reduce_blocks,
        scratch_buffer,
        wait_for_releases,
        written_once_buffer,
    )
    from kernelmaps.kernels.interface import effective_gamma
    from kernelmaps.models._nystrom import NystromSystem

    kernel, C = model.kernel_, np.asarray(model.X_fit_, dtype=X.dtype)
    M, t = C.shape[0], Y.shape[1]
    Y = np.asarray(Y, dtype=np.float64).reshape(X.shape[0], -1)
    weights = np.ones(X.shape[0])
    threads = resolve_n_threads()
    load_before = os.getloadavg()[0]
    first = []
    system = None
    wait_for_releases()  # the fit's cache is back before the first pass is timed
    for _ in range(first_repeats):
        if system is not None:
            system.release()
            wait_for_releases()
        system = NystromSystem(kernel, X, C, weights, Y, passes=model.max_iter)  # as the fit
        first.append(system.info["first_pass_s"])
    if system.info["path"] != "cached":
        print(f"  floors: path {system.info['path']} (not cached): skipped")
        return {}
    scale = 2.0 * effective_gamma(kernel, X.shape[1])
    Ct = np.ascontiguousarray((C * scale).T, dtype=X.dtype)
    itemsize = X.dtype.itemsize

    def gemm_exp_block(X_b: np.ndarray) -> np.ndarray:
        out = scratch_buffer("floor_gemm", (X_b.shape[0], M), X.dtype)
        np.matmul(X_b, Ct, out=out)
        np.exp(out, out=out)
        return out[0]

    gemm_exp = _median_time(lambda: reduce_blocks(X, gemm_exp_block, bytes_per_row=M * itemsize,
                                                  n_threads=threads), repeats)
    cache = system.cache
    read = _median_time(lambda: reduce_blocks(
        cache, lambda K_b: np.add.reduce(K_b, axis=0), bytes_per_row=M * itemsize,
        n_threads=threads), repeats)
    V = np.random.RandomState(0).normal(size=(M, t))
    sweep = _median_time(lambda: system.gram_times(V), repeats)
    sweep_kind = system.info["sweep"]

    def gemm_exp_into(X_b: np.ndarray, out: np.ndarray) -> np.ndarray:
        np.matmul(X_b, Ct, out=out)
        np.exp(out, out=out)
        return out[0]

    # The same GEMM + exp written into the touched cache, as the first pass writes it (the
    # DRAM writes a scratch buffer in cache does not pay); the cache is not read after.
    gemm_exp_touched = _median_time(lambda: reduce_blocks(
        X, gemm_exp_into, aligned=(cache,), bytes_per_row=M * itemsize, n_threads=threads),
        repeats)
    # The pass's arithmetic at this BLAS's large-GEMM rate (a 2,048³ product of the cache's
    # dtype on the same threads): with t targets a pass is 4·n·M·t flops, which for t = 10
    # take longer than one read of the cache — the roofline floor is the larger of the two.
    square = np.ones((2048, 2048), dtype=X.dtype)
    with threadpool_limits(threads):
        gemm_rate = 2 * 2048 ** 3 / _median_time(lambda: square @ square, repeats)
    arithmetic = 4 * X.shape[0] * M * t / gemm_rate
    shape, dtype = cache.shape, cache.dtype
    system.release()
    cache = system = None  # the cache is freed before the fresh buffer
    wait_for_releases()
    # Writing a fresh cache faults its pages in (zeroed by the kernel; on a VM, backed by
    # the host): part of the first pass that no GEMM + exp into scratch memory pays.
    start = time.perf_counter()
    fresh = written_once_buffer(shape, dtype)  # as the fit allocates its cache
    fresh.reshape(-1)[:: 4096 // dtype.itemsize] = 0
    touch = time.perf_counter() - start
    del fresh
    row = {"first_pass_s": statistics.median(first), "gemm_exp_s": gemm_exp,
           "gemm_exp_touched_s": gemm_exp_touched,
           "first_touch_s": touch,
           "cg_pass_s": sweep, "cache_read_s": read, "threads": threads,
           "sweep": sweep_kind,
           "cache_bytes": int(np.prod(shape)) * dtype.itemsize,
           "load": [load_before, os.getloadavg()[0]]}
    row["first_pass_ratio"] = row["first_pass_s"] / gemm_exp
    row["cg_pass_ratio"] = sweep / read
    row["cg_arithmetic_s"] = arithmetic
    row["gemm_gflops"] = gemm_rate / 1e9
    row["cg_roofline_ratio"] = sweep / max(read, arithmetic)
    print(f"  floors ({threads} threads, cache {row['cache_bytes'] / 1e9:.2f} GB, load "
          f"{row['load'][0]:.1f}→{row['load'][1]:.1f}): first pass {row['first_pass_s']:.3f} s"
          f" vs GEMM + exp {gemm_exp:.3f} s = {row['first_pass_ratio']:.2f}× (target ≤ 1.5; "
          f"first touch of a cache-sized buffer, one thread: {touch:.3f} s);"
          f" CG pass ({row['sweep']} sweep) {sweep:.3f} s vs cache read {read:.3f} s = "
          f"{row['cg_pass_ratio']:.2f}× "
          f"(target ≤ 1.5); its arithmetic at the large-GEMM rate ({row['gemm_gflops']:.0f} "
          f"GFLOP/s) {arithmetic:.3f} s, so {row['cg_roofline_ratio']:.2f}× the roofline "
          "floor max(read, arithmetic)")
    return row


# ----------------------------------------------------------------------------- cases
def fashion(args: argparse.Namespace) -> dict:
    from kernelmaps.cli.data.idx import load_fashion_mnist, load_idx_directory

    data = load_idx_directory(args.fashion_dir) if args.fashion_dir else load_fashion_mnist()
    X = (data.X / 255).astype(np.float32)
    X_test = (data.X_test / 255).astype(np.float32)
    n = 6_000 if args.quick else X.shape[0]
    X, y = X[:n], data.y[:n]
    classes = np.unique(y)
    Y = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    # tol at the float32 floor (below it warns and stops there): 10 iterations do not reach it.
    model = KernelRidge(alpha=LAMBDA * n, kernel="rbf", gamma=0.02, solver="nystrom",
                        n_components=1000, max_iter=10, tol=attainable_residual(np.float32, 1000),
                        random_state=SEED)

    def test_error(fitted: Any) -> float:
        return float(np.mean(classes[fitted.predict(X_test).argmax(axis=1)] != data.y_test))

    print(f"fashion — Fashion-MNIST {n:,} × 784 float32, M=1,000, 10 CG iterations, 10 ±1 "
          "targets (target: cached ≤ 1.0 s, was 1.29 s quiet; issue 26)")
    rows = _compare_paths("fashion", model, X, Y, test_error, args.repeats, "test error")
    if not args.no_floors:
        fitted, _ = _fit(clone(model), X, Y, None)
        rows["floors"] = floors(fitted, X, Y, repeats=3, first_repeats=3)
    if "falkon" in args.peer:
        rows["falkon"] = falkon_peer("fashion", args, rows["cached"])
    print()
    return rows


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        return 1024 * next(int(line.split()[1]) for line in status if line.startswith(field))


def million_child(n: int, n_components: int, budget: int | None, with_floors: bool) -> dict:
    """One fit of the ``million`` case, in its own process so that its peak resident memory
    (``VmHWM``: ``ru_maxrss`` would carry the parent's peak over the fork) is this fit's."""
    X, y = make_data(n, SEED)
    X = X.astype(np.float32)
    X_test, y_test = make_data(20_000, SEED + 1)
    rss = _status_bytes("VmRSS:")
    model = KernelRidge(alpha=LAMBDA * n, kernel="rbf", gamma=GAMMA, solver="nystrom",
                        n_components=n_components, max_iter=20,
                        tol=attainable_residual(np.float32, n_components), random_state=SEED)
    model, seconds = _fit(model, X, y, budget)
    peak = _status_bytes("VmHWM:")
    prediction = model.predict(X_test.astype(np.float32))
    floor_row = {}
    if with_floors:
        floor_row = floors(model, X, y[:, None], repeats=3)
        if floor_row:
            # Issue 33's floor of the whole fit, in this process: the first touch of the
            # cache as the fit measured it (fit_info_["first_touch_s"]: its own buffer, in
            # the state the fit met it, on its threads), the first pass's GEMM and
            # exponentials written into touched memory, one read of the cache per CG
            # iteration. Beside it the floor printed before: one thread's touch of a new
            # buffer after the fit, the GEMM + exp into scratch memory.
            iterations, touch = model.n_iter_, model.fit_info_["first_touch_s"]
            floor_row["fit_first_touch_s"] = touch
            floor_row["fit_floor_s"] = (touch + floor_row["gemm_exp_touched_s"]
                                        + iterations * floor_row["cache_read_s"])
            floor_row["fit_floor_ratio"] = seconds / floor_row["fit_floor_s"]
            floor_row["earlier_floor_s"] = (floor_row["first_touch_s"] + floor_row["gemm_exp_s"]
                                            + iterations * floor_row["cache_read_s"])
            floor_row["earlier_floor_ratio"] = seconds / floor_row["earlier_floor_s"]
            print(f"  floors: whole fit {seconds:.2f} s vs its floor "
                  f"{floor_row['fit_floor_s']:.2f} s = {floor_row['fit_floor_ratio']:.2f}× "
                  f"(target ≤ 1.3; the fit's first touch of its cache {touch:.2f} s + GEMM + "
                  f"exp into touched memory {floor_row['gemm_exp_touched_s']:.2f} s + "
                  f"{iterations} reads of the cache "
                  f"{iterations * floor_row['cache_read_s']:.2f} s); as printed before "
                  f"{floor_row['earlier_floor_s']:.2f} s = "
                  f"{floor_row['earlier_floor_ratio']:.2f}× (a new buffer's touch after the "
                  f"fit, one thread, {floor_row['first_touch_s']:.2f} s; GEMM + exp into "
                  f"scratch {floor_row['gemm_exp_s']:.2f} s); CG sweep "
                  f"{model.fit_info_['sweep']}")
    return {"fit_s": seconds, "floors": floor_row, "sweep": model.fit_info_["sweep"],
            "solve_s": model.fit_info_["solve_s"],
            "test_rmse": float(np.sqrt(np.mean((prediction - y_test) ** 2))),
            "iterations": model.n_iter_, "path": model.fit_info_["path"],
            "cache_bytes": model.fit_info_["cache_bytes"],
            "budget_bytes": model.fit_info_["cache_budget_bytes"],
            "first_pass_s": model.fit_info_["first_pass_s"],
            "peak_rss_bytes": peak, "rss_with_data_bytes": rss}


def million(args: argparse.Namespace) -> dict:
    n = 100_000 if args.quick else 1_000_000
    M = 500 if args.quick else 2_000
    print(f"million — {n:,} × {N_FEATURES} float32, M={M:,}, 20 CG iterations (target: "
          "cached ≤ 20 s, was 31.8-41.4 s quiet; same RMSE; peak within the budget)")
    print(f"  {load()}; available memory {km._config.available_memory() / 1e9:.1f} GB")
    runs: dict[str, list[dict]] = {path: [] for path in PATHS}
    for _ in range(args.million_repeats):
        for path, budget in PATHS.items():
            floors_here = budget is None and not args.no_floors and not runs[path]
            child = subprocess.run(
                [sys.executable, "-m", "benchmarks.bench_ridge", "--million-child",
                 str(n), str(M), "none" if budget is None else str(budget),
                 "floors" if floors_here else "-", "--jit", args.jit],
                capture_output=True, text=True, check=True)
            runs[path].append(json.loads(child.stdout.strip().splitlines()[-1]))
            if floors_here:
                print("\n".join(line for line in child.stdout.splitlines()
                                if line.startswith("  floors")))
    print(f"  {'path':10s} {'fit s (median)':>15s} {'test RMSE':>10s} {'CG it':>6s} "
          f"{'cache GB':>9s} {'budget GB':>10s} {'peak RSS GB':>12s} {'above data':>11s}")
    rows = {}
    for path, results in runs.items():
        last = results[-1]
        row = {**last, "fit_s": statistics.median(r["fit_s"] for r in results),
               "times": [r["fit_s"] for r in results]}
        rows[path] = row
        above = row["peak_rss_bytes"] - row["rss_with_data_bytes"]
        print(f"  {path:10s} {row['fit_s']:15.2f} {row['test_rmse']:10.4f} "
              f"{row['iterations']:6d} {row['cache_bytes'] / 1e9:9.2f} "
              f"{row['budget_bytes'] / 1e9:10.2f} {row['peak_rss_bytes'] / 1e9:12.2f} "
              f"{above / 1e9:11.2f}")
    print(f"  recompute / cached = {rows['recompute']['fit_s'] / rows['cached']['fit_s']:.2f}×"
          f"; cached: first pass {rows['cached']['first_pass_s']:.2f} s, solve "
          f"{rows['cached']['solve_s']:.2f} s; {load()}")
    if "falkon" in args.peer:
        rows["falkon"] = falkon_peer("million", args, rows["cached"])
    print()
    return rows


def classifier(args: argparse.Namespace) -> dict:
    n_train = 3_000 if args.quick else 15_000
    M = 600 if args.quick else 3_000
    X, y = make_classification(n_samples=n_train + 5_000, n_features=16, n_informative=14,
                               n_redundant=2, n_classes=26, n_clusters_per_class=1,
                               class_sep=2.0, random_state=SEED)
    X = StandardScaler().fit_transform(X)
    X, X_test, y, y_test = X[:n_train], X[n_train:], y[:n_train], y[n_train:]
    classes = np.unique(y)
    one_hot = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    params = dict(alpha=LAMBDA * n_train, kernel="rbf", gamma=0.1, solver="nystrom",
                  n_components=M, random_state=SEED)
    models = {
        "KernelRidgeClassifier": (KernelRidgeClassifier(**params), y, None),
        "KernelRidge one-hot": (KernelRidge(**params), one_hot, None),
        "KernelRidge one-hot, recompute": (KernelRidge(**params), one_hot, 0),
    }
    print(f"classifier — {n_train:,} × 16, 26 classes, M={M:,} (target: accuracy within 0.5 % "
          "of the one-hot KernelRidge, in ≤ ½ its time); " + load())
    times: dict[str, list[float]] = {name: [] for name in models}
    fitted = {}
    for _ in range(args.repeats):
        for name, (model, targets, budget) in models.items():
            fitted[name], seconds = _fit(clone(model), X, targets, budget)
            times[name].append(seconds)
    rows = {}
    print(f"  {'model':32s} {'fit s (median)':>15s} {'accuracy':>9s} {'CG it':>6s} {'tol':>6s}"
          f" {'1st pass s':>11s} {'precond s':>10s} {'CG s':>6s}")
    for name, model in fitted.items():
        scores = model.predict(X_test) if name == "KernelRidgeClassifier" \
            else classes[model.predict(X_test).argmax(axis=1)]
        info = model.fit_info_
        rows[name] = {"fit_s": statistics.median(times[name]), "times": times[name],
                      "accuracy": float(np.mean(scores == y_test)),
                      "iterations": model.n_iter_, "tol": model.tol, "path": info["path"],
                      "first_pass_s": info["first_pass_s"],
                      "preconditioner_s": info["preconditioner_s"],
                      "cg_s": info["solve_s"] - info["preconditioner_s"]}
        print(f"  {name:32s} {rows[name]['fit_s']:15.2f} {rows[name]['accuracy']:9.4f} "
              f"{model.n_iter_:6d} {model.tol:6.0e} {info['first_pass_s']:11.2f} "
              f"{info['preconditioner_s']:10.2f} {rows[name]['cg_s']:6.2f}")
    ours, theirs = rows["KernelRidgeClassifier"], rows["KernelRidge one-hot"]
    print(f"  classifier time / one-hot time = {ours['fit_s'] / theirs['fit_s']:.2f} "
          f"(target ≤ 0.5); accuracy difference {ours['accuracy'] - theirs['accuracy']:+.4f} "
          f"(target ≥ −0.005); {load()}\n")
    return rows


def large_m(args: argparse.Namespace) -> dict:
    from kernelmaps.models._preconditioner import FalkonPreconditioner

    rows = {}
    n = 40_000
    X, y = make_data(n, SEED)
    X = X.astype(np.float32)
    print(f"large-m — the M × M work on {n:,} × 20 float32 rows, 3 CG iterations; {load()}")
    print(f"  {'M':>7s} {'buffer GB':>10s} {'factorise s':>12s} {'4 solves s':>11s} "
          f"{'fit s':>7s} {'first pass s':>13s}")
    for M in ([1000, 2000] if args.quick else args.large_m_sizes):
        kernel = km.get_kernel("rbf", gamma=GAMMA)
        K_MM = kernel(X[:M]).astype(np.float64)
        start = time.perf_counter()
        preconditioner = FalkonPreconditioner(K_MM, LAMBDA * n, float(n), overwrite=True)
        factorise = time.perf_counter() - start
        V = np.ones((M, 1))
        start = time.perf_counter()
        preconditioner.apply_transpose(preconditioner.apply(V))
        solves = time.perf_counter() - start
        del preconditioner, K_MM
        model = KernelRidge(alpha=LAMBDA * n, kernel="rbf", gamma=GAMMA, solver="nystrom",
                            n_components=M, max_iter=3, tol=1e-12, random_state=SEED)
        model, seconds = _fit(model, X, y, None)
        rows[M] = {"buffer_bytes": 8 * M * M, "factorise_s": factorise, "solves_s": solves,
                   "fit_s": seconds, "first_pass_s": model.fit_info_["first_pass_s"]}
        print(f"  {M:7d} {8 * M * M / 1e9:10.2f} {factorise:12.2f} {solves:11.3f} "
              f"{seconds:7.1f} {model.fit_info_['first_pass_s']:13.2f}")
        del model
    print(f"  {load()}\n")
    return rows


# ----------------------------------------------------------------------------- Falkon
#: Where ``--peer falkon`` looks for a Python with Falkon (FalkonML/falkon, BSD-3, built from
#: source as a CPU-only PyTorch extension; never a kernelmaps dependency, never in CI):
#: ``--peer-python``, else ``$KERNELMAPS_FALKON_PYTHON``, else this interpreter.
FALKON_PYTHON_ENV = "KERNELMAPS_FALKON_PYTHON"

# Falkon's system. Falkon 0.9.0 (falkon/optim/conjgrad.py, FalkonConjugateGradient.solve and
# falkon_mmv; falkon/preconditioner/flk_preconditioner.py, init) runs CG on
#     (K_nMᵀK_nM/n + λ·TᵀT) β = K_nMᵀy/n,   TᵀT = K_MM + pc_epsilon·M·I
# (rhs ``kernel.mmv(M, X, Y / n)``; operator ``T⁻ᵀ(cc / n) + penalty·v``; T the Cholesky
# factor of K_MM after ``inplace_add_diag_th(C, eps * M)``), in the dtype of X, with no
# intercept. kernelmaps' KernelRidge(solver="nystrom") solves
#     (K_nMᵀK_nM + α·K_MM) β = K_nMᵀy
# with float32 kernel blocks summed in float64 and the M × M work in float64 (jitter
# M·ε₆₄·mean diag K_MM ≈ 4e-13). So ``penalty = α/n`` is the same λ, but three things of the
# first version of this peer made its float32 Falkon solve something else:
#   * y not centred (mean ≈ 0.6 on ``million``, −0.8 per one-vs-rest column on ``fashion``):
#     the constant dominates K_nMᵀy, and Falkon's float32 CG (float32 sums over all n rows)
#     resolves the rest only to float32 rounding of that (its passes accumulate K_nMᵀ(K_nM v)
#     in float32: falkon/mmv_ops/fmmv.py, dmmv_run_thread): the main cause;
#   * pc_epsilon_32 = 1e-5 (default): 1e-5·M = 0.02 on K_MM's diagonal at M = 2,000 is in the
#     regulariser too (λ·(K_MM + 0.02·I)), an extra ridge that damps the directions of K_MM's
#     eigenvalues below ≈ 0.02. ε₃₂ (jitter M·ε₃₂, kernelmaps' rule at float32's precision)
#     factorised every case here;
#   * float32 throughout: float64 data needs neither change (pc_epsilon_64 = 1e-13), but
#     costs Falkon 1.6-2× the time, so the timed peer is float32 like kernelmaps' fit. Its
#     float32 sums still cost accuracy that grows with n (below): ``--peer-dtype float64``
#     is the check of the error column.
# Centring y changes the problem itself by less than 2e-4 RMSE (an unpenalised constant; the
# float64 direct solve of both systems: 0.17897 both at 100,000 rows, M = 2,000). Measured
# there (kernelmaps' centres, 20 iterations; kernelmaps 0.17896, seeds 0-2 0.1790-0.1808):
# Falkon float32 as first configured 0.2869, y centred 0.1924, centred with
# pc_epsilon_32 = 1e-6 0.1831, 1e-7 0.1800; not centred with 1e-7 0.3602; float64 0.1790.
# At 300,000 rows: kernelmaps 0.18052, Falkon float32 (this configuration) 0.18630, float64
# 0.18051; the whole case (1M rows): kernelmaps 0.1793, Falkon float32 0.1905 / 0.1902 (its
# centres / kernelmaps'), against 0.5568 / 0.5088 as first configured.


def _case_data(case: str, quick: bool) -> dict:
    """The data, M, iterations, γ and λ of a case, as the kernelmaps fits use them."""
    if case == "fashion":
        from kernelmaps.cli.data.idx import load_fashion_mnist

        data = load_fashion_mnist()
        n = 6_000 if quick else data.X.shape[0]
        y = data.y[:n]
        classes = np.unique(y)
        return {"X": (data.X[:n] / 255).astype(np.float32),
                "Y": np.where(y[:, None] == classes[None, :], 1.0, -1.0),
                "X_test": (data.X_test / 255).astype(np.float32), "y_test": data.y_test,
                "classes": classes, "M": 1000, "iterations": 10, "gamma": 0.02,
                "metric": "test error"}
    n = 100_000 if quick else 1_000_000
    X, y = make_data(n, SEED)
    X_test, y_test = make_data(20_000, SEED + 1)
    return {"X": X.astype(np.float32), "Y": y[:, None], "X_test": X_test.astype(np.float32),
            "y_test": y_test, "M": 500 if quick else 2_000, "iterations": 20, "gamma": GAMMA,
            "metric": "test RMSE"}


def _score(case: dict, prediction: np.ndarray) -> float:
    if case["metric"] == "test error":
        return float(np.mean(case["classes"][prediction.argmax(axis=1)] != case["y_test"]))
    return float(np.sqrt(np.mean((prediction.ravel() - case["y_test"]) ** 2)))


def falkon_child(name: str, quick: bool, centres: str, dtype: str = "float32") -> dict:
    """One Falkon fit of a case (run under the Python that has Falkon): its own uniform
    centres (``centres="falkon"``) or kernelmaps' (``"kernelmaps"``, FixedSelector), on
    float32 data (as kernelmaps' fit) or float64 (``dtype``).

    Configured to solve kernelmaps' problem (see the section's comment, "Falkon's system"):
    ``penalty = α/n``, y centred by its training mean (added back to the predictions) and
    float32's jitter at the rounding level (``pc_epsilon_32 = ε₃₂``)."""
    import torch
    from falkon import Falkon, FalkonOptions
    from falkon.center_selection import FixedSelector
    from falkon.kernels import GaussianKernel

    case = _case_data(name, quick)
    X = case["X"].astype(dtype)
    # y centred (float64 mean, one per target), its mean added back to the predictions.
    offset = case["Y"].mean(axis=0)
    Y = (case["Y"] - offset).astype(dtype)
    n = X.shape[0]
    options = FalkonOptions(use_cpu=True, keops_active="no",
                            pc_epsilon_32=float(np.finfo(np.float32).eps))
    kernel = GaussianKernel(sigma=1.0 / np.sqrt(2.0 * case["gamma"]), opt=options)
    selection: Any = "uniform"
    if centres == "kernelmaps":
        from kernelmaps.models._common import select_centres

        model = KernelRidge(alpha=LAMBDA * n, kernel="rbf", gamma=case["gamma"],
                            solver="nystrom", n_components=case["M"], random_state=SEED)
        points, _ = select_centres(model, case["X"], km.get_kernel("rbf", gamma=case["gamma"]),
                                   case["M"])
        selection = FixedSelector(torch.from_numpy(np.asarray(points, dtype=dtype, order="C")))
    # penalty λ = α/n: Falkon divides the data term by n (its system is below).
    model = Falkon(kernel=kernel, penalty=LAMBDA, M=case["M"], maxiter=case["iterations"],
                   center_selection=selection, seed=SEED, options=options)
    X_t, Y_t = torch.from_numpy(X), torch.from_numpy(Y)
    start = time.perf_counter()
    model.fit(X_t, Y_t)
    seconds = time.perf_counter() - start
    prediction = model.predict(torch.from_numpy(case["X_test"].astype(dtype))).numpy() + offset
    epsilon = options.pc_epsilon(torch.float32 if dtype == "float32" else torch.float64)
    return {"fit_s": seconds, case["metric"]: _score(case, prediction),
            "falkon": __import__("falkon").__version__, "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "centres": centres, "dtype": dtype,
            "jitter": f"{dtype}, jitter pc_epsilon·M = {epsilon * case['M']:.2g}",
            "load": os.getloadavg()[0]}


def falkon_peer(name: str, args: argparse.Namespace, ours: dict) -> dict | None:
    """Falkon on the same case in the Python that has it; None (with a message) if none."""
    python = args.peer_python or os.environ.get(FALKON_PYTHON_ENV) or sys.executable
    check = subprocess.run([python, "-c", "import falkon, torch"], capture_output=True,
                           text=True)
    if check.returncode != 0:
        print(f"  peer falkon: skipped — falkon is not importable from {python} "
              f"({check.stderr.strip().splitlines()[-1] if check.stderr.strip() else 'no'}"
              f"); build it from source into a separate environment and pass --peer-python "
              f"or ${FALKON_PYTHON_ENV} (docs/models.md)")
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [root, os.path.join(root, "src"), os.environ.get("PYTHONPATH", "")])}
    rows = {}
    for centres in args.peer_centres:
        child = subprocess.run(
            [python, "-m", "benchmarks.bench_ridge", "--falkon-child", name, centres,
             args.peer_dtype] + (["--quick"] if args.quick else []),
            capture_output=True, text=True, env=env, cwd=root)
        if child.returncode != 0:
            print(f"  peer falkon ({centres} centres): failed — "
                  f"{child.stderr.strip().splitlines()[-1:]}")
            continue
        row = json.loads(child.stdout.strip().splitlines()[-1])
        rows[centres] = row
        metric = next(k for k in ("test error", "test RMSE") if k in row)
        print(f"  peer falkon {row['falkon']} (torch {row['torch']}, {row['torch_threads']} "
              f"threads, {centres} centres, {row['jitter']}, y centred): fit "
              f"{row['fit_s']:.2f} s, "
              f"{metric} {row[metric]:.4f}; falkon / kernelmaps cached = "
              f"{row['fit_s'] / ours['fit_s']:.1f}× (target ≥ {PEER_TARGETS[name]}×); "
              f"load {row['load']:.1f}")
    return rows


#: Falkon's fit time over kernelmaps' cached fit, at least (issue 33: 10× on both cases;
#: issue 26 had asked 8× on ``million``).
PEER_TARGETS = {"fashion": 10, "million": 10}


CASES = {"fashion": fashion, "million": million, "classifier": classifier}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    parser.add_argument("--large-m", action="store_true", help="also the M = 5k-20k case")
    parser.add_argument("--large-m-sizes", type=int, nargs="+", default=[5_000, 10_000, 20_000],
                        help="the M of the large-m case")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved fits per path")
    parser.add_argument("--million-repeats", type=int, default=1)
    parser.add_argument("--fashion-dir", help="a directory of MNIST-style IDX files")
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--no-floors", action="store_true",
                        help="skip the floor columns (GEMM + exp, cache read)")
    parser.add_argument("--peer", nargs="*", default=[], choices=["falkon"],
                        help="also run Falkon on the fashion and million cases")
    parser.add_argument("--peer-python", help="a Python with falkon importable (default: "
                        f"${FALKON_PYTHON_ENV}, else this one)")
    parser.add_argument("--peer-centres", nargs="+", default=["falkon"],
                        choices=["falkon", "kernelmaps"],
                        help="Falkon's own uniform centres, and/or kernelmaps' (FixedSelector)")
    parser.add_argument("--peer-dtype", default="float32", choices=["float32", "float64"],
                        help="the dtype of Falkon's data (float32: as kernelmaps' fit)")
    parser.add_argument("--jit", default="auto", choices=["auto", "true", "false"],
                        help="set_config(jit=...): true sweeps the cache with the compiled "
                             "kernel, false with BLAS, auto (default) by the fit's work "
                             "(kernelmaps.models.interface.compiled_sweep)")
    parser.add_argument("--million-child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--falkon-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    km.set_config(jit={"auto": "auto", "true": True, "false": False}[args.jit])
    if args.million_child:  # the subprocess of the million case
        n, M, budget, with_floors = args.million_child
        result = million_child(int(n), int(M), None if budget == "none" else int(budget),
                               with_floors == "floors")
        print(json.dumps(result, default=str))
        return
    if args.falkon_child:  # the subprocess of --peer falkon (the Python with Falkon)
        print(json.dumps(falkon_child(args.falkon_child[0], args.quick,
                                      args.falkon_child[1], args.falkon_child[2])))
        return
    if args.quick:
        args.repeats = min(args.repeats, 2)
    print(machine_lines())
    print(load() + "\n")
    results = {name: CASES[name](args) for name in args.cases}
    if args.large_m:
        results["large-m"] = large_m(args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2, default=str)


if __name__ == "__main__":
    main()
