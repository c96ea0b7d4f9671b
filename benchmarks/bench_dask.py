"""kernelmaps on Dask: FeatureRidge and Nyström KernelRidge on data larger than memory.

Data: the regression problem of :mod:`benchmarks.bench_ridge` (20 features, a smooth
non-linear target plus noise of sd 0.1), generated lazily as dask arrays on the workers (never
on the client) with fixed seeds; 20,000 separate test rows.

Part 1 — ``FeatureRidge(RBFSampler(n_components=D))`` on 5,000,000 × 20 float64 rows
(z(X) would be 5,000,000 × 1,000 × 8 B = 40 GB), on a ``LocalCluster`` of 1 and of 2
single-threaded worker processes (each a fresh cluster, memory limit 2 GB per worker):
wall time of ``fit``, rows/s, 1 → 2 worker speed-up, and each worker's peak resident memory
(``ru_maxrss`` read on the worker: the whole process, Python and NumPy included), and beside
them the same fit in memory on the first ``--subset`` rows with one thread, in the same run:
the ratio of a single-threaded worker to the in-memory per-core rate. Agreement:
the coefficients of a Dask fit on the first 200,000 rows against scikit-learn's
``Ridge(solver="cholesky")`` on the materialised features of the same rows, in memory.

Part 2 — ``KernelRidge(solver="nystrom", n_components=M)`` on 2,000,000 × 20 float32 dask
rows, 2 workers, each path on a fresh cluster: ``kernel_cache_bytes=0`` (every CG iteration
recomputes each chunk's kernel blocks) and the default budget (a quarter of the workers'
memory limits less the rows: each chunk keeps what its share allows); wall time, CG
iterations, the path and cache size (``fit_info_``), peak memory per worker, and test RMSE
next to the in-memory solver's on the same rows (collected on the client, same parameters).

    python -m benchmarks dask            # full (tens of minutes on 2 cores)
    python -m benchmarks dask --quick    # small sizes: a smoke run of every step
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import time
from contextlib import contextmanager

import numpy as np

from benchmarks.bench_ridge import GAMMA, LAMBDA, N_FEATURES, NOISE, SEED

WORKER_MEMORY = 2 * 10**9
SPLIT = 20_000  # test rows


def make_dask_data(n_samples: int, chunk_rows: int, seed: int, dtype=np.float64):
    """bench_ridge's problem as lazy dask arrays (each chunk generated where it is used)."""
    import dask.array as da

    X = da.random.RandomState(seed).uniform(-1, 1, size=(n_samples, N_FEATURES),
                                            chunks=(chunk_rows, N_FEATURES)).astype(dtype)
    noise = da.random.RandomState(seed + 1).normal(size=n_samples, chunks=chunk_rows)
    X64 = X.astype(np.float64)
    y = (da.sin(2 * X64[:, 0]) + X64[:, 1] * X64[:, 2] + da.cos(X64[:, 3] + X64[:, 4]
         + X64[:, 5]) + 0.5 * da.tanh(X64[:, 6]) + NOISE * noise)
    return X, y


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _warm_up() -> None:
    # Imports on every worker before timing (a fresh process imports on its first task).
    import kernelmaps.distributed._falkon
    import kernelmaps.distributed._ridge_dask  # noqa: F401


@contextmanager
def local_cluster(n_workers: int):
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      memory_limit=WORKER_MEMORY, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        client.run(_warm_up)
        yield client


def rmse(prediction: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.asarray(prediction) - y) ** 2)))


def feature_ridge_run(n_workers: int, args, X_test, y_test) -> dict:
    """One FeatureRidge fit on a fresh cluster: time, rows/s, peak memory per worker."""
    from kernelmaps import RBFSampler
    from kernelmaps.distributed import FeatureRidge

    X, y = make_dask_data(args.rows, args.chunk_rows, SEED)
    model = FeatureRidge(RBFSampler(gamma=GAMMA, n_components=args.features, random_state=SEED),
                         alpha=LAMBDA * args.rows)
    with local_cluster(n_workers) as client:
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        peaks = sorted(client.run(_peak_rss_bytes).values())
    return {"workers": n_workers, "rows": args.rows, "D": args.features, "fit_s": seconds,
            "rows_per_s": args.rows / seconds, "peak_worker_gb": [p / 1e9 for p in peaks],
            "test_rmse": rmse(model.predict(X_test), y_test)}


def feature_ridge_in_memory(args) -> dict:
    """The same FeatureRidge fit in memory on the first ``--subset`` rows, one thread: the
    per-core rate a single-threaded Dask worker is compared with, in the same run (so the
    ratio holds on a loaded machine)."""
    from threadpoolctl import threadpool_limits

    from kernelmaps import RBFSampler, config_context
    from kernelmaps.models import FeatureRidge

    X, y = make_dask_data(args.rows, args.chunk_rows, SEED)
    X_mem, y_mem = X[: args.subset].compute(), y[: args.subset].compute()
    model = FeatureRidge(RBFSampler(gamma=GAMMA, n_components=args.features, random_state=SEED),
                         alpha=LAMBDA * args.subset)
    with threadpool_limits(1), config_context(n_threads=1):
        start = time.perf_counter()
        model.fit(X_mem, y_mem)
        seconds = time.perf_counter() - start
    return {"rows": args.subset, "fit_s": seconds, "rows_per_s": args.subset / seconds}


def feature_ridge_agreement(args) -> dict:
    """Dask FeatureRidge vs scikit-learn Ridge on the materialised features, same rows."""
    from sklearn.linear_model import Ridge

    from kernelmaps import RBFSampler
    from kernelmaps.distributed import FeatureRidge

    X, y = make_dask_data(args.rows, args.chunk_rows, SEED)
    X_sub, y_sub = X[: args.subset], y[: args.subset]
    rff = RBFSampler(gamma=GAMMA, n_components=args.features, random_state=SEED)
    alpha = LAMBDA * args.subset
    with local_cluster(2):
        start = time.perf_counter()
        on_dask = FeatureRidge(rff, alpha=alpha).fit(X_sub, y_sub)
        dask_s = time.perf_counter() - start
        X_mem, y_mem = X_sub.compute(), y_sub.compute()
    start = time.perf_counter()
    Z = rff.fit(X_mem).transform(X_mem)  # 8·subset·D bytes, in memory
    reference = Ridge(alpha=alpha, solver="cholesky").fit(Z, y_mem)
    sklearn_s = time.perf_counter() - start
    difference = on_dask.coef_ - reference.coef_
    return {"subset": args.subset, "dask_fit_s": dask_s, "sklearn_fit_s": sklearn_s,
            "coef_rel_l2": float(np.linalg.norm(difference) / np.linalg.norm(reference.coef_)),
            "coef_rel_max": float(np.abs(difference).max() / np.abs(reference.coef_).max()),
            "intercept_diff": float(abs(on_dask.intercept_ - reference.intercept_))}


def kernel_ridge_run(args, X_test, y_test) -> dict:
    """Nyström KernelRidge on 2 workers (recompute, then cached) vs the in-memory solver."""
    import kernelmaps as km
    from kernelmaps.models import KernelRidge

    X, y = make_dask_data(args.krr_rows, args.chunk_rows, SEED + 10, dtype=np.float32)
    params = dict(kernel="rbf", gamma=GAMMA, alpha=LAMBDA * args.krr_rows, solver="nystrom",
                  n_components=args.centres, tol=1e-3, random_state=SEED)
    X_test32 = X_test.astype(np.float32)
    runs = {}
    for path, budget in (("recompute", 0), ("cached", None)):
        on_dask = KernelRidge(**params)
        with local_cluster(2) as client, km.config_context(kernel_cache_bytes=budget):
            start = time.perf_counter()
            on_dask.fit(X, y)
            seconds = time.perf_counter() - start
            peaks = sorted(client.run(_peak_rss_bytes).values())
            if path == "cached":
                X_mem, y_mem = client.compute([X, y], sync=True)
        runs[path] = {"fit_s": seconds, "iterations": on_dask.n_iter_,
                      "path": on_dask.fit_info_["path"],
                      "cache_gb": on_dask.fit_info_["cache_bytes"] / 1e9,
                      "peak_worker_gb": [p / 1e9 for p in peaks],
                      "rmse": rmse(on_dask.predict(X_test32), y_test)}
    in_memory = KernelRidge(**params)
    start = time.perf_counter()
    in_memory.fit(X_mem, y_mem)
    memory_s = time.perf_counter() - start
    memory_rmse = rmse(in_memory.predict(X_test32), y_test)
    return {"rows": args.krr_rows, "M": args.centres, "dask": runs, "memory_fit_s": memory_s,
            "memory_iterations": in_memory.n_iter_, "memory_rmse": memory_rmse,
            "rmse_rel_diff": max(abs(run["rmse"] - memory_rmse) / memory_rmse
                                 for run in runs.values())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks dask",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="200k rows, D=200, 100k KernelRidge rows, M=300, 50k subset")
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--features", type=int, default=1000, help="D of FeatureRidge")
    parser.add_argument("--subset", type=int, default=200_000)
    parser.add_argument("--krr-rows", type=int, default=2_000_000)
    parser.add_argument("--centres", type=int, default=2000, help="M of KernelRidge")
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--skip", choices=["scaling", "agreement", "kernel-ridge"],
                        action="append", default=[], help="leave out a part (repeatable)")
    parser.add_argument("--json", help="write the results to this JSON file")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.features, args.subset = 200_000, 200, 50_000
        args.krr_rows, args.centres, args.chunk_rows = 100_000, 300, 25_000

    from benchmarks._harness import machine_info, machine_lines

    info = machine_info()
    print(machine_lines(info))
    print(f"problem: {N_FEATURES} features, rbf gamma={GAMMA}, alpha={LAMBDA:g}·n, noise sd "
          f"{NOISE}; row chunks of {args.chunk_rows:,}; LocalCluster of single-threaded "
          f"worker processes, memory limit {WORKER_MEMORY / 1e9:g} GB each\n")
    X_test_dask, y_test_dask = make_dask_data(SPLIT, SPLIT, SEED + 100)
    X_test, y_test = X_test_dask.compute(), y_test_dask.compute()
    results: dict = {"machine": info, "settings": vars(args)}

    if "scaling" not in args.skip:
        load_before = os.getloadavg()
        in_memory = feature_ridge_in_memory(args)
        runs = [feature_ridge_run(n, args, X_test, y_test) for n in (1, 2)]
        results["feature_ridge"] = runs
        results["feature_ridge_in_memory"] = in_memory
        print(f"FeatureRidge(RBFSampler(n_components={args.features})) on {args.rows:,} × "
              f"{N_FEATURES} float64 (z(X) would be {8 * args.rows * args.features / 1e9:.1f} GB)")
        print(f"  {'workers':>7s} {'fit s':>8s} {'rows/s':>10s} {'peak GB/worker':>16s} "
              f"{'test RMSE':>10s}")
        for run in runs:
            peaks = "/".join(f"{p:.2f}" for p in run["peak_worker_gb"])
            print(f"  {run['workers']:7d} {run['fit_s']:8.1f} {run['rows_per_s']:10,.0f} "
                  f"{peaks:>16s} {run['test_rmse']:10.4f}")
        print(f"  1 → 2 workers: {runs[0]['fit_s'] / runs[1]['fit_s']:.2f}× faster")
        print(f"  in memory, one thread, first {in_memory['rows']:,} rows: "
              f"{in_memory['rows_per_s']:,.0f} rows/s; Dask 1 worker / in memory = "
              f"{in_memory['rows_per_s'] / runs[0]['rows_per_s']:.2f}× slower "
              f"(load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after)\n")

    if "agreement" not in args.skip:
        agreement = feature_ridge_agreement(args)
        results["agreement"] = agreement
        print(f"Agreement on the first {args.subset:,} rows (alpha={LAMBDA:g}·{args.subset:,}): "
              f"Dask FeatureRidge {agreement['dask_fit_s']:.1f} s vs sklearn Ridge(cholesky) on "
              f"the materialised features {agreement['sklearn_fit_s']:.1f} s")
        print(f"  coefficients: relative L2 difference {agreement['coef_rel_l2']:.1e}, max "
              f"{agreement['coef_rel_max']:.1e} (target ≤ 1e-8); intercept difference "
              f"{agreement['intercept_diff']:.1e}\n")

    if "kernel-ridge" not in args.skip:
        krr = kernel_ridge_run(args, X_test, y_test)
        results["kernel_ridge"] = krr
        print(f"KernelRidge(solver='nystrom', n_components={args.centres}) on "
              f"{args.krr_rows:,} × {N_FEATURES} float32, tol=1e-3")
        print(f"  {'':26s} {'fit s':>8s} {'CG iter':>8s} {'test RMSE':>10s} "
              f"{'cache GB':>9s} {'peak GB/worker':>15s}")
        for path, run in krr["dask"].items():
            peaks = "/".join(f"{p:.2f}" for p in run["peak_worker_gb"])
            print(f"  {'Dask, 2 workers, ' + path:26s} {run['fit_s']:8.1f} "
                  f"{run['iterations']:8d} {run['rmse']:10.4f} {run['cache_gb']:9.2f} "
                  f"{peaks:>15s}  ({run['path']})")
        print(f"  {'in memory (client)':26s} {krr['memory_fit_s']:8.1f} "
              f"{krr['memory_iterations']:8d} {krr['memory_rmse']:10.4f}")
        ratio = krr["dask"]["recompute"]["fit_s"] / krr["dask"]["cached"]["fit_s"]
        print(f"  recompute / cached = {ratio:.2f}×; test RMSE relative difference "
              f"{krr['rmse_rel_diff']:.2%} (target ≤ 1 %)")

    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2, default=str)


if __name__ == "__main__":
    main()
