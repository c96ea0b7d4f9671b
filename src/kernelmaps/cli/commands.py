"""The ``kernelmaps`` command: the subcommands, run by :func:`run` once
:func:`kernelmaps.cli.main` has parsed the arguments.

Subcommands:

``kernelmaps compare``
    feature maps × output dimensions × seeds against the exact kernel on a data set (digits
    by default): a progress bar, a table in the terminal, and a report folder with a
    self-contained ``report.html``, ``results.csv``, ``summary.csv`` and the PNG plots.
``kernelmaps check-kernel``
    the Mercer check (:func:`kernelmaps.kernels.check_mercer`) of a kernel on a data file.
``kernelmaps datasets``
    the named data sets and whether each is available offline.

Exit status: 0 on success; 2 with a one-line message on bad input (a missing or malformed
file, an unknown column, method or kernel, non-numeric or NaN data, too little data, or
data needing more memory than there is);
``check-kernel`` exits 1 when the kernel fails the Mercer check. ``--traceback`` shows the
full traceback of an input error instead (for bug reports).

The options are parsed by the command's argparse parser. This module turns options into calls of
:mod:`kernelmaps.evaluate` and :mod:`kernelmaps.cli.data` and states their errors in terms of
the options; :mod:`kernelmaps.cli.report` draws (rich for the terminal, matplotlib with the
Agg backend for the report). See ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from kernelmaps import _cost, evaluate
from kernelmaps._optional import import_optional
from kernelmaps.cli import report, tune
from kernelmaps.cli._checks import InputError, check_data
from kernelmaps.cli._kernel_args import kernel_params_from_args
from kernelmaps.cli._out_of_core import check_fits_in_memory, subsample_hint
from kernelmaps.cli.data import DataError, Dataset, available_datasets, load_dataset
from kernelmaps.kernels import KERNELS, Kernel, PrecomputedKernel, check_mercer, resolve_kernel

__all__ = ["InputError", "run"]

#: The loaders' arguments as this command spells them, for data errors.
_DATA_OPTIONS = {"target": "--target COLUMN"}


# =========================================================================== kernel
@dataclass(frozen=True)
class _KernelChoice:
    kernel: Kernel
    heuristic: evaluate.ParameterChoice | None

    def describe(self) -> str:
        text = repr(self.kernel)
        if self.heuristic is not None:
            h = self.heuristic
            text += (f"; {h.name} = {h.value:.6g} by the median heuristic ({h.rule}, over "
                     f"{h.n_samples} rows, labels unused)")
        return text


def _kernel_from_args(args: argparse.Namespace, X: Any, scale: str = "none") -> _KernelChoice:
    """The kernel the options describe, with the median heuristic for a scale the user did
    not set (:func:`kernelmaps.evaluate.main_kernel`, on ``X`` scaled by ``scale``)."""
    try:
        kind = resolve_kernel(args.kernel, owner="--kernel")  # a name: its default parameters
    except ValueError as error:
        raise InputError(f"unknown kernel {args.kernel!r}; valid kernels are "
                         f"{sorted(KERNELS)}.") from error
    if isinstance(kind, PrecomputedKernel):
        raise InputError("--kernel precomputed needs kernel values, but --data gives features; "
                         f"choose a kernel name: {sorted(KERNELS)}.")
    try:
        params = kernel_params_from_args(args)
    except ValueError as error:
        raise InputError(str(error)) from error
    try:
        # The main job's γ rule, the one compare and tune use in Python too.
        kernel, heuristic = evaluate.main_kernel(args.kernel, X, kernel_params=params,
                                                 scale=scale, random_state=args.random_state)
    except (TypeError, ValueError) as error:
        raise InputError(str(error)) from error
    return _KernelChoice(kernel, heuristic)


# =========================================================================== data
def _load(args: argparse.Namespace, *, require_target: bool) -> Dataset:
    try:
        check_fits_in_memory(args.data, args.command)
        return load_dataset(args.data, target=args.target, require_target=require_target)
    except DataError as error:
        raise InputError(error.describe(_DATA_OPTIONS)) from error


def _methods_from_args(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    if not names:
        raise InputError(f"--methods is empty; valid methods are {list(evaluate.METHODS)}.")
    return names


# =========================================================================== commands
@contextmanager
def _one_thread() -> Iterator[None]:
    """BLAS on one thread in this process: its own work (loading, the median heuristic, the
    report) is small, and compare's runs are spread over worker processes of one thread each
    (``--threads``), so no core runs two busy threads. (The engine's thread setting stays:
    compare reads it as the most workers to start.)"""
    with threadpool_limits(limits=1):
        yield


def _split_text(data: Dataset, args: argparse.Namespace, task: str) -> str:
    if data.X_test is not None:
        return f"the data set's own test split ({data.X_test.shape[0]} rows)"
    stratified = "stratified " if task == "classification" else ""
    if args.cv:
        return f"{args.cv}-fold {stratified}cross-validation"
    return f"random {stratified}hold-out, test_size={args.test_size}"


#: The cost estimate is printed when the runs' work per process (single-core CPU seconds),
#: or the exact baseline's time alone, is estimated above this many seconds.
ESTIMATE_MESSAGE_S = 5.0


def estimate_text(cost: dict[str, Any]) -> str:
    """The message line about the runs' estimated cost (see ``on_estimate`` of
    :func:`kernelmaps.evaluate.compare`): the exact baseline's phases when it runs, the
    runs' single-core CPU work and the elapsed time expected at the machine's load now."""
    exact = cost["exact"]
    runs = (f"every run together ~{cost['work_s']:.0f} s of single-core CPU time on "
            f"{cost['n_jobs']} process(es); the runs and the report ~"
            f"{cost['remaining_wall_s']:.0f} s elapsed at the machine's load now")
    if exact is None:
        return f"estimate: {runs}."
    return (f"estimate: the exact baseline takes ~{exact['seconds']:.0f} s (kernel matrix "
            f"{exact['kernel_matrix_s']:.1f} s, {exact['factorisation']} "
            f"{exact['factorisation_s']:.1f} s) and {exact['memory_bytes'] / 2**30:.2f} GiB; "
            f"{runs}. --no-exact skips the baseline.")


def _run_comparison(args: argparse.Namespace, data: Dataset, kernel: Kernel,
                    err_console: Any, warned: Sequence[str] = (),
                    clock: dict[str, float] | None = None) -> tuple[Any, list[str]]:
    """``evaluate.compare`` with a progress bar; returns the table and the warnings seen.

    ``clock["estimate"]`` is set to ``time.perf_counter()`` when the estimate is made (the
    moment the printed estimate counts from).

    ``warned`` (the scale warning) is printed when the work starts: after the options are
    checked (bad input stays one line), before the runs (so they can be stopped and rerun).
    """
    # The bar starts with the first finished row, so bad input fails before any bar is drawn.
    progress = report.progress_bar(err_console, disable=args.quiet)
    clock = {} if clock is None else clock

    def start() -> None:
        for warning in warned:
            err_console.print(f"[yellow]warning:[/yellow]"
                              f"{warning.removeprefix('warning:')}", markup=True)

    advance, phase = progress.compare_callbacks(on_start=start)

    def estimated(cost: dict[str, Any]) -> None:  # before any run: a long wait announced
        clock["estimate"], clock["estimate_cpu"] = time.perf_counter(), time.process_time()
        # The line claims the rest of the command: the runs and then the report.
        cost["report_s"] = _cost.REPORT_S * _cost.load_slowdown(1)
        cost["remaining_wall_s"] = cost["wall_s"] + cost["report_s"]
        # On the work per process (CPU time, which the load does not inflate), not on the
        # elapsed estimate: whether the line comes does not depend on the moment's load.
        exact_s = 0.0 if cost["exact"] is None else cost["exact"]["seconds"]
        if max(exact_s, cost["work_s"] / cost["n_jobs"]) > ESTIMATE_MESSAGE_S:
            err_console.print(estimate_text(cost))

    test_data = (data.X_test, data.y_test) if data.X_test is not None else None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = evaluate.compare(
                data.X, data.y, kernel=kernel, methods=_methods_from_args(args.methods),
                n_components=args.n_components, model=args.model, alpha=args.alpha,
                exact="auto" if args.exact is None else args.exact, task=args.task,
                test_size=args.test_size, cv=args.cv, test_data=test_data,
                n_seeds=args.seeds, error_sample=args.error_sample, metric=args.metric,
                random_state=args.random_state, scale=args.scale or "none",
                n_jobs=args.threads,  # None: as many workers as the work is worth
                progress=advance, on_phase=phase, on_estimate=estimated)
    finally:
        progress.close()
    notes = sorted({str(w.message) for w in caught}
                   | {n for cell in results["notes"] for n in cell.split(" | ") if n})
    return results, [*results.attrs["settings"]["merged"], *notes]


def _settings(args: argparse.Namespace, data: Dataset, choice: _KernelChoice,
              resolved: dict[str, Any], wall: float) -> dict[str, str]:
    """What the report states about the run."""
    exact = "yes" if resolved["exact"] else "no"
    return {
        "command": shlex.join(["kernelmaps", *args.argv]),
        "data": f"{data.name} ({data.shape_text()}, {data.source})",
        "split": _split_text(data, args, resolved["task"]),
        "kernel": choice.describe(),
        "methods": "; ".join(f"{name} ({evaluate.METHODS[name].description})"
                             for name in resolved["methods"]),
        "n_components": ", ".join(map(str, resolved["n_components"])),
        "model": f"{args.model} ({resolved['task']})",
        "alpha": resolved["alpha"],
        "exact baseline": f"{exact} — {resolved['exact_reason']} (the same model on the "
                          "Cholesky factor of the training kernel matrix, or kernel ridge "
                          "for ridge: the kernel machine itself, see docs/cli.md)",
        "seeds": str(args.seeds),
        "kernel error": f"{args.metric} norm on {args.error_sample} training rows",
        "scale": (f"{args.scale or 'none'} (fitted on the training rows only)"
                  if (args.scale or "none") != "none" else "none")
                 + getattr(args, "scale_reason", ""),
        "advice tolerance": f"{args.tolerance:.3g} (relative score gap to the exact score)",
        "max rows": "all" if args.max_rows is None else str(args.max_rows),
        "random_state": str(args.random_state),
        "threads": _threads_text(args.threads, resolved),
        "wall time": f"{wall:.1f} s (loading the data and every run)",
    }


def _threads_text(threads: int | None, resolved: dict[str, Any]) -> str:
    """How the runs were spread, and why when --threads did not say."""
    used = (f"{resolved['n_jobs']} worker processes of one thread each"
            if resolved["n_jobs"] > 1 else "1 (every run in this process)")
    if threads is not None:
        return used
    # evaluate/_runs.py's SECONDS_PER_WORKER and WORKER_START_S (docs/cli.md, *Threads*).
    return (f"{used}: one per 15 s of the ~{resolved['work_estimate_s']:.0f} s of work "
            "estimated (a worker costs ~1.2 s to start), at most one per core")


def _subsample(data: Dataset, args: argparse.Namespace) -> tuple[Dataset, str]:
    """Keep ``--max-rows`` rows of ``data`` (stratified for classification); the sentence
    that states it, or '' when nothing was dropped."""
    n = data.X.shape[0]
    if args.max_rows is None or args.max_rows >= n:
        return data, ""
    classify = evaluate.task_of(data.y, args.task) == "classification"
    counts = np.unique(data.y, return_counts=True)[1] if classify else None
    stratify = (data.y if classify and counts.min() >= 2 and args.max_rows >= counts.size
                else None)
    keep, _ = train_test_split(np.arange(n), train_size=args.max_rows, stratify=stratify,
                               random_state=args.random_state)
    keep = np.sort(keep)
    kind = "stratified by class" if stratify is not None else "uniform"
    stated = (f"--max-rows: using {args.max_rows} of {n} rows ({kind} random subsample). "
              + subsample_hint(n))
    return dataclasses.replace(data, X=data.X[keep], y=data.y[keep]), stated


def _cmd_compare(args: argparse.Namespace) -> int:
    with _one_thread():
        return _compare(args)


def _compare(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    out = Path(args.out)
    if out.exists() and not out.is_dir():  # before the runs, not after them
        raise InputError(f"--out {out} exists and is not a directory; choose another path.")
    if args.alpha is not None and args.model != "ridge":
        raise InputError(f"--alpha applies to --model ridge only; --model {args.model} has "
                         "no alpha (drop --alpha).")
    out_console = report.console(quiet=args.quiet or args.json)
    err_console = report.console(stderr=True, quiet=args.quiet)
    data = _load(args, require_target=True)
    check_data(data, args)  # in files, columns and flags, before any work
    data, subsample = _subsample(data, args)
    if subsample:
        err_console.print(subsample)
    # Said as the runs start, and in the report's notes.
    scales = evaluate.check_scales(data.X, data.feature_names) if args.scale is None else None
    warned = [f"warning: {scales.message}"] if scales is not None and scales.advised else []
    # --scale auto: compare's scale rule decides (the rule tune applies by default).
    args.scale_reason = ""
    if args.scale == "auto":
        args.scale, check = evaluate.choose_scale("auto", data.X, data.feature_names)
        args.scale_reason = (f"; auto: {check.n_drowned} of the {check.n_features} features "
                             "carry less than a tenth of an equal share of the variance")
    choice = _kernel_from_args(args, data.X, args.scale or "none")
    clock: dict[str, float] = {}
    results, notes = _run_comparison(args, data, choice.kernel, err_console, warned, clock)
    clock["runs"], clock["runs_cpu"] = time.perf_counter(), time.process_time()
    summary = evaluate.summarize(results)
    advice = evaluate.advise(summary, tolerance=args.tolerance)
    wall = time.perf_counter() - start
    settings = _settings(args, data, choice, results.attrs["settings"], wall)
    title = f"kernelmaps compare: {data.name}, {choice.kernel.name} kernel, {args.model}"
    # The warnings (the scale warning, those the runs raised; not the merged-map notes) are
    # repeated beside the advice: in the report's first section, and in the terminal after
    # the advice, where the scale warning printed first has scrolled away under the tables.
    # Informational notes (the merged maps, the exact baseline's α rule) are not warnings.
    merged = {*results.attrs["settings"]["merged"], *results.attrs["settings"]["info_notes"]}
    html_path = report.write_report(out, results, summary, title, settings,
                                    [*warned, *notes], advice,
                                    warnings=[*warned, *(n for n in notes if n not in merged)])
    # The wall time last: its width varies from run to run, the text before it does not.
    caption = (f"{settings['kernel']}\n{settings['split']}\nreport: {html_path}; wall time "
               f"{wall:.1f} s")
    report.print_summary(out_console, summary, title, caption, wide=args.wide)
    report.print_advice(out_console, advice, warnings=warned)
    for note in notes:
        err_console.print(f"[yellow]note:[/yellow] {note}", markup=True)
    if args.json:
        now = time.perf_counter()
        # What the printed estimate claims, measured: from the estimate to the report written
        # (``remaining_wall_s`` against ``after_estimate_s``; benchmarks/bench_cost.py).
        # This process's CPU time (imports included) before the estimate and after the runs:
        # the rest of the command's CPU time (its workers' too) is the runs'.
        timing = {"before_estimate_s": clock["estimate"] - start,
                  "runs_s": clock["runs"] - clock["estimate"],
                  "report_s": now - clock["runs"],
                  "after_estimate_s": now - clock["estimate"],
                  "cpu_before_estimate_s": clock["estimate_cpu"],
                  "cpu_runs_s": clock["runs_cpu"] - clock["estimate_cpu"],
                  "cpu_report_s": time.process_time() - clock["runs_cpu"]}
        payload = {"settings": settings, "report": str(html_path),
                   "cost_estimate": results.attrs["settings"]["cost_estimate"],
                   "timing": timing,
                   "summary": json.loads(summary.to_json(orient="records")),
                   "advice": json.loads(advice.to_json(orient="records")),
                   "results": json.loads(results.to_json(orient="records"))}
        print(json.dumps(payload, indent=2))
    return 0


def _cmd_check_kernel(args: argparse.Namespace) -> int:
    data = _load(args, require_target=False)
    choice = _kernel_from_args(args, data.X)
    X = data.X
    if X.shape[0] > args.max_samples:  # sample before densifying sparse data
        rng = np.random.RandomState(args.random_state)
        X = X[np.sort(rng.choice(X.shape[0], size=args.max_samples, replace=False))]
    X = X.toarray() if hasattr(X, "toarray") else X
    mercer = check_mercer(choice.kernel, X, max_samples=args.max_samples)
    if args.json:
        # Every scalar of the report: the verdicts, the bound used and both thresholds.
        fields = {name: value for name, value in dataclasses.asdict(mercer).items()
                  if name not in ("worst_eigenvector", "sample_indices")}
        print(json.dumps({"data": data.name, "kernel": choice.describe(), **fields},
                         indent=2))
    else:
        console = report.console()
        console.print(f"data: {data.name} ({data.shape_text()})")
        console.print(f"kernel: {choice.describe()}")
        console.print(mercer.summary(), style="green" if mercer.passed else "red")
    return 0 if mercer.passed else 1


def _cmd_datasets(args: argparse.Namespace) -> int:
    infos = available_datasets()
    if args.json:
        print(json.dumps([info.__dict__ for info in infos], indent=2))
        return 0
    console = report.console()
    report.print_datasets(console, infos, title="Data sets for --data (offline)")
    console.print("Files: --data PATH with a directory of MNIST-style IDX files, .csv/.tsv "
                  "(with --target COLUMN), .parquet, .npz (arrays X and y), "
                  ".svm/.svmlight/.libsvm.")
    return 0


# =========================================================================== entry point
#: The function that runs each subcommand.
_HANDLERS = {"compare": _cmd_compare, "check-kernel": _cmd_check_kernel,
             "datasets": _cmd_datasets, "tune": tune.run}


#: The optional packages (the ``cli`` extra) each subcommand needs whatever its options:
#: checked before any work, so a missing one is one line, not a traceback after the runs.
_NEEDS = {"compare": ("rich", "pandas", "matplotlib"), "tune": ("rich", "pandas", "matplotlib")}


def _check_prerequisites(command: str) -> None:
    for module in _NEEDS.get(command, ()):
        import_optional(module)  # ImportError naming the extra that installs it


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> int:
    """Run the subcommand of ``args``, parsed by :func:`~kernelmaps.cli._parser.build_parser`
    from ``argv`` (None: ``sys.argv[1:]``); the exit status, as
    :func:`kernelmaps.cli.main`."""
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the report
    try:
        _check_prerequisites(args.command)
    except ImportError as error:
        print(f"kernelmaps {args.command}: error: {_one_line(error)}", file=sys.stderr)
        return 2
    try:
        return _HANDLERS[args.command](args)
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error of ours. Point stdout at
        # devnull so Python's own flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, OSError) as error:  # DataError, InputError and library input checks
        if args.traceback:
            raise
        print(f"kernelmaps {args.command}: error: {_one_line(error)}", file=sys.stderr)
        return 2
    except MemoryError as error:  # the data or the options need more than the machine has
        if args.traceback:
            raise
        print(f"kernelmaps {args.command}: error: out of memory ({_one_line(error)}); use "
              "a smaller data set or sample, or fewer or smaller --n-components.",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kernelmaps: interrupted", file=sys.stderr)
        return 130

