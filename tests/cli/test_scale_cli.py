"""``kernelmaps compare --scale`` and ``--max-rows``: the warning without scaling, recorded in the
report, and the stratified subsample (the scaling itself: tests/evaluate/test_scale.py)."""

from __future__ import annotations

import json

import numpy as np

from kernelmaps.cli._parser import build_parser
from kernelmaps.cli.commands import _subsample
from kernelmaps.cli.data import load_dataset
from tests._helpers import unevenly_scaled
from tests.cli.conftest import run_main


def _run(capsys, tmp_path, *extra):
    X, y = unevenly_scaled()
    np.savez(tmp_path / "d.npz", X=X, y=y)
    code, out, err = run_main(capsys, "compare", "--data", str(tmp_path / "d.npz"), "--methods",
                              "rbf_sampler", "--n-components", "20", "--seeds", "1", "--json",
                              "--threads", "1", "--out", str(tmp_path / "out"), *extra)
    assert code == 0, err
    return json.loads(out), err


def test_cli_warns_once_without_scale_and_records_it(capsys, tmp_path):
    payload, err = _run(capsys, tmp_path)
    text = " ".join(err.split())  # rich wraps long messages
    assert text.count("consider --scale standard") == 1, err
    assert "2 of the 3 features each carry less than a tenth" in text
    # The warning is in the report too (its notes).
    report = (tmp_path / "out" / "report.html").read_text()
    assert "consider --scale standard" in report
    assert payload["settings"]["scale"] == "none"
    payload, err = _run(capsys, tmp_path, "--scale", "standard")
    assert "--scale standard" not in err
    assert payload["settings"]["scale"].startswith("standard")
    payload, err = _run(capsys, tmp_path, "--scale", "none")
    assert "--scale standard" not in err and payload["settings"]["scale"] == "none"


def test_max_rows_is_a_stratified_subsample_and_stated(capsys, tmp_path):
    rng = np.random.RandomState(1)
    X = rng.normal(size=(400, 3))
    y = np.repeat([0, 1, 2, 3], [40, 120, 120, 120])
    np.savez(tmp_path / "m.npz", X=X, y=y)
    code, out, err = run_main(capsys, "compare", "--data", str(tmp_path / "m.npz"), "--methods",
                              "rbf_sampler", "--n-components", "10", "--seeds", "1", "--json",
                              "--threads", "1", "--max-rows", "100", "--test-size", "0.5",
                              "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert "using 100 of 400 rows (stratified by class" in " ".join(err.split())
    payload = json.loads(out)
    assert payload["settings"]["max rows"] == "100"
    rows = payload["results"]
    assert {r["n_train"] + r["n_test"] for r in rows} == {100}
    # Class proportions kept: 10 % of the rows are class 0 in the data, so in the subsample.
    args = build_parser().parse_args(["compare", "--data", str(tmp_path / "m.npz"),
                                       "--max-rows", "100"])
    data, _ = _subsample(load_dataset(str(tmp_path / "m.npz"), target=None), args)
    assert np.bincount(data.y.astype(int)).tolist() == [10, 30, 30, 30]
