"""The cells of the report's tables: one formatter per summary column, shared by the terminal
(:mod:`kernelmaps.cli.report.terminal`) and the HTML page
(:mod:`kernelmaps.cli.report.html_page`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["SUMMARY_COLUMNS", "alpha", "cpu_range", "error_ci", "requested", "summary_cells"]


def error_ci(row: Any) -> str:
    """The mean error's 95 % interval, ``low–high`` (``–`` for a single seed), both ends in
    one notation: ``0.012–0.034``, or ``5.1e-12–1.7e+01`` when either needs an exponent
    (never ``5.1e-12–17``)."""
    low, high = float(row["error_ci_low"]), float(row["error_ci_high"])
    if low == high:
        return "–"
    if all(value == 0 or 1e-3 <= abs(value) < 1e4 for value in (low, high)):
        return f"{low:.3g}–{high:.3g}"
    return f"{low:.1e}–{high:.1e}"


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


def alpha(row: Any) -> str:
    """Ridge's α of the row (the median over its runs), short: ``1e-03``; ``–`` where the row
    has none (the exact kernel's row, a summary without the column)."""
    value = row.get("alpha")
    return "–" if value is None or not math.isfinite(value) else f"{value:.0e}"


def _versus_exact(row: Any) -> str:
    """The score's difference from the exact kernel's, in standard errors of the paired
    difference on the test rows when the row scores above it."""
    difference, se = row.get("score_diff"), row.get("score_diff_se")
    if difference is None or not math.isfinite(difference):
        return "–"
    if difference > 0 and se is not None and math.isfinite(se) and se > 0:
        return f"{difference:+.4f} ({difference / se:.1f} SE)"
    return f"{difference:+.4f}"


def cpu_range(row: Any) -> str:
    """The fastest–slowest run in CPU seconds (``–`` for one run)."""
    if "cpu_time_min_s" not in row or row["runs"] < 2:
        return "–"
    return f"{row['cpu_time_min_s']:.3f}–{row['cpu_time_max_s']:.3f}"


def requested(row: Any) -> str:
    """The n_components asked for: the one request, or the span of those that gave this
    same map (run once)."""
    requests = str(row.get("n_components_same_map", row["n_components"])).split()
    return requests[0] if len(requests) <= 1 else f"{requests[0]}–{requests[-1]}"


# Summary columns of the report: header → cell text (all of them, in the HTML table).
SUMMARY_COLUMNS: dict[str, Callable[[Any], str]] = {
    "method": lambda r: r["method"],
    "D": _dimension,
    "runs": lambda r: str(r["runs"]),
    "kernel error": lambda r: f"{r['error']:.3g}",
    "95% CI": error_ci,
    "score": lambda r: f"{r['score']:.4f}",
    "± sd": lambda r: f"{r['score_std']:.4f}" if r["runs"] > 1 else "–",
    "α": alpha,
    "vs exact": _versus_exact,
    "fit s": lambda r: f"{r['fit_time_s']:.3f}",
    "transform s": lambda r: f"{r['transform_time_s']:.3f}",
    "total s": lambda r: f"{r['total_time_s']:.3f}",
    "CPU s": lambda r: f"{r['cpu_time_s']:.3f}" if "cpu_time_s" in r else "–",
    "CPU range": cpu_range,
    "peak MB": lambda r: f"{r['peak_memory_mb']:.1f}",
}


def summary_cells(summary: Any, columns: Sequence[str]) -> list[tuple[str, ...]]:
    """The summary as display strings for the HTML report."""
    return [tuple(SUMMARY_COLUMNS[c](row) for c in columns) for _, row in summary.iterrows()]
