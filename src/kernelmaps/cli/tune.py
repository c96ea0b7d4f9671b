"""``kernelmaps tune``: choose γ, α and D for a data set (:func:`kernelmaps.tuning.tune`).

Prints the chosen parameters with their validation score (and the test score when the data
set has its own test split, or with ``--test-size``), the ``kernelmaps compare`` command that
runs the same configuration, and writes a report folder: ``report.html`` (the choice, score
against γ and against D, every configuration tried), ``trials.csv`` and the two plots.
``--save model.skops`` writes the fitted pipeline with :func:`kernelmaps.io.dump`; ``--json``
prints everything as JSON on stdout.

Its options are defined in :mod:`kernelmaps.cli._parser`, with the same definitions (and
meanings) as ``compare``'s where both take one; it is run by :mod:`kernelmaps.cli.commands`
(:func:`run`); errors are ``ValueError`` naming the option, which the entry point reports in
one line with exit status 2.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import math
import shlex
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from kernelmaps import config_context
from kernelmaps import io as model_io
from kernelmaps._optional import import_optional
from kernelmaps.cli import report
from kernelmaps.cli._checks import InputError, check_data
from kernelmaps.cli._kernel_args import kernel_params_from_args
from kernelmaps.cli._out_of_core import check_fits_in_memory
from kernelmaps.cli._parser import DEFAULT_TUNE_OUT
from kernelmaps.cli.data import DataError, Dataset, load_dataset
from kernelmaps.cli.report.html_page import CSS, html_table, versions
from kernelmaps.evaluate import median_heuristic_parameter
from kernelmaps.kernels import Kernel, resolve_kernel
from kernelmaps.tuning import TuneResult, tune
from kernelmaps.tuning.search import min_rows

__all__ = ["DEFAULT_OUT", "run"]

#: The report folder by default (defined with the options).
DEFAULT_OUT = DEFAULT_TUNE_OUT
#: The report's plots: file name → what it shows.
PLOTS = ("score_gamma.png", "score_components.png")


# =========================================================================== running
def _split(data: Dataset, args: argparse.Namespace, task: str) -> tuple[Any, ...]:
    """Training and test rows: the data set's own test split, ``--test-size``, or none."""
    if data.X_test is not None and args.test_size is None:
        return data.X, data.y, data.X_test, data.y_test, (
            f"the data set's own test split ({data.X_test.shape[0]} rows)")
    if args.test_size is None:
        return data.X, data.y, None, None, "none (validation score only)"
    classes, counts = np.unique(data.y, return_counts=True)
    stratify = data.y if task == "classification" and counts.min() >= 2 else None
    # scikit-learn's rule: ceil(test_size · n) test rows, the rest to train on and search.
    n = data.X.shape[0]
    n_train = n - math.ceil(args.test_size * n)
    needed = max(min_rows(args.cv), classes.size if stratify is not None else 0)
    if n_train < needed:
        raise InputError(f"--test-size {args.test_size} leaves {n_train} of the {n} rows of "
                         f"{data.name} to search on; tune needs at least {needed} (use a "
                         "smaller --test-size).")
    try:
        X_train, X_test, y_train, y_test = train_test_split(
            data.X, data.y, test_size=args.test_size, random_state=args.random_state,
            stratify=stratify)
    except ValueError as error:
        raise ValueError(f"--test-size {args.test_size}: {error}") from error
    return X_train, y_train, X_test, y_test, f"random hold-out, --test-size {args.test_size}"


def _named(X: Any, data: Dataset) -> Any:
    """``X`` as a DataFrame with the data set's column names (a dense table's), else as is."""
    if X is None or data.feature_names is None or not isinstance(X, np.ndarray):
        return X
    return import_optional("pandas").DataFrame(X, columns=list(data.feature_names), copy=False)


def compare_command(args: argparse.Namespace, result: TuneResult) -> str:
    """The ``kernelmaps compare`` command that runs the configuration ``tune`` chose."""
    p = result.params
    words = ["kernelmaps", "compare"]
    if args.data is not None:
        words += ["--data", args.data]
    if args.target is not None:
        words += ["--target", args.target]
    words += ["--kernel", p["kernel"]]
    for name in ("degree", "coef0"):
        if getattr(args, name, None) is not None:
            words += [f"--{name}", str(getattr(args, name))]
    for name, value in getattr(args, "kernel_param", []):
        if name not in (result.scale_name, "sigma"):
            words += ["--kernel-param", f"{name}={value}"]
    if result.scale != "none":
        words += ["--scale", result.scale]
    scale = f"{p[result.scale_name]:.6g}"
    words += (["--gamma", scale] if result.scale_name == "gamma"
              else ["--kernel-param", f"{result.scale_name}={scale}"])
    words += ["--methods", p["method"], "--n-components", str(p["n_components"]),
              "--model", "ridge", "--alpha", f"{p['alpha']:.6g}", "--task", result.task,
              "--random-state", str(args.random_state)]
    return shlex.join(words)


def _plots(out: Path, result: TuneResult) -> dict[str, bytes]:
    """Score against the scale parameter (one line per D) and against D."""
    matplotlib = import_optional("matplotlib")
    matplotlib.use("Agg")
    plt = import_optional("matplotlib.pyplot")
    trials = [t for t in result.trials if t.stage != "final"]
    images = {}
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for d in sorted({t.n_components for t in trials}):
        points = sorted((t.gamma, t.score) for t in trials if t.n_components == d)
        ax.plot([g for g, _ in points], [s for _, s in points], marker="o", label=f"D={d}")
    ax.axvline(result.heuristic, color="grey", linestyle=":", label="median heuristic")
    ax.axvline(result.params[result.scale_name], color="black", linestyle="--", label="chosen")
    ax.set_xscale("log")
    ax.set_xlabel(result.scale_name)
    ax.set_ylabel(f"validation {result.scoring} ({result.cv})")
    ax.set_title(f"score against {result.scale_name}")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out / PLOTS[0], dpi=100)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    best: dict[int, float] = {}
    for t in trials:
        best[t.n_components] = max(best.get(t.n_components, -math.inf), t.score)
    ax.plot(sorted(best), [best[d] for d in sorted(best)], marker="o",
            label="search rows (validation)")
    finals = {t.n_components: t.score for t in result.trials if t.stage == "final"}
    if len(finals) > 1:  # D judged on all rows beyond the search sample
        ax.plot(sorted(finals), [finals[d] for d in sorted(finals)], marker="s",
                label="all rows (held-out rows)")
    ax.axvline(result.params["n_components"], color="black", linestyle="--", label="chosen")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("D (n_components)")
    ax.set_ylabel(f"best validation {result.scoring}")
    ax.set_title("score against D (best over the scale at each D)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out / PLOTS[1], dpi=100)
    plt.close(fig)
    for name in PLOTS:
        images[name] = (out / name).read_bytes()
    return images


def _tie_width(result: TuneResult, trials: list[Any]) -> float:
    """The half standard error within which ``tune`` counts two accuracies at one D as a
    tie, ½·√(p(1−p)/n) at the best score p of ``trials`` on their n rows (regression:
    exact ties only) — the rule of :func:`kernelmaps.tuning.tune` (its γ is the middle of a
    run of tied scales, not the highest score of the run)."""
    if result.task != "classification" or not trials:
        return 0.0
    best = max(trials, key=lambda t: t.score)
    p = min(max(best.score, 0.0), 1.0)
    return 0.5 * math.sqrt(p * (1.0 - p) / max(best.n_rows, 1))


def _trial_notes(result: TuneResult) -> tuple[list[str], float]:
    """Per trial, why it was or was not kept: ``★ kept`` for the chosen (γ, D) of the
    search, ``tie`` for a higher score at the chosen D within the tie width; and that
    width."""
    value, d = result.params[result.scale_name], result.params["n_components"]
    at_d = [t for t in result.trials if t.n_components == d and t.stage != "final"]
    width = _tie_width(result, at_d)
    kept = min(at_d, key=lambda t: abs(math.log2(t.gamma / value)), default=None)
    notes = []
    for trial in result.trials:
        if trial is kept or (trial.stage == "final" and kept is None):
            notes.append("★ kept")
        elif kept is not None and trial in at_d and trial.score > kept.score:
            notes.append(f"tie (within ±{width:.4f})" if trial.score - kept.score <= 2 * width
                         else "higher, not kept")
        else:
            notes.append("")
    return notes, width


def _trial_rows(result: TuneResult) -> list[tuple[str, ...]]:
    notes, _ = _trial_notes(result)
    return [(t.stage, f"{t.gamma:.6g}", str(t.n_components), str(t.n_features_out),
             str(t.n_rows), f"{t.alpha:.3g}", f"{t.score:.4f}", f"{t.time_s:.3f}", note)
            for t, note in zip(result.trials, notes, strict=True)]


_TRIAL_HEADERS = ("stage", "scale", "D", "D out", "rows", "alpha", "score", "time s", "kept")


def _tie_text(result: TuneResult) -> str:
    """The legend of the "kept" column: the tie rule that keeps a scale other than the
    highest-scoring one."""
    _, width = _trial_notes(result)
    if result.task != "classification":
        return "★ marks the configuration kept (the best score; the final row refits it on " \
               "all rows)."
    return (f"★ marks the configuration kept; the final row refits it on all rows. At one D, "
            f"accuracies within half a standard error of the best, ½·√(p(1−p)/n) = "
            f"{width:.4f} here, are ties (accuracy moves in steps of 1/n): of a run of tied "
            "neighbouring scales tune keeps the one nearest the run's middle, since the "
            "highest of a broad optimum is as likely to sit at its edge, next to where the "
            "score falls off — so a tied row may score a little higher than the one kept "
            "(docs/tuning.md).")


def write_report(out: Path, result: TuneResult, title: str, choice: dict[str, str],
                 settings: dict[str, str]) -> Path:
    """``report.html`` (the tune section: choice, score against γ and D, every trial),
    ``trials.csv`` and the plots in ``out``; returns the path of ``report.html``."""
    out.mkdir(parents=True, exist_ok=True)
    result.table.to_csv(out / "trials.csv", index=False)
    images = _plots(out, result)
    plots = "".join(f'<img alt="{html.escape(name)}" src="data:image/png;base64,'
                    f'{base64.b64encode(data).decode("ascii")}">'
                    for name, data in images.items())
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in result.notes)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{CSS}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<h2>Tuning</h2>
<p class="muted">alpha is chosen in closed form for every configuration (exact leave-one-out
or k folds from one eigendecomposition of the features); the kernel's scale by a 1-D search in
log scale around the median heuristic; D by doubling while it pays. See docs/tuning.md.</p>
{html_table(("", "value"), list(choice.items()), css="kv")}
<div class="plots">{plots}</div>
<h2>Every configuration tried</h2>
{html_table(_TRIAL_HEADERS, _trial_rows(result))}
<p class="muted">Also in <code>trials.csv</code>. "scale" is {html.escape(result.scale_name)};
the score of a row is at its best alpha. {html.escape(_tie_text(result))}</p>
{"<h2>Notes</h2><ul>" + notes + "</ul>" if notes else ""}
<h2>Settings</h2>
{html_table(("setting", "value"), list(settings.items()), css="kv")}
<h2>Versions</h2>
{html_table(("software", "version"), list(versions().items()), css="kv")}
</body></html>
"""
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _kernel_and_bounds(args: argparse.Namespace) -> tuple[Kernel, tuple[float, float] | None]:
    """The kernel the options describe and, when its scale was given (``--gamma``, or
    ``--kernel-param`` with the scale parameter or rbf's ``sigma``), the search interval
    pinned to it: a value set is taken as given, as ``--n-components N`` fixes D."""
    params = kernel_params_from_args(args)
    kernel = resolve_kernel(args.kernel, kernel_params=params, owner="--kernel")
    parameter = median_heuristic_parameter(kernel)
    value = params.get(parameter) if parameter is not None else None
    if parameter == "gamma" and "sigma" in params:
        value = 1.0 / (2.0 * float(params["sigma"]) ** 2)
    if value is None or value in ("scale", "auto"):
        return kernel, None  # scale / auto: resolved by tune on X as the map sees it
    if not (isinstance(value, (int, float)) and value > 0):
        raise ValueError(f"--{parameter.replace('_', '-')}: tune needs a positive value; got "
                         f"{value!r}.")
    return kernel, (float(value), float(value))


def _run_tune(args: argparse.Namespace, X: Any, y: Any, err_console: Any) -> TuneResult:
    progress = report.progress_bar(err_console, disable=args.quiet)
    advance = progress.tune_callback()  # the bar starts with the first result

    kernel, bounds = _kernel_and_bounds(args)
    # --threads: the most cores busy at once, here as BLAS and engine threads.
    limits = threadpool_limits(args.threads) if args.threads else None
    try:
        with config_context(n_threads=args.threads):
            return tune(X, y, kernel=kernel, method=args.method, target=args.tolerance,
                        cv=args.cv, time_budget=args.time_budget,
                        random_state=args.random_state, n_components=args.n_components,
                        task=args.task, search_rows=args.search_rows,
                        max_components=args.max_components, progress=advance,
                        gamma_bounds=bounds, scale=args.scale,
                        memory_budget=None if args.memory_budget is None
                        else args.memory_budget * 1e9)
    except (TypeError, ValueError) as error:
        # The values are checked by the option types; what is left concerns the data, and
        # where a message names a parameter, the user typed its option.
        message = str(error).replace("n_components=", "--n-components ").replace(
            "search_rows", "--search-rows")
        raise ValueError(message) from error
    finally:
        if progress.started:
            progress.step(1.0, 1.0, description="done")
        progress.close()
        if limits is not None:
            limits.unregister()


def run(args: argparse.Namespace) -> int:
    """Run ``kernelmaps tune`` with parsed ``args``; returns the exit status."""
    start = time.perf_counter()
    out_console = report.console(quiet=args.quiet or args.json)
    err_console = report.console(stderr=True, quiet=args.quiet)
    try:
        check_fits_in_memory(args.data, "tune")
        data = load_dataset(args.data, target=args.target, require_target=True)
    except DataError as error:
        raise ValueError(error.describe({"target": "--target COLUMN"})) from error
    task = check_data(data, args)  # in files, columns and flags, before any work
    X, y, X_test, y_test, split = _split(data, args, task)
    # With the table's column names: the model --save writes checks them on predict.
    X, X_test = _named(X, data), _named(X_test, data)
    result = _run_tune(args, X, y, err_console)
    test_score = None if X_test is None else float(result.estimator.score(X_test, y_test))
    wall = time.perf_counter() - start
    reproduce = compare_command(args, result)
    p = result.params
    choice = {
        "scaling": f"{result.scale} ({result.scale_reason})",
        "kernel": f"{p['kernel']}, {result.scale_name} = {p[result.scale_name]:.6g} (median "
                  f"heuristic {result.heuristic:.6g})",
        "method": f"{p['method']}, n_components = {p['n_components']}",
        "alpha": f"{p['alpha']:.6g}",
        "validation score": f"{result.score:.4f} ({result.scoring}, {result.cv} on "
                            f"{X.shape[0]} rows)",
        "test score": "–" if test_score is None else f"{test_score:.4f} ({split})",
        "search": f"{len(result.trials)} configurations in {result.time_s:.1f} s; stopped: "
                  f"{result.stopped}",
        "reproduce with": reproduce,
    }
    settings = {
        "command": shlex.join(["kernelmaps", *getattr(args, "argv", [])]),
        "data": f"{data.name} ({data.shape_text()}, {data.source})",
        "task": task, "cv": str(args.cv), "tolerance": f"{args.tolerance:g}",
        "time budget": "none" if args.time_budget is None else f"{args.time_budget:g} s",
        "search rows": str(args.search_rows), "max components": str(args.max_components),
        "memory budget": ("half the memory available" if args.memory_budget is None
                          else f"{args.memory_budget:g} GB"),
        "random_state": str(args.random_state),
        "threads": "all cores" if args.threads is None else str(args.threads),
        "wall time": f"{wall:.1f} s",
    }
    title = f"kernelmaps tune: {data.name}, {p['kernel']} kernel, {p['method']}"
    html_path = write_report(Path(args.out), result, title, choice, settings)
    if args.save is not None:
        model_io.dump(result.estimator, args.save)
    for name, value in choice.items():
        out_console.print(f"[bold]{name}:[/bold] {value}", markup=True, soft_wrap=True)
    out_console.print(f"report: {html_path}" + (f"; model: {args.save}" if args.save else ""))
    for note in result.notes:
        err_console.print(f"[yellow]note:[/yellow] {note}", markup=True)
    if args.json:
        print(json.dumps({"params": p, "score": result.score, "scoring": result.scoring,
                          "cv": result.cv, "test_score": test_score, "split": split,
                          "scale": result.scale, "scale_reason": result.scale_reason,
                          "task": result.task, "heuristic": result.heuristic,
                          "stopped": result.stopped, "time_s": result.time_s,
                          "compare_command": reproduce, "report": str(html_path),
                          "model": args.save, "notes": result.notes, "settings": settings,
                          "trials": json.loads(result.table.to_json(orient="records"))},
                         indent=2))
    return 0
