"""Nyström landmarks: uniform vs k-means vs ridge leverage vs Rényi entropy, with numbers.

For each data set, m ∈ {50, 200, 800} and strategy, over 5 seeds (mean ± sd):

error
    relative kernel approximation error ‖K − ZZᵀ‖_F / ‖K‖_F on the training rows, with
    ``Nystroem(landmarks=strategy)`` fitted on them (symmetric basis);
H2
    quadratic Rényi entropy −log(mean k(cᵢ, cⱼ)) of the m landmarks (k-means: of its
    centres), next to the largest entropy of 20 uniformly random m-subsets ("max of 20
    random subsets");
accuracy
    test accuracy of ``RidgeClassifier(alpha=1e-3)`` on the features (the fixed-size
    LS-SVM classifier, eigen basis), overall and on the rarest class/cluster;
select s
    wall-clock time of the landmark selection alone (:func:`kernelmaps.landmarks.select_landmarks`).

Data sets
    * ``mixture``: three Gaussian clusters in d = 10 with sizes 100:10:1 (unit spread,
      centres drawn N(0, 6²)), n = 4,440 training rows and an independent test draw of the
      same size; the label is "inside the cluster's median radius", so the classifier needs
      the kernel and every cluster matters;
    * ``fashion-mnist``: Debian's ``dataset-fashion-mnist`` (``--fashion-mnist DIR`` for any
      directory of MNIST-style IDX files), pixels / 255, 4,000 random training rows and
      2,000 test rows, 10 classes. Skipped, saying so, when it is not installed.
    The RBF kernel's γ is set by the median heuristic
    (:func:`kernelmaps.evaluate.median_heuristic`).

Rényi selection time at scale
    :func:`kernelmaps.landmarks.renyi_entropy_subset` for n = 100,000, m = 1,000 on the
    mixture (d = 10) and on d = 784 Gaussian noise, default ``n_passes=3``: seconds,
    passes' swaps, entropy against the uniform start.

Run: ``python -m benchmarks.bench_landmarks [--quick] [--seeds N] [--threads T] [--json PATH]``.
Timings depend on the machine's load: the header prints the load average at start.
``--threads T`` caps BLAS/OpenMP threads (k-means, leverage solves) for reproducible
timings on a shared machine; the Rényi search runs BLAS single-threaded in any case.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import RidgeClassifier
from threadpoolctl import threadpool_limits

from benchmarks._harness import machine_info, machine_lines
from kernelmaps.cli.data import FASHION_MNIST_DIR, DataError, load_fashion_mnist
from kernelmaps.evaluate import median_heuristic, relative_error
from kernelmaps.kernels import Kernel, get_kernel
from kernelmaps.landmarks import (
    LANDMARK_STRATEGIES,
    quadratic_renyi_entropy,
    renyi_entropy_subset,
    select_landmarks,
    uniform_subset,
)
from kernelmaps.maps.nystroem import Nystroem

SIZES = (50, 200, 800)
QUICK_SIZES = (50, 200)
SEEDS = 5
RANDOM_SUBSETS = 20
MIXTURE_RATIO = (100, 10, 1)
MIXTURE_TRAIN = 4_440
MIXTURE_FEATURES = 10
FMNIST_TRAIN, FMNIST_TEST = 4_000, 2_000
LARGE_N, LARGE_M = 100_000, 1_000
LARGE_FEATURES = (10, 784)
RIDGE_ALPHA = 1e-3


# ---------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Problem:
    """A training/test split with the kernel to approximate."""

    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    kernel: Kernel
    rare_class: int
    note: str


def mixture(n: int, d: int, seed: int, centres: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian clusters with sizes in :data:`MIXTURE_RATIO`: (X, cluster, centres)."""
    rng = np.random.RandomState(seed)
    weights = np.array(MIXTURE_RATIO, dtype=float) / sum(MIXTURE_RATIO)
    sizes = np.floor(weights * n).astype(int)
    sizes[0] += n - sizes.sum()
    if centres is None:
        centres = rng.normal(scale=6.0, size=(len(sizes), d))
    cluster = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(n, d)) + centres[cluster]
    return X, cluster, centres


def mixture_problem(seed: int = 0) -> Problem:
    X, cluster, centres = mixture(MIXTURE_TRAIN, MIXTURE_FEATURES, seed)
    X_test, cluster_test, _ = mixture(MIXTURE_TRAIN, MIXTURE_FEATURES, seed + 1, centres)
    # Label: inside the cluster's median radius (χ² median for unit Gaussians), so the
    # decision boundary is a sphere per cluster: the rare cluster needs landmarks too.
    radius2 = MIXTURE_FEATURES - 2.0 / 3.0

    def label(points, clusters):
        inside = ((points - centres[clusters]) ** 2).sum(axis=1) < radius2
        return 2 * clusters + inside  # class = (cluster, inside)

    gamma = median_heuristic(X, "rbf").value
    return Problem(
        name="mixture", X=X, y=label(X, cluster), X_test=X_test,
        y_test=label(X_test, cluster_test), kernel=get_kernel("rbf", gamma=gamma),
        rare_class=-1,
        note=(f"Gaussian mixture 100:10:1, d={MIXTURE_FEATURES}, n_train={MIXTURE_TRAIN}, "
              f"n_test={MIXTURE_TRAIN}, rbf gamma={gamma:.4g} (median heuristic); label = "
              "(cluster, inside median radius), 6 classes; 'rare acc' = accuracy on the "
              "smallest cluster's test points"),
    )


def fashion_mnist_problem(directory: Path, seed: int = 0) -> Problem | None:
    try:
        data = load_fashion_mnist(directory)
    except DataError as error:
        print(f"Fashion-MNIST: skipped — {error}\n")
        return None
    rng = np.random.RandomState(seed)
    train = rng.choice(data.n_samples, FMNIST_TRAIN, replace=False)
    test = rng.choice(data.X_test.shape[0], FMNIST_TEST, replace=False)
    X, X_test = data.X[train] / 255.0, data.X_test[test] / 255.0
    y, y_test = data.y[train], data.y_test[test]
    gamma = median_heuristic(X, "rbf").value
    counts = np.bincount(y)
    return Problem(
        name="fashion-mnist", X=X, y=y, X_test=X_test, y_test=y_test,
        kernel=get_kernel("rbf", gamma=gamma), rare_class=int(counts.argmin()),
        note=(f"Fashion-MNIST ({data.source}), pixels/255, {FMNIST_TRAIN} random training "
              f"rows, {FMNIST_TEST} test rows, d={X.shape[1]}, rbf gamma={gamma:.4g} (median "
              "heuristic); 'rare acc' = accuracy on the least frequent class in the sample"),
    )


# ---------------------------------------------------------------------------- measuring
@dataclass
class Cell:
    """Measurements of one (data set, m, strategy) over the seeds."""

    dataset: str
    m: int
    strategy: str
    errors: list[float]
    entropies: list[float]
    accuracies: list[float]
    rare_accuracies: list[float]
    select_s: list[float]
    n_features_out: list[int]


def rare_mask(problem: Problem) -> np.ndarray:
    if problem.rare_class >= 0:
        return problem.y_test == problem.rare_class
    return problem.y_test // 2 == len(MIXTURE_RATIO) - 1  # the smallest mixture cluster


def measure(problem: Problem, K: np.ndarray, m: int, strategy: str, seeds: int) -> Cell:
    cell = Cell(problem.name, m, strategy, [], [], [], [], [], [])
    rare = rare_mask(problem)
    for seed in range(seeds):
        start = time.perf_counter()
        points, _ = select_landmarks(strategy, problem.X, problem.kernel, m,
                                     random_state=seed)
        cell.select_s.append(time.perf_counter() - start)
        cell.entropies.append(quadratic_renyi_entropy(points, problem.kernel))
        # Nystroem(landmarks=strategy, random_state=seed) would select these same points
        # again; giving them as an array skips the second selection.
        symmetric = Nystroem(problem.kernel, landmarks=points).fit(problem.X)
        cell.errors.append(relative_error(K, symmetric.transform(problem.X)))
        features = Nystroem(problem.kernel, landmarks=points, basis="eigen").fit(problem.X)
        model = RidgeClassifier(alpha=RIDGE_ALPHA).fit(features.transform(problem.X),
                                                       problem.y)
        predicted = model.predict(features.transform(problem.X_test))
        cell.accuracies.append(float(np.mean(predicted == problem.y_test)))
        cell.rare_accuracies.append(float(np.mean(predicted[rare] == problem.y_test[rare])))
        cell.n_features_out.append(features.n_features_out_)
    return cell


def random_subset_entropy(problem: Problem, m: int) -> float:
    """The largest entropy among :data:`RANDOM_SUBSETS` uniform random m-subsets."""
    return max(quadratic_renyi_entropy(problem.X[uniform_subset(problem.X, m,
                                                                random_state=1000 + s)],
                                       problem.kernel)
               for s in range(RANDOM_SUBSETS))


# ---------------------------------------------------------------------------- output
def mean_sd(values: Sequence[float], digits: int = 4) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.{digits}f} ± {sd:.{digits}f}"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(f"{h:<{w}}" if i < 2 else f"{h:>{w}}"
                     for i, (h, w) in enumerate(zip(headers, widths, strict=True)))
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(f"{c:<{w}}" if i < 2 else f"{c:>{w}}"
                        for i, (c, w) in enumerate(zip(row, widths, strict=True))))


def print_problem(problem: Problem, cells: list[Cell], random_max: dict[int, float]) -> None:
    print(problem.note)
    headers = ["m", "strategy", "error ‖K−ZZᵀ‖F/‖K‖F", "H2 (entropy)", "accuracy",
               "rare acc", "features", "select s"]
    rows = []
    for cell in cells:
        rows.append([str(cell.m), cell.strategy, mean_sd(cell.errors),
                     mean_sd(cell.entropies, 3), mean_sd(cell.accuracies, 3),
                     mean_sd(cell.rare_accuracies, 3),
                     f"{statistics.mean(cell.n_features_out):.0f}",
                     f"{statistics.median(cell.select_s):.3f}"])
        if cell.strategy == LANDMARK_STRATEGIES[-1]:
            rows.append([str(cell.m), f"(max H2 of {RANDOM_SUBSETS} random subsets)", "",
                         f"{random_max[cell.m]:.3f}", "", "", "", ""])
    print_table(headers, rows)
    print()


def print_header(seeds: int, threads: int | None) -> None:
    print(machine_lines())
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load avg:   {load} at start (a shared machine: other processes distort the "
          "selection times)")
    print(f"settings:   seeds 0..{seeds - 1} per cell (mean ± sd), RidgeClassifier(alpha="
          f"{RIDGE_ALPHA}) on eigen-basis features of the same landmarks; BLAS/OpenMP "
          f"threads: {threads or 'library default'}\n")


# ---------------------------------------------------------------------------- scale
@dataclass
class ScaleRow:
    data: str
    n: int
    m: int
    seconds: float
    entropy_start: float
    entropy_renyi: float


def entropy_of(X: np.ndarray, idx: np.ndarray, kernel: Kernel) -> float:
    return quadratic_renyi_entropy(X[idx], kernel)


def renyi_at_scale(d: int, n: int, m: int) -> ScaleRow:
    if d == MIXTURE_FEATURES:
        X, _, _ = mixture(n, d, seed=0)
        data = f"mixture 100:10:1, d={d}"
    else:
        X = np.random.RandomState(0).normal(size=(n, d))
        data = f"Gaussian noise, d={d}"
    gamma = median_heuristic(X, "rbf").value
    kernel = get_kernel("rbf", gamma=gamma)
    start = time.perf_counter()
    chosen = renyi_entropy_subset(X, kernel, m, random_state=0)
    seconds = time.perf_counter() - start
    return ScaleRow(data=f"{data}, gamma={gamma:.3g}", n=n, m=m, seconds=seconds,
                    entropy_start=entropy_of(X, uniform_subset(X, m, random_state=0), kernel),
                    entropy_renyi=entropy_of(X, chosen, kernel))


# ---------------------------------------------------------------------------- driver
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="m in {50, 200}, 2 seeds, n=20,000 for the scale run")
    parser.add_argument("--seeds", type=int, default=None, help=f"default {SEEDS}")
    parser.add_argument("--fashion-mnist", type=Path, default=FASHION_MNIST_DIR,
                        help="directory of MNIST-style IDX files "
                             f"(default {FASHION_MNIST_DIR})")
    parser.add_argument("--skip-scale", action="store_true",
                        help="skip the n=100,000 Rényi timing")
    parser.add_argument("--threads", type=int, default=None,
                        help="cap BLAS/OpenMP threads (default: the libraries' own)")
    parser.add_argument("--json", metavar="PATH", default=None, help="also write JSON")
    args = parser.parse_args(argv)
    with threadpool_limits(args.threads):
        run(args)


def run(args: argparse.Namespace) -> None:
    seeds = args.seeds or (2 if args.quick else SEEDS)
    sizes = QUICK_SIZES if args.quick else SIZES
    print_header(seeds, args.threads)

    problems = [mixture_problem()]
    fmnist = fashion_mnist_problem(args.fashion_mnist)
    if fmnist is not None:
        problems.append(fmnist)
    cells: list[Cell] = []
    for problem in problems:
        K = problem.kernel(problem.X)
        random_max = {m: random_subset_entropy(problem, m) for m in sizes}
        problem_cells = [measure(problem, K, m, strategy, seeds)
                         for m in sizes for strategy in LANDMARK_STRATEGIES]
        print_problem(problem, problem_cells, random_max)
        cells += problem_cells

    scale_rows: list[ScaleRow] = []
    if not args.skip_scale:
        n = 20_000 if args.quick else LARGE_N
        print(f"Rényi selection time, n={n}, m={LARGE_M}, n_passes=3 (default):")
        for d in LARGE_FEATURES:
            row = renyi_at_scale(d, n, LARGE_M)
            scale_rows.append(row)
            print(f"  {row.data}: {row.seconds:.1f} s; H2 uniform start "
                  f"{row.entropy_start:.4f} -> Rényi {row.entropy_renyi:.4f}", flush=True)
    if args.json:
        payload: dict[str, Any] = {"machine": machine_info(), "cells": [asdict(c) for c in cells],
                                   "scale": [asdict(r) for r in scale_rows]}
        with open(args.json, "w") as handle:
            json.dump(payload, handle, indent=2, default=str)
        print(f"written to {args.json}")


if __name__ == "__main__":
    main()
