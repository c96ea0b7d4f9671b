"""Loaders of kernelmaps.cli.data on small files written here: IDX, CSV/TSV, Parquet, NPZ,
svmlight, and their errors (each must say what is wrong and where)."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from kernelmaps.cli.data import (
    BUNDLED,
    DataError,
    available_datasets,
    load_dataset,
    load_fashion_mnist,
    load_idx_directory,
    read_idx,
)

# IDX type codes, written out independently of the reader's table.
IDX_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C,
             np.float32: 0x0D, np.float64: 0x0E}


def write_idx(path: Path, array: np.ndarray, *, compress: bool = False) -> Path:
    """The IDX format by hand: 0, 0, type code, ndim, big-endian dims, big-endian data."""
    header = bytes([0, 0, IDX_CODES[array.dtype.type], array.ndim])
    header += struct.pack(f">{array.ndim}I", *array.shape)
    payload = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    path.write_bytes(gzip.compress(payload) if compress else payload)
    return path


# --------------------------------------------------------------------------- IDX
@pytest.mark.parametrize("dtype", list(IDX_CODES))
@pytest.mark.parametrize("compress", [False, True])
def test_idx_round_trip(tmp_path, dtype, compress):
    rng = np.random.RandomState(0)
    array = (rng.uniform(-100, 100, size=(3, 4, 5)) if np.dtype(dtype).kind == "f"
             else rng.randint(0, 100, size=(3, 4, 5))).astype(dtype)
    # gzip is recognised by content: the name says nothing about it.
    path = write_idx(tmp_path / "data-idx3-ubyte", array, compress=compress)
    result = read_idx(path)
    assert result.shape == (3, 4, 5)
    assert result.dtype == np.dtype(dtype)  # native byte order
    assert result.dtype.isnative
    np.testing.assert_array_equal(result, array)


def test_idx_one_dimensional_labels(tmp_path):
    labels = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    np.testing.assert_array_equal(read_idx(write_idx(tmp_path / "l", labels)), labels)


@pytest.mark.parametrize(("payload", "message"), [
    (b"\x01\x02\x08\x01", "not an IDX file"),
    (b"\x00\x00", "not an IDX file"),
    (b"\x00\x00\x07\x01\x00\x00\x00\x01\x05", "unknown IDX type code 0x07"),
    (b"\x00\x00\x08\x00", "0 dimensions"),
    (b"\x00\x00\x08\x02\x00\x00\x00\x02", "truncated IDX header"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x05ab", "promises 5 values"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x01ab", "but 2 bytes follow"),
])
def test_idx_malformed(tmp_path, payload, message):
    path = tmp_path / "bad-idx1-ubyte"
    path.write_bytes(payload)
    with pytest.raises(DataError, match=message):
        read_idx(path)


def test_idx_corrupted_gzip(tmp_path):
    data = gzip.compress(b"\x00\x00\x08\x01\x00\x00\x00\x03abc")
    path = tmp_path / "x.gz"
    path.write_bytes(data[:-6])  # cut the trailer
    with pytest.raises(DataError, match="unreadable gzip"):
        read_idx(path)


def _write_mnist_like(directory: Path, n_train: int = 6, n_test: int = 4,
                      compress: bool = True) -> tuple[np.ndarray, np.ndarray]:
    directory.mkdir(exist_ok=True)
    rng = np.random.RandomState(1)
    suffix = ".gz" if compress else ""
    train = rng.randint(0, 256, size=(n_train, 3, 2)).astype(np.uint8)
    write_idx(directory / f"train-images-idx3-ubyte{suffix}", train, compress=compress)
    write_idx(directory / f"train-labels-idx1-ubyte{suffix}",
              np.arange(n_train, dtype=np.uint8) % 3, compress=compress)
    test = rng.randint(0, 256, size=(n_test, 3, 2)).astype(np.uint8)
    write_idx(directory / f"t10k-images-idx3-ubyte{suffix}", test, compress=compress)
    write_idx(directory / f"t10k-labels-idx1-ubyte{suffix}",
              np.arange(n_test, dtype=np.uint8) % 3, compress=compress)
    return train, test


def test_idx_directory_with_train_and_test_split(tmp_path):
    train, test = _write_mnist_like(tmp_path / "mnist", compress=False)
    data = load_dataset(tmp_path / "mnist")
    np.testing.assert_array_equal(data.X, train.reshape(6, 6).astype(np.float64))
    np.testing.assert_array_equal(data.y, np.arange(6) % 3)
    np.testing.assert_array_equal(data.X_test, test.reshape(4, 6))
    assert data.shape_text() == "6 train + 4 test × 6"


def test_idx_directory_single_pair_other_names(tmp_path):
    images = np.arange(12, dtype=np.uint8).reshape(3, 2, 2)
    write_idx(tmp_path / "emnist_images.idx3-ubyte", images)
    write_idx(tmp_path / "emnist_labels.idx1-ubyte", np.array([0, 1, 0], dtype=np.uint8))
    data = load_idx_directory(tmp_path)
    assert data.X.shape == (3, 4) and data.X_test is None


def test_idx_directory_errors(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(DataError, match="no pair of IDX files"):
        load_idx_directory(tmp_path)
    write_idx(tmp_path / "train-images-idx3-ubyte", np.zeros((3, 2, 2), dtype=np.uint8))
    write_idx(tmp_path / "train-labels-idx1-ubyte", np.zeros(4, dtype=np.uint8))
    with pytest.raises(DataError, match="3 rows but its target has 4"):
        load_idx_directory(tmp_path)


def test_fashion_mnist_from_a_debian_style_directory(tmp_path):
    _write_mnist_like(tmp_path / "fashion-mnist", compress=True)
    data = load_fashion_mnist(tmp_path / "fashion-mnist")
    assert data.name == "fashion-mnist"
    assert data.X.shape == (6, 6) and data.X_test.shape == (4, 6)


def test_fashion_mnist_missing_says_what_to_install(tmp_path):
    with pytest.raises(DataError, match="apt-get install dataset-fashion-mnist"):
        load_fashion_mnist(tmp_path)


# --------------------------------------------------------------------------- tables
def _frame() -> pd.DataFrame:
    return pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0, 1, 0, 1],
                         "label": ["x", "y", "x", "y"]})


@pytest.mark.parametrize("name", ["t.csv", "t.tsv", "t.csv.gz"])
def test_text_tables(tmp_path, name):
    path = tmp_path / name
    _frame().to_csv(path, sep="\t" if ".tsv" in name else ",", index=False)
    data = load_dataset(path)  # 'label' is found without --target
    np.testing.assert_array_equal(data.X, [[1, 0], [2, 1], [3, 0], [4, 1]])
    assert list(data.y) == ["x", "y", "x", "y"]
    assert data.feature_names == ("a", "b")


def test_explicit_target_and_features_only(tmp_path):
    path = tmp_path / "t.csv"
    _frame().drop(columns="label").to_csv(path, index=False)
    data = load_dataset(path, target="b")
    np.testing.assert_array_equal(data.y, [0, 1, 0, 1])
    assert data.X.shape == (4, 1)
    with pytest.raises(DataError, match=r"which column is the target\? none is called target, "
                                        r"label, labels, class or y; columns are \['a', 'b'\]; "
                                        r"name it with target=COLUMN \(the likely one: "
                                        r"'b', the last column\)\.$"):
        load_dataset(path)
    assert load_dataset(path, require_target=False).X.shape == (4, 2)


def test_parquet(tmp_path):
    path = tmp_path / "t.parquet"
    _frame().to_parquet(path)
    data = load_dataset(path, target="label")
    assert data.X.shape == (4, 2) and list(data.y) == ["x", "y", "x", "y"]


def test_table_errors(tmp_path):
    path = tmp_path / "t.csv"
    _frame().to_csv(path, index=False)
    with pytest.raises(DataError, match=r"unknown target column 'nope'; columns are \['a', 'b'"):
        load_dataset(path, target="nope")

    text = tmp_path / "text.csv"
    text.write_text("a,b,label\n1,2,0\n3,red,1\n")
    with pytest.raises(DataError, match=r"non-numeric feature column\(s\) \['b'\] "
                                        r"\(e.g. 'red' at line 3\)"):
        load_dataset(text)

    nan = tmp_path / "nan.csv"
    nan.write_text("a,b,label\n1,,0\n3,4,1\n5,inf,0\n,6,1\n")
    with pytest.raises(DataError, match=r"2 NaN and 1 infinite value\(s\) in 3 row\(s\): "
                                        r"line 2 column 'b', line 4 column 'b', line 5 column "
                                        r"'a'"):
        load_dataset(nan)

    missing_target = tmp_path / "mt.csv"
    missing_target.write_text("a,label\n1,0\n2,\n")
    with pytest.raises(DataError, match=r"target column 'label' has 1 missing value\(s\): "
                                        "line 3"):
        load_dataset(missing_target)

    broken = tmp_path / "broken.csv"
    broken.write_text('a,b\n"1,2\n')
    with pytest.raises(DataError, match="unreadable or malformed"):
        load_dataset(broken)

    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="unreadable or malformed"):
        load_dataset(empty)

    header_only = tmp_path / "header.csv"
    header_only.write_text("a,label\n")
    with pytest.raises(DataError, match="no data rows"):
        load_dataset(header_only)


# --------------------------------------------------------------------------- NPZ, svmlight
def test_npz(tmp_path):
    path = tmp_path / "d.npz"
    X = np.arange(12.0).reshape(4, 3)
    np.savez(path, X=X, y=np.array([0, 1, 0, 1]), X_test=X[:2], y_test=np.array([1, 0]))
    data = load_dataset(path)
    np.testing.assert_array_equal(data.X, X)
    np.testing.assert_array_equal(data.X_test, X[:2])


def test_npz_errors(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, data=np.zeros((2, 2)))
    with pytest.raises(DataError, match=r"missing \['X', 'y'\], found \['data'\]"):
        load_dataset(path)
    np.savez(path, X=np.array([[1.0, np.nan], [np.nan, 2.0]]), y=np.array([0, 1]))
    with pytest.raises(DataError, match=r"2 NaN value\(s\) in 2 row\(s\): row 0 column 1, "
                                        "row 1 column 0"):
        load_dataset(path)
    np.savez(path, X=np.array([[1, "a"]], dtype=object), y=np.array([1]))
    with pytest.raises(DataError, match="Python objects"):
        load_dataset(path)
    np.savez(path, X=np.zeros((3, 2)), y=np.zeros(2))
    with pytest.raises(DataError, match="3 rows but its target has 2"):
        load_dataset(path)
    path.write_text("not a zip")
    with pytest.raises(DataError, match="not an NPZ archive"):
        load_dataset(path)


def test_svmlight(tmp_path):
    path = tmp_path / "d.svmlight"
    X = sp.csr_matrix(np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]]))
    dump_svmlight_file(X, np.array([1, -1, 1]), str(path))
    data = load_dataset(path)
    assert sp.issparse(data.X)
    np.testing.assert_array_equal(data.X.toarray(), X.toarray())
    np.testing.assert_array_equal(data.y, [1, -1, 1])
    bad = tmp_path / "bad.libsvm"
    bad.write_text("1 3:abc\n")
    with pytest.raises(DataError, match="malformed svmlight"):
        load_dataset(bad)


# --------------------------------------------------------------------------- dispatch
def test_named_data_sets_and_dispatch_errors(tmp_path):
    digits = load_dataset()
    assert (digits.name, digits.X.shape, digits.y.shape) == ("digits", (1797, 64), (1797,))
    for name, (_, _, shape, location) in BUNDLED.items():
        if location is None:  # bundled with scikit-learn: the stated shape is the real one
            assert load_dataset(name).shape_text() == shape
    with pytest.raises(DataError, match=r"no such file or directory: nope\.csv"):
        load_dataset("nope.csv")
    unknown = tmp_path / "data.xlsx"
    unknown.write_text("x")
    with pytest.raises(DataError, match=r"unknown data format '\.xlsx'"):
        load_dataset(unknown)
    with pytest.raises(DataError, match="applies to table files, not to the bundled data set "
                                        "'digits'; drop target=COLUMN"):
        load_dataset("digits", target="y")
    archive = tmp_path / "data.npz"
    np.savez(archive, X=np.eye(3), y=np.arange(3))
    with pytest.raises(DataError, match=r"applies to table files \(CSV/TSV/Parquet\) only; "
                                        "drop target=COLUMN"):
        load_dataset(archive, target="y")


def test_available_datasets_reports_fashion_mnist_state(tmp_path, monkeypatch):
    loader, description, shape, _ = BUNDLED["fashion-mnist"]
    monkeypatch.setitem(BUNDLED, "fashion-mnist", (loader, description, shape, tmp_path))
    infos = {info.name: info for info in available_datasets()}
    assert infos["digits"].available
    assert not infos["fashion-mnist"].available
    assert "apt-get install dataset-fashion-mnist" in infos["fashion-mnist"].location
    _write_mnist_like(tmp_path, compress=True)
    fashion = next(i for i in available_datasets() if i.name == "fashion-mnist")
    assert fashion.available and fashion.location == str(tmp_path)
