"""compare's exact baseline beside one Cholesky factorisation of the same kernel matrix.

``python -m benchmarks exact [--sizes 4000,20000] [--repeats R] [--threads T] [--main-job]``

The baseline of ``kernelmaps compare --exact`` (ridge with α chosen per row) is one kernel
matrix, α by exact leave-one-out on m training rows (one m × m eigendecomposition), one
Cholesky factorisation of the n × n matrix in place and the test rows' predictions
(docs/cli.md, "How α is chosen for the exact baseline"). Its floor is the factorisation it
cannot avoid: one LAPACK ``potrf`` of the same n × n matrix, timed in the same process on the
same threads. The table gives both, their ratio, the baseline's phases (from
``compare(on_phase=...)``), the exact score and α, the process's peak RSS against the n × n
matrix's bytes, and the load average — the ratio is the figure to report, the seconds are
only as good as the load beside them.

``--main-job`` runs issue 33's main job instead (:data:`MAIN_JOB`: the baseline beside
``nystroem`` and ``structured`` at D = 250 and 1,000, three seeds — ``kernelmaps compare
--exact --methods nystroem,structured --n-components 250,1000`` without reading the file
and writing the report): its wall seconds, the CPU seconds of this process and of the maps'
runs, and the baseline's phases; ``--sizes 20000`` is the 15,000-training-row case.

Data: ``make_classification`` with 16 features and 26 classes, integer-valued like the UCI
letter set (what issue 24 measured the regression on), 75 % training rows; the Gaussian
kernel with the median-heuristic γ, unscaled, as ``kernelmaps compare`` uses it.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import time
import warnings

import numpy as np
import scipy.linalg
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_limits

import kernelmaps
from kernelmaps.evaluate import main_kernel


def letters(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of 16 integer features in 0…15 and 26 classes (like UCI letter)."""
    X, y = make_classification(n_samples=n, n_features=16, n_informative=12, n_redundant=2,
                               n_classes=26, n_clusters_per_class=1, class_sep=1.5,
                               random_state=seed)
    lo, hi = np.percentile(X, 1, axis=0), np.percentile(X, 99, axis=0)
    return np.clip(np.round((X - lo) / (hi - lo) * 15), 0, 15), y


def _cholesky_seconds(kernel, X_train: np.ndarray, alpha: float) -> float:
    """One ``potrf`` of ``k(X_train, X_train) + αI`` in place (the matrix built outside the
    timing)."""
    K = np.asfortranarray(kernel(X_train))
    K.flat[:: K.shape[0] + 1] += alpha
    start = time.perf_counter()
    scipy.linalg.cholesky(K, lower=True, overwrite_a=True, check_finite=False)
    return time.perf_counter() - start


def run(n: int, threads: int) -> dict[str, float | str]:
    X, y = letters(n)
    kernel, _ = main_kernel("rbf", X)  # the median heuristic, as compare chooses it
    phases: list[tuple[str, float]] = []

    def on_phase(name: str) -> None:
        phases.append((name, time.perf_counter()))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        table = kernelmaps.compare(X, y, kernel=kernel, methods=["rbf_sampler"],
                                   n_components=(25,), n_seeds=1, exact=True,
                                   error_sample=200, n_jobs=threads, on_phase=on_phase)
        whole = time.perf_counter() - start
    exact = table[table["method"] == "exact"].iloc[0]
    baseline = float(exact["fit_time_s"] + exact["model_time_s"] + exact["transform_time_s"])
    n_train = int(exact["n_train"])
    exact_phases = [(name, at) for name, at in phases if name.startswith("exact")]
    split = {name: later - then for (name, then), (_, later)
             in itertools.pairwise(exact_phases)}
    # the last phase (the test rows) runs to the baseline's end: its share of the total
    split[exact_phases[-1][0]] = baseline - sum(split.values())
    with threadpool_limits(limits=threads):
        cholesky = _cholesky_seconds(kernel, X[:n_train], float(exact["alpha"]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"n_train": n_train, "baseline_s": baseline, "cholesky_s": cholesky,
            "ratio": baseline / cholesky, "whole_s": whole, "score": float(exact["score"]),
            "alpha": float(exact["alpha"]), "peak_over_n2": peak / (8.0 * n_train**2),
            "phases": "; ".join(f"{name.removeprefix('exact: ')} {s:.2f} s"
                                for name, s in split.items())}


#: Issue 33's main job: ``kernelmaps compare --exact --methods nystroem,structured
#: --n-components 250,1000`` (three seeds, the command's default): 12 maps' runs beside the
#: baseline.
MAIN_JOB = {"methods": ["nystroem", "structured"], "n_components": (250, 1000), "n_seeds": 3}


def main_job(n: int, threads: int) -> dict[str, float | str]:
    """The main job on ``n`` rows (75 % training) through the Python API as the command
    runs it (reading, plots and report aside): wall seconds, this process's CPU seconds
    (the baseline, the planning, the error sample), the maps' runs' CPU seconds (each run's
    own, from the table: in worker processes when there are several), the baseline's
    phases, and the exact and best map scores."""
    X, y = letters(n)
    kernel, _ = main_kernel("rbf", X)
    phases: list[tuple[str, float]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start, cpu = time.perf_counter(), time.process_time()
        table = kernelmaps.compare(X, y, kernel=kernel, exact=True, n_jobs=threads,
                                   on_phase=lambda name: phases.append(
                                       (name, time.perf_counter())), **MAIN_JOB)
        whole, cpu = time.perf_counter() - start, time.process_time() - cpu
    exact = table[table["method"] == "exact"].iloc[0]
    maps = table[table["method"] != "exact"]
    phases.append(("end", phases[0][1] + float(exact["total_time_s"])))  # the last one's end
    split = {name.removeprefix("exact: "): later - then
             for (name, then), (_, later) in itertools.pairwise(phases)}
    return {"n_train": int(exact["n_train"]), "whole_s": whole, "process_cpu_s": cpu,
            "maps_cpu_s": float(maps["cpu_time_s"].sum()),
            "exact_cpu_s": float(exact["cpu_time_s"]), "exact_score": float(exact["score"]),
            "exact_alpha": float(exact["alpha"]),
            "best_map": float(maps.groupby(["method", "n_components"])["score"].mean().max()),
            "phases": "; ".join(f"{name} {s:.1f} s" for name, s in split.items())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks exact")
    parser.add_argument("--sizes", default="4000,20000",
                        help="rows of the data sets (75 %% train), comma-separated")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="compare's --threads: the baseline's BLAS threads")
    parser.add_argument("--main-job", action="store_true",
                        help="issue 33's main job instead: the baseline and nystroem, "
                             "structured at D = 250, 1000 (3 seeds), whole seconds and CPU")
    args = parser.parse_args(argv)
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"threads {args.threads}")
    if args.main_job:
        print(f"{'n_train':>8} {'wall s':>7} {'CPU here':>9} {'maps CPU':>9} {'exact CPU':>10} "
              f"{'exact':>7} {'alpha':>8} {'best map':>8}  baseline phases (wall)")
        for size in (int(s) for s in args.sizes.split(",")):
            row = main_job(size, args.threads)
            print(f"{row['n_train']:>8} {row['whole_s']:>7.1f} {row['process_cpu_s']:>9.1f} "
                  f"{row['maps_cpu_s']:>9.1f} {row['exact_cpu_s']:>10.1f} "
                  f"{row['exact_score']:>7.4f} {row['exact_alpha']:>8.2g} "
                  f"{row['best_map']:>8.4f}  {row['phases']}")
        print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} at the end")
        return
    print(f"{'n_train':>8} {'baseline s':>11} {'1 Cholesky s':>13} {'ratio':>6} "
          f"{'compare s':>10} {'score':>7} {'alpha':>8} {'peak/n²':>8}  phases")
    for size in (int(s) for s in args.sizes.split(",")):
        row = run(size, args.threads)
        print(f"{row['n_train']:>8} {row['baseline_s']:>11.2f} {row['cholesky_s']:>13.2f} "
              f"{row['ratio']:>6.2f} {row['whole_s']:>10.2f} {row['score']:>7.4f} "
              f"{row['alpha']:>8.2g} {row['peak_over_n2']:>8.2f}  {row['phases']}")
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
