"""plot_error's confidence bands stay within the errors drawn (issue 34, item 6)."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from kernelmaps.evaluate import compare, plot_error
from kernelmaps.evaluate.plots import BAND_MARGIN


def test_a_band_from_few_seeds_is_clipped_to_the_errors_drawn():
    pytest.importorskip("matplotlib")
    X, y = load_iris(return_X_y=True)
    table = compare(X, y, methods=["nystroem"], n_components=[10, 40], n_seeds=2,
                    exact=False, random_state=0)
    # Two seeds far apart: the t-interval on the log scale spans ~1e-30 to ~1e+8.
    at_10 = table.index[table["n_components"] == 10]
    table.loc[at_10, "error"] = [1e-3, 1e-1]
    ax = plot_error(table)
    band = np.concatenate([p.get_paths()[0].vertices[:, 1] for p in ax.collections])
    # Within the errors drawn (means over seeds, between the runs' least and most), a factor
    # BAND_MARGIN either side: was 2e-15.
    assert band.min() >= table["error"].min() / BAND_MARGIN * (1 - 1e-12)
    assert band.max() <= table["error"].max() * BAND_MARGIN * (1 + 1e-12)
    low, high = ax.get_ylim()
    assert high / low < 1e4, (low, high)  # the lines fill the axes
