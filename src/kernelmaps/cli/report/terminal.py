"""The report in the terminal (rich): the summary table with its legend, the advice, the data
sets, and the console and progress bar the commands draw on. rich (the ``cli`` extra) is
imported when something is drawn."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kernelmaps._optional import import_optional
from kernelmaps._progress import Progress, choose_backend
from kernelmaps.cli.data import DatasetInfo
from kernelmaps.cli.report.cells import SUMMARY_COLUMNS, alpha, cpu_range, error_ci, requested
from kernelmaps.evaluate import METHODS
from kernelmaps.evaluate.advice import advice_heading, advice_sentence
from kernelmaps.evaluate.registry import EXACT

__all__ = ["console", "print_advice", "print_datasets", "print_summary", "progress_bar"]


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


#: The terminal's summary table. Below the width the wide layout needs (about 100–115
#: columns), the compact layout leaves the spreads out (``--wide`` and the report have them);
#: a short optional column (the ridge α per row, when the summary has ``alpha``) fits both.
_TERMINAL_COLUMNS = (
    _Column("method", lambda r: r["method"], ""),
    _Column("n", requested, "n_components asked for; a span (25–50) where several gave "
            "one same map, run once"),
    _Column("D", lambda r: str(r["n_features_out"]), "output features of the map (cos/sin "
            "pairs and Hadamard blocks round n up)"),
    _Column("error", SUMMARY_COLUMNS["kernel error"], "kernel approximation error "
            "‖K − ZZᵀ‖/‖K‖ on training rows, mean over seeds"),
    _Column("95% CI", error_ci, "the mean error's 95 % interval over seeds (log scale)",
            spread=True),
    _Column("score", SUMMARY_COLUMNS["score"], "test score (accuracy, or R² for "
            "regression), mean over seeds and folds"),
    _Column("± sd", SUMMARY_COLUMNS["± sd"], "standard deviation of the score over the runs",
            spread=True),
    _Column("CPU s", SUMMARY_COLUMNS["CPU s"], "median CPU seconds of one run (map fit, "
            "transform, model fit and score)"),
    _Column("CPU range", cpu_range, "fastest–slowest run, CPU seconds", spread=True),
    _Column("MB", SUMMARY_COLUMNS["peak MB"], "peak memory of a run "
            "(tracemalloc: NumPy and Python allocations), megabytes"),
    _Column("α", alpha, "ridge regularisation chosen for the row", needs="alpha"),
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
    Progress`) on the console ``on``: rich's bar on a terminal, else plain flushed lines at
    least every 10 s (a bar reaches a file or a pipe only when it ends); quiet with
    ``disable``."""
    import_optional("rich.progress")  # the cli extra: say what to install
    backend = "rich" if on.is_terminal else choose_backend(on.file)
    return Progress(not disable, backend=backend, console=on)
