"""Shared machinery of the kernelmaps-vs-scikit-learn benchmarks.

Every benchmark script only declares its :class:`Case` lists; this module does the rest,
identically for every map:

Sizes
    Each case runs at the sizes given (``--sizes``, default ``digits,10000,50000``):
    ``digits`` is scikit-learn's bundled digits (1,797 × 64, pixel counts 0-16, 49 %
    zeros: scikit-learn's own example scale), the numbers are rows of synthetic data. The
    small sizes (digits and 10,000 rows) run the scripts' ``SMALL_CASES`` — every map with
    its default parameters, as most users call it — and the 50,000-row size their
    ``CASES`` (larger outputs). ``--n-samples N`` runs ``CASES`` at N rows only.

Data
    Synthetic ``X`` has ``n_samples`` × 100 features drawn from a fixed seed: uniform on
    [0, 1) when dense (valid input for the chi² maps), or ``scipy.sparse.random`` with
    density 0.05 in CSR format with uniform stored values; digits in CSR is the same data
    stored sparse. Each array is built once in float64 and cast to float32, and shared by
    every case that uses it. Every case runs in both dtypes.

Agreement
    Both estimators are fitted on the full ``X`` with the same parameters (and
    ``random_state``) and transform its first 2,000 rows; the relative Frobenius error
    ``‖ours − sklearn‖ / ‖sklearn‖`` is computed in float64. "agree" means at most 1e-6
    for float64 input and at most 1e-3 for float32 input (this suite's choice: both
    libraries round differently in single precision — e.g. Nystroem's float32 features
    are ~1e-4 from the float64 ones in either library — while a wrong result is off by
    O(1)). The error itself is printed too.

Warm-up
    One untimed ``fit_transform`` of each estimator on the full ``X`` (it also records
    the output dtype and whether the output is sparse).

Peak memory
    In runs separate from the timed ones: ``tracemalloc`` is started *after* ``X``
    exists, one ``fit_transform`` runs, and the peak of traced bytes is read (NumPy reports
    its data buffers to tracemalloc, so the output and every NumPy/SciPy temporary are
    counted; memory allocated outside NumPy's allocator, e.g. OpenBLAS or pocketfft work
    buffers, is not). Nothing is subtracted. Median of 3 runs, or 1 run when the
    scikit-learn warm-up took longer than 5 s (noted as "mem 1 run"); 1 run with
    ``--quick``.

Time
    Wall-clock time of ``Estimator(**params).fit_transform(X)`` — construction, fit and
    transform inside the timed region — with :func:`time.perf_counter`. The repeats are
    interleaved (kernelmaps, scikit-learn, kernelmaps, …) so machine noise hits both alike;
    the result is released before the next call; the median is reported. Repeats per size:
    31 at digits, 11 at 10,000 rows, 5 at 50,000 (``--repeats`` sets one number for all).
    Both libraries run with their default threading (kernelmaps: its engine's rule;
    scikit-learn: multithreaded BLAS). The 1-minute load average at the end of each case is
    printed on its row: other processes distort timings, threaded ones most.

Each script takes ``--quick`` (digits and 2,000 rows, few repeats: a smoke test),
``--sizes``, ``--repeats``, ``--n-samples`` and ``--json PATH`` (write the rows, machine
and settings as JSON).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from types import ModuleType
from typing import Any, Literal

import numpy as np
import scipy
import scipy.sparse as sp
import sklearn
import sklearn.kernel_approximation
from sklearn.datasets import load_digits
from threadpoolctl import threadpool_info

import kernelmaps
from kernelmaps._config import available_cores

__all__ = ["Case", "Row", "Settings", "cases_in_both_dtypes", "main", "run_suite"]

SEED = 0
N_FEATURES = 100
SPARSE_DENSITY = 0.05
DIGITS = "digits"
#: The sizes run by default, and the repeats (interleaved, median) of each.
DEFAULT_SIZES = (DIGITS, "10000", "50000")
SMALL_ROWS = 10_000  # up to here a size runs the scripts' SMALL_CASES
REPEATS = {DIGITS: 31, "10000": 11}
DEFAULT_REPEATS = 5
QUICK_SIZES = (DIGITS, "2000")
QUICK_REPEATS = 2
MEMORY_RUNS = 3
#: A scikit-learn warm-up slower than this gets one memory run instead of MEMORY_RUNS.
SLOW_SECONDS = 5.0
AGREE_ROWS = 2_000
#: Largest relative Frobenius error that counts as agreement, per input dtype.
TOLERANCE = {"float64": 1e-6, "float32": 1e-3}
DTYPES = ("float64", "float32")
MB = 1e6

DataKind = Literal["dense", "csr"]


@dataclass(frozen=True)
class Case:
    """One benchmark case: the same estimator class name exists in both libraries."""

    estimator: str
    params: Mapping[str, Any]
    label: str
    dtype: str
    data: DataKind = "dense"

    def build(self, library: ModuleType) -> Any:
        """A fresh, unfitted estimator from ``library`` with this case's parameters."""
        return getattr(library, self.estimator)(**self.params)

    @property
    def description(self) -> str:
        """The "case" column: dtype, data format and parameters."""
        return f"{self.dtype} {self.data} {self.label}"


def cases_in_both_dtypes(estimator: str, params: Mapping[str, Any], label: str,
                         data: DataKind = "dense") -> list[Case]:
    """The case in float64 and in float32."""
    return [Case(estimator, dict(params), label, dtype, data) for dtype in DTYPES]


@dataclass(frozen=True)
class Settings:
    """Command-line settings of one benchmark run."""

    sizes: tuple[str, ...]
    repeats: int | None  # None: REPEATS per size
    quick: bool
    json_path: str | None
    memory_runs: int = MEMORY_RUNS

    def repeats_at(self, size: str) -> int:
        """Interleaved repeats per library at ``size``."""
        if self.repeats is not None:
            return self.repeats
        return QUICK_REPEATS if self.quick else REPEATS.get(size, DEFAULT_REPEATS)


def is_small(size: str) -> bool:
    """Whether ``size`` runs the scripts' SMALL_CASES (digits and up to 10,000 rows)."""
    return size == DIGITS or int(size) <= SMALL_ROWS


@dataclass
class Row:
    """The measurements of one case (one table row, one JSON record)."""

    map: str
    case: str
    params: dict[str, Any]
    data: str
    ours_s: float
    sklearn_s: float
    speedup: float
    ours_peak_mb: float
    sklearn_peak_mb: float
    memory_ratio: float
    ours_dtype: str
    sklearn_dtype: str
    ours_sparse: bool
    sklearn_sparse: bool
    rel_error: float
    agree: bool
    memory_runs: int
    ours_times_s: list[float] = field(default_factory=list)
    sklearn_times_s: list[float] = field(default_factory=list)
    ours_peaks_mb: list[float] = field(default_factory=list)
    sklearn_peaks_mb: list[float] = field(default_factory=list)
    ours_warmup_s: float = 0.0
    sklearn_warmup_s: float = 0.0
    case_wall_s: float = 0.0
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)
    notes: str = ""


# ---------------------------------------------------------------------------- data
@cache
def dataset(kind: DataKind, dtype: str, size: str) -> np.ndarray | sp.csr_matrix:
    """The benchmark input, built once per (kind, dtype, size): digits, or ``int(size)``
    synthetic rows from :data:`SEED`."""
    if size == DIGITS:
        digits = load_digits().data
        X64: Any = digits if kind == "dense" else sp.csr_matrix(digits)
    elif kind == "dense":
        X64 = np.random.default_rng(SEED).random((int(size), N_FEATURES))
    else:
        X64 = sp.random(int(size), N_FEATURES, density=SPARSE_DENSITY, format="csr",
                        random_state=SEED, dtype=np.float64)
    return X64 if dtype == "float64" else X64.astype(dtype)


def size_label(size: str) -> str:
    """The "data" column: rows × features."""
    X = dataset("dense", "float64", size)
    return f"{DIGITS + ' ' if size == DIGITS else ''}{X.shape[0]}x{X.shape[1]}"


# ---------------------------------------------------------------------------- measuring
def _as_dense64(Z: Any) -> np.ndarray:
    return Z.toarray().astype(np.float64) if sp.issparse(Z) else np.asarray(Z, np.float64)


def relative_error(case: Case, X: Any) -> float:
    """‖ours − sklearn‖_F / ‖sklearn‖_F on the first AGREE_ROWS rows, both fitted on X."""
    head = X[:AGREE_ROWS]
    ours = _as_dense64(case.build(kernelmaps).fit(X).transform(head))
    theirs = _as_dense64(case.build(sklearn.kernel_approximation).fit(X).transform(head))
    if ours.shape != theirs.shape:
        return float("inf")
    scale = float(np.linalg.norm(theirs))
    diff = float(np.linalg.norm(ours - theirs))
    return diff / scale if scale else diff


def time_call(fn: Callable[[], Any]) -> float:
    """Seconds one ``fn()`` takes; its result is released after the clock stops."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    del result
    return elapsed


def warm_up(fn: Callable[[], Any]) -> tuple[float, str, bool]:
    """One untimed call: (seconds, output dtype, output is sparse)."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    return elapsed, str(result.dtype), bool(sp.issparse(result))


def peak_traced_bytes(fn: Callable[[], Any]) -> int:
    """Peak bytes traced by tracemalloc during one ``fn()`` (its inputs already exist)."""
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak


def run_case(case: Case, settings: Settings, size: str) -> Row:
    """Agreement, warm-up, peak memory and interleaved timing of one case at ``size``."""
    case_start = time.perf_counter()
    X = dataset(case.data, case.dtype, size)

    def ours() -> Any:
        return case.build(kernelmaps).fit_transform(X)

    def theirs() -> Any:
        return case.build(sklearn.kernel_approximation).fit_transform(X)

    rel_error = relative_error(case, X)
    ours_warm, ours_dtype, ours_sparse = warm_up(ours)
    sk_warm, sk_dtype, sk_sparse = warm_up(theirs)

    memory_runs = 1 if sk_warm > SLOW_SECONDS else settings.memory_runs
    ours_peaks: list[float] = []
    sk_peaks: list[float] = []
    for _ in range(memory_runs):
        ours_peaks.append(peak_traced_bytes(ours) / MB)
        sk_peaks.append(peak_traced_bytes(theirs) / MB)

    ours_times: list[float] = []
    sk_times: list[float] = []
    for _ in range(settings.repeats_at(size)):
        ours_times.append(time_call(ours))
        sk_times.append(time_call(theirs))
    case_wall = time.perf_counter() - case_start

    ours_s, sk_s = statistics.median(ours_times), statistics.median(sk_times)
    ours_mb, sk_mb = statistics.median(ours_peaks), statistics.median(sk_peaks)
    notes = [] if memory_runs == settings.memory_runs else [f"mem {memory_runs} run"]
    if ours_sparse != sk_sparse:
        notes.append("sparse/dense output differs")
    load = os.getloadavg()  # printed on the row (the "load" column)
    return Row(
        map=case.estimator, case=case.description, params=dict(case.params),
        data=size_label(size),
        ours_s=ours_s, sklearn_s=sk_s, speedup=sk_s / ours_s,
        ours_peak_mb=ours_mb, sklearn_peak_mb=sk_mb,
        memory_ratio=ours_mb / sk_mb if sk_mb else float("nan"),
        ours_dtype=ours_dtype, sklearn_dtype=sk_dtype,
        ours_sparse=ours_sparse, sklearn_sparse=sk_sparse,
        rel_error=rel_error, agree=rel_error <= TOLERANCE[case.dtype],
        memory_runs=memory_runs,
        ours_times_s=ours_times, sklearn_times_s=sk_times,
        ours_peaks_mb=ours_peaks, sklearn_peaks_mb=sk_peaks,
        ours_warmup_s=ours_warm, sklearn_warmup_s=sk_warm,
        case_wall_s=case_wall, load_average=load,
        notes="; ".join(notes),
    )


# ---------------------------------------------------------------------------- reporting
@dataclass(frozen=True)
class Column:
    """A fixed-width table column: header, width, alignment and cell formatter."""

    header: str
    width: int
    cell: Callable[[Row], str]
    align: Literal["<", ">"] = ">"


COLUMNS: tuple[Column, ...] = (
    Column("map", 21, lambda r: r.map, "<"),
    Column("data", 15, lambda r: r.data, "<"),
    Column("case", 38, lambda r: r.case, "<"),
    Column("ours s", 8, lambda r: f"{r.ours_s:.3f}"),
    Column("sklearn s", 9, lambda r: f"{r.sklearn_s:.3f}"),
    Column("speedup", 7, lambda r: f"{r.speedup:.2f}x"),
    Column("ours MB", 8, lambda r: f"{r.ours_peak_mb:.1f}"),
    Column("sklearn MB", 10, lambda r: f"{r.sklearn_peak_mb:.1f}"),
    Column("mem ratio", 9, lambda r: f"{r.memory_ratio:.3f}"),
    Column("ours out", 11, lambda r: r.ours_dtype + ("/csr" if r.ours_sparse else ""), "<"),
    Column("sk out", 11, lambda r: r.sklearn_dtype + ("/csr" if r.sklearn_sparse else ""), "<"),
    Column("agree", 5, lambda r: "yes" if r.agree else "no", "<"),
    Column("rel err", 8, lambda r: f"{r.rel_error:.1e}"),
    Column("load", 5, lambda r: f"{r.load_average[0]:.1f}"),
    Column("notes", 0, lambda r: r.notes, "<"),
)


def _format_line(cells: Iterable[str]) -> str:
    parts = [f"{text:{col.align}{col.width}}" for col, text in zip(COLUMNS, cells, strict=True)]
    return "  ".join(parts).rstrip()


def table_header() -> str:
    """Header line and rule of the results table."""
    header = _format_line(col.header for col in COLUMNS)
    return header + "\n" + "-" * len(header)


def table_row(row: Row) -> str:
    """One fixed-width line of the results table."""
    return _format_line(col.cell(row) for col in COLUMNS)


def machine_info() -> dict[str, Any]:
    """Machine, library versions, BLAS/OpenMP runtimes and kernelmaps settings."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            models = [line.split(":", 1)[1].strip() for line in fh if "model name" in line]
        cpu = models[0] if models else cpu
    except OSError:
        pass
    try:
        ram_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    except (ValueError, OSError, AttributeError):
        ram_gb = float("nan")
    runtimes = [
        {k: info.get(k) for k in ("user_api", "internal_api", "prefix", "version",
                                  "num_threads", "threading_layer", "architecture")}
        for info in sorted(threadpool_info(), key=lambda info: info.get("filepath", ""))
    ]
    return {
        "platform": platform.platform(), "cpu": cpu, "nproc": os.cpu_count(),
        "available_cores": available_cores(), "ram_gb": round(ram_gb, 1),
        "python": platform.python_version(), "numpy": np.__version__,
        "scipy": scipy.__version__, "sklearn": sklearn.__version__,
        "kernelmaps": kernelmaps.__version__, "kernelmaps_config": kernelmaps.get_config(),
        "threadpools": runtimes,
    }


def machine_lines(info: Mapping[str, Any] | None = None) -> str:
    """Machine, versions, BLAS/OpenMP runtimes, kernelmaps settings: every script's header."""
    info = machine_info() if info is None else info
    lines = [
        f"machine:    {info['platform']}; {info['cpu']}; nproc={info['nproc']} "
        f"(available to this process: {info['available_cores']}); RAM {info['ram_gb']} GB",
        f"versions:   python {info['python']}, numpy {info['numpy']}, scipy {info['scipy']}, "
        f"scikit-learn {info['sklearn']}, kernelmaps {info['kernelmaps']}",
    ]
    for pool in info["threadpools"]:
        details = ", ".join(str(pool[k]) for k in ("prefix", "threading_layer", "architecture")
                            if pool.get(k))
        lines.append(f"{pool['user_api'] + ':':11} {pool['internal_api']} {pool['version']} "
                     f"({details}; {pool['num_threads']} threads)")
    lines.append(f"kernelmaps: config {info['kernelmaps_config']}")
    return "\n".join(lines)


def format_machine(info: Mapping[str, Any], settings: Settings) -> str:
    """The header block printed above the table."""
    memory_runs = getattr(settings, "memory_runs", MEMORY_RUNS)
    repeats = ", ".join(f"{size_label(size)}: {settings.repeats_at(size)}"
                        for size in settings.sizes)
    lines = [
        machine_lines(info),
        f"settings:   sizes {', '.join(settings.sizes)} (synthetic: {N_FEATURES} features, "
        f"seed={SEED}, csr density={SPARSE_DENSITY}); repeats (interleaved, median) "
        f"{repeats}; memory runs={memory_runs} (1 if sklearn > {SLOW_SECONDS:g} s)"
        f"{', QUICK' if settings.quick else ''}",
        f"columns:    speedup = sklearn s / ours s (>1: kernelmaps faster); "
        f"mem ratio = ours MB / sklearn MB (peak tracemalloc bytes, 1 MB = 1e6 B); "
        f"agree: rel. Frobenius error on first {AGREE_ROWS} rows <= "
        f"{TOLERANCE['float64']:g} (float64) / {TOLERANCE['float32']:g} (float32); "
        "load: 1-minute load average after the case",
    ]
    return "\n".join(lines)


def _load_average() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


# ---------------------------------------------------------------------------- driver
def parse_args(description: str, argv: Sequence[str] | None = None) -> Settings:
    """Parse ``--quick``, ``--sizes``, ``--repeats``, ``--n-samples`` and ``--json``."""
    parser = argparse.ArgumentParser(
        description=description.strip().splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke test: sizes {','.join(QUICK_SIZES)}, "
                             f"repeats={QUICK_REPEATS} unless given explicitly, "
                             "1 memory run")
    parser.add_argument("--sizes", default=None,
                        help=f"comma-separated sizes: '{DIGITS}' or a number of rows "
                             f"(default {','.join(DEFAULT_SIZES)})")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed repeats per library at every size (default "
                             + ", ".join(f"{k}: {v}" for k, v in REPEATS.items())
                             + f", larger: {DEFAULT_REPEATS})")
    parser.add_argument("--n-samples", type=int, default=None,
                        help="only this many synthetic rows (same as --sizes N)")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write the rows (with machine and settings) as JSON")
    args = parser.parse_args(argv)
    if args.n_samples is not None and args.sizes is not None:
        parser.error("give --sizes or --n-samples, not both")
    if args.n_samples is not None:
        sizes: tuple[str, ...] = (str(args.n_samples),)
    elif args.sizes is not None:
        sizes = tuple(size.strip() for size in args.sizes.split(",") if size.strip())
    else:
        sizes = QUICK_SIZES if args.quick else DEFAULT_SIZES
    for size in sizes:
        if size != DIGITS and not (size.isdigit() and int(size) > 0):
            parser.error(f"--sizes takes '{DIGITS}' or positive row counts; got {size!r}")
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be positive")
    return Settings(sizes=sizes, repeats=args.repeats, quick=args.quick,
                    json_path=args.json, memory_runs=1 if args.quick else MEMORY_RUNS)


def run_suite(cases: Sequence[Case], settings: Settings,
              small_cases: Sequence[Case] | None = None) -> list[Row]:
    """Print the machine header, then one table row per case and size as it finishes.

    ``small_cases`` run at the small sizes (:func:`is_small`), ``cases`` at the others;
    without ``small_cases``, ``cases`` run at every size.
    """
    start = time.perf_counter()
    info = machine_info()
    print(format_machine(info, settings))
    print(f"load avg:   {_load_average()} at start (other processes on the machine "
          "distort timings)", end="\n\n")
    print(table_header(), flush=True)
    rows = []
    for size in settings.sizes:
        for case in (small_cases if small_cases is not None and is_small(size) else cases):
            row = run_case(case, settings, size)
            rows.append(row)
            print(table_row(row), flush=True)
    total = time.perf_counter() - start
    disagree = [f"{row.map} {row.data} {row.case}" for row in rows if not row.agree]
    if disagree:
        print("\nWARNING: differs from scikit-learn: " + ", ".join(disagree))
    print(f"\ntotal wall time: {total:.1f} s; load avg {_load_average()} at end")
    if settings.json_path:
        payload = {"machine": info, "settings": asdict(settings), "total_wall_s": total,
                   "rows": [asdict(row) for row in rows]}
        with open(settings.json_path, "w") as fh:
            json.dump(payload, fh, indent=2, default=str)
        print(f"rows written to {settings.json_path}")
    return rows


def main(cases: Sequence[Case], description: str, argv: Sequence[str] | None = None,
         small_cases: Sequence[Case] | None = None) -> None:
    """Command-line entry point shared by every benchmark script."""
    run_suite(cases, parse_args(description, argv), small_cases)
