"""Kernel ridge regression at scale: Nyström + FALKON-preconditioned CG vs exact solvers.

Data: a smooth non-linear regression target in 20 dimensions plus Gaussian noise,

    y = sin(2 x₀) + x₁·x₂ + cos(x₃ + x₄ + x₅) + 0.5·tanh(x₆) + 0.1·ε,   x ~ U[−1, 1]²⁰,

1,000,000 training rows (float32: the kernel blocks are computed in single precision, the
small M×M systems in float64) and 20,000 separate test rows.

Part 1 (scale): ``KernelRidge(solver="nystrom", n_components=2000)`` fitted on the 1M rows
in a fresh subprocess; reported: wall time of ``fit``, CG iterations, test RMSE, and the
process's peak resident memory (``ru_maxrss``: everything, including Python, NumPy and the
data itself) and peak memory above the data (peak RSS minus RSS after the data exists).

Part 2 (accuracy and speed on a 20,000-row subset, same process for all three): test RMSE of
``kernelmaps`` exact and Nyström solvers and of ``sklearn.kernel_ridge.KernelRidge`` (float64),
and their fit times; the Nyström RMSE should be within 2 % of the exact one and its fit
≥ 10× faster than scikit-learn's.

    python -m benchmarks.bench_ridge            # full (several minutes)
    python -m benchmarks.bench_ridge --quick    # 100k rows / 5k subset smoke run
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
from sklearn.kernel_ridge import KernelRidge as SklearnKernelRidge

from benchmarks._harness import machine_info, machine_lines
from kernelmaps.models import KernelRidge

N_FEATURES = 20
GAMMA = 0.05
LAMBDA = 1e-6  # alpha = LAMBDA * n_samples: the same regularisation per sample at every n
NOISE = 0.1
SEED = 0


def make_data(n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The synthetic regression problem (float64 X and y)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n_samples, N_FEATURES))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + np.cos(X[:, 3] + X[:, 4] + X[:, 5])
         + 0.5 * np.tanh(X[:, 6]) + NOISE * rng.normal(size=n_samples))
    return X, y


def rmse(model, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def scale_run(n_samples: int, n_components: int) -> dict:
    """Part 1, meant to run in its own process so ru_maxrss is this fit's peak."""
    X, y = make_data(n_samples, SEED)
    X = X.astype(np.float32)
    X_test, y_test = make_data(20_000, SEED + 1)
    rss_with_data = _rss_mb()
    model = KernelRidge(kernel="rbf", gamma=GAMMA, alpha=LAMBDA * n_samples,
                        solver="nystrom", n_components=n_components, tol=1e-3,
                        random_state=SEED)
    start = time.perf_counter()
    model.fit(X, y)
    fit_seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"n_samples": n_samples, "n_components": n_components, "fit_s": fit_seconds,
            "cg_iterations": model.n_iter_,
            "test_rmse": rmse(model, X_test.astype(np.float32), y_test),
            "peak_rss_mb": peak_mb, "rss_with_data_mb": rss_with_data,
            "peak_above_data_mb": peak_mb - rss_with_data}


def subset_run(n_subset: int, n_components: int) -> list[dict]:
    """Part 2: exact vs Nyström vs scikit-learn on the same subset, in this process."""
    X, y = make_data(n_subset, SEED)
    X_test, y_test = make_data(20_000, SEED + 1)
    alpha = LAMBDA * n_subset
    rows = []
    models = {
        "sklearn KernelRidge (exact, float64)": SklearnKernelRidge(kernel="rbf", gamma=GAMMA,
                                                                   alpha=alpha),
        "kernelmaps exact (float64)": KernelRidge(kernel="rbf", gamma=GAMMA, alpha=alpha,
                                                  solver="exact"),
        f"kernelmaps nystrom M={n_components} (float32)": KernelRidge(
            kernel="rbf", gamma=GAMMA, alpha=alpha, solver="nystrom",
            n_components=n_components, tol=1e-3, random_state=SEED),
    }
    for name, model in models.items():
        data = X.astype(np.float32) if "float32" in name else X
        test = X_test.astype(np.float32) if "float32" in name else X_test
        start = time.perf_counter()
        model.fit(data, y)
        seconds = time.perf_counter() - start
        rows.append({"model": name, "fit_s": seconds, "test_rmse": rmse(model, test, y_test)})
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k rows, 5k subset")
    parser.add_argument("--n-samples", type=int, default=1_000_000)
    parser.add_argument("--n-subset", type=int, default=20_000)
    parser.add_argument("--n-components", type=int, default=2000)
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--scale-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.n_samples, args.n_subset, args.n_components = 100_000, 5_000, 500
    if args.scale_only:  # the child process of part 1
        print(json.dumps(scale_run(args.n_samples, args.n_components)))
        return

    info = machine_info()
    print(machine_lines(info))
    print(f"problem: {N_FEATURES} features, rbf gamma={GAMMA}, alpha={LAMBDA:g}·n, "
          f"noise sd {NOISE} (the best possible test RMSE is ≈ {NOISE})\n")
    child = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_ridge", "--scale-only",
         "--n-samples", str(args.n_samples), "--n-components", str(args.n_components)],
        capture_output=True, text=True, check=True)
    scale = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"Part 1 — KernelRidge(solver='nystrom', n_components={scale['n_components']}) on "
          f"{scale['n_samples']:,} × {N_FEATURES} (float32):")
    print(f"  fit {scale['fit_s']:.1f} s, {scale['cg_iterations']} CG iterations, test RMSE "
          f"{scale['test_rmse']:.4f}, peak RSS {scale['peak_rss_mb']:.0f} MB "
          f"({scale['peak_above_data_mb']:.0f} MB above the {scale['rss_with_data_mb']:.0f} MB "
          "process with its data)\n")
    rows = subset_run(args.n_subset, args.n_components)
    print(f"Part 2 — {args.n_subset:,}-row subset, 20,000 test rows:")
    print(f"  {'model':44s} {'fit s':>8s} {'test RMSE':>10s}")
    for row in rows:
        print(f"  {row['model']:44s} {row['fit_s']:8.2f} {row['test_rmse']:10.4f}")
    sk, exact, nys = rows
    print(f"\n  Nyström RMSE / exact RMSE = {nys['test_rmse'] / exact['test_rmse']:.4f} "
          f"(target ≤ 1.02); sklearn fit time / Nyström fit time = "
          f"{sk['fit_s'] / nys['fit_s']:.1f}× (target ≥ 10×)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": info, "scale": scale, "subset": rows}, fh, indent=2,
                      default=str)


if __name__ == "__main__":
    main()
