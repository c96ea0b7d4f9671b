"""What the ``kernelmaps`` command shows: terminal tables and the HTML report folder.

:func:`print_summary` draws the summary of a comparison in the terminal (rich);
:func:`write_report` writes the report folder: a self-contained ``report.html`` (plots as
base64 PNG, the summary, the settings, the versions), ``results.csv``, ``summary.csv`` and
the four PNG plots of :mod:`kernelmaps.evaluate.plots` (matplotlib, Agg backend).
:func:`print_datasets` lists the named data sets. rich and matplotlib (the ``cli`` extra)
are imported when something is drawn.
"""

from __future__ import annotations

import base64
import html
import math
import os
import platform
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from kernelmaps._optional import import_optional
from kernelmaps._progress import Progress
from kernelmaps.cli.data import DatasetInfo
from kernelmaps.evaluate import METHODS, plot_error, plot_error_time, plot_pareto, plot_score
from kernelmaps.evaluate.advice import advice_heading, advice_rule_text, advice_sentence
from kernelmaps.evaluate.registry import EXACT

__all__ = ["PLOTS", "print_advice", "print_datasets", "print_summary", "write_report"]

#: The report's plots: file name → plot function of :mod:`kernelmaps.evaluate`.
PLOTS = {"error.png": plot_error, "score.png": plot_score, "pareto.png": plot_pareto,
         "error_time.png": plot_error_time}


def _error_ci(row: Any) -> str:
    if row["error_ci_low"] == row["error_ci_high"]:
        return "–"
    return f"{row['error_ci_low']:.3g}–{row['error_ci_high']:.3g}"


def _dimension(row: Any) -> str:
    """D, and what was asked for when a map rounds it (cos/sin pairs, Hadamard blocks): the
    requests that gave this same map, run once (``n=25–800``), or the one request."""
    dimension = row["n_features_out"]
    requests = str(row.get("n_components_same_map", row["n_components"])).split()
    if row["method"] == "exact" or (len(requests) <= 1
                                    and dimension == row["n_components"]):
        return str(dimension)
    asked = requests[0] if len(requests) <= 1 else f"{requests[0]}–{requests[-1]}"
    return f"{dimension} (n={asked})"


def _alpha(row: Any) -> str:
    """Ridge's α of the row (the median over its runs), short: ``1e-03``."""
    alpha = row.get("alpha")
    return "–" if alpha is None or not math.isfinite(alpha) else f"{alpha:.0e}"


def _versus_exact(row: Any) -> str:
    """The score's difference from the exact kernel's, in standard errors of the paired
    difference on the test rows when the row scores above it."""
    difference, se = row.get("score_diff"), row.get("score_diff_se")
    if difference is None or not math.isfinite(difference):
        return "–"
    if difference > 0 and se is not None and math.isfinite(se) and se > 0:
        return f"{difference:+.4f} ({difference / se:.1f} SE)"
    return f"{difference:+.4f}"


def _cpu_range(row: Any) -> str:
    if "cpu_time_min_s" not in row or row["runs"] < 2:
        return "–"
    return f"{row['cpu_time_min_s']:.3f}–{row['cpu_time_max_s']:.3f}"


# Summary columns of the report: header → cell text (all of them, in the HTML table).
_SUMMARY_COLUMNS: dict[str, Callable[[Any], str]] = {
    "method": lambda r: r["method"],
    "D": _dimension,
    "runs": lambda r: str(r["runs"]),
    "kernel error": lambda r: f"{r['error']:.3g}",
    "95% CI": _error_ci,
    "score": lambda r: f"{r['score']:.4f}",
    "± sd": lambda r: f"{r['score_std']:.4f}" if r["runs"] > 1 else "–",
    "α": _alpha,
    "vs exact": _versus_exact,
    "fit s": lambda r: f"{r['fit_time_s']:.3f}",
    "transform s": lambda r: f"{r['transform_time_s']:.3f}",
    "total s": lambda r: f"{r['total_time_s']:.3f}",
    "CPU s": lambda r: f"{r['cpu_time_s']:.3f}" if "cpu_time_s" in r else "–",
    "CPU range": _cpu_range,
    "peak MB": lambda r: f"{r['peak_memory_mb']:.1f}",
}


def _summary_cells(summary: Any, columns: Sequence[str]) -> list[tuple[str, ...]]:
    """The summary as display strings for the HTML report."""
    return [tuple(_SUMMARY_COLUMNS[c](row) for c in columns) for _, row in summary.iterrows()]


# =========================================================================== terminal
@dataclass(frozen=True)
class _Column:
    """A column of a terminal table: its header, its cells, the legend line that explains
    the header, whether it is a spread (shown only in the wide layout), and the summary
    column it needs (an optional column is shown only when the summary has it)."""

    header: str
    cell: Callable[[Any], str]
    legend: str
    spread: bool = False
    needs: str | None = None


def _alpha(row: Any) -> str:
    alpha = row["alpha"]
    if alpha is None or alpha != alpha:  # NaN: no α for this row (the exact kernel's, say)
        return "–"
    return f"{alpha:.0e}"


def _requested(row: Any) -> str:
    """The n_components asked for: the one request, or the span of those that gave this
    same map (run once)."""
    requests = str(row.get("n_components_same_map", row["n_components"])).split()
    return requests[0] if len(requests) <= 1 else f"{requests[0]}–{requests[-1]}"


#: The terminal's summary table. Below the width the wide layout needs (about 100–115
#: columns), the compact layout leaves the spreads out (``--wide`` and the report have them);
#: a short optional column (the ridge α per row, when the summary has ``alpha``) fits both.
_TERMINAL_COLUMNS = (
    _Column("method", lambda r: r["method"], ""),
    _Column("n", _requested, "n_components asked for; a span (25–50) where several gave "
            "one same map, run once"),
    _Column("D", lambda r: str(r["n_features_out"]), "output features of the map (cos/sin "
            "pairs and Hadamard blocks round n up)"),
    _Column("error", _SUMMARY_COLUMNS["kernel error"], "kernel approximation error "
            "‖K − ZZᵀ‖/‖K‖ on training rows, mean over seeds"),
    _Column("95% CI", _error_ci, "the mean error's 95 % interval over seeds (log scale)",
            spread=True),
    _Column("score", _SUMMARY_COLUMNS["score"], "test score (accuracy, or R² for "
            "regression), mean over seeds and folds"),
    _Column("± sd", _SUMMARY_COLUMNS["± sd"], "standard deviation of the score over the runs",
            spread=True),
    _Column("CPU s", _SUMMARY_COLUMNS["CPU s"], "median CPU seconds of one run (map fit, "
            "transform, model fit and score)"),
    _Column("CPU range", _cpu_range, "fastest–slowest run, CPU seconds", spread=True),
    _Column("MB", _SUMMARY_COLUMNS["peak MB"], "peak memory of a run "
            "(tracemalloc: NumPy and Python allocations), megabytes"),
    _Column("α", _alpha, "ridge regularisation chosen for the row", needs="alpha"),
)
#: The advice table's own abbreviation (the others are the summary's).
_GAP_LEGEND = "relative gap to the reference score, (reference − score)/|reference|"


def _layout_columns(summary: Any, wide: bool) -> list[_Column]:
    return [c for c in _TERMINAL_COLUMNS
            if (wide or not c.spread) and (c.needs is None or c.needs in summary.columns)]


def _first_clause(text: str) -> str:
    """``text`` up to its first ';' outside parentheses (a method's description, short)."""
    depth = 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" and depth == 0:
            return text[:i]
    return text


def _method_legend(method: str) -> str:
    if method == EXACT:
        return "the exact kernel: the same model on the kernel matrix itself"
    known = METHODS.get(method)
    return _first_clause(known.description) if known is not None and known.description else ""


def _summary_table(summary: Any, columns: Sequence[_Column], title: str) -> Any:
    box = import_optional("rich.box")
    Table = import_optional("rich.table").Table
    table = Table(title=title, header_style="bold", box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False)
    for i, column in enumerate(columns):
        # Folded, never cut: a cell too long for its column wraps onto a second line.
        table.add_column(column.header, justify="left" if i == 0 else "right",
                         overflow="fold")
    previous = None
    for _, row in summary.iterrows():
        cells = [column.cell(row) for column in columns]
        if previous is not None and cells[0] != previous:
            table.add_section()
        table.add_row(*cells, style="bold" if cells[0] == EXACT else None)
        previous = cells[0]
    return table


def _legend(entries: Sequence[tuple[str, str]]) -> Any:
    """Term – meaning lines, the meanings wrapped in their own column."""
    grid = import_optional("rich.table").Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for term, meaning in entries:
        grid.add_row(term, meaning)
    return grid


def _width_of(console: Any, renderable: Any) -> int:
    """The width ``renderable`` takes unconstrained (rich clamps to the console's width)."""
    measurement = import_optional("rich.measure").Measurement
    unbounded = console.options.update_width(10_000)
    return measurement.get(console, unbounded, renderable).maximum


def print_summary(console: Any, summary: Any, title: str, caption: str, *,
                  wide: bool = False) -> str:
    """The summary table in the terminal, a legend line per abbreviation under it, then
    ``caption`` (wrapped to the console's width, not the table's).

    The wide layout (with the spreads: the error's 95 % interval, the score's standard
    deviation, the CPU-time range) when it fits the console or ``wide`` asks for it (then
    printed at its full width, whatever the console's); else the compact layout without
    them. Returns the layout used, ``'wide'`` or ``'compact'``.
    """
    table = _summary_table(summary, _layout_columns(summary, wide=True), title)
    needed = _width_of(console, table)
    layout = "wide" if wide or needed <= console.width else "compact"
    if layout == "compact":
        table = _summary_table(summary, _layout_columns(summary, wide=False), title)
    shown = _layout_columns(summary, wide=layout == "wide")
    entries = [(c.header, c.legend) for c in shown if c.legend]
    entries += [(m, _method_legend(m)) for m in dict.fromkeys(summary["method"])
                if _method_legend(m)]
    width = console.width
    if wide:
        console.width = max(width, needed)
    try:
        console.print(table)
        console.print(_legend(entries))
        console.print(caption)
    finally:
        console.width = width
    return layout


def _advice_row(row: Any) -> tuple[str, ...]:
    meets = row["meets"]
    mark = " ★" if row["advised"] else " ≈" if row["fastest"] else ""
    return (row["method"] + mark,
            str(row["n_components"]) if meets else "–",
            str(row["n_features_out"]) if meets else "–",
            f"{row['score']:.4f}" if meets else "–",
            f"{row['score_gap']:.2%}" if meets else "–",
            f"{row['cpu_time_s']:.3f}" if meets else "–",
            f"{row['peak_memory_mb']:.1f}" if meets else "–")


_ADVICE_TERMINAL = ("method", "n", "D", "score", "gap", "CPU s", "MB")


def print_advice(console: Any, advice: Any, warnings: Sequence[str] = ()) -> None:
    """What to use (:func:`kernelmaps.evaluate.advise`): a table of short columns (it fits
    80 columns), the estimates of the methods that missed the tolerance as wrapped lines
    under it (a table column would wrap them over many lines), and one sentence; nothing
    is cut. Then each of ``warnings`` (``warning: …``) once more: said when the runs
    started, it has scrolled away under the tables by now, and it bears on the advice
    (the scale warning: the exact score itself may be low)."""
    box = import_optional("rich.box")
    Table = import_optional("rich.table").Table
    # The heading wraps to the console's width (a table title wraps to the table's).
    console.print(advice_heading(advice.attrs["tolerance"]), style="bold italic")
    table = Table(header_style="bold", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for i, header in enumerate(_ADVICE_TERMINAL):
        table.add_column(header, justify="left" if i == 0 else "right", overflow="fold")
    for _, row in advice.iterrows():
        table.add_row(*_advice_row(row))
    console.print(table)
    estimates = [(row["method"], row["advice"]) for _, row in advice.iterrows()
                 if not row["meets"]]
    console.print(_legend([("gap", _GAP_LEGEND), *estimates]))
    console.print(advice_sentence(advice))
    escape = import_optional("rich.markup").escape
    for warning in warnings:
        console.print(f"[yellow]warning:[/yellow] "
                      f"{escape(warning.removeprefix('warning:').strip())}", markup=True)


#: The advice table of the report: header → cell text.
_ADVICE_COLUMNS: dict[str, Callable[[Any], str]] = {
    "method": lambda r: r["method"] + (" ★" if r["advised"] else " ≈" if r["fastest"] else ""),
    "n_components": lambda r: str(r["n_components"]) if r["meets"] else "–",
    "score": lambda r: f"{r['score']:.4f}" if r["meets"] else "–",
    "gap": lambda r: f"{r['score_gap']:.2%}" if r["meets"] else "–",
    "CPU s": lambda r: f"{r['cpu_time_s']:.3f}" if r["meets"] else "–",
    "peak MB": lambda r: f"{r['peak_memory_mb']:.1f}" if r["meets"] else "–",
    "estimate": lambda r: (r["advice"] if not r["meets"] or r.get("beats_reference", False)
                           else ""),
}


#: Columns of the HTML tables whose cells may wrap (words); every other cell is a number or
#: a short name and never breaks (``3e-05`` over two lines, a range at its dash).
_WRAPPING_COLUMNS = frozenset({"estimate", "value", "version"})


_FLAG = re.compile(r"(--[a-z][\w-]*)")


def _warnings_html(warnings: Sequence[str]) -> str:
    """The run's warnings as a block for the top of the report, beside the advice (they
    change what the advice means: a scale warning says the exact score itself may be low)."""
    if not warnings:
        return ""
    # A flag is one unbreakable piece: "consider --" / "scale standard" across two lines
    # does not read as a flag.
    items = "".join("<li>" + _FLAG.sub(r'<code class="flag">\1</code>',
                                        html.escape(w.removeprefix("warning:").strip()))
                    + "</li>" for w in warnings)
    return (f'<div class="warnings" role="alert"><strong>Warning{"s" if len(warnings) > 1 else ""}'
            f"</strong><ul>{items}</ul></div>")


def _advice_html(advice: Any, warnings: Sequence[str] = ()) -> str:
    """The "What to use" section: the warnings first, then the advice's sentence, its table
    and the rule; only the warnings when there is no advice."""
    if advice is None:
        return (f'<section class="advice"><h2>What to use</h2>{_warnings_html(warnings)}'
                "</section>") if warnings else ""
    rows = [tuple(cell(row) for cell in _ADVICE_COLUMNS.values())
            for _, row in advice.iterrows()]
    return ('<section class="advice"><h2>What to use</h2>' + _warnings_html(warnings)
            + f"<p>{html.escape(advice_sentence(advice))}</p>"
            + _html_table(list(_ADVICE_COLUMNS), rows, css="advice")
            + f"<p class=\"muted\">{html.escape(advice_rule_text(advice.attrs['tolerance']))}"
              "</p></section>")


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


#: Pixels per inch of the plot files: 150 makes the 6.4-inch figures 960 px wide, sharp at
#: the half-page width (about 650 px) the report shows them at, also on high-density screens.
PLOT_DPI = 150


def _write_plots(out: Path, results: Any) -> dict[str, bytes]:
    matplotlib = import_optional("matplotlib")
    matplotlib.use("Agg")  # files only: no display, same output everywhere
    images = {}
    for name, plot in PLOTS.items():
        ax = plot(results)
        ax.figure.savefig(out / name, dpi=PLOT_DPI)
        images[name] = (out / name).read_bytes()
    return images


def plot_alt_text(name: str, results: Any) -> str:
    """What the plot ``name`` of :data:`PLOTS` shows, in words (the image's alt text)."""
    approx = results[results["method"] != "exact"]
    methods = ", ".join(dict.fromkeys(approx["method"])) or "none"
    dims = approx["n_features_out"]
    span = f"D from {dims.min()} to {dims.max()}" if len(dims) else "no approximations"
    exact = results.loc[results["method"] == "exact", "score"]
    baseline = (f"; the exact kernel's score, {exact.mean():.4g}, as a dashed line"
                if len(exact) else "")
    texts = {
        "error.png": "Kernel approximation error ‖K − ZZᵀ‖/‖K‖ against the output dimension "
                     f"D, log–log, one line per method ({methods}) with its 95 % interval "
                     f"band; {span}.",
        "score.png": f"Test score against the output dimension D, one line per method "
                     f"({methods}), {span}{baseline}.",
        "pareto.png": "Test score against time (map fit, transform and model fit), one point "
                      f"per method ({methods}) and dimension, labelled with D; the Pareto "
                      "front (the best score for the time) as a staircase.",
        "error_time.png": "Kernel approximation error against time, log–log, one line per "
                          f"method ({methods}), {span}.",
    }
    return texts.get(name, f"Plot {name} of the comparison of {methods}.")


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1400px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}
.scroll{overflow-x:auto;max-width:100%}td.num,td:first-child{white-space:nowrap}
.warnings{border-left:4px solid #d08c00;background:#fff6e0;padding:.4em 1em;margin:.6em 0}
.warnings ul{margin:.2em 0;padding-left:1.2em}
th,td{border-bottom:1px solid #ddd;padding:.3em .7em;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}
tr.exact td{font-weight:bold;background:#fbf7e6}
.plots{display:flex;flex-wrap:wrap;gap:1em}.plots img{width:48%;min-width:420px;height:auto}
.muted{color:#666;font-size:.9em}code{background:#f4f4f4;padding:0 .2em}
code.flag{white-space:nowrap}
table.kv td,table.kv th{text-align:left}
table.advice td:last-child,table.advice th:last-child{text-align:left}
"""


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
                row_class: Sequence[str] | None = None, css: str = "") -> str:
    """A table in a horizontally scrolling box. The cells of the first column (a name:
    the method, the setting) and the number columns, ``class="num"`` — every column but
    the wordy ones (:data:`_WRAPPING_COLUMNS`) — never wrap."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    cell_class = ["" if i == 0 or h in _WRAPPING_COLUMNS else ' class="num"'
                  for i, h in enumerate(headers)]
    body = []
    for i, row in enumerate(rows):
        row_css = f' class="{row_class[i]}"' if row_class and row_class[i] else ""
        body.append(f"<tr{row_css}>" + "".join(f"<td{cell_class[j]}>{html.escape(str(c))}</td>"
                                               for j, c in enumerate(row)) + "</tr>")
    table_class = f' class="{css}"' if css else ""
    return (f'<div class="scroll"><table{table_class}><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _render_html(title: str, summary: Any, settings: dict[str, Any],
                 versions: dict[str, str], images: dict[str, bytes], notes: list[str],
                 advice: Any = None, alt: dict[str, str] | None = None,
                 warnings: Sequence[str] = ()) -> str:
    cells = _summary_cells(summary, list(_SUMMARY_COLUMNS))
    alt = alt or {}
    plots = "".join(
        f'<img alt="{html.escape(alt.get(name, name))}" src="data:image/png;base64,'
        f'{base64.b64encode(data).decode("ascii")}">' for name, data in images.items())
    notes_html = ("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes)
                  + "</ul>") if notes else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{_CSS}</style></head>
<body>
<h1>{html.escape(title)}</h1>
{_advice_html(advice, warnings)}
<p class="muted">kernelmaps compare — each feature map with a linear model on its features,
next to the same model on the exact kernel. Kernel error: ‖K − ZZᵀ‖/‖K‖ on training rows
(mean over seeds; 95% interval computed on the log scale — a Student-t interval of
the mean log error, exponentiated — so it is never below zero). Times are medians over the
runs (seeds, folds), each run on one thread: wall times, and the CPU time with its range
(smallest–largest run), which the advice compares; memory is the tracemalloc peak (NumPy
and Python allocations). A map that several n_components give (n=25–800) ran once.
α is ridge's penalty for the row (the median over its runs): chosen per row by exact
leave-one-out on its training rows unless --alpha fixed it. vs exact: the mean score minus the
exact kernel's, and for a row above it that difference in standard errors of the paired
difference on the test rows (above 2: beyond the split's noise).</p>
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


def write_report(out: Path, results: Any, summary: Any, title: str,
                 settings: dict[str, Any], notes: list[str], advice: Any = None, *,
                 warnings: Sequence[str] = ()) -> Path:
    """Write ``report.html``, ``results.csv``, ``summary.csv`` and the plots into ``out``
    (and ``advice.csv``, with a "What to use" section, when ``advice`` is given).

    The "What to use" section opens the report, with ``warnings`` (the scale warning, the
    warnings the runs raised) in a block above the advice; every note, warnings included,
    is listed again under Notes.

    Returns the path of ``report.html``.
    """
    out.mkdir(parents=True, exist_ok=True)
    results.to_csv(out / "results.csv", index=False)
    summary.to_csv(out / "summary.csv", index=False)
    if advice is not None:
        advice.to_csv(out / "advice.csv", index=False)
    images = _write_plots(out, results)
    report = out / "report.html"
    alt = {name: plot_alt_text(name, results) for name in images}
    report.write_text(_render_html(title, summary, settings, _versions(), images, notes,
                                   advice, alt, warnings), encoding="utf-8")
    return report



def print_datasets(console: Any, infos: Sequence[DatasetInfo], title: str) -> None:
    """The named data sets as a table: name, size, description, availability, location.

    A location with a path or a command in it (a folder, an install hint) is printed under
    the table, on a line of its own: in a narrow cell rich would break it inside a word
    (``dataset-fashio`` / ``n-mnist``), and a broken command or path cannot be copied."""
    table = import_optional("rich.table").Table(title=title, header_style="bold")
    for header in ("name", "rows × features", "description", "available", "where"):
        table.add_column(header)
    below = []
    for info in infos:
        where = info.location
        if "/" in where or "`" in where:
            below.append(f"{info.name}: {where}")
            where = "see below"
        table.add_row(info.name, info.shape, info.description,
                      "yes" if info.available else "[red]no[/red]", where)
    console.print(table)
    for line in below:
        # rich wraps it between words: a path or a command is never cut inside
        console.print(line, markup=False)


def console(stderr: bool = False, quiet: bool = False) -> Any:
    """A rich console: the terminal's width, or ``COLUMNS`` when set; 110 columns when the
    output is not a terminal and ``COLUMNS`` is not set (rich would assume 80)."""
    Console = import_optional("rich.console").Console
    terminal = Console(stderr=stderr, quiet=quiet, highlight=False)
    if terminal.is_terminal or os.environ.get("COLUMNS", "").isdigit():
        return terminal
    return Console(stderr=stderr, quiet=quiet, highlight=False, width=110)


def progress_bar(on: Any, disable: bool) -> Progress:
    """The progress of a command: kernelmaps' one renderer (:class:`kernelmaps._progress.
    Progress`), rich, drawn on the console ``on``; quiet with ``disable``."""
    import_optional("rich.progress")  # the cli extra: say what to install
    return Progress(not disable, backend="rich", console=on)
