"""``kernelmaps compare`` as a reader sees it in a terminal of 80 and 120 columns.

The command runs in a real pseudo-terminal (``os.openpty``) whose size is set with
``TIOCSWINSZ`` (and ``COLUMNS``), as a terminal emulator would, so rich takes its width from
the terminal. Checked: no line is wider than the terminal, no cell is cut ('…'), every
abbreviation in a table has a legend line under it, every method has one, and the advice
(the estimates and the sentence) is there whole.
"""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.cells import cell_len
from rich.console import Console

from kernelmaps.cli import report
from kernelmaps.cli.report import terminal
from tests.cli.conftest import pty_output

pty = pytest.importorskip("pty")  # pseudo-terminals: POSIX only
fcntl = pytest.importorskip("fcntl")
termios = pytest.importorskip("termios")

#: A small grid on bundled data: structured merges n_components 25 and 50 (D = 64 on 64
#: pixels, shown as n "25–50"), and at D ≤ 64 no method comes within 1 % of the exact
#: score, so the advice has an estimate per method and its "no method" sentence.
ARGS = ["compare", "--data", "digits", "--methods", "nystroem,rbf_sampler,structured",
        "--n-components", "25,50", "--seeds", "2", "--threads", "1"]


def run_in_terminal(columns: int, *extra: str, out: Path) -> list[str]:
    """Run ``python -m kernelmaps`` on a pseudo-terminal ``columns`` wide; the lines it
    showed (escape sequences removed; of a line redrawn with carriage returns — the
    progress bar — each state)."""
    code, text = pty_output(*ARGS, *extra, "--out", str(out), columns=columns)
    assert code == 0, text
    # A lone CR redraws a line (the progress bar): each state of a line is kept.
    return [state for line in text.split("\n") for state in line.split("\r")]


def headers(lines: list[str], first: str = "method") -> list[list[str]]:
    """The header cells of each table (a line starting with ``first`` above a rule)."""
    found = []
    for line, below in itertools.pairwise(lines):
        if line.startswith(first) and set(below.strip()) == {"─"}:
            found.append(re.split(r"\s{2,}", line.strip()))
    return found


def has_legend(lines: list[str], term: str) -> bool:
    """A legend line: the term, spaces, then words (not a table row, whose cells are numbers)."""
    return any(re.match(rf"{re.escape(term)} +[^\d\s–]", line) for line in lines)


def joined(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def check_reads_well(lines: list[str], columns: int, out: Path, wrap: bool = True) -> None:
    if wrap:
        too_wide = [line for line in lines if cell_len(line.rstrip()) > columns]
        assert not too_wide, too_wide
    assert not any("…" in line for line in lines), "a cut cell"
    summary, advice = headers(lines)
    assert summary[:3] == ["method", "n", "D"], summary
    for header in summary[1:] + advice[1:]:
        assert has_legend(lines, header), f"no legend line for {header!r}"
    results = pd.read_csv(out / "summary.csv")
    for method in results["method"].unique():
        assert has_legend(lines, method), f"no legend line for the method {method!r}"
    # The advice whole: each method's estimate, and the sentence to its last word.
    text = joined(lines)
    for estimate in pd.read_csv(out / "advice.csv")["advice"]:
        assert " ".join(estimate.split()) in text, estimate
    assert re.search(r"No method came within 1 % of the reference score at the dimensions "
                     r"tried\. Closest: \w+ at D=[\d,]+, score [\d.]+, [\d.]+ % below the "
                     r"reference\. Next: .+ Reference: the exact kernel's score "
                     r"\(0\.9\d+\)\.", text), text[-600:]


@pytest.fixture(scope="module")
def at_80(tmp_path_factory):
    out = tmp_path_factory.mktemp("report80")
    return run_in_terminal(80, out=out), out


def test_80_columns_compact_table_fits_and_reads_well(at_80):
    lines, out = at_80
    check_reads_well(lines, 80, out)
    summary = headers(lines)[0]
    # The compact layout: the spreads are left to --wide and the report.
    assert "95% CI" not in summary and "± sd" not in summary and "CPU range" not in summary
    assert summary == ["method", "n", "D", "error", "score", "CPU s", "MB", "α"]
    assert "95% CI" in (out / "report.html").read_text()
    # Standardising lowers digits' exact score (docs/cli.md, Feature scales): no warning.
    assert "--scale" not in joined(lines)
    # structured's merged requests: n shows the span, D the map's dimension.
    assert any(re.match(r"structured +25–50 +64 ", line) for line in lines)


def test_120_columns_full_table_with_spreads(tmp_path):
    lines = run_in_terminal(120, out=tmp_path)
    check_reads_well(lines, 120, tmp_path)
    summary = headers(lines)[0]
    assert {"95% CI", "± sd", "CPU range"} <= set(summary), summary


def test_wide_at_80_columns_shows_the_spreads_uncut(tmp_path):
    lines = run_in_terminal(80, "--wide", out=tmp_path)
    # --wide asks for the full table whatever the terminal: its lines may be wider than
    # 80 columns, but no cell is cut and the legend covers the extra columns.
    check_reads_well(lines, 80, tmp_path, wrap=False)
    summary = headers(lines)[0]
    assert {"95% CI", "± sd", "CPU range"} <= set(summary), summary
    assert any(cell_len(line.rstrip()) > 80 for line in lines)


# ------------------------------------------------------------------ the layout, in process
def widest_summary(alpha: bool) -> pd.DataFrame:
    """Summary rows with the widest cells the table can hold: the longest method name, a
    merged span of requests, four-digit D, many-digit errors, times and memory."""
    rows = []
    for method, d in (("exact", 1347), ("additive_chi2", 1024), ("rbf_sampler", 800)):
        rows.append({"method": method, "n_components": 100, "n_features_out": d,
                     "n_components_same_map": "100 200 400 800", "runs": 3,
                     "error": 0.000716, "error_ci_low": 0.000123, "error_ci_high": 0.00456,
                     "score": 0.98961, "score_std": 0.01234, "cpu_time_s": 12.345,
                     "cpu_time_min_s": 10.123, "cpu_time_max_s": 99.456,
                     "peak_memory_mb": 1234.5, "fit_time_s": 1.0, "transform_time_s": 1.0,
                     "total_time_s": 2.0})
    table = pd.DataFrame(rows)
    if alpha:
        table["alpha"] = [float("nan"), 1e-3, 10.0]  # none for the exact row
    return table


@pytest.mark.parametrize("alpha", [False, True])
def test_compact_layout_fits_80_columns_with_the_widest_cells(alpha):
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, highlight=False, color_system=None)
    layout = report.print_summary(console, widest_summary(alpha), "title", "caption")
    lines = buffer.getvalue().splitlines()
    assert layout == "compact"
    assert max(cell_len(line.rstrip()) for line in lines) <= 80
    assert "…" not in buffer.getvalue()
    summary = headers(lines)[0]
    # The optional α column (the ridge α per row, when the summary has one) has its place.
    assert ("α" in summary) == alpha
    if alpha:
        assert has_legend(lines, "α")
        assert any(re.match(r"additive_chi2 .* 1e-03$", line.rstrip()) for line in lines)
        assert any(re.match(r"exact .* –$", line.rstrip()) for line in lines)
    assert np.all([has_legend(lines, h) for h in summary[1:]])


def test_every_terminal_column_has_a_legend():
    for column in terminal._TERMINAL_COLUMNS:
        assert column.header == "method" or column.legend, column.header


def test_80_columns_scale_warning_repeated_beside_the_advice(tmp_path):
    # wine's 'proline' carries 99.8 % of the variance: the scale warning prints as the runs
    # start, then the tables push it off an 80 × 40 screen. It is said again right after
    # the advice, on the last screen (issue 27, item 5).
    lines = run_in_terminal(80, "--data", "wine", out=tmp_path)
    said = [i for i, line in enumerate(lines) if line.startswith("warning:")]
    assert len(said) == 2, said
    tables = [i for i, (line, below) in enumerate(itertools.pairwise(lines))
              if line.startswith("method") and set(below.strip()) == {"─"}]
    advice = max(i for i, line in enumerate(lines) if line.startswith("What to use"))
    reference = max(i for i, line in enumerate(lines) if "Reference:" in line)
    assert said[0] < tables[0] < tables[1] < said[1]  # first said before the tables ...
    # ... and again right after the advice's sentence (which goes on after "Reference:").
    assert advice < reference < said[1]
    between = lines[reference:said[1]]
    assert len(between) <= 6 and not any(line.startswith("note:") for line in between)
    assert joined(between).endswith("."), between
    assert tables[1] - said[0] > 40  # the first one has scrolled off a 40-row screen
    assert len(lines) - said[1] <= 40, lines[said[1]:]  # the repeat is on the last screen
    for start in said:  # both times whole, with what to do
        assert "--scale standard" in joined(lines[start:start + 4]), lines[start:start + 4]
    too_wide = [line for line in lines if cell_len(line.rstrip()) > 80]
    assert not too_wide, too_wide
