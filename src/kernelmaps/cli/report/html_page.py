"""The report folder: a self-contained ``report.html`` (plots as base64 PNG, the advice, the
summary, the settings, the versions), ``results.csv``, ``summary.csv`` and the plots.

:data:`CSS`, :func:`html_table` and :func:`versions` are the page's parts that the tune
report (:mod:`kernelmaps.cli.tune`) shares."""

from __future__ import annotations

import base64
import html
import os
import platform
import re
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from kernelmaps.cli.report.cells import SUMMARY_COLUMNS, summary_cells
from kernelmaps.cli.report.plots import plot_alt_text, write_plots
from kernelmaps.evaluate.advice import advice_rule_text, advice_sentence

__all__ = ["CSS", "html_table", "versions", "write_report"]

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
            + html_table(list(_ADVICE_COLUMNS), rows, css="advice")
            + f"<p class=\"muted\">{html.escape(advice_rule_text(advice.attrs['tolerance']))}"
              "</p></section>")


def versions() -> dict[str, str]:
    """Name the software a report was made with.

    Returns
    -------
    dict of str to str
        Python, the platform, the packages, the BLAS and its threads, the cores available:
        the Versions table of the compare and the tune reports.
    """
    found = {"python": platform.python_version(),
                "platform": f"{platform.system()} {platform.release()} {platform.machine()}"}
    for package in ("kernelmaps", "numpy", "scipy", "scikit-learn", "pandas", "matplotlib",
                    "rich", "threadpoolctl"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - all are dependencies
            found[package] = "not installed"
    from threadpoolctl import threadpool_info

    blas = [f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    found["BLAS"] = "; ".join(blas) or "unknown"
    found["cores available"] = str(len(os.sched_getaffinity(0))
                                      if hasattr(os, "sched_getaffinity") else os.cpu_count())
    return found


#: The style sheet of the compare and tune reports.
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1400px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}
.scroll{overflow-x:auto;max-width:100%}td.num,td:first-child,.nw{white-space:nowrap}
td.num.breaks{white-space:normal}
.warnings{border-left:4px solid #d08c00;background:#fff6e0;padding:.4em 1em;margin:.6em 0}
.warnings ul{margin:.2em 0;padding-left:1.2em}
th,td{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}
tr.exact td{font-weight:bold;background:#fbf7e6}
.plots{display:flex;flex-wrap:wrap;gap:1em}.plots img{width:48%;min-width:420px;height:auto}
.muted{color:#666;font-size:.9em}code{background:#f4f4f4;padding:0 .2em}
code.flag{white-space:nowrap}
table.kv td,table.kv th{text-align:left}
table.advice td:last-child,table.advice th:last-child{text-align:left}
"""


#: Where a number cell may break onto a second line: before a parenthesis (``+0.0263`` /
#: ``(0.6 SE)``), and after an interval's dash outside one (``0.0012–`` / ``0.0034``).
_NOTE_BREAK = re.compile(r"(?<=\S) (?=\()")
_DASH_BREAK = re.compile(r"(?<=\S–)(?=\S)")


def _cell(text: str, css: str) -> str:
    """A ``<td>``: a number cell with an interval or a note breaks only at those points (so
    the summary's 15 columns fit 1,300 px), never inside a number (``1e-04``)."""
    value, *notes = _NOTE_BREAK.split(text) if css else [text]
    pieces = [*_DASH_BREAK.split(value), *notes] if css else [text]
    if len(pieces) == 1:
        return f"<td{css}>{html.escape(text)}</td>"
    spans = "<wbr>".join(f'<span class="nw">{html.escape(p)}</span>' for p in pieces)
    return f'<td class="num breaks">{spans}</td>'


def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
                row_class: Sequence[str] | None = None, css: str = "") -> str:
    """Render a table in a horizontally scrolling box (the compare and the tune reports).

    The cells of the first column (a name: the method, the setting) and the number
    columns, ``class="num"`` — every column but the wordy ones (:data:`_WRAPPING_COLUMNS`)
    — never wrap.

    Parameters
    ----------
    headers : sequence of str
        The column headers.
    rows : sequence of sequence of str
        The cells, row by row (escaped here).
    row_class : sequence of str, optional
        A CSS class per row (``"exact"`` highlights the exact kernel's rows).
    css : str, default=""
        The table's CSS class (``"kv"``: a key–value table, ``"advice"``).

    Returns
    -------
    str
        The HTML of the table.
    """
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    cell_class = ["" if i == 0 or h in _WRAPPING_COLUMNS else ' class="num"'
                  for i, h in enumerate(headers)]
    body = []
    for i, row in enumerate(rows):
        row_css = f' class="{row_class[i]}"' if row_class and row_class[i] else ""
        body.append(f"<tr{row_css}>" + "".join(_cell(str(c), cell_class[j])
                                               for j, c in enumerate(row)) + "</tr>")
    table_class = f' class="{css}"' if css else ""
    return (f'<div class="scroll"><table{table_class}><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _render_html(title: str, summary: Any, settings: dict[str, Any],
                 software: dict[str, str], images: dict[str, bytes], notes: list[str],
                 advice: Any = None, alt: dict[str, str] | None = None,
                 warnings: Sequence[str] = ()) -> str:
    cells = summary_cells(summary, list(SUMMARY_COLUMNS))
    alt = alt or {}
    plots = "".join(
        f'<img alt="{html.escape(alt.get(name, name))}" src="data:image/png;base64,'
        f'{base64.b64encode(data).decode("ascii")}">' for name, data in images.items())
    notes_html = ("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes)
                  + "</ul>") if notes else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title><style>{CSS}</style></head>
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
{html_table(list(SUMMARY_COLUMNS), cells, ["exact" if c[0] == "exact" else "" for c in cells])}
<p class="muted">Every run is in <code>results.csv</code>; this table is
<code>summary.csv</code>.</p>
{notes_html}
<h2>Settings</h2>
{html_table(("setting", "value"), list(settings.items()), css="kv")}
<h2>Versions</h2>
{html_table(("software", "version"), list(software.items()), css="kv")}
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
    images = write_plots(out, results)
    report = out / "report.html"
    alt = {name: plot_alt_text(name, results) for name in images}
    report.write_text(_render_html(title, summary, settings, versions(), images, notes,
                                   advice, alt, warnings), encoding="utf-8")
    return report
