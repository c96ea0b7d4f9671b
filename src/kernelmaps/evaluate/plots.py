"""The four views of a :func:`~kernelmaps.evaluate.compare` table, drawn with matplotlib.

:func:`plot_error` (approximation error against the output dimension), :func:`plot_score`
(test score, with the exact kernel as a line), :func:`plot_pareto` (score against time)
and :func:`plot_error_time` (error against time). In the two views against time a method's
points are not joined (a larger D is not always slower: the order of D is not an order in
time); the line is the Pareto front over every method (:func:`pareto_front`), the points
nothing beats in both time and quality. Time is the median CPU time of the runs (what
:func:`~kernelmaps.evaluate.advise` compares), with the runs' range as a bar. matplotlib
(the ``cli`` extra) is imported when a plot is drawn; a new figure is a bare
:class:`matplotlib.figure.Figure`, so no GUI backend is needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from kernelmaps._optional import import_optional
from kernelmaps.evaluate.comparison import summarize
from kernelmaps.evaluate.registry import EXACT, method_order

if TYPE_CHECKING:  # pragma: no cover - typing only
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["dimension_ticks", "log_ticks", "pareto_front", "plot_error", "plot_error_time",
           "plot_pareto", "plot_score"]


def _axes(ax: Axes | None, title: str) -> Axes:
    if ax is None:
        # A bare Figure needs no pyplot and no GUI backend: it renders with Agg on savefig.
        Figure = import_optional("matplotlib.figure").Figure
        figure = Figure(figsize=(6.4, 4.4), layout="constrained")
        ax = figure.add_subplot()
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    return ax


#: Adjacent labelled D ticks are at least this ratio apart (about 0.08 decades), so labels
#: such as 250 and 256 (a map rounding D up) never overlap.
MIN_TICK_RATIO = 1.2


def dimension_ticks(dimensions: Iterable[int], min_ratio: float = MIN_TICK_RATIO) -> list[int]:
    """Choose the D values to label on a log axis.

    Greedy from the smallest, so the first of a cluster of close values (the requested D,
    where a map rounds it up) keeps its label; the others stay as unlabelled minor ticks.

    Parameters
    ----------
    dimensions : iterable of int
        The output dimensions tried.
    min_ratio : float, default=1.2
        The smallest ratio between two labelled values.

    Returns
    -------
    list of int
        The labelled values: ascending, each at least ``min_ratio`` times the previous one.

    Examples
    --------
    >>> from kernelmaps.evaluate import dimension_ticks
    >>> dimension_ticks([25, 26, 50, 100, 128, 200])
    [25, 50, 100, 128, 200]
    """
    kept: list[int] = []
    for value in sorted({int(d) for d in dimensions}):
        if not kept or value >= kept[-1] * min_ratio:
            kept.append(value)
    return kept


def _dimension_axis(ax: Axes, dimensions: Iterable[int]) -> None:
    """Log x axis labelled with the output dimensions tried (thinned), as plain numbers."""
    ticker = import_optional("matplotlib.ticker")
    values = sorted({int(d) for d in dimensions})
    labelled = dimension_ticks(values)
    ax.set_xscale("log")
    ax.set_xticks(labelled)
    ax.set_xticks([v for v in values if v not in labelled], minor=True)
    ax.xaxis.set_major_formatter(ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("output dimension D (n_features_out)")


#: The fewest and the most labelled ticks on a log axis of quality or time.
MIN_LOG_TICKS, MAX_LOG_TICKS = 3, 8
#: Mantissas tried for a log axis's labels, coarsest first: decades, 1-2-5, then finer.
_MANTISSAS = ((1.0,), (1.0, 2.0, 5.0), (1.0, 2.0, 3.0, 5.0, 7.0),
              (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0))


def log_ticks(low: float, high: float, min_count: int = MIN_LOG_TICKS,
              max_count: int = MAX_LOG_TICKS) -> list[float]:
    """Choose the labelled values of a log axis spanning ``[low, high]``.

    The coarsest of decades (every k-th decade when there are too many), 1-2-5 × 10^k,
    1-2-3-5-7 × 10^k or every digit that puts at least ``min_count`` values in the range;
    a range too narrow for any (under a factor of about 1.3) gets evenly spaced round
    values instead (``matplotlib.ticker.MaxNLocator``). So a time axis spanning 0.015 to
    0.06 s is labelled 0.02, 0.03, 0.05 rather than 0.02 and 0.05 alone.

    Parameters
    ----------
    low, high : float
        The axis limits, ``0 < low < high``.
    min_count : int, default=3
        The fewest labelled values wanted.
    max_count : int, default=8
        The most labelled values (decades are thinned to stay under it).

    Returns
    -------
    list of float
        The values to label, ascending, all within ``[low, high]``.

    Examples
    --------
    >>> from kernelmaps.evaluate.plots import log_ticks
    >>> log_ticks(0.015, 0.06)
    [0.02, 0.03, 0.05]
    >>> log_ticks(1e-9, 1.0)
    [1e-09, 1e-07, 1e-05, 0.001, 0.1]
    """
    if not 0 < low < high:
        raise ValueError(f"log_ticks needs 0 < low < high, got {low!r} and {high!r}.")
    first, last = int(np.floor(np.log10(low))), int(np.ceil(np.log10(high)))
    decades = range(first, last + 1)
    for mantissas in _MANTISSAS:
        values = [float(f"{m * 10.0 ** k:.12g}") for k in decades for m in mantissas]
        inside = [v for v in values if low <= v <= high]
        if len(inside) > max_count and len(mantissas) == 1:
            step = -(-len(inside) // max_count)  # every step-th decade
            inside = inside[::step]
        if len(inside) >= min_count:
            return inside
    ticker = import_optional("matplotlib.ticker")
    for bins in range(min_count + 1, 3 * max_count):  # the coarsest round step with enough
        linear = ticker.MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10])
        inside = [float(f"{v:.12g}") for v in linear.tick_values(low, high) if low <= v <= high]
        if len(inside) >= min_count:
            break
    return inside


def _nothing_to_draw(ax: Axes) -> Axes:
    """Say so on ``ax`` when no map row has a positive error (every map skipped, e.g. more
    landmarks asked for than training rows, or exact maps of a tiny training set): a log
    axis of nothing cannot be drawn."""
    ax.text(0.5, 0.5, "no feature map with a non-zero error to show", ha="center",
            va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def _log_axis(axis: Any) -> None:
    """Label a log axis (``ax.xaxis`` or ``ax.yaxis``) at :func:`log_ticks` of its limits,
    as plain numbers; call once everything is drawn (the limits are final)."""
    ticker = import_optional("matplotlib.ticker")
    low, high = sorted(axis.get_view_interval())
    if not 0 < low < high:  # nothing drawn: leave matplotlib's ticks
        return
    axis.set_major_locator(ticker.FixedLocator(log_ticks(low, high)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_locator(ticker.LogLocator(subs="all"))
    axis.set_minor_formatter(ticker.NullFormatter())


def _time_axis(ax: Axes, cpu: bool) -> None:
    """Log time axis labelled at :func:`log_ticks` in plain numbers (times often span
    less than a decade: 1-2-5 × 10^k alone may leave two labels)."""
    ax.set_xscale("log")
    ax.autoscale_view()
    _log_axis(ax.xaxis)
    ax.set_xlabel("CPU time: map fit + transform + model fit (s, median of the runs)" if cpu
                  else "time: map fit + transform + model fit (s)")


def _times(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray | None]:
    """The time of each summary row (median CPU time, else total time) and, when the runs
    have a spread, its error bar (distances to the smallest and largest run)."""
    if "cpu_time_s" not in rows.columns:
        return rows["total_time_s"].to_numpy(dtype=float), None
    median = rows["cpu_time_s"].to_numpy(dtype=float)
    spread = np.vstack([median - rows["cpu_time_min_s"].to_numpy(dtype=float),
                        rows["cpu_time_max_s"].to_numpy(dtype=float) - median])
    return median, np.maximum(spread, 0.0)


def _front_line(ax: Axes, times: np.ndarray, quality: np.ndarray,
                shown: np.ndarray) -> np.ndarray:
    """The Pareto front over every point: a staircase through the points no other point
    beats in both time and ``quality`` (higher is better), drawn at ``shown``; returns
    the front's indices."""
    front = pareto_front(times, quality)
    ax.step(times[front], shown[front], where="post", color="grey", linestyle=":",
            label="Pareto front")
    return front


def _summary_by_method(results: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, Any]]]:
    """The summary, and each method's rows of it by output dimension, baseline first."""
    summary = summarize(results)
    return summary, [
        (method, summary[summary["method"] == method].sort_values("n_features_out"))
        for method in method_order(results["method"])]


def _score_label(results: pd.DataFrame) -> str:
    scoring = results["scoring"].iloc[0] if "scoring" in results else "score"
    return {"accuracy": "test accuracy", "r2": "test R²"}.get(scoring, "test score")


#: :func:`plot_error` clips the confidence bands to the errors drawn, this factor either side.
BAND_MARGIN = 2.0


def plot_error(results: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Approximation error against the output dimension, log–log, with confidence bands.

    The exact baseline is left out (its error is zero up to rounding). The bands (the mean
    error's 95 % interval over seeds) are clipped to the range of the errors drawn, a factor
    ``BAND_MARGIN`` either side: with few seeds the interval can span many decades.

    Parameters
    ----------
    results : DataFrame
        The output of :func:`compare`.
    ax : matplotlib Axes or None, default=None
        Where to draw; ``None`` creates a new figure (``ax.figure``).

    Returns
    -------
    matplotlib Axes
        The axes drawn on: the error of each method with its confidence band.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps.evaluate import compare, plot_error
    >>> X, y = load_iris(return_X_y=True)
    >>> table = compare(X, y, methods=["nystroem"], n_components=[10, 40])
    >>> plot_error(table).get_title()
    'Kernel approximation error'
    """
    ax = _axes(ax, "Kernel approximation error")
    summary, by_method = _summary_by_method(results)
    if not (summary.loc[summary["method"] != EXACT, "error"] > 0).any():
        return _nothing_to_draw(ax)
    # The bands clipped to the errors drawn (a factor BAND_MARGIN either side): with two or
    # three seeds a t-interval on the log scale can span 1e-11 to 10, which would squash
    # every line into a sliver of the axes and show a band nothing was measured in.
    errors = summary.loc[(summary["method"] != EXACT) & (summary["error"] > 0), "error"]
    low, high = errors.min() / BAND_MARGIN, errors.max() * BAND_MARGIN
    for method, rows in by_method:
        if method == EXACT:
            continue
        line, = ax.plot(rows["n_features_out"], rows["error"], "o-", label=method)
        ax.fill_between(rows["n_features_out"], rows["error_ci_low"].clip(low, high),
                        rows["error_ci_high"].clip(low, high),
                        color=line.get_color(), alpha=0.2, linewidth=0)
    _dimension_axis(ax, summary.loc[summary["method"] != EXACT, "n_features_out"])
    ax.set_yscale("log")
    ax.autoscale_view()
    _log_axis(ax.yaxis)
    metric = results["metric"].iloc[0] if "metric" in results else "fro"
    ax.set_ylabel(f"relative error ‖K − ZZᵀ‖/‖K‖ ({metric})")
    ax.legend()
    return ax


def plot_score(results: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Test score against the output dimension (log x), with the exact baseline as a line.

    Parameters
    ----------
    results : DataFrame
        The output of :func:`compare`.
    ax : matplotlib Axes or None, default=None
        Where to draw; ``None`` creates a new figure.

    Returns
    -------
    matplotlib Axes
        The axes drawn on: each method's mean test score, the exact one as a line.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps.evaluate import compare, plot_score
    >>> X, y = load_iris(return_X_y=True)
    >>> table = compare(X, y, methods=["nystroem"], n_components=[10, 40])
    >>> plot_score(table).get_title()
    'Test score'
    """
    ax = _axes(ax, "Test score")
    summary, by_method = _summary_by_method(results)
    for method, rows in by_method:
        if method == EXACT:
            score = float(rows["score"].mean())
            ax.axhline(score, color="black", linestyle="--",
                       label=f"exact kernel ({score:.4f})")
            continue
        ax.errorbar(rows["n_features_out"], rows["score"], yerr=rows["score_std"],
                    fmt="o-", capsize=3, label=method)
    _dimension_axis(ax, summary.loc[summary["method"] != EXACT, "n_features_out"])
    ax.set_ylabel(_score_label(results))
    ax.legend()
    return ax


def pareto_front(times: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Find the points no other point beats in both time (lower) and score (higher).

    Parameters
    ----------
    times : ndarray of shape (n_points,)
        The time of each point.
    scores : ndarray of shape (n_points,)
        The score of each point (higher is better).

    Returns
    -------
    ndarray of int
        The indices of the Pareto-optimal points, by increasing time.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.evaluate import pareto_front
    >>> pareto_front(np.array([1.0, 2.0, 3.0]), np.array([0.8, 0.7, 0.9]))
    array([0, 2])
    """
    order = np.lexsort((-scores, times))  # by time, ties: best score first
    front, best = [], -np.inf
    for i in order:
        if scores[i] > best:
            front.append(i)
            best = scores[i]
    return np.asarray(front, dtype=int)


def plot_pareto(results: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Score against time (map fit + transform + model fit), the Pareto view.

    Each point is a method × n_components (mean score over seeds; median CPU time, the bar
    spanning the runs), labelled with its output dimension; a method's points are not
    joined. The grey staircase is the Pareto front over every point (nothing is both
    faster and better).

    Parameters
    ----------
    results : DataFrame
        The output of :func:`compare`.
    ax : matplotlib Axes or None, default=None
        Where to draw; ``None`` creates a new figure.

    Returns
    -------
    matplotlib Axes
        The axes drawn on: one point per method × n_components, and the front.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps.evaluate import compare, plot_pareto
    >>> X, y = load_iris(return_X_y=True)
    >>> table = compare(X, y, methods=["nystroem"], n_components=[10, 40])
    >>> plot_pareto(table).get_title()
    'Score against time (Pareto view)'
    """
    ax = _axes(ax, "Score against time (Pareto view)")
    summary, by_method = _summary_by_method(results)
    labels: list = []
    for method, rows in by_method:
        times, spread = _times(rows)
        if method == EXACT:
            ax.errorbar(times, rows["score"], xerr=spread, fmt="k*", markersize=14,
                        label="exact kernel")
            continue
        ax.errorbar(times, rows["score"], xerr=spread, fmt="o", capsize=2, label=method)
        labels += [_point_label(ax, method, row, (time, row["score"]), (4, -10))
                   for time, (_, row) in zip(times, rows.iterrows(), strict=True)]
    scores = summary["score"].to_numpy(dtype=float)
    front = _front_line(ax, _times(summary)[0], scores, scores)
    _time_axis(ax, "cpu_time_s" in summary.columns)
    ax.set_ylabel(_score_label(results))
    ax.legend()
    _drop_overlapping(ax, labels, _keys(summary.iloc[front]))
    return ax


def plot_error_time(results: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Kernel error against time per method (log–log), each point labelled with D.

    Points are not joined; the grey staircase is the Pareto front over every map (nothing
    has both less error and less time). Times as in :func:`plot_pareto`.

    Parameters
    ----------
    results : DataFrame
        The output of :func:`~kernelmaps.evaluate.compare`.
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib Axes
        The axes drawn on: one point per method × n_components, and the front.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps.evaluate import compare, plot_error_time
    >>> X, y = load_iris(return_X_y=True)
    >>> table = compare(X, y, methods=["nystroem"], n_components=[10, 40])
    >>> plot_error_time(table).get_title()
    'Kernel error against time'
    """
    ax = _axes(ax, "Kernel error against time")
    summary, by_method = _summary_by_method(results)
    labels: list = []
    for method, rows in by_method:
        if method == EXACT:
            continue
        times, spread = _times(rows)
        ax.errorbar(times, rows["error"], xerr=spread, fmt="o", capsize=2, label=method)
        labels += [_point_label(ax, method, row, (time, row["error"]), (4, 4))
                   for time, (_, row) in zip(times, rows.iterrows(), strict=True)]
    maps = summary[summary["method"] != EXACT]
    if not (maps["error"] > 0).any():
        return _nothing_to_draw(ax)
    errors = maps["error"].to_numpy(dtype=float)
    front = _front_line(ax, _times(maps)[0], -errors, errors)
    ax.set_yscale("log")
    _time_axis(ax, "cpu_time_s" in summary.columns)
    _log_axis(ax.yaxis)
    metric = results["metric"].iloc[0] if "metric" in results else "fro"
    ax.set_ylabel(f"relative error ‖K − ZZᵀ‖/‖K‖ ({metric})")
    ax.legend()
    _drop_overlapping(ax, labels, _keys(maps.iloc[front]))
    return ax


def _keys(rows: pd.DataFrame) -> set[tuple[str, int]]:
    """(method, D) of each row: what a point label is drawn for."""
    return {(str(method), int(dimension))
            for method, dimension in zip(rows["method"], rows["n_features_out"], strict=True)}


def _point_label(ax: Axes, method: str, row: Any, xy: tuple[float, float],
                 offset: tuple[int, int]) -> Any:
    """The D label of a point, its (method, D) kept for :func:`_drop_overlapping`."""
    label = ax.annotate(str(row["n_features_out"]), xy, textcoords="offset points",
                        xytext=offset, fontsize=7)
    label.point_key = (str(method), int(row["n_features_out"]))
    return label


#: Pixels of clear space kept around a point label and around every marker: labels closer
#: than this read as one ("26 64") or as another point's.
LABEL_PADDING_PX = 3.0


def _drop_overlapping(ax: Axes, labels: list, front: set[tuple[str, int]] = frozenset()) -> None:
    """Keep only the point labels a reader can read: the labels of the Pareto front's
    points first (the ones worth reading), then the others in drawing order, each dropped
    when its box, padded by :data:`LABEL_PADDING_PX`, overlaps a label already kept or
    another point's marker. In a corner where many points
    crowd (the fast, coarse maps), most labels go; the legend and the results table still
    name every point."""
    ax.figure.canvas.draw()  # the final limits and scales place the labels
    transform = ax.transData
    markers = [transform.transform(label.xy) for label in labels]
    blob = 6.0 * ax.figure.dpi / 72.0  # markers closer than a diameter (6 pt) overlap
    radius = blob / 2 + LABEL_PADDING_PX
    ordered = sorted(range(len(labels)),
                     key=lambda i: getattr(labels[i], "point_key", None) not in front)
    kept: list = []
    for i in ordered:
        label = labels[i]
        box = label.get_window_extent().padded(LABEL_PADDING_PX)
        # Another point's marker, not one drawn over this label's own point (two methods
        # with about the same time and quality make one blob: one label stands for both).
        own = markers[i]
        on_marker = any(np.hypot(x - own[0], y - own[1]) > blob
                        and box.x0 - radius < x < box.x1 + radius
                        and box.y0 - radius < y < box.y1 + radius
                        for x, y in markers)
        if on_marker or any(box.overlaps(other) for other in kept):
            label.remove()
        else:
            kept.append(box)
