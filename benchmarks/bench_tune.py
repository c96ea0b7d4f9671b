"""``kernelmaps.tune`` against ``GridSearchCV`` and ``HalvingGridSearchCV`` over the same space.

For each data set, one train/test split (stratified for classes, seed 0) and one model:
``Pipeline([Nystroem(rbf, n_components=D, random_state=0), Ridge or RidgeClassifier])``.
The space is the issue's: γ = median heuristic × 2^[−3..3] (7 values) and
α = 10^[−4..1] (6 values).

* ``GridSearchCV``: the 42 pairs, 3-fold (stratified for classes), refit on the training rows;
* ``HalvingGridSearchCV``: the same grid, 3-fold, ``factor=3``, resource = training rows;
* ``tune``: γ searched in the same interval (1-D, log scale), α closed-form by exact
  leave-one-out over the same 6 values, the same map and D (``n_components=D``), all training
  rows (``search_rows`` ≥ n_train), ``random_state=0``.

Reported per data set: test score (accuracy or R²) of each, wall time (median of the
repeats, run interleaved: tune, grid, halving, tune, …), tune's time as a fraction of the
grid's, and whether the targets hold: tune's test score ≥ the grid's − 0.005, and tune's
time ≤ ⅕ of the grid's. Every estimator runs with the same BLAS threads (``--threads``,
default: the library's own). The load average is printed with the table.

Data sets: digits (1,797 × 64, bundled with scikit-learn), Fashion-MNIST (Debian's
``dataset-fashion-mnist``, pixels / 255, a stratified subsample of the 60,000 training
images: 6,000 train + 2,000 test rows by default), diabetes (442 × 10, bundled) and
Friedman #1 (``sklearn.datasets.make_friedman1``: generated, 4,000 × 10, noise 1.0).
California housing is not bundled offline, hence the generated set.

    python -m benchmarks tune            # full size (tens of minutes on 2 cores)
    python -m benchmarks tune --quick    # smaller D and Fashion-MNIST sample: a few minutes
    python -m benchmarks tune --large    # tune's defaults on all 60,000 Fashion-MNIST images

``--large`` is the large-data check of issue 34: ``tune`` with its defaults (D chosen) on
Fashion-MNIST's 60,000 training images must reach test accuracy >= 0.88 on the 10,000 t10k
images in <= 120 s wall on a quiet 2-core machine and <= 4 GB; it prints the wall and CPU
seconds, the peak resident memory and the load average, so a busy machine can be read.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sklearn.datasets import load_diabetes, load_digits, make_friedman1
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.model_selection import (
    GridSearchCV,
    HalvingGridSearchCV,
    KFold,
    StratifiedKFold,
    train_test_split,
)
from sklearn.pipeline import Pipeline
from threadpoolctl import threadpool_limits

from benchmarks._harness import machine_info, machine_lines
from kernelmaps import Nystroem
from kernelmaps.cli.data import FASHION_MNIST_DIR, load_fashion_mnist
from kernelmaps.evaluate import median_heuristic
from kernelmaps.kernels import get_kernel
from kernelmaps.tuning import tune

SEED = 0
GAMMA_OCTAVES = np.arange(-3, 4)          # median heuristic × 2^[−3..3]
ALPHAS = 10.0 ** np.arange(-4, 2)         # 10^[−4..1]
SCORE_SLACK = 0.005
TIME_FRACTION = 0.2


@dataclass(frozen=True)
class Problem:
    name: str
    task: str
    n_components: int
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    source: str


def _split(name: str, X: np.ndarray, y: np.ndarray, task: str, D: int, source: str,
           test_size: Any = 0.25) -> Problem:
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, random_state=SEED,
        stratify=y if task == "classification" else None)
    return Problem(name, task, D, X_train, y_train, X_test, y_test, source)


def problems(quick: bool, fashion_dir: str, fashion_rows: int | None) -> list[Problem]:
    out = []
    X, y = load_digits(return_X_y=True)
    out.append(_split("digits", X, y, "classification", 300 if quick else 500,
                      "scikit-learn bundled, 1797 x 64"))
    try:
        data = load_fashion_mnist(fashion_dir)
        n_train = fashion_rows or (2000 if quick else 6000)
        n_test = max(500, n_train // 3)
        keep, _ = train_test_split(np.arange(data.X.shape[0]), train_size=n_train + n_test,
                                   stratify=data.y, random_state=SEED)
        out.append(_split("fashion-mnist", data.X[keep] / 255.0, data.y[keep],
                          "classification", 500 if quick else 1000,
                          f"Debian dataset-fashion-mnist, {n_train}+{n_test} of the 60000 "
                          "training images, pixels/255", test_size=n_test))
    except ValueError as error:  # DataError: not installed
        print(f"fashion-mnist skipped: {error}")
    X, y = load_diabetes(return_X_y=True)
    out.append(_split("diabetes", X, y, "regression", 100,
                      "scikit-learn bundled, 442 x 10"))
    X, y = make_friedman1(n_samples=2000 if quick else 4000, n_features=10, noise=1.0,
                          random_state=SEED)
    out.append(_split("friedman1", X, y, "regression", 300 if quick else 500,
                      f"generated: make_friedman1({X.shape[0]} x 10, noise=1)"))
    return out


def _pipeline(problem: Problem, gamma: float) -> Pipeline:
    model = RidgeClassifier() if problem.task == "classification" else Ridge()
    return Pipeline([("map", Nystroem(kernel=get_kernel("rbf", gamma=gamma),
                                      n_components=problem.n_components, random_state=SEED)),
                     ("model", model)])


def _grid(problem: Problem) -> tuple[list[float], dict[str, list[float]]]:
    centre = median_heuristic(problem.X_train, "rbf", random_state=SEED).value
    gammas = [float(centre * 2.0**k) for k in GAMMA_OCTAVES]
    return gammas, {"map__kernel__gamma": gammas, "model__alpha": [float(a) for a in ALPHAS]}


def _folds(problem: Problem) -> Any:
    splitter = StratifiedKFold if problem.task == "classification" else KFold
    return splitter(n_splits=3, shuffle=True, random_state=SEED)


def run_grid(problem: Problem, halving: bool) -> tuple[float, dict[str, Any]]:
    gammas, grid = _grid(problem)
    kind = HalvingGridSearchCV if halving else GridSearchCV
    extra = {"factor": 3, "random_state": SEED} if halving else {}
    search = kind(_pipeline(problem, gammas[0]), grid, cv=_folds(problem), n_jobs=1, **extra)
    if halving:
        # The smallest resource must leave the Nyström landmarks enough rows in each fold.
        search.set_params(min_resources=max(3 * problem.n_components // 2 + 30, 60))
    search.fit(problem.X_train, problem.y_train)
    best = search.best_params_
    return float(search.score(problem.X_test, problem.y_test)), {
        "gamma": best["map__kernel__gamma"], "alpha": best["model__alpha"]}


def run_tune(problem: Problem) -> tuple[float, dict[str, Any]]:
    gammas, _ = _grid(problem)
    result = tune(problem.X_train, problem.y_train, n_components=problem.n_components,
                  alphas=ALPHAS, gamma_bounds=(gammas[0], gammas[-1]), task=problem.task,
                  search_rows=max(5000, problem.X_train.shape[0]), random_state=SEED)
    return float(result.estimator.score(problem.X_test, problem.y_test)), {
        "gamma": result.params["gamma"], "alpha": result.params["alpha"],
        "configurations": len(result.trials)}


@dataclass
class Row:
    data: str
    task: str
    n_train: int
    n_features: int
    n_components: int
    tune_score: float
    grid_score: float
    halving_score: float
    tune_s: float
    grid_s: float
    halving_s: float
    time_fraction: float
    score_target: bool
    time_target: bool
    tune_params: dict[str, Any]
    grid_params: dict[str, Any]
    halving_params: dict[str, Any]


def _timed(fn: Callable[[], tuple[float, dict[str, Any]]]) -> tuple[float, dict, float]:
    start = time.perf_counter()
    score, params = fn()
    return score, params, time.perf_counter() - start


def bench(problem: Problem, repeats: int) -> Row:
    runs: dict[str, list[tuple[float, dict, float]]] = {"tune": [], "grid": [], "halving": []}
    for _ in range(repeats):  # interleaved, so machine noise hits all three alike
        runs["tune"].append(_timed(lambda: run_tune(problem)))
        runs["grid"].append(_timed(lambda: run_grid(problem, halving=False)))
        runs["halving"].append(_timed(lambda: run_grid(problem, halving=True)))
    score = {k: v[0][0] for k, v in runs.items()}   # deterministic: the same every repeat
    seconds = {k: statistics.median(r[2] for r in v) for k, v in runs.items()}
    return Row(problem.name, problem.task, problem.X_train.shape[0], problem.X_train.shape[1],
               problem.n_components, score["tune"], score["grid"], score["halving"],
               seconds["tune"], seconds["grid"], seconds["halving"],
               seconds["tune"] / seconds["grid"],
               score["tune"] >= score["grid"] - SCORE_SLACK,
               seconds["tune"] <= TIME_FRACTION * seconds["grid"],
               runs["tune"][0][1], runs["grid"][0][1], runs["halving"][0][1])


def _table(rows: list[Row]) -> str:
    header = (f"{'data':<14}{'task':<7}{'n':>6}{'d':>5}{'D':>6} | {'score: tune':>11}"
              f"{'grid':>8}{'halving':>9} | {'time s: tune':>12}{'grid':>8}{'halving':>9}"
              f"{'tune/grid':>11} | targets")
    lines = [header, "-" * len(header)]
    for r in rows:
        targets = ("score " + ("ok" if r.score_target else "MISSED") + ", time "
                   + ("ok" if r.time_target else "MISSED"))
        lines.append(
            f"{r.data:<14}{r.task[:5]:<7}{r.n_train:>6}{r.n_features:>5}{r.n_components:>6} | "
            f"{r.tune_score:>11.4f}{r.grid_score:>8.4f}{r.halving_score:>9.4f} | "
            f"{r.tune_s:>12.2f}{r.grid_s:>8.2f}{r.halving_s:>9.2f}{r.time_fraction:>11.3f} | "
            f"{targets}")
    return "\n".join(lines)


#: The large-data target of the Fashion-MNIST run (issue 34): test accuracy on the 10,000
#: t10k images, wall seconds on a quiet 2-core machine, peak memory.
LARGE_SCORE = 0.88
LARGE_SECONDS = 120.0
LARGE_GB = 4.0


def large(fashion_dir: str, rows: int | None, search_rows: int, threads: int | None) -> dict:
    """``tune`` on Fashion-MNIST's training images (all 60,000, or the first ``rows`` of a
    stratified subsample) with the defaults ``kernelmaps tune --data fashion-mnist`` uses,
    scored on the 10,000 t10k images: wall and CPU seconds (this process and its children,
    ``resource.getrusage``), peak resident memory of the process (``ru_maxrss``, the data
    included) and the load average."""
    import resource

    data = load_fashion_mnist(fashion_dir)
    X, y = data.X, data.y
    if rows is not None and rows < X.shape[0]:
        keep, _ = train_test_split(np.arange(X.shape[0]), train_size=rows, stratify=y,
                                   random_state=SEED)
        X, y = X[np.sort(keep)], y[np.sort(keep)]
    before = [resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                  resource.RUSAGE_CHILDREN)]
    load_before = os.getloadavg()
    limits = threadpool_limits(threads) if threads else None
    started = time.perf_counter()

    def progress(trial: Any, done: float) -> None:
        print(f"  {time.perf_counter() - started:7.1f} s  {trial.stage:<13}"
              f"D={trial.n_components:<6}rows={trial.n_rows:<7}score={trial.score:.4f} "
              f"({trial.time_s:.1f} s)",
              flush=True)

    try:
        result = tune(X, y, random_state=SEED, search_rows=search_rows, progress=progress)
    finally:
        if limits is not None:
            limits.unregister()
    wall = time.perf_counter() - started
    after = [resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                 resource.RUSAGE_CHILDREN)]
    cpu = sum(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime
              for a, b in zip(after, before, strict=True))
    test = float(result.estimator.score(data.X_test, data.y_test))
    peak_gb = max(a.ru_maxrss for a in after) * 1024 / 1e9  # Linux: kilobytes
    return {"rows": int(X.shape[0]), "search_rows": search_rows, "params": result.params,
            "stopped": result.stopped, "validation": result.score, "test": test,
            "wall_s": wall, "cpu_s": cpu, "peak_gb": peak_gb,
            "load_before": [round(v, 2) for v in load_before],
            "load_after": [round(v, 2) for v in os.getloadavg()], "notes": result.notes,
            "trials": [(t.stage, t.n_components, t.n_rows, round(t.score, 4),
                        round(t.time_s, 1)) for t in result.trials],
            "targets": {"score": test >= LARGE_SCORE, "wall": wall <= LARGE_SECONDS,
                        "memory": peak_gb <= LARGE_GB}}


def _print_large(row: dict) -> None:
    print(f"fashion-mnist {row['rows']} rows (search rows {row['search_rows']}): "
          f"D = {row['params']['n_components']}, gamma = {row['params']['gamma']:.4g}, "
          f"alpha = {row['params']['alpha']:.3g}, stopped: {row['stopped']}")
    for stage, d, n, score, seconds in row["trials"]:
        print(f"  {stage:<13}D={d:<6}rows={n:<7}score={score:.4f}  {seconds:.1f} s")
    t = row["targets"]
    print(f"test accuracy {row['test']:.4f} (target >= {LARGE_SCORE}: "
          f"{'ok' if t['score'] else 'MISSED'}); wall {row['wall_s']:.1f} s (target <= "
          f"{LARGE_SECONDS:.0f} s on a quiet 2-core machine: "
          f"{'ok' if t['wall'] else 'MISSED here'}), CPU {row['cpu_s']:.1f} s; peak RSS "
          f"{row['peak_gb']:.2f} GB (target <= {LARGE_GB:.0f}: "
          f"{'ok' if t['memory'] else 'MISSED'}); load average before {row['load_before']}, "
          f"after {row['load_after']}")
    for note in row["notes"]:
        print(f"note: {note}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks tune", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smaller D and Fashion-MNIST sample, one repeat")
    parser.add_argument("--repeats", type=int, default=None,
                        help="interleaved repeats per data set (default: 3, --quick: 1)")
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS threads for every estimator (default: the library's)")
    parser.add_argument("--data", action="append", default=None,
                        help="only these data sets (digits, fashion-mnist, diabetes, "
                             "friedman1; repeatable)")
    parser.add_argument("--fashion-mnist", default=str(FASHION_MNIST_DIR), metavar="DIR",
                        help="a directory of Fashion-MNIST IDX files "
                             f"(default: {FASHION_MNIST_DIR})")
    parser.add_argument("--fashion-rows", type=int, default=None,
                        help="Fashion-MNIST training rows (default: 6000, --quick: 2000)")
    parser.add_argument("--json", default=None, metavar="PATH", help="write the rows as JSON")
    parser.add_argument("--large", action="store_true",
                        help="only the large-data run: tune's defaults on Fashion-MNIST's "
                             "60,000 training images (or --fashion-rows of them), tested on "
                             "the 10,000 t10k images, against the issue-34 targets")
    parser.add_argument("--search-rows", type=int, default=5000,
                        help="tune's search_rows in the --large run (default 5000)")
    args = parser.parse_args(argv)
    if args.large:
        print(machine_lines())
        row = large(args.fashion_mnist, args.fashion_rows, args.search_rows, args.threads)
        _print_large(row)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"machine": machine_info(), "large": row}, fh, indent=2,
                          default=str)
        return
    repeats = args.repeats or (1 if args.quick else 3)
    chosen = problems(args.quick, args.fashion_mnist, args.fashion_rows)
    if args.data:
        chosen = [p for p in chosen if p.name in args.data]
    print(machine_lines())
    print(f"threads: {args.threads or 'library default'}; repeats: {repeats}; "
          f"grid: gamma = median heuristic x 2^[-3..3], alpha = 10^[-4..1], 3-fold")
    for p in chosen:
        print(f"  {p.name}: {p.source}; test rows {p.X_test.shape[0]}")
    rows = []
    limits = threadpool_limits(args.threads) if args.threads else None
    try:
        for problem in chosen:
            rows.append(bench(problem, repeats))
            print(f"done {problem.name} (load average {os.getloadavg()[0]:.2f})", flush=True)
    finally:
        if limits is not None:
            limits.unregister()
    print()
    print(_table(rows))
    print(f"load average (1, 5, 15 min): {tuple(round(v, 2) for v in os.getloadavg())}")
    for r in rows:
        print(f"{r.data}: tune {r.tune_params}; grid {r.grid_params}; "
              f"halving {r.halving_params}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": machine_info(), "repeats": repeats, "threads": args.threads,
                       "rows": [asdict(r) for r in rows]}, fh, indent=2, default=str)


if __name__ == "__main__":
    main()
