"""Streaming and one-pass fits: ``python -m benchmarks stream [options]``.

Every rate is taken in one process and set beside its floor, measured in the same process on
the same shapes, so the ratios stand even on a loaded machine (the load average is printed;
the absolute rows/s are only comparable at equal load).

The in-memory ``FeatureRidge`` cases (``case_feature_ridge_*``) time the one-pass fit of
ridge on D random Fourier features against a bare BLAS ``syrk`` of the same
``(D + 2) × n`` shape — the Gram update that is the fit's floor — per core: ``fit`` and
``partial_fit`` over 10⁴-row batches on one thread, then on every core (the accumulator's
threads each fold their own blocks; the sums are added exactly), float32 input (float32
features, float64 statistics), and ``partial_fit`` against ``fit`` (the relative difference
of ``coef_``, rounding only); with Numba installed, ``fit`` and ``partial_fit`` again with the
float64 cosine compiled (``set_config(jit=True)``).

The peers (:mod:`benchmarks._stream_peers`: ``case_sgd_*``, ``case_river``,
``case_file_*``) follow: scikit-learn's recipe (its ``RBFSampler`` + ``SGDRegressor`` /
``SGDClassifier.partial_fit``, one pass over the same chunks) beside
``FeatureRidge(Classifier).partial_fit`` with rows/s and test R² / accuracy, river's online
``RBFSampler`` where river is installed, and a Parquet file streamed by
:func:`kernelmaps.io.iter_batches` (rows/s, peak RSS). ``--only feature_ridge|peers`` runs one
part.

Options: ``--n-samples N`` (default 100,000; ``--quick``: 20,000), ``--n-features d``
(20), ``--n-components D`` (1,000), ``--batch B`` (10,000), ``--repeats R`` (best of R, 2).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits

import kernelmaps
from benchmarks import _stream_peers
from kernelmaps import RBFSampler
from kernelmaps.models import FeatureRidge

__all__ = ["case_feature_ridge_floor", "case_feature_ridge_rates", "main"]


def _best(fn: Callable[[], Any], repeats: int) -> float:
    """The best wall time of ``repeats`` runs (its CPU time in ``_best.cpu``)."""
    times = []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        times.append((time.perf_counter() - start, time.process_time() - cpu))
    wall, _best.cpu = min(times)
    return wall


def _data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


# ======================================================================= FeatureRidge (stream25)
def case_feature_ridge_floor(n: int, D: int, batch: int, repeats: int) -> float:
    """Seconds of the floor: ``syrk`` rank-``batch`` updates of a (D+2)² Gram over n rows,
    on one BLAS thread (the caller sets the limit)."""
    A = np.asfortranarray(np.random.RandomState(1).normal(size=(D + 2, min(n, batch))))
    syrk = scipy.linalg.get_blas_funcs("syrk", (A,))

    def run() -> None:
        gram = np.zeros((D + 2, D + 2), order="F")
        for start in range(0, n, batch):
            width = min(batch, n - start)
            gram = syrk(1.0, A[:, :width], beta=1.0, c=gram, trans=0, lower=0,
                        overwrite_c=1)

    return _best(run, repeats)


def case_feature_ridge_rates(n: int = 100_000, d: int = 20, D: int = 1000,
                             batch: int = 10_000, repeats: int = 2) -> list[dict[str, Any]]:
    """The rows/s of FeatureRidge's one-pass fit, each with its ratio to the floor.

    Returns
    -------
    list of dict
        One row per path: ``path``, ``threads``, ``rows_per_s``, ``vs_syrk`` (seconds over
        the same-thread-count floor: 1.0 is the floor), ``cpu_vs_syrk`` (the same in
        process CPU time, which a loaded machine's waits do not inflate: the per-core
        figure), ``vs_one_thread`` (wall-time speed-up) and ``cpu_vs_one_thread`` (CPU
        time over the one-thread CPU time: 1.0 means the threads add no work, so the
        speed-up reaches the thread count where the cores are free) where they apply, and
        ``partial_vs_fit`` (max relative difference of ``coef_``) for ``partial_fit``.
    """
    X, y = _data(n, d)
    rbf = RBFSampler(gamma=1.0 / d, n_components=D, random_state=0)
    cores = kernelmaps.get_config()["n_threads"] or os.cpu_count() or 1
    rows: list[dict[str, Any]] = []

    def fit(X_: np.ndarray) -> FeatureRidge:
        return FeatureRidge(rbf, alpha=1e-3).fit(X_, y)

    def partial(X_: np.ndarray) -> FeatureRidge:
        model = FeatureRidge(rbf, alpha=1e-3)
        for start in range(0, n, batch):
            model.partial_fit(X_[start:start + batch], y[start:start + batch])
        model.coef_  # noqa: B018 - the (lazy) solve, as fit does it
        return model

    one: dict[str, float] = {}
    jit = importlib.util.find_spec("numba") is not None
    if jit:
        with kernelmaps.config_context(jit=True):  # Numba's compilation (or its disk
            FeatureRidge(rbf, alpha=1e-3).fit(X[:100], y[:100])  # cache) outside the timings
    for threads in sorted({1, cores}):
        with kernelmaps.config_context(n_threads=threads), threadpool_limits(1):
            floor = case_feature_ridge_floor(n, D, batch, repeats)
            floor_cpu = _best.cpu
            floor /= threads
            transform = _best(lambda: rbf.fit(X[:10]).transform(X), repeats)
            transform_cpu = _best.cpu
            paths = [("syrk (floor, per core × threads)", lambda: None, (floor, floor_cpu)),
                     ("RBFSampler.transform alone", lambda: None, (transform, transform_cpu)),
                     ("FeatureRidge.fit", lambda: fit(X), None),
                     (f"FeatureRidge.partial_fit ({batch:,}-row batches)",
                      lambda: partial(X), None),
                     ("FeatureRidge.fit, float32 X", lambda: fit(X.astype(np.float32)), None)]
            if jit:  # the float64 cosine compiled by Numba (set_config(jit=True))
                paths += [("FeatureRidge.fit, jit=True", lambda: _with_jit(fit, X), None),
                          ("FeatureRidge.partial_fit, jit=True",
                           lambda: _with_jit(partial, X), None)]
            for name, run, measured in paths:
                seconds, cpu = (_best(run, repeats), _best.cpu) if measured is None \
                    else measured
                row = {"path": name, "threads": threads, "rows_per_s": n / seconds,
                       "vs_syrk": seconds / floor, "cpu_vs_syrk": cpu / floor_cpu}
                if threads == 1:
                    one[name] = (seconds, cpu)
                elif name in one:
                    row["vs_one_thread"] = one[name][0] / seconds
                    row["cpu_vs_one_thread"] = cpu / one[name][1]
                rows.append(row)
            coef_fit, coef_partial = fit(X).coef_, partial(X).coef_
            partial_row = next(row for row in reversed(rows)
                               if row["path"].startswith("FeatureRidge.partial_fit ("))
            partial_row["partial_vs_fit"] = float(np.abs(coef_partial - coef_fit).max()
                                                  / np.abs(coef_fit).max())
    return rows


def _with_jit(run: Callable[[np.ndarray], Any], X: np.ndarray) -> Any:
    with kernelmaps.config_context(jit=True):
        return run(X)


def _print_feature_ridge(rows: Sequence[dict[str, Any]]) -> None:
    print(f"{'path':<46} {'threads':>7} {'rows/s':>10} {'× syrk':>7} {'CPU×syrk':>8} "
          f"{'× 1 thr':>8} {'CPU/1thr':>8} {'partial vs fit':>15}")
    for row in rows:
        speedup = f"{row['vs_one_thread']:.2f}" if "vs_one_thread" in row else ""
        cpu_one = f"{row['cpu_vs_one_thread']:.2f}" if "cpu_vs_one_thread" in row else ""
        agree = f"{row['partial_vs_fit']:.1e}" if "partial_vs_fit" in row else ""
        print(f"{row['path']:<46} {row['threads']:>7} {row['rows_per_s']:>10,.0f} "
              f"{row['vs_syrk']:>7.2f} {row['cpu_vs_syrk']:>8.2f} {speedup:>8} "
              f"{cpu_one:>8} {agree:>15}")


# ======================================================================= the command
def main(argv: Sequence[str] | None = None) -> None:
    """``python -m benchmarks stream``: print every case's table with the load."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks stream", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-samples", type=int, default=None)
    parser.add_argument("--n-features", type=int, default=20)
    parser.add_argument("--n-components", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--only", choices=["feature_ridge", "peers"], default=None,
                        help="run one part: FeatureRidge vs syrk, or the peers (the SGD "
                             "recipe, river, a Parquet file: benchmarks._stream_peers)")
    args = parser.parse_args(argv)
    n = args.n_samples or (20_000 if args.quick else 100_000)
    if args.only == "peers":
        _stream_peers.main_tables(n, args.n_components, args.batch, args.quick)
        return
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"FeatureRidge one-pass fit vs BLAS syrk: n={n:,}, d={args.n_features}, "
          f"D={args.n_components}, cores={os.cpu_count()}, load average {load}")
    _print_feature_ridge(case_feature_ridge_rates(n, args.n_features, args.n_components,
                                                  args.batch, args.repeats))
    if args.only is None:  # the SGD recipe, river and the Parquet file
        _stream_peers.main_tables(n, args.n_components, args.batch, args.quick)


if __name__ == "__main__":
    main()
