"""``kernelmaps compare`` and ``tune`` on a file larger than memory or ``--max-rows``: one
message pointing to the streaming API and the guide (kernelmaps.cli._out_of_core)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kernelmaps.cli import _out_of_core, commands
from kernelmaps.cli import tune as tune_command
from kernelmaps.cli._parser import build_parser
from kernelmaps.cli.commands import _subsample
from kernelmaps.cli.data import load_dataset
from tests.cli.conftest import run_main


@pytest.fixture
def parquet_file(tmp_path, rng):
    frame = pd.DataFrame(rng.normal(size=(500, 4)), columns=["a", "b", "c", "d"])
    frame["label"] = np.arange(500) % 3
    path = tmp_path / "big.parquet"
    frame.to_parquet(path)
    return path


def _never_loaded(*args, **kwargs):
    raise AssertionError("the file was loaded before the size check")


@pytest.mark.parametrize("command", ["compare", "tune"])
def test_a_file_larger_than_memory_is_refused_before_loading_with_the_way_out(
        capsys, monkeypatch, parquet_file, command):
    # 500 × 5 float64 values are 20 kB: make the memory available smaller than 3× that.
    monkeypatch.setattr(_out_of_core, "available_memory", lambda: 50_000)
    monkeypatch.setattr(commands, "load_dataset", _never_loaded)
    monkeypatch.setattr(tune_command, "load_dataset", _never_loaded)
    code, _, err = run_main(capsys, command, "--data", str(parquet_file), "--target", "label")
    text = " ".join(err.split())
    assert code == 2, err
    assert f"kernelmaps {command}: error: {parquet_file}: about 0.0 GB as float64" in text
    assert f"{command} loads the whole file" in text and "before any --max-rows" in text
    assert ("kernelmaps.io.iter_batches(path, target=...) into FeatureRidge(...).partial_fit"
            in text and "docs/online.md" in text)


def test_a_file_that_fits_is_loaded(monkeypatch, parquet_file):
    monkeypatch.setattr(_out_of_core, "available_memory", lambda: 60_001)  # 3 × 20 kB fits
    _out_of_core.check_fits_in_memory(str(parquet_file), "compare")
    _out_of_core.check_fits_in_memory("digits", "compare")  # not a file: nothing to check
    _out_of_core.check_fits_in_memory(None, "compare")  # no --data: the default data set


def test_max_rows_says_how_to_use_every_row(parquet_file):
    args = build_parser().parse_args(["compare", "--data", str(parquet_file), "--max-rows",
                                      "100"])
    _, stated = _subsample(load_dataset(str(parquet_file), target="label"), args)
    assert stated.startswith("--max-rows: using 100 of 500 rows (stratified by class")
    assert "The other rows are not used; to fit a model on all 500 rows in bounded memory" in (
        stated)
    assert "kernelmaps.io.iter_batches" in stated and "docs/online.md" in stated


def test_available_memory_reads_the_machine():
    available = _out_of_core.available_memory()
    assert available is None or 1 << 20 < available < 1 << 50
