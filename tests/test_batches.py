"""kernelmaps._batches (public as kernelmaps.io.iter_batches): Parquet, CSV and .npy files as
row batches in bounded memory, with messages naming the file, the column and the fix."""

from __future__ import annotations

import gzip
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from kernelmaps import _batches
from kernelmaps._batches import estimated_bytes, iter_batches


@pytest.fixture
def table(rng):
    """1,003 rows: 3 numeric features and a numeric target (a prime count, so batches of
    100 leave a last batch of 3)."""
    X = rng.normal(size=(1003, 3))
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["price"] = X @ [1.0, -2.0, 0.5]
    return frame


def _write(frame, path):
    if path.suffix == ".parquet":
        # Row groups of 128 rows: batches of 100 cross row-group boundaries.
        frame.to_parquet(path, row_group_size=128)
    else:
        frame.to_csv(path, index=False, sep="\t" if path.suffix == ".tsv" else ",")
    return path


@pytest.mark.parametrize("name", ["data.parquet", "data.csv", "data.tsv"])
def test_tables_stream_every_row_once_in_order_in_exact_batches(tmp_path, table, name):
    path = _write(table, tmp_path / name)
    batches = list(iter_batches(path, target="price", batch_rows=100))
    assert [X.shape[0] for X, _ in batches] == [100] * 10 + [3]
    X = np.concatenate([X for X, _ in batches])
    y = np.concatenate([y for _, y in batches])
    np.testing.assert_array_equal(X, table[["a", "b", "c"]].to_numpy())
    np.testing.assert_array_equal(y, table["price"].to_numpy())
    assert all(b.flags.c_contiguous and b.dtype == np.float64 for b, _ in batches)


def test_columns_choose_and_order_the_features_and_float32(tmp_path, table):
    path = _write(table, tmp_path / "data.parquet")
    (X, _), *_ = iter_batches(path, target="price", columns=["c", "a"], batch_rows=5000,
                              dtype=np.float32)
    assert X.dtype == np.float32 and X.shape == (1003, 2)
    np.testing.assert_array_equal(X, table[["c", "a"]].to_numpy(np.float32))


def test_without_a_target_every_column_is_a_feature(tmp_path, table):
    path = _write(table, tmp_path / "data.csv")
    X, y = next(iter_batches(path, batch_rows=10))
    assert y is None and X.shape == (10, 4)


def test_compressed_csv(tmp_path, table):
    path = tmp_path / "data.csv.gz"
    with gzip.open(path, "wt") as handle:
        table.to_csv(handle, index=False)
    X = np.concatenate([X for X, _ in iter_batches(path, target="price", batch_rows=300)])
    np.testing.assert_array_equal(X, table[["a", "b", "c"]].to_numpy())


def test_string_labels_stay_labels(tmp_path, table):
    table["price"] = np.where(table["a"] > 0, "up", "down")
    path = _write(table, tmp_path / "data.parquet")
    y = np.concatenate([y for _, y in iter_batches(path, target="price", batch_rows=64)])
    assert list(np.unique(y)) == ["down", "up"]


def test_npy_with_a_target_column_or_a_target_file(tmp_path, rng):
    data = rng.normal(size=(250, 4))
    np.save(tmp_path / "X.npy", data)
    batches = list(iter_batches(tmp_path / "X.npy", target=-1, batch_rows=100))
    assert [X.shape for X, _ in batches] == [(100, 3), (100, 3), (50, 3)]
    np.testing.assert_array_equal(np.concatenate([y for _, y in batches]), data[:, 3])
    np.save(tmp_path / "y.npy", data[:, 0])
    X, y = next(iter_batches(tmp_path / "X.npy", target=tmp_path / "y.npy", columns=[2, 1],
                             batch_rows=7))
    np.testing.assert_array_equal(X, data[:7, [2, 1]])
    np.testing.assert_array_equal(y, data[:7, 0])


def test_rebatch_joins_and_splits_pieces_of_any_length():
    pieces = [(np.full((n, 1), float(i)), np.full(n, i)) for i, n in enumerate([3, 1, 7, 2])]
    batches = list(_batches._rebatch(iter(pieces), 4))
    assert [X.shape[0] for X, _ in batches] == [4, 4, 4, 1]
    np.testing.assert_array_equal(np.concatenate([y for _, y in batches]),
                                  [0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 2, 3, 3])


# ---------------------------------------------------------------------- bounded memory
def _peak_while_streaming(path, batch_rows, **kwargs):
    tracemalloc.start()
    try:
        rows = 0
        for X, _ in iter_batches(path, batch_rows=batch_rows, **kwargs):
            rows += X.shape[0]
        return rows, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["big.npy", "big.parquet", "big.csv"])
def test_memory_is_bounded_by_the_batch_not_the_file(tmp_path, rng, name):
    n, d, batch = 100_000, 8, 1_000
    data = rng.normal(size=(n, d))
    path = tmp_path / name
    if name.endswith(".npy"):
        np.save(path, data)
        kwargs = {"target": -1}
    else:
        _write(pd.DataFrame(data, columns=[f"x{j}" for j in range(d)]).rename(
            columns={"x7": "y"}), path) if name.endswith(".csv") else \
            pd.DataFrame(data, columns=[*(f"x{j}" for j in range(d - 1)), "y"]).to_parquet(
                path, row_group_size=10_000)
        kwargs = {"target": "y"}
    del data
    rows, peak = _peak_while_streaming(path, batch, **kwargs)
    assert rows == n
    file_bytes = 8 * n * d  # 6.4 MB as float64
    batch_bytes = 8 * batch * d  # 64 kB
    # The reader's NumPy blocks (tracemalloc sees NumPy's allocations) stay a few batches,
    # far below the file: holding the whole file would be 100 batches.
    assert peak < 10 * batch_bytes + (1 << 20), (peak, file_bytes)


def test_parquet_reads_through_arrow_only_a_row_group_at_a_time(tmp_path, rng):
    pyarrow = pytest.importorskip("pyarrow")
    n, d = 400_000, 8
    path = tmp_path / "big.parquet"
    pd.DataFrame(rng.normal(size=(n, d)), columns=[f"x{j}" for j in range(d)]).to_parquet(
        path, row_group_size=20_000)
    peak = 0
    for _ in iter_batches(path, batch_rows=5_000):
        peak = max(peak, pyarrow.total_allocated_bytes())
    # About a row group (1/10 of the file) and a batch; pyarrow's pre-buffering would hold
    # the whole file and more (18.8 MB measured for 12.8 MB of float64; 4.6 MB without it,
    # whatever the file's size).
    assert peak < 8 * n * d / 4


# ---------------------------------------------------------------------- messages
def test_missing_target_column_names_the_file_the_close_name_and_the_fix(tmp_path, table):
    path = _write(table, tmp_path / "data.parquet")
    with pytest.raises(ValueError, match=r"data\.parquet: no target column 'Price' \(did you "
                                         r"mean 'price'\?\).*Pass target="):
        next(iter_batches(path, target="Price"))
    with pytest.raises(ValueError, match=r"data\.parquet: no column 'z'.*Fix columns="):
        next(iter_batches(path, target="price", columns=["a", "z"]))


@pytest.mark.parametrize("name", ["data.parquet", "data.csv"])
def test_non_numeric_column_is_named_with_the_fix(tmp_path, table, name):
    table["city"] = "Paris"
    path = _write(table, tmp_path / name)
    with pytest.raises(ValueError, match=r"column 'city' is not numeric.*encode it as numbers"
                                         r".*columns="):
        next(iter_batches(path, target="price"))
    X, _ = next(iter_batches(path, target="price", columns=["a", "b"]))
    assert X.shape[1] == 2


def test_non_numeric_value_late_in_a_csv_names_its_line(tmp_path, table):
    table["a"] = table["a"].astype(object)
    table.loc[500, "a"] = "n/a?"
    path = _write(table, tmp_path / "data.csv")
    with pytest.raises(ValueError, match=r"column 'a' is not numeric \('n/a\?' at line 502\)"):
        for _ in iter_batches(path, target="price", batch_rows=100):
            pass


@pytest.mark.parametrize("name", ["data.parquet", "data.csv"])
def test_missing_values_name_the_row_and_column(tmp_path, table, name):
    table.loc[250, "b"] = np.nan
    path = _write(table, tmp_path / name)
    where = "row 250" if name.endswith("parquet") else "line 252"
    with pytest.raises(ValueError, match=rf"column 'b' is (missing \(null\)|nan) at {where}; "
                                         "drop or impute"):
        list(iter_batches(path, target="price", batch_rows=100))


def test_unknown_format_and_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match=r"data\.xlsx: cannot stream a \.xlsx file.*Parquet"):
        next(iter_batches(tmp_path / "data.xlsx"))
    with pytest.raises(ValueError, match="no such file"):
        next(iter_batches(tmp_path / "absent.parquet"))
    np.save(tmp_path / "a.npy", np.zeros((3, 2)))
    with pytest.raises(ValueError, match="batch_rows must be a positive integer"):
        next(iter_batches(tmp_path / "a.npy", batch_rows=0))
    with pytest.raises(ValueError, match="dtype must be"):
        next(iter_batches(tmp_path / "a.npy", dtype=np.int64))
    with pytest.raises(ValueError, match=r"target column 5 is out of range.*\[-2, 1\]"):
        next(iter_batches(tmp_path / "a.npy", target=5))
    np.save(tmp_path / "three.npy", np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match="a 3-D array; stream a 2-D array"):
        next(iter_batches(tmp_path / "three.npy"))


def test_missing_pyarrow_names_the_extra(tmp_path, table, monkeypatch):
    path = _write(table, tmp_path / "data.parquet")

    def missing(module, extra="cli"):
        raise ImportError(f"this needs pyarrow, which kernelmaps does not require: pip install "
                          f"'kernelmaps[{extra}]'")

    monkeypatch.setattr(_batches, "import_optional", missing)
    with pytest.raises(ImportError, match=r"kernelmaps\[cli\]"):
        next(iter_batches(path, target="price"))


def test_progress_reports_rows_rate_and_eta(tmp_path, rng, caplog):
    np.save(tmp_path / "X.npy", rng.normal(size=(30, 2)))
    with caplog.at_level("INFO", logger="kernelmaps"), \
            pytest.MonkeyPatch.context() as patch:
        renderer = _batches.Progress
        patch.setattr(_batches, "Progress",
                      lambda enabled: renderer(enabled, backend="logging"))
        list(iter_batches(tmp_path / "X.npy", batch_rows=10, progress=True))
    lines = [record.getMessage() for record in caplog.records]
    assert lines[0] == "reading X.npy"
    assert lines[-1].startswith("reading X.npy 30/30, ") and "rows/s, ETA 0 s" in lines[-1]


def test_estimated_bytes_from_metadata(tmp_path, table):
    assert estimated_bytes(_write(table, tmp_path / "d.parquet")) == 8 * 1003 * 4
    np.save(tmp_path / "d.npy", np.zeros((7, 3), dtype=np.float32))
    assert estimated_bytes(tmp_path / "d.npy") == 8 * 21
    csv = _write(table, tmp_path / "d.csv")
    assert estimated_bytes(csv) == csv.stat().st_size
    assert estimated_bytes(tmp_path / "d.svm") is None
