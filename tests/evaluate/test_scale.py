"""compare(scale=...): scaling fitted on training rows only, and the rule that advises it
(``kernelmaps compare --scale``: tests/cli/test_scale_cli.py)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import StandardScaler

from kernelmaps.cli.data import load_dataset
from kernelmaps.evaluate import _splits, compare
from kernelmaps.evaluate import comparison as comparison_module
from kernelmaps.evaluate._splits import (
    Split,
    check_scales,
    make_scaler,
    scale_ratio,
    scale_split,
)
from tests._helpers import unevenly_scaled


def test_scale_split_uses_training_statistics_only():
    X, y = unevenly_scaled()
    split = Split(0, X[:80].copy(), y[:80], X[80:] + 100.0, y[80:])
    scale_split(split, "standard")
    np.testing.assert_allclose(split.X_train.mean(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(split.X_train.std(axis=0), 1, atol=1e-9)
    expected = StandardScaler().fit(X[:80]).transform(X[80:] + 100.0)
    np.testing.assert_allclose(split.X_test, expected)
    # The test rows were shifted: their mean is not zero, so nothing was fitted on them.
    assert np.abs(split.X_test.mean(axis=0)).max() > 0.05
    split = Split(0, X[:80].copy(), y[:80], X[80:].copy(), y[80:])
    scale_split(split, "minmax")
    assert split.X_train.min() == 0 and split.X_train.max() == 1
    train = X[:80]
    none = Split(0, train, y[:80], X[80:], y[80:])
    scale_split(none, "none")
    assert none.X_train is train


def test_scalers_refuse_bad_values_and_sparse_minmax():
    with pytest.raises(ValueError, match="scale must be one of"):
        make_scaler("robust", False)
    with pytest.raises(ValueError, match="densify"):
        make_scaler("minmax", True)
    assert make_scaler("standard", True).with_mean is False


def test_scale_ratio():
    X, _ = unevenly_scaled()
    assert 5e4 < scale_ratio(X) < 2e5
    assert scale_ratio(sp.csr_matrix(X)) == pytest.approx(scale_ratio(X))
    assert scale_ratio(np.ones((5, 3))) == 1.0


@pytest.mark.parametrize(("name", "advised"), [
    # Measured in scripts/measure_scale_warning.py (table in docs/cli.md): standardising
    # raises the exact kernel's score on wine and breast_cancer, lowers it on digits and
    # changes nothing on diabetes and iris.
    ("wine", True), ("breast_cancer", True), ("digits", False), ("diabetes", False),
    ("iris", False)])
def test_check_scales_fires_where_scaling_helps_on_bundled_data(name, advised):
    data = load_dataset(name)
    check = check_scales(data.X, data.feature_names)
    assert check.advised is advised
    assert (check.n_drowned >= check.n_features / 2) is advised
    assert bool(check.message) is advised
    if advised:
        assert "consider --scale standard" in check.message
        assert repr(data.feature_names[check.largest_feature]) in check.message


def test_check_scales_rule():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(500, 6))
    assert not check_scales(X).advised
    # Three of six features at 1/1000 of the others' spread: their share of the variance is
    # ~1e-6 each, below a tenth of an equal share (1/60): half drowned, so advised.
    X[:, :3] *= 1e-3
    check = check_scales(X)
    assert (check.advised, check.n_drowned, check.n_features) == (True, 3, 6)
    assert check.largest_feature in (3, 4, 5) and "column" in check.message
    # Two of six: not most of them.
    X[:, 0] *= 1e3
    assert check_scales(X).n_drowned == 2 and not check_scales(X).advised
    # Constant columns play no part in distances and are not counted.
    with_constant = np.column_stack([X, np.full(500, 7.0), np.zeros(500)])
    assert check_scales(with_constant) == check_scales(X)
    # Sparse input: the same decision from the same variances.
    X[:, :3] *= 1e-3
    sparse_check = check_scales(sp.csr_matrix(X))
    assert sparse_check.advised == check_scales(X).advised
    assert sparse_check.n_drowned == check_scales(X).n_drowned
    # Fewer than two non-constant features: nothing to balance.
    assert not check_scales(np.column_stack([rng.normal(size=50), np.ones(50)])).advised
    assert not check_scales(np.ones((5, 3))).advised


def test_compare_scales_inside_each_split(monkeypatch):
    X, y = unevenly_scaled()
    seen = []
    original = _splits.scale_split

    def spy(split, scale):
        original(split, scale)
        seen.append((split.X_train.copy(), split.X_test.copy()))

    monkeypatch.setattr(comparison_module, "scale_split", spy)
    table = compare(X, y, methods=["rbf_sampler"], n_components=[20], n_seeds=1, cv=3,
                    exact=False, scale="standard", kernel="rbf")
    assert table.attrs["settings"]["scale"] == "standard"
    assert len(seen) == 3
    for X_train, _ in seen:
        np.testing.assert_allclose(X_train.std(axis=0), 1, atol=1e-9)
    raw = compare(X, y, methods=["rbf_sampler"], n_components=[20], n_seeds=1, cv=3,
                  exact=False, kernel="rbf")
    assert table["score"].mean() > raw["score"].mean()


@pytest.mark.parametrize("X, match", [
    (np.array([[1.0, np.nan], [2.0, 3.0]]), "Input X contains NaN"),
    (np.array([[1.0, np.inf], [2.0, 3.0]]), "Input X contains infinity"),
    (np.arange(5.0), "Expected 2D array"),
    (np.array([["a", "b"], ["c", "d"]]), "numeric"),
])
def test_check_scales_rejects_bad_input_clearly(X, match):
    with pytest.raises(ValueError, match=match):
        check_scales(X)
