"""Kernel SVM and SVR: an explicit feature map + a linear SVM against libsvm's exact SVC / SVR.

The recipe of ``docs/kernel_methods.md``: ``Nystroem`` features and a linear SVM in the primal
(``LinearSVC`` / ``LinearSVR``, liblinear) instead of the kernel SVM's dual (``SVC`` / ``SVR``,
libsvm), side by side as the number of training rows grows.

Data
    ``benchmarks.bench_ridge.make_data``: 20 features uniform on [−1, 1] and the smooth
    non-linear target f(x) = sin(2x₀) + x₁x₂ + cos(x₃+x₄+x₅) + 0.5·tanh(x₆) + 0.1·ε.
    Regression predicts f(x); classification predicts [f(x) > median f] (balanced classes,
    a curved boundary, label noise from ε near it). Training rows from seed 0, 5,000 test
    rows from seed 1.
Models (the same RBF kernel, γ = 0.05, and C = 1 throughout)
    exact: ``SVC(gamma=0.05, C=1, cache_size=1000)``, ``SVR(gamma=0.05, C=1, epsilon=0.1,
    cache_size=1000)``; approximate: ``make_pipeline(Nystroem(gamma=0.05, n_components=500,
    random_state=0), LinearSVC(C=1))`` and the same with ``LinearSVR(C=1, epsilon=0.1)``
    (scikit-learn's defaults otherwise: squared hinge loss for LinearSVC, the
    epsilon-insensitive loss of SVR for LinearSVR).
Measured
    fit wall time (``time.perf_counter``; median of up to 3 repeats, fewer when one fit of
    the model already takes more than 20 s — the count is printed), test accuracy (classes)
    or R² (regression) on the 5,000 test rows, and the predict time of those rows.
Threads
    libsvm runs on one thread, so by default everything does (``--threads 1``: BLAS,
    OpenMP and kernelmaps' row blocks): the comparison is core for core, and immune to
    multi-threaded BLAS spin-waiting on a busy shared machine (which can make a 500 × 500
    eigendecomposition 50× slower). ``--threads 0`` leaves the libraries' defaults.

Run: ``python -m benchmarks kernel_methods [--quick] [--sizes N ...] [--threads T]
[--json PATH]`` (``--quick``: n = 1,000 and 3,000).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, SVR, LinearSVC, LinearSVR
from threadpoolctl import threadpool_limits

from benchmarks._harness import machine_info, machine_lines
from benchmarks.bench_ridge import make_data
from kernelmaps import Nystroem, config_context

GAMMA = 0.05
C = 1.0
EPSILON = 0.1
N_COMPONENTS = 500
N_TEST = 5_000
SIZES = (2_000, 10_000, 50_000)
QUICK_SIZES = (1_000, 3_000)
MAX_REPEATS = 3
#: A model whose first fit takes longer than this is not repeated.
REPEAT_BELOW_SECONDS = 20.0
SEED = 0


@dataclass
class Result:
    """One model on one task at one training size."""

    task: str
    model: str
    n_train: int
    fit_s: float
    fit_times_s: list[float]
    predict_s: float
    score: float


def tasks(n_train: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The regression and classification problems: (X, y, X_test, y_test) each."""
    X, f = make_data(n_train, SEED)
    X_test, f_test = make_data(N_TEST, SEED + 1)
    threshold = float(np.median(f))
    return {
        "classification": (X, (f > threshold).astype(int), X_test,
                           (f_test > threshold).astype(int)),
        "regression": (X, f, X_test, f_test),
    }


def models(task: str) -> dict[str, Callable[[], BaseEstimator]]:
    """Fresh exact and approximate models for a task."""
    def features() -> Nystroem:
        return Nystroem(gamma=GAMMA, n_components=N_COMPONENTS, random_state=SEED)

    if task == "classification":
        return {
            "SVC (exact)": lambda: SVC(gamma=GAMMA, C=C, cache_size=1000),
            f"Nystroem({N_COMPONENTS}) + LinearSVC": lambda: make_pipeline(features(),
                                                                           LinearSVC(C=C)),
        }
    return {
        "SVR (exact)": lambda: SVR(gamma=GAMMA, C=C, epsilon=EPSILON, cache_size=1000),
        f"Nystroem({N_COMPONENTS}) + LinearSVR": lambda: make_pipeline(
            features(), LinearSVR(C=C, epsilon=EPSILON)),
    }


def measure(task: str, name: str, build: Callable[[], BaseEstimator],
            data: tuple[np.ndarray, ...]) -> Result:
    """Fit (repeated while cheap), then score and time the prediction of the test rows."""
    X, y, X_test, y_test = data
    times: list[float] = []
    model = None
    while len(times) < MAX_REPEATS and (not times or times[0] < REPEAT_BELOW_SECONDS):
        model = build()
        start = time.perf_counter()
        with warnings.catch_warnings():
            # liblinear's iteration cap is part of the recipe's cost; report, don't abort
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    predictions = model.predict(X_test)
    predict_s = time.perf_counter() - start
    if task == "classification":
        score = float(np.mean(predictions == y_test))
    else:
        score = float(1.0 - np.sum((y_test - predictions) ** 2)
                      / np.sum((y_test - y_test.mean()) ** 2))
    return Result(task, name, X.shape[0], statistics.median(times), times, predict_s, score)


def format_pair(exact: Result, approx: Result) -> str:
    """One table line: the exact and the approximate model at one size."""
    metric = "acc" if exact.task == "classification" else "R²"
    return (f"{exact.task:14s} {exact.n_train:>7,d}  "
            f"{exact.fit_s:9.2f} {approx.fit_s:9.2f} {exact.fit_s / approx.fit_s:8.1f}x  "
            f"{metric:>3s} {exact.score:7.4f} {approx.score:7.4f}  "
            f"{exact.predict_s:8.2f} {approx.predict_s:8.2f}  "
            f"{len(exact.fit_times_s)}/{len(approx.fit_times_s)}")


HEADER = (f"{'task':14s} {'n train':>7s}  {'exact fit':>9s} {'approx fit':>9s} "
          f"{'speedup':>9s}  {'':3s} {'exact':>7s} {'approx':>7s}  {'exact pr':>8s} "
          f"{'approx pr':>8s}  repeats")


def run(sizes: Sequence[int], threads: int) -> list[Result]:
    """Print the header and one line per task and size; return every measurement."""
    print(machine_lines(machine_info()))
    print(f"problem:    20 features, rbf gamma={GAMMA}, C={C}, SVR epsilon={EPSILON}; "
          f"approximate = Nystroem(n_components={N_COMPONENTS}) + liblinear; "
          f"{N_TEST:,} test rows; threads: {threads or 'library defaults'}")
    print(f"load avg:   {' '.join(f'{x:.2f}' for x in os.getloadavg())} at start (other "
          "processes on the machine distort timings)")
    print("columns:    fit and predict (pr) wall seconds; speedup = exact fit / approx fit; "
          "acc = test accuracy, R² on the test rows; repeats = fits timed (median), "
          "exact/approx\n")
    print(HEADER)
    print("-" * len(HEADER), flush=True)
    results = []
    for n_train in sizes:
        for task, data in tasks(n_train).items():
            exact, approx = (measure(task, name, build, data)
                             for name, build in models(task).items())
            results += [exact, approx]
            print(format_pair(exact, approx), flush=True)
    return results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 1,000 and 3,000 only")
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help=f"training rows (default {' '.join(map(str, SIZES))})")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for BLAS, OpenMP and kernelmaps (default 1, as libsvm; "
                             "0: the libraries' defaults)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    start = time.perf_counter()
    with contextlib.ExitStack() as limits:
        if args.threads:
            limits.enter_context(threadpool_limits(args.threads))
            limits.enter_context(config_context(n_threads=args.threads))
        results = run(sizes, args.threads)
    print(f"\ntotal wall time: {time.perf_counter() - start:.1f} s; load avg "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at end")
    if args.json:
        payload: dict[str, Any] = {"machine": machine_info(),
                                   "results": [asdict(r) for r in results]}
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=2, default=str)


if __name__ == "__main__":
    main()
