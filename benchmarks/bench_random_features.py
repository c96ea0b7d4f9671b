"""Random features beyond scikit-learn: approximation error, transform speed, Fastfood.

Three sections (``--section error|time|fastfood|all``, default ``all``):

error
    Relative Frobenius error ``‖K − ZZᵀ‖_F / ‖K‖_F`` of :class:`RandomFourierFeatures`
    (mean ± standard deviation over 10 seeds) for every structure × output at
    D ∈ {d, 4d, 16d}, on standardised Fashion-MNIST rows (Debian's
    ``dataset-fashion-mnist``; ``--fashion-mnist DIR`` for any directory of MNIST-style IDX
    files; scikit-learn's digits when it is missing, saying so) and on a synthetic Gaussian
    set, for the Gaussian kernel with γ = 1 / median squared distance. When d is not a power
    of two the D grid is taken on d_pad = 2^⌈log₂ d⌉ instead, so that every structure has
    exactly the same D (the Hadamard structures round D up to whole blocks of d_pad; with
    cos/sin pairs they need D ≥ 2·d_pad, so that cell reads "n/a"). A second table gives
    the other spectral densities (Matérn 3/2, Student, Laplacian) at D = 4d on the
    synthetic set.
time
    Wall-clock ``transform`` time at n = 16,384, d = 1,024, D = 8,192 (``--quick``: n =
    2,048): scikit-learn's ``RBFSampler`` (dense iid, the reference) and kernelmaps' maps in
    the same process, float64 and float32, fitted once beforehand; repeats interleaved, the
    median reported (see :func:`benchmarks._harness.time_call`). Also the fit time, the
    bytes of fitted parameters and the output dtype.
fastfood
    scikit-learn-extra's ``Fastfood`` against kernelmaps' ``structure="fastfood"`` at equal
    output dimension, for both of its modes (``"accuracy"`` = cos/sin pairs, ``"mem"`` =
    cos with offset): transform time, output dtype for float32 input, and approximation
    error. scikit-learn-extra is not a dependency (its wheels need NumPy < 2): run this
    section from a separate virtual environment that has it and kernelmaps installed;
    without it the section prints the import error.

Run: ``python -m benchmarks.bench_random_features [--quick] [--section S]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import load_digits
from sklearn.kernel_approximation import RBFSampler as SklearnRBFSampler
from sklearn.preprocessing import StandardScaler

import kernelmaps
from benchmarks._harness import machine_lines, time_call
from kernelmaps.cli.data import FASHION_MNIST_DIR, DataError, load_fashion_mnist
from kernelmaps.evaluate import relative_error
from kernelmaps.kernels import Kernel, get_kernel
from kernelmaps.maps._structured import is_power_of_two, next_power_of_two
from kernelmaps.maps.fourier import RandomFourierFeatures

STRUCTURES = ("iid", "orthogonal", "structured", "fastfood")
OUTPUTS = ("cos_offset", "cos_sin")
SEEDS = 10
ERROR_ROWS = 500
SYNTHETIC_FEATURES = 128
TIME_SHAPE = (16_384, 1_024, 8_192)  # n, d, D
QUICK_TIME_ROWS = 2_048
REPEATS = 3
MB = 1e6


# ---------------------------------------------------------------------------- output
def print_header() -> None:
    print(machine_lines())
    print(f"load avg:   {load_average()} at start (the machine may be shared: other "
          "processes distort timings)\n")


def load_average() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(f"{h:<{w}}" if i == 0 else f"{h:>{w}}"
                     for i, (h, w) in enumerate(zip(headers, widths, strict=True)))
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(f"{c:<{w}}" if i == 0 else f"{c:>{w}}"
                        for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    print()


# ---------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Rows:
    """A sample of standardised rows and where it came from."""

    name: str
    X: np.ndarray


def fashion_mnist_rows(directory: Path, n_rows: int, seed: int) -> Rows | None:
    """``n_rows`` random training images, standardised with the whole training set."""
    try:
        data = load_fashion_mnist(directory)
    except DataError as error:
        print(f"Fashion-MNIST unavailable: {error}\n")
        return None
    X = StandardScaler().fit_transform(np.asarray(data.X, dtype=np.float64))
    rows = np.random.RandomState(seed).choice(X.shape[0], n_rows, replace=False)
    return Rows(f"Fashion-MNIST (standardised, {n_rows} random rows of 60,000, "
                f"d={X.shape[1]})", X[rows])


def digits_rows() -> Rows:
    X = StandardScaler().fit_transform(load_digits().data)
    return Rows(f"scikit-learn digits (standardised, {X.shape[0]} rows, d={X.shape[1]})", X)


def synthetic_rows(n_rows: int, d: int, seed: int) -> Rows:
    X = np.random.RandomState(seed).normal(size=(n_rows, d))
    return Rows(f"synthetic N(0, I) ({n_rows} rows, d={d})", X)


def median_gamma(X: np.ndarray) -> float:
    """γ = 1 / median squared distance (the median heuristic)."""
    sq = np.einsum("ij,ij->i", X, X)
    distances = sq[:, None] + sq[None, :] - 2.0 * X @ X.T
    return float(1.0 / np.median(distances[np.triu_indices_from(distances, k=1)]))


# ---------------------------------------------------------------------------- error
def error_grid(n_features: int) -> tuple[list[int], str]:
    """D ∈ {d, 4d, 16d}, on d_pad when d is not a power of two (equal D for all)."""
    base = n_features if is_power_of_two(n_features) else next_power_of_two(n_features)
    note = "" if base == n_features else (
        f" (d={n_features} is not a power of two: D on d_pad={base} so that the Hadamard "
        "structures need no rounding and every row has the same D)")
    return [base, 4 * base, 16 * base], note


def error_cell(kernel: Kernel, X: np.ndarray, K: np.ndarray, D: int, structure: str,
               output: str, seeds: int, *, with_std: bool) -> str:
    """Mean (± std) error over the seeds; comparisons are at equal D only, so a map whose
    documented rounding changes D (read from n_features_out_) is reported, not measured."""
    errors = []
    for seed in range(seeds):
        rff = RandomFourierFeatures(kernel, n_components=D, structure=structure, output=output,
                                    random_state=seed)
        Z = rff.fit_transform(X)
        if rff.n_features_out_ != D:
            return f"n/a (D rounds to {rff.n_features_out_})"
        errors.append(relative_error(K, Z))
    mean, std = statistics.mean(errors), statistics.stdev(errors) if seeds > 1 else 0.0
    return f"{mean:.4f} ± {std:.4f}" if with_std else f"{mean:.4f}"


def gaussian_error_table(rows: Rows, seeds: int) -> None:
    gamma = median_gamma(rows.X)
    kernel = get_kernel("rbf", gamma=gamma)
    K = kernel(rows.X)
    dims, note = error_grid(rows.X.shape[1])
    print(f"Gaussian kernel, γ = {gamma:.3g} (median heuristic), on {rows.name}{note}; "
          f"relative Frobenius error, mean ± std over {seeds} seeds:")
    table = []
    for output in OUTPUTS:
        for structure in STRUCTURES:
            cells = [f"{structure} {output}"]
            for D in dims:
                cells.append(error_cell(kernel, rows.X, K, D, structure, output, seeds,
                                        with_std=True))
            table.append(cells)
            print(f"  … {cells[0]} done ({load_average()})", flush=True)
    print_table(["structure / output", *(f"D={D}" for D in dims)], table)


def other_densities_table(rows: Rows, seeds: int) -> None:
    d = rows.X.shape[1]
    D = 4 * d
    kernels = {
        "matern nu=3/2": get_kernel("matern", nu=1.5, length_scale=float(np.sqrt(d))),
        "student alpha=d": get_kernel("student", alpha=float(d)),
        "laplacian gamma=1/d": get_kernel("laplacian", gamma=1.0 / d),
    }
    print(f"Other spectral densities on {rows.name}, D = 4d = {D}; relative Frobenius error, "
          f"mean over {seeds} seeds ('—': the L1 Laplacian's density is not isotropic, so "
          "only iid applies):")
    table = []
    for name, kernel in kernels.items():
        K = kernel(rows.X)
        for output in OUTPUTS:
            cells = [f"{name} {output}"]
            for structure in STRUCTURES:
                if kernel.name == "laplacian" and structure != "iid":
                    cells.append("—")
                    continue
                cells.append(error_cell(kernel, rows.X, K, D, structure, output, seeds,
                                        with_std=False))
            table.append(cells)
    print_table(["kernel / output", *STRUCTURES], table)


def error_section(args: argparse.Namespace) -> None:
    n_rows = 300 if args.quick else ERROR_ROWS
    seeds = 3 if args.quick else SEEDS
    real = fashion_mnist_rows(args.fashion_mnist, n_rows, seed=0)
    if real is None:
        print("Using scikit-learn's digits instead of Fashion-MNIST.\n")
        real = digits_rows()
    synthetic = synthetic_rows(n_rows, SYNTHETIC_FEATURES, seed=0)
    for rows in (real, synthetic):
        gaussian_error_table(rows, seeds)
    other_densities_table(synthetic, seeds)


# ---------------------------------------------------------------------------- time
@dataclass
class Candidate:
    """A fitted map to time, with its label and parameter bytes."""

    label: str
    estimator: Any
    fit_s: float
    parameter_bytes: int


def parameter_bytes(estimator: Any) -> int:
    if hasattr(estimator, "projection_"):
        offset = estimator.random_offset_
        return estimator.projection_.nbytes + (0 if offset is None else offset.nbytes)
    return estimator.random_weights_.nbytes + estimator.random_offset_.nbytes


def fitted(label: str, build: Callable[[], Any], X: np.ndarray) -> Candidate:
    estimator = build()
    start = time.perf_counter()
    estimator.fit(X)
    fit_s = time.perf_counter() - start
    return Candidate(label, estimator, fit_s, parameter_bytes(estimator))


def interleaved_times(candidates: Sequence[Candidate], X: np.ndarray,
                      repeats: int) -> dict[str, list[float]]:
    """Median-ready transform times; each candidate is warmed up once on a slice first."""
    for candidate in candidates:
        candidate.estimator.transform(X[:1024])
    times: dict[str, list[float]] = {c.label: [] for c in candidates}
    for _ in range(repeats):
        for candidate in candidates:
            times[candidate.label].append(time_call(lambda c=candidate: c.estimator.transform(X)))
    return times


def time_section(args: argparse.Namespace) -> None:
    n, d, D = TIME_SHAPE
    if args.quick:
        n = QUICK_TIME_ROWS
    repeats = 2 if args.quick else args.repeats
    gamma = 1.0 / (2.0 * d)
    X64 = np.random.RandomState(0).normal(size=(n, d))
    print(f"Transform time, n={n}, d={d}, D={D}, Gaussian kernel γ=1/(2d); median of "
          f"{repeats} interleaved repeats; 'vs sklearn' = scikit-learn RBFSampler time / this "
          f"time (>1: faster); params = bytes of fitted parameters:")
    builders: list[tuple[str, Callable[[], Any]]] = [
        ("sklearn RBFSampler (dense iid)",
         lambda: SklearnRBFSampler(gamma=gamma, n_components=D, random_state=0)),
        ("kernelmaps RBFSampler", lambda: kernelmaps.RBFSampler(gamma=gamma, n_components=D,
                                                                random_state=0)),
    ]
    for structure, output in [("iid", "cos_offset"), ("structured", "cos_offset"),
                              ("fastfood", "cos_offset"), ("structured", "cos_sin"),
                              ("fastfood", "cos_sin")]:
        builders.append((f"RFF {structure} {output}",
                         lambda s=structure, o=output: RandomFourierFeatures(
                             gamma=gamma, n_components=D, structure=s, output=o,
                             random_state=0)))
    table = []
    for dtype in ("float64", "float32"):
        X = X64.astype(dtype)
        candidates = [fitted(label, build, X) for label, build in builders]
        times = interleaved_times(candidates, X, repeats)
        reference = statistics.median(times[candidates[0].label])
        for candidate in candidates:
            seconds = statistics.median(times[candidate.label])
            out = candidate.estimator.transform(X[:2])
            table.append([f"{candidate.label}", dtype, f"{seconds:.3f}",
                          f"{reference / seconds:.2f}x", f"{candidate.fit_s:.3f}",
                          f"{candidate.parameter_bytes / MB:.3f}", str(out.dtype),
                          str(out.shape[1])])
        print(f"  … {dtype} done ({load_average()})", flush=True)
    print_table(["map", "input", "transform s", "vs sklearn", "fit s", "params MB", "out",
                 "D out"], table)


# ---------------------------------------------------------------------------- fastfood
def fastfood_section(args: argparse.Namespace) -> None:
    try:
        from sklearn_extra.kernel_approximation import Fastfood
    except Exception as error:  # an ImportError or a binary-incompatibility ValueError
        print(f"scikit-learn-extra's Fastfood cannot be imported here: "
              f"{type(error).__name__}: {error}\n")
        return
    import sklearn_extra

    n, d, D = TIME_SHAPE
    if args.quick:
        n = QUICK_TIME_ROWS
    repeats = 2 if args.quick else args.repeats
    sigma = float(np.sqrt(d))  # exp(-‖x−y‖²/(2σ²)) with σ² = d, i.e. γ = 1/(2d)
    gamma = 1.0 / (2.0 * sigma ** 2)
    print(f"scikit-learn-extra {sklearn_extra.__version__} Fastfood vs kernelmaps "
          f"RandomFourierFeatures(structure='fastfood') at equal output D={D}; n={n}, d={d}, "
          f"Gaussian kernel γ=1/(2d); transform median of {repeats} interleaved repeats:")
    pairs = {
        "accuracy (cos/sin)": (
            lambda: Fastfood(sigma=sigma, n_components=D // 2,
                             tradeoff_mem_accuracy="accuracy", random_state=0),
            lambda: RandomFourierFeatures(gamma=gamma, n_components=D, structure="fastfood",
                                          output="cos_sin", random_state=0)),
        "mem (cos+offset)": (
            lambda: Fastfood(sigma=sigma, n_components=D, tradeoff_mem_accuracy="mem",
                             random_state=0),
            lambda: RandomFourierFeatures(gamma=gamma, n_components=D, structure="fastfood",
                                          output="cos_offset", random_state=0)),
    }
    X64 = np.random.RandomState(0).normal(size=(n, d))
    small = synthetic_rows(1000 if not args.quick else 300, d, seed=1).X
    K = get_kernel("rbf", gamma=gamma)(small)
    seeds = 3 if args.quick else SEEDS
    table = []
    for mode, (theirs, ours) in pairs.items():
        for dtype in ("float64", "float32"):
            X = X64.astype(dtype)
            candidates = [Candidate("scikit-learn-extra", theirs().fit(X), 0.0, 0),
                          Candidate("kernelmaps", ours().fit(X), 0.0, 0)]
            times = interleaved_times(candidates, X, repeats)
            their_s = statistics.median(times["scikit-learn-extra"])
            for candidate in candidates:
                seconds = statistics.median(times[candidate.label])
                out = candidate.estimator.transform(X[:2])
                error = ""
                if dtype == "float64":
                    build = theirs if candidate.label == "scikit-learn-extra" else ours
                    errors = [relative_error(K, build().set_params(random_state=s)
                                             .fit(small).transform(small))
                              for s in range(seeds)]
                    error = f"{statistics.mean(errors):.4f}"
                table.append([f"{candidate.label} {mode}", dtype, f"{seconds:.3f}",
                              f"{their_s / seconds:.2f}x", str(out.dtype), str(out.shape[1]),
                              error])
            print(f"  … {mode} {dtype} done ({load_average()})", flush=True)
    print_table(["map / mode", "input", "transform s", "vs skextra", "out", "D out",
                 f"rel err (d={d}, mean of {seeds})"], table)


# ---------------------------------------------------------------------------- driver
SECTIONS = {"error": error_section, "time": time_section, "fastfood": fastfood_section}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--section", choices=[*SECTIONS, "all"], default="all")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: fewer rows, seeds and repeats")
    parser.add_argument("--repeats", type=int, default=REPEATS,
                        help=f"timed repeats per map (default {REPEATS})")
    parser.add_argument("--fashion-mnist", type=Path, default=FASHION_MNIST_DIR,
                        help="directory of MNIST-style IDX files "
                             f"(default {FASHION_MNIST_DIR})")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    start = time.perf_counter()
    print_header()
    for name, section in SECTIONS.items():
        if args.section in (name, "all"):
            section(args)
    print(f"total wall time: {time.perf_counter() - start:.1f} s; load avg {load_average()} "
          "at end")


if __name__ == "__main__":
    main()
