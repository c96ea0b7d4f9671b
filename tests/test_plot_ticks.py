"""D-axis tick labels never collide; the fourth plot (kernel error against time)."""
from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pandas as pd

from kernelmaps.evaluate import dimension_ticks, plot_error, plot_error_time, plot_pareto

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


def test_error_against_time_plot():
    ax = plot_error_time(_results())
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.get_lines()) == 2
    line = ax.get_lines()[0]
    np.testing.assert_allclose(line.get_xdata(), [0.1, 0.4])
    np.testing.assert_allclose(line.get_ydata(), [0.007 / 3, 0.007 / 12])


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
