"""The report's plots: the four PNG files of :mod:`kernelmaps.evaluate.plots` (matplotlib,
Agg backend, imported when drawn) and the words that describe each (the image's alt text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernelmaps._optional import import_optional
from kernelmaps.evaluate import plot_error, plot_error_time, plot_pareto, plot_score

__all__ = ["PLOTS", "PLOT_DPI", "plot_alt_text", "write_plots"]

#: The report's plots: file name → plot function of :mod:`kernelmaps.evaluate`.
PLOTS = {"error.png": plot_error, "score.png": plot_score, "pareto.png": plot_pareto,
         "error_time.png": plot_error_time}

#: Pixels per inch of the plot files: 150 makes the 6.4-inch figures 960 px wide, sharp at
#: the half-page width (about 650 px) the report shows them at, also on high-density screens.
PLOT_DPI = 150


def write_plots(out: Path, results: Any) -> dict[str, bytes]:
    """Draw each of :data:`PLOTS` into ``out`` and return the PNG files' bytes by name."""
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
