"""The ``kernelmaps`` command: compare approximations with the exact kernel, check kernels.

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
file, an unknown column, method or kernel, non-numeric or NaN data, too little data);
``check-kernel`` exits 1 when the kernel fails the Mercer check. ``--traceback`` shows the
full traceback of an input error instead (for bug reports).

The parser is :mod:`argparse` (no extra dependency; subcommands, ``--exact/--no-exact`` and
exit status 2 for usage errors are built in); rich draws the progress bar and tables, and
matplotlib (Agg backend, no display needed) the plots. See ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import os
import platform
import re
import shlex
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from kernelmaps import config_context, evaluate
from kernelmaps.datasets import Dataset, available_datasets, load_dataset
from kernelmaps.kernels import KERNELS, Kernel, get_kernel

__all__ = ["main"]

DEFAULT_OUT = "kernelmaps-report"
DEFAULT_N_COMPONENTS = (25, 50, 100, 200, 400, 800)
_PLOTS = {"error.png": evaluate.plot_error, "score.png": evaluate.plot_score,
          "pareto.png": evaluate.plot_pareto}
# A parameter set by the user in another form disables the heuristic for it (rbf: sigma).
_SAME_SCALE = {"gamma": ("sigma",)}


class InputError(ValueError):
    """Bad command-line input; reported in one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (argparse prints the whole usage block otherwise)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# =========================================================================== parsing
def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers such as 50,100,200; got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers; got {text!r}")
    return values


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}")
    return value


def _number(text: str) -> int | float:
    """A kernel parameter: an int when it is written as one (degrees), else a float."""
    if re.fullmatch(r"[+-]?\d+", text.strip()):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
    if not np.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number; got {text!r}")
    return value


def _kernel_param(text: str) -> tuple[str, int | float]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE such as gamma=0.1; got {text!r}")
    return name.strip(), _number(value)


def _add_data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", metavar="PATH", default=None,
        help="a data set name (digits, the default; iris, wine, breast_cancer, diabetes, "
             "fashion-mnist) or a file: CSV/TSV (with --target), Parquet, NPZ with X and y, "
             "svmlight/libsvm, or a directory of MNIST-style IDX files")
    parser.add_argument("--target", metavar="COLUMN", default=None,
                        help="target column of a CSV/TSV/Parquet file (default: the column "
                             "named target, label, class or y)")


def _add_kernel_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("kernel")
    group.add_argument("--kernel", default="rbf",
                       help=f"kernel name from kernelmaps.kernels: {', '.join(sorted(KERNELS))} "
                            "(default: rbf)")
    group.add_argument("--gamma", type=_number, default=None,
                       help="gamma of the kernel (default: the median heuristic, stated in "
                            "the output)")
    group.add_argument("--degree", type=_number, default=None, help="polynomial degree")
    group.add_argument("--coef0", type=_number, default=None, help="polynomial/sigmoid offset")
    group.add_argument("--kernel-param", type=_kernel_param, action="append", default=[],
                       metavar="NAME=VALUE",
                       help="any kernel parameter, e.g. sigma=2 or nu=2.5 (repeatable)")
    group.add_argument("--random-state", type=int, default=0,
                       help="seed of every random choice (default: 0)")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kernelmaps",
                     description="Explicit kernel feature maps, compared with the exact kernel.")
    parser.add_argument("--traceback", action="store_true",
                        help="show the full traceback of an input error")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    compare = commands.add_parser(
        "compare", help="feature maps side by side with the exact kernel, with a report",
        description="Fit feature maps at several output dimensions and seeds, a linear model "
                    "on their features, and the exact-kernel model as the baseline; print a "
                    "table and write a report folder.")
    _add_data_options(compare)
    _add_kernel_options(compare)
    compare.add_argument("--methods", action="append", default=None, metavar="A,B",
                         help="methods (comma-separated or repeated): "
                              f"{', '.join(evaluate.METHODS)} (default: every method for "
                              "the kernel)")
    compare.add_argument("--n-components", type=_int_list, default=list(DEFAULT_N_COMPONENTS),
                         metavar="N,N",
                         help="output dimensions (default: "
                              f"{','.join(map(str, DEFAULT_N_COMPONENTS))})")
    compare.add_argument("--model", choices=sorted(evaluate.MODELS), default="ridge",
                         help="linear model on the features (default: ridge)")
    compare.add_argument("--task", choices=["auto", "classification", "regression"],
                         default="auto",
                         help="auto: class labels unless the target is real-valued with more "
                              f"than {evaluate.MAX_AUTO_CLASSES} distinct values")
    compare.add_argument("--exact", action=argparse.BooleanOptionalAction, default=None,
                         help="run the exact-kernel baseline (default: when there are at most "
                              f"{evaluate.EXACT_AUTO_MAX_TRAIN} training rows)")
    compare.add_argument("--seeds", type=_positive_int, default=3,
                         help="seeds per randomised map (default: 3)")
    compare.add_argument("--test-size", type=float, default=0.25,
                         help="held-out fraction when the data has no test split "
                              "(default: 0.25)")
    compare.add_argument("--cv", type=int, default=None, metavar="K",
                         help="K-fold cross-validation instead of one split")
    compare.add_argument("--error-sample", type=_positive_int, default=500,
                         help="training rows the kernel error is measured on (default: 500)")
    compare.add_argument("--metric", choices=["fro", "spectral", "max"], default="fro",
                         help="norm of the kernel error (default: fro)")
    compare.add_argument("--threads", type=_positive_int, default=None, metavar="N",
                         help="threads for BLAS and the transform engine (default: all "
                              "cores; 1 is faster on a machine busy with other work)")
    compare.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                         help=f"report folder (default: ./{DEFAULT_OUT})")
    compare.add_argument("--quiet", action="store_true",
                         help="no progress bar, table or messages")
    compare.add_argument("--json", action="store_true",
                         help="print settings, summary and rows as JSON on stdout")
    compare.set_defaults(handler=_cmd_compare)

    check = commands.add_parser(
        "check-kernel", help="is the kernel positive semi-definite on this data? (Mercer)",
        description="Build the kernel's Gram matrix on (a sample of) the data and check that "
                    "it is symmetric positive semi-definite. Exit status 1 if it is not.")
    _add_data_options(check)
    _add_kernel_options(check)
    check.add_argument("--max-samples", type=_positive_int, default=1000,
                       help="rows sampled for the Gram matrix (default: 1000)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(handler=_cmd_check_kernel)

    listing = commands.add_parser("datasets", help="the data sets available offline",
                                  description="The named data sets and where they come from.")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    listing.set_defaults(handler=_cmd_datasets)
    return parser


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


def _kernel_from_args(args: argparse.Namespace, X: Any) -> _KernelChoice:
    if args.kernel not in KERNELS:
        raise InputError(f"unknown kernel {args.kernel!r}; valid kernels are {sorted(KERNELS)}.")
    accepted = KERNELS[args.kernel].param_names
    params = {name: getattr(args, name) for name in ("gamma", "degree", "coef0")
              if getattr(args, name) is not None}
    params.update(dict(args.kernel_param))
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise InputError(f"kernel {args.kernel!r} has no parameter(s) {unknown}; it accepts "
                         f"{list(accepted) or 'none'}.")
    heuristic = None
    parameter = evaluate.median_heuristic_parameter(args.kernel)
    if parameter is not None and parameter not in params and not any(
            other in params for other in _SAME_SCALE.get(parameter, ())):
        heuristic = evaluate.median_heuristic(X, args.kernel, random_state=args.random_state)
        params[parameter] = heuristic.value
    try:
        kernel = get_kernel(args.kernel, **params)
    except (TypeError, ValueError) as error:
        raise InputError(str(error)) from error
    return _KernelChoice(kernel, heuristic)


# =========================================================================== data
def _load(args: argparse.Namespace, *, require_target: bool) -> Dataset:
    data = load_dataset(args.data, target=args.target, require_target=require_target)
    if require_target and data.y is None:  # pragma: no cover - load_dataset raises first
        raise InputError(f"{data.source}: no target; pass --target COLUMN.")
    return data


def _methods_from_args(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    if not names:
        raise InputError(f"--methods is empty; valid methods are {list(evaluate.METHODS)}.")
    return names


# =========================================================================== tables
def _error_ci(row: Any) -> str:
    if row["error_ci_low"] == row["error_ci_high"]:
        return "–"
    return f"{row['error_ci_low']:.3g}–{row['error_ci_high']:.3g}"


# Summary columns: header → cell text. The report shows them all; the terminal a subset
# (_TERMINAL_COLUMNS) that fits 100 characters.
_SUMMARY_COLUMNS: dict[str, Callable[[Any], str]] = {
    "method": lambda r: r["method"],
    # A map that rounds the output dimension (cos/sin pairs, Hadamard blocks) shows what was
    # asked for too, so two requests that round to the same D are told apart.
    "D": lambda r: (str(r["n_features_out"]) if r["method"] == "exact"
                    or r["n_features_out"] == r["n_components"]
                    else f"{r['n_features_out']} (n={r['n_components']})"),
    "runs": lambda r: str(r["runs"]),
    "kernel error": lambda r: f"{r['error']:.3g}",
    "95% CI": _error_ci,
    "score": lambda r: f"{r['score']:.4f}",
    "± sd": lambda r: f"{r['score_std']:.4f}" if r["runs"] > 1 else "–",
    "fit s": lambda r: f"{r['fit_time_s']:.3f}",
    "transform s": lambda r: f"{r['transform_time_s']:.3f}",
    "total s": lambda r: f"{r['total_time_s']:.3f}",
    "peak MB": lambda r: f"{r['peak_memory_mb']:.1f}",
}
_TERMINAL_COLUMNS = ("method", "D", "kernel error", "95% CI", "score", "± sd", "total s",
                     "peak MB")


def _summary_cells(summary: Any, columns: Sequence[str]) -> list[tuple[str, ...]]:
    """The summary as display strings, shared by the terminal table and the HTML report."""
    return [tuple(_SUMMARY_COLUMNS[c](row) for c in columns) for _, row in summary.iterrows()]


def _print_table(console: Any, summary: Any, title: str, caption: str) -> None:
    from rich import box
    from rich.table import Table

    table = Table(title=title, caption=caption, header_style="bold", box=box.SIMPLE_HEAD,
                  caption_justify="left")
    for i, header in enumerate(_TERMINAL_COLUMNS):
        table.add_column(header, justify="left" if i == 0 else "right", no_wrap=True)
    previous = None
    for cells in _summary_cells(summary, _TERMINAL_COLUMNS):
        if previous is not None and cells[0] != previous:
            table.add_section()
        table.add_row(*cells, style="bold" if cells[0] == "exact" else None)
        previous = cells[0]
    console.print(table)


# =========================================================================== report
def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version(),
                "platform": f"{platform.system()} {platform.release()} {platform.machine()}"}
    for package in ("kernelmaps", "numpy", "scipy", "scikit-learn", "pandas", "matplotlib",
                    "rich", "threadpoolctl"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - all are dependencies
            versions[package] = "not installed"
    from threadpoolctl import threadpool_info

    blas = [f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    versions["BLAS"] = "; ".join(blas) or "unknown"
    versions["cores available"] = str(len(os.sched_getaffinity(0))
                                      if hasattr(os, "sched_getaffinity") else os.cpu_count())
    return versions


def _write_plots(out: Path, results: Any) -> dict[str, bytes]:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, same output everywhere
    images = {}
    for name, plot in _PLOTS.items():
        ax = plot(results)
        ax.figure.savefig(out / name, dpi=100)
        images[name] = (out / name).read_bytes()
    return images


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}
th,td{border-bottom:1px solid #ddd;padding:.3em .7em;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}
tr.exact td{font-weight:bold;background:#fbf7e6}
.plots{display:flex;flex-wrap:wrap;gap:1em}.plots img{width:32%;min-width:320px}
.muted{color:#666;font-size:.9em}code{background:#f4f4f4;padding:0 .2em}
table.kv td,table.kv th{text-align:left}
"""


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
                row_class: Sequence[str] | None = None, css: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        row_css = f' class="{row_class[i]}"' if row_class and row_class[i] else ""
        body.append(f"<tr{row_css}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row)
                    + "</tr>")
    table_class = f' class="{css}"' if css else ""
    return (f"<table{table_class}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
            "</table>")


def _render_html(title: str, summary: Any, settings: dict[str, Any],
                 versions: dict[str, str], images: dict[str, bytes], notes: list[str]) -> str:
    cells = _summary_cells(summary, list(_SUMMARY_COLUMNS))
    plots = "".join(
        f'<img alt="{html.escape(name)}" src="data:image/png;base64,'
        f'{base64.b64encode(data).decode("ascii")}">' for name, data in images.items())
    notes_html = ("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes)
                  + "</ul>") if notes else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{_CSS}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="muted">kernelmaps compare — each feature map with a linear model on its features,
next to the same model on the exact kernel. Kernel error: ‖K − ZZᵀ‖/‖K‖ on training rows
(mean over seeds, 95% Student-t interval). Times are means per run; memory is the tracemalloc
peak (NumPy and Python allocations).</p>
<div class="plots">{plots}</div>
<h2>Results</h2>
{_html_table(list(_SUMMARY_COLUMNS), cells, ["exact" if c[0] == "exact" else "" for c in cells])}
<p class="muted">Every run is in <code>results.csv</code>; this table is
<code>summary.csv</code>.</p>
{notes_html}
<h2>Settings</h2>
{_html_table(("setting", "value"), list(settings.items()), css="kv")}
<h2>Versions</h2>
{_html_table(("software", "version"), list(versions.items()), css="kv")}
</body></html>
"""


def _write_report(out: Path, results: Any, summary: Any, title: str,
                  settings: dict[str, Any], notes: list[str]) -> Path:
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} exists and is not a directory; choose another path.")
    out.mkdir(parents=True, exist_ok=True)
    results.to_csv(out / "results.csv", index=False)
    summary.to_csv(out / "summary.csv", index=False)
    images = _write_plots(out, results)
    report = out / "report.html"
    report.write_text(_render_html(title, summary, settings, _versions(), images, notes),
                      encoding="utf-8")
    return report


# =========================================================================== commands
def _console(stderr: bool = False, quiet: bool = False) -> Any:
    from rich.console import Console

    console = Console(stderr=stderr, quiet=quiet, highlight=False)
    if not console.is_terminal:  # a pipe or a log: rich would assume 80 columns
        console = Console(stderr=stderr, quiet=quiet, highlight=False, width=110)
    return console


def _progress(console: Any, disable: bool) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, disable=disable)


@contextmanager
def _thread_limit(n_threads: int | None) -> Iterator[None]:
    """Limit BLAS and the kernelmaps engine to ``n_threads`` (None: leave the defaults)."""
    if n_threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=n_threads), config_context(n_threads=n_threads):
        yield


def _split_text(data: Dataset, args: argparse.Namespace, task: str) -> str:
    if data.X_test is not None:
        return f"the data set's own test split ({data.X_test.shape[0]} rows)"
    stratified = "stratified " if task == "classification" else ""
    if args.cv:
        return f"{args.cv}-fold {stratified}cross-validation"
    return f"random {stratified}hold-out, test_size={args.test_size}"


def _run_comparison(args: argparse.Namespace, data: Dataset, kernel: Kernel,
                    err_console: Any) -> tuple[Any, list[str]]:
    """``evaluate.compare`` with a progress bar; returns the table and the warnings seen."""
    # The bar starts with the first finished row, so bad input fails before any bar is drawn.
    progress = _progress(err_console, disable=args.quiet)
    tasks: list[Any] = []

    def advance(row: dict[str, Any], done: int, total: int) -> None:
        if not tasks:
            progress.start()
            tasks.append(progress.add_task("", total=total))
        progress.update(tasks[0], completed=done, total=total,
                        description=f"{row['method']} D={row['n_features_out']}")

    test_data = (data.X_test, data.y_test) if data.X_test is not None else None
    try:
        with warnings.catch_warnings(record=True) as caught, _thread_limit(args.threads):
            warnings.simplefilter("always")
            results = evaluate.compare(
                data.X, data.y, kernel=kernel, methods=_methods_from_args(args.methods),
                n_components=args.n_components, model=args.model,
                exact="auto" if args.exact is None else args.exact, task=args.task,
                test_size=args.test_size, cv=args.cv, test_data=test_data,
                n_seeds=args.seeds, error_sample=args.error_sample, metric=args.metric,
                random_state=args.random_state, progress=advance)
    finally:
        if tasks:
            progress.stop()
    notes = sorted({str(w.message) for w in caught}
                   | {n for cell in results["notes"] for n in cell.split(" | ") if n})
    return results, notes


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
        "exact baseline": f"{exact} — {resolved['exact_reason']} (the same model on Nyström "
                          "with every training row as a landmark: the kernel machine itself, "
                          "see docs/cli.md)",
        "seeds": str(args.seeds),
        "kernel error": f"{args.metric} norm on {args.error_sample} training rows",
        "random_state": str(args.random_state),
        "threads": "all cores" if args.threads is None else str(args.threads),
        "wall time": f"{wall:.1f} s (loading the data and every run)",
    }


def _cmd_compare(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    out_console = _console(quiet=args.quiet or args.json)
    err_console = _console(stderr=True, quiet=args.quiet)
    data = _load(args, require_target=True)
    choice = _kernel_from_args(args, data.X)
    results, notes = _run_comparison(args, data, choice.kernel, err_console)
    summary = evaluate.summarize(results)
    wall = time.perf_counter() - start
    settings = _settings(args, data, choice, results.attrs["settings"], wall)
    title = f"kernelmaps compare: {data.name}, {choice.kernel.name} kernel, {args.model}"
    report = _write_report(Path(args.out), results, summary, title, settings, notes)
    caption = f"{settings['kernel']}\n{settings['split']}; wall time {wall:.1f} s; report: {report}"
    _print_table(out_console, summary, title, caption)
    for note in notes:
        err_console.print(f"[yellow]note:[/yellow] {note}", markup=True)
    if args.json:
        payload = {"settings": settings, "report": str(report),
                   "summary": json.loads(summary.to_json(orient="records")),
                   "results": json.loads(results.to_json(orient="records"))}
        print(json.dumps(payload, indent=2))
    return 0


def _cmd_check_kernel(args: argparse.Namespace) -> int:
    from kernelmaps.kernels import check_mercer

    data = _load(args, require_target=False)
    choice = _kernel_from_args(args, data.X)
    X = data.X
    if X.shape[0] > args.max_samples:  # sample before densifying sparse data
        rng = np.random.RandomState(args.random_state)
        X = X[np.sort(rng.choice(X.shape[0], size=args.max_samples, replace=False))]
    X = X.toarray() if hasattr(X, "toarray") else X
    report = check_mercer(choice.kernel, X, max_samples=args.max_samples)
    if args.json:
        print(json.dumps({
            "data": data.name, "kernel": choice.describe(), "passed": report.passed,
            "is_symmetric": report.is_symmetric, "max_asymmetry": report.max_asymmetry,
            "min_eigenvalue": report.min_eigenvalue, "negative_mass": report.negative_mass,
            "tolerance": report.tolerance, "n_samples": report.n_samples,
            "worst_pair": report.worst_pair}, indent=2))
    else:
        console = _console()
        console.print(f"data: {data.name} ({data.shape_text()})")
        console.print(f"kernel: {choice.describe()}")
        console.print(report.summary(), style="green" if report.passed else "red")
    return 0 if report.passed else 1


def _cmd_datasets(args: argparse.Namespace) -> int:
    infos = available_datasets()
    if args.json:
        print(json.dumps([info.__dict__ for info in infos], indent=2))
        return 0
    from rich.table import Table

    table = Table(title="Data sets for --data (offline)", header_style="bold")
    for header in ("name", "rows × features", "description", "available"):
        table.add_column(header)
    table.add_column("where", overflow="fold")
    for info in infos:
        table.add_row(info.name, info.shape, info.description,
                      "yes" if info.available else "[red]no[/red]", info.location)
    console = _console()
    console.print(table)
    console.print("Files: --data PATH with a directory of MNIST-style IDX files, .csv/.tsv "
                  "(with --target COLUMN), .parquet, .npz (arrays X and y), "
                  ".svm/.svmlight/.libsvm.")
    return 0


# =========================================================================== entry point
def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kernelmaps`` command; returns the exit status."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for the report
    try:
        return args.handler(args)
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
    except KeyboardInterrupt:
        print("kernelmaps: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover - python -m kernelmaps.cli
    sys.exit(main())
