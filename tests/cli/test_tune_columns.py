"""``kernelmaps tune --save`` on a table: the model keeps the columns' names (issue 34, item 4)."""

from __future__ import annotations

import warnings

import pytest

import kernelmaps.io
from tests.cli.conftest import run_main


def test_a_tuned_model_keeps_the_tables_column_names(capsys, tmp_path, digits_csv):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("skops")
    model = tmp_path / "model.skops"
    code, _, err = run_main(capsys, "tune", "--data", str(digits_csv), "--target", "label",
                            "--n-components", "32", "--threads", "1", "--quiet",
                            "--out", str(tmp_path / "report"), "--save", str(model))
    assert code == 0, err
    loaded = kernelmaps.io.load(model)
    frame = pd.read_csv(digits_csv).drop(columns="label")
    assert list(loaded.feature_names_in_) == list(frame.columns)
    with warnings.catch_warnings():
        # was: "X has feature names, but StandardScaler was fitted without feature names"
        warnings.simplefilter("error")
        assert loaded.predict(frame.iloc[:10]).shape == (10,)
    with pytest.raises(ValueError, match="feature names should match"):
        loaded.predict(frame.iloc[:10, ::-1])  # columns in another order: refused
