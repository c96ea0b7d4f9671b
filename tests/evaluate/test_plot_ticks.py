"""D-axis tick labels never collide; the views against time (points, Pareto front)."""
from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine

from kernelmaps.evaluate import (
    compare,
    dimension_ticks,
    plot_error,
    plot_error_time,
    plot_pareto,
    plot_score,
)
from kernelmaps.evaluate.plots import log_ticks

matplotlib.use("Agg")


def test_close_dimensions_keep_only_the_requested_label():
    # Maps that round D up (250 -> 256, 1000 -> 1008) sit next to the requested D.
    assert dimension_ticks([250, 256, 1000, 1008, 250]) == [250, 1000]
    assert dimension_ticks([25, 50, 100, 200, 400, 800]) == [25, 50, 100, 200, 400, 800]
    assert dimension_ticks([10, 11, 12, 13, 14]) == [10, 12]  # 14 < 1.2 × 12


def test_labelled_ticks_are_far_apart_on_any_input():
    rng = np.random.RandomState(0)
    for _ in range(200):
        dims = rng.randint(1, 5000, size=rng.randint(1, 15))
        ticks = dimension_ticks(dims)
        assert ticks[0] == dims.min() and set(ticks) <= set(dims.tolist())
        assert all(b >= 1.2 * a for a, b in itertools.pairwise(ticks))


def _results():
    rows = []
    for method, dims in (("nystroem", (250, 1000)), ("orthogonal", (256, 1008))):
        for d, t in zip(dims, (0.1, 0.4), strict=True):
            for seed, e in enumerate((0.001, 0.002, 0.004)):
                rows.append({"method": method, "n_components": d, "n_features_out": d,
                             "seed": seed, "error": e * 250 / d, "score": 0.9,
                             "fit_time_s": t, "transform_time_s": t, "total_time_s": t,
                             "peak_memory_mb": 1.0, "metric": "fro"})
    return pd.DataFrame(rows)


def test_error_plot_labels_thinned_and_bands_positive():
    ax = plot_error(_results())
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert [tick for tick in ax.get_xticks() if 100 <= tick <= 2000] == [250, 1000]
    assert "256" not in labels and "1008" not in labels
    assert sorted(ax.get_xticks(minor=True)) == [256, 1008]
    for band in ax.collections:
        assert np.all(band.get_paths()[0].vertices[:, 1] > 0)


def _method_lines(ax):
    """The data lines of each method's points (errorbar containers), by label."""
    return {container.get_label(): container.lines[0] for container in ax.containers}


def test_error_against_time_plot():
    ax = plot_error_time(_results())
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    # A method's points are not joined; the one line is the Pareto front through the
    # points nothing beats in both error and time: orthogonal's, whose error is scaled by
    # 250/D with the larger D = 256, 1008 at the same times as nystroem's 250, 1000.
    for points in _method_lines(ax).values():
        assert points.get_linestyle() == "None"
    front, = (line for line in ax.get_lines() if line.get_label() == "Pareto front")
    np.testing.assert_allclose(front.get_xdata(), [0.1, 0.4])
    np.testing.assert_allclose(front.get_ydata(), [0.007 / 3 * 250 / 256,
                                                   0.007 / 3 * 250 / 1008])


def test_time_views_join_points_along_the_front_not_in_order_of_d():
    # A map whose larger D is faster (D=200 at 0.5 s, D=100 at 1 s) and one that is slower
    # everywhere: joining a method's points in order of D would draw a line back in time.
    rows = [("a", 100, 1.0, 0.80, 0.10), ("a", 200, 0.5, 0.90, 0.05),
            ("b", 100, 2.0, 0.70, 0.20), ("b", 400, 0.8, 0.95, 0.01)]
    table = pd.DataFrame([{"method": m, "n_components": d, "n_features_out": d, "seed": 0,
                           "error": e, "score": s, "fit_time_s": t, "transform_time_s": t,
                           "total_time_s": t, "cpu_time_s": t, "peak_memory_mb": 1.0,
                           "metric": "fro"} for m, d, t, s, e in rows])
    ax = plot_pareto(table)
    front, = (line for line in ax.get_lines() if line.get_label() == "Pareto front")
    # Nothing beats a at 0.5 s (0.90) or b at 0.8 s (0.95); the others are dominated.
    np.testing.assert_allclose(front.get_xdata(), [0.5, 0.8])
    np.testing.assert_allclose(front.get_ydata(), [0.90, 0.95])
    assert front.get_drawstyle() == "steps-post"
    assert all(line.get_linestyle() == "None" for line in _method_lines(ax).values())
    assert "CPU time" in ax.get_xlabel()
    ax = plot_error_time(table)
    front, = (line for line in ax.get_lines() if line.get_label() == "Pareto front")
    np.testing.assert_allclose(front.get_xdata(), [0.5, 0.8])
    np.testing.assert_allclose(front.get_ydata(), [0.05, 0.01])


def test_point_labels_never_print_over_each_other():
    # nystroem and orthogonal land on the same points (same times and scores): 250 next to
    # 256 and 1000 next to 1008 would be printed over each other; one of each pair is kept.
    for plot in (plot_pareto, plot_error_time):
        ax = plot(_results())
        texts = [t for t in ax.texts if t.get_text()]
        boxes = [t.get_window_extent() for t in texts]
        assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2)), plot
        shown = {t.get_text() for t in texts}
        assert len(texts) >= 2 and shown & {"250", "256"} and shown & {"1000", "1008"}, shown


# ------------------------------------------------ log axes and crowded corners (issue 27)
def test_log_ticks_label_at_least_three_values_on_any_range():
    assert log_ticks(0.015, 0.06) == [0.02, 0.03, 0.05]  # 1-2-5 alone: 0.02 and 0.05
    assert log_ticks(1e-9, 1.0) == [1e-09, 1e-07, 1e-05, 0.001, 0.1]  # decades, thinned
    assert log_ticks(0.2, 30) == [0.2, 0.5, 1, 2, 5, 10, 20]
    rng = np.random.RandomState(0)
    for _ in range(300):
        low = 10.0 ** rng.uniform(-12, 4)
        high = low * 10.0 ** rng.uniform(0.01, 14)
        ticks = log_ticks(low, high)
        assert 3 <= len(ticks) <= 8, (low, high, ticks)
        assert all(low <= t <= high for t in ticks) and ticks == sorted(set(ticks))
        assert len({f"{t:g}" for t in ticks}) == len(ticks)  # the labels differ as printed


def _grid(times: tuple[float, float], seed: int) -> pd.DataFrame:
    """The default grid's shape: eight methods × six D (25–800), times spread over
    ``times`` with most maps crowded at the fast end, errors 1e-4–0.3."""
    rng = np.random.RandomState(seed)
    methods = ("nystroem", "rbf_sampler", "rff", "orthogonal", "structured", "fastfood",
               "quadrature", "principal")
    rows = [{"method": "exact", "n_components": 1, "n_features_out": 1, "seed": 0,
             "error": 0.0, "score": 0.99, "fit_time_s": times[1], "transform_time_s": 0.0,
             "total_time_s": times[1], "cpu_time_s": times[1], "peak_memory_mb": 1.0,
             "metric": "fro"}]
    for method in methods:
        for d in (25, 50, 100, 200, 400, 800):
            t = times[0] * (times[1] / times[0]) ** (rng.beta(1, 4))
            rows.append({"method": method, "n_components": d, "n_features_out": d,
                         "seed": 0, "error": 0.3 * (25 / d) ** rng.uniform(0.5, 1.5),
                         "score": 0.99 - 0.2 * 25 / d * rng.uniform(0.5, 1), "fit_time_s": t,
                         "transform_time_s": 0.0, "total_time_s": t, "cpu_time_s": t,
                         "peak_memory_mb": 1.0, "metric": "fro"})
    return pd.DataFrame(rows)


def _labels_shown(axis) -> list[str]:
    low, high = sorted(axis.get_view_interval())
    return [label.get_text() for tick, label in zip(axis.get_majorticklocs(),
                                                    axis.get_majorticklabels(), strict=True)
            if low <= tick <= high and label.get_text()]


@pytest.mark.parametrize("times", [(0.015, 0.06), (0.5, 400.0)], ids=["150 rows", "60000 rows"])
def test_plots_read_at_150_and_60000_rows(times):
    # 150 rows: every run takes 15–60 ms (a log axis with 1-2-5 ticks had two labels);
    # 60,000 rows: half a second to minutes, 48 points crowded at the fast end.
    table = _grid(times, seed=0)
    for plot in (plot_error, plot_score, plot_pareto, plot_error_time):
        ax = plot(table)
        ax.figure.canvas.draw()
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                assert len(_labels_shown(axis)) >= 3, (plot.__name__, _labels_shown(axis))
        texts = [t for t in ax.texts if t.get_text()]
        boxes = [t.get_window_extent() for t in texts]
        assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2)), plot
        # No label sits on another point's marker (it would read as that point's D).
        markers = [ax.transData.transform(t.xy) for t in texts]
        for text, box in zip(texts, boxes, strict=True):
            own = ax.transData.transform(text.xy)
            for x, y in markers:
                if np.hypot(x - own[0], y - own[1]) > 10:
                    assert not box.contains(x, y), (plot.__name__, text.get_text())
        if plot in (plot_pareto, plot_error_time):
            assert texts, plot.__name__  # some labels survive, the front's first


def test_every_plot_draws_when_no_map_has_an_error_to_show(tmp_path):
    # compare on 6 rows: nystroem's 25 landmarks exceed the training rows, so only the exact
    # row is left; the error plots had no positive value for their log axes and savefig
    # raised "Data cannot be log-scaled" after the whole run.
    X, y = load_wine(return_X_y=True)
    rows = np.concatenate([np.flatnonzero(y == label)[:3] for label in range(3)])
    with pytest.warns(UserWarning, match="skipped"):
        table = compare(X[rows], y[rows], methods=["nystroem"], n_components=[25], n_seeds=1)
    assert set(table["method"]) == {"exact"}
    for plot in (plot_error, plot_error_time, plot_pareto, plot_score):
        ax = plot(table)
        ax.figure.savefig(tmp_path / "plot.png")
