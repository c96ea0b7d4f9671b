"""Hostile and malformed data files, through the readers and through ``kernelmaps compare``.

Property-based fuzzing (hypothesis) of every format the command reads — CSV, TSV, Parquet,
NPZ, svmlight, IDX raw and gzipped, compressed tables — from generated content and from
mutations (flipped, inserted and cut bytes) of valid files: :func:`load_dataset` returns a
data set of finite float64 features with a target of the same length, or raises a
``DataError``; nothing else (no other exception, no warning). Hand-made hostile files
(declared sizes of terabytes, truncations, decompression bombs, pickles, a million columns)
go through the real command, in process and in a memory-limited subprocess: exit status 2,
exactly one line on stderr, no traceback, bounded memory, and no code from the file run.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import pickle
import resource
import struct
import subprocess
import sys
import tracemalloc
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelmaps.cli import main
from kernelmaps.cli.data import DataError, Dataset, load_dataset
from kernelmaps.cli.data._streams import EXPANSION_ALLOWANCE

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

#: Examples per fuzzed format (KERNELMAPS_FUZZ_EXAMPLES=2000 for a longer campaign).
FUZZ = settings(max_examples=int(os.environ.get("KERNELMAPS_FUZZ_EXAMPLES", "60")),
                deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
#: What ``kernelmaps compare`` runs on a file that loads: the smallest comparison there is.
COMPARE = ["compare", "--methods", "nystroem", "--n-components", "3", "--seeds", "1",
           "--no-exact", "--quiet", "--threads", "1"]
#: A decompression bomb must expand past the allowance; this is just past it.
BOMB_BYTES = EXPANSION_ALLOWANCE + (8 << 20)


# =========================================================================== checking
def check_load(path: Path) -> Dataset | None:
    """Load ``path``: a valid data set or a DataError, nothing else, no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            data = load_dataset(path)
        except DataError as error:
            assert str(error) and "\n" not in str(error).strip()
            return None
    for X, y in ((data.X, data.y), (data.X_test, data.y_test)):
        if X is None:
            continue
        values = X.data if sp.issparse(X) else X
        assert X.dtype == np.float64 and X.ndim == 2 and np.isfinite(values).all()
        assert X.shape[0] >= 1 and X.shape[1] >= 1
        assert y is not None and y.shape == (X.shape[0],)
    return data


def check_command(path: Path, capsys, tmp_path: Path, *, must_fail: bool = True) -> None:
    """``kernelmaps compare --data path``: exit 0, or 2 with one line on stderr."""
    capsys.readouterr()
    status = main([*COMPARE, "--data", str(path), "--out", str(tmp_path / "report")])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if must_fail or status != 0:
        assert status == 2, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("kernelmaps compare: error: "), err


def mutate(data: bytes, draw) -> bytes:
    """Flip, insert, delete and cut bytes of ``data`` (hypothesis chooses where)."""
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "cut", "overwrite"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif kind == "cut":
            del data[at:]
        else:
            chunk = draw(st.binary(min_size=1, max_size=8))
            data[at:at + len(chunk)] = chunk
    return bytes(data)


def valid_table(sep: str = ",") -> bytes:
    rng = np.random.RandomState(0)
    frame = pd.DataFrame(rng.uniform(size=(12, 3)), columns=["a", "b", "c"])
    frame["target"] = np.arange(12) % 2
    return frame.to_csv(index=False, sep=sep).encode()


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# =========================================================================== fuzzing
CELLS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**30, 10**30).map(str),
    st.sampled_from(["", "nan", "NaN", "inf", "-inf", "1e999", "0x1F", "TRUE", '"', '""',
                     "'", "\\", "\x00", "é", "\ufeff", "1,5", "#", " ", "\r"]),
    st.text(max_size=6),
)


@st.composite
def tables(draw, sep: str) -> bytes:
    n_columns = draw(st.integers(1, 5))
    header = draw(st.lists(st.sampled_from(["a", "b", "target", "label", "y", "", "a", "é"]),
                           min_size=n_columns, max_size=n_columns))
    rows = draw(st.lists(st.lists(CELLS, min_size=0, max_size=n_columns + 1), max_size=8))
    text = "\n".join(sep.join(row) for row in [header, *rows])
    encoding = draw(st.sampled_from(["utf-8", "latin-1", "utf-16"]))
    return text.encode(encoding, errors="replace")


@FUZZ
@given(st.data())
@pytest.mark.parametrize(("suffix", "sep"), [(".csv", ","), (".tsv", "\t")])
def test_fuzz_tables(tmp_path, suffix, sep, data):
    content = data.draw(tables(sep)) if data.draw(st.booleans()) else \
        mutate(valid_table(sep), data.draw)
    check_load(write(tmp_path, f"f{suffix}", content))


@FUZZ
@given(st.data())
@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress],
                         ids=["gzip", "bzip2", "xz"])
def test_fuzz_compressed_tables(tmp_path, compress, data):
    content = compress(data.draw(tables(",")))
    if data.draw(st.booleans()):
        content = mutate(content, data.draw)
    check_load(write(tmp_path, "f.csv.gz", content))


def _parquet_bytes() -> bytes:
    buffer = io.BytesIO()
    frame = pd.DataFrame({"a": np.arange(20.0), "b": np.linspace(0, 1, 20),
                          "target": np.arange(20) % 3})
    frame.to_parquet(buffer)
    return buffer.getvalue()


@FUZZ
@given(st.data())
def test_fuzz_parquet(tmp_path, data):
    check_load(write(tmp_path, "f.parquet", mutate(_parquet_bytes(), data.draw)))


ARRAY_DTYPES = ["<f8", ">f4", "<i8", "u1", "?", "<c16", "<U3", "<M8[s]", "V4", "O",
                [("a", "<f8"), ("b", "O")]]


@st.composite
def npz_archives(draw) -> bytes:
    buffer = io.BytesIO()
    arrays = {}
    for key in draw(st.lists(st.sampled_from(["X", "y", "X_test", "y_test", "other"]),
                             unique=True, max_size=5)):
        dtype = np.dtype(draw(st.sampled_from(ARRAY_DTYPES)))
        shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
        values = np.zeros(shape, dtype=dtype)
        if dtype.kind in "fiu" and values.size:
            values.flat[:] = draw(st.lists(st.floats(allow_nan=True, allow_infinity=True,
                                                     width=32),
                                           min_size=values.size, max_size=values.size)) \
                if dtype.kind == "f" else np.arange(values.size)
        arrays[key] = values
    (np.savez_compressed if draw(st.booleans()) else np.savez)(buffer, **arrays)
    return buffer.getvalue()


def _declare_shape(archive: bytes, member: str, shape: tuple[int, ...]) -> bytes:
    """Rewrite the .npy header of ``member`` to declare ``shape`` (the data unchanged)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            raw = source.read(info)
            if info.filename == member:
                stream = io.BytesIO(raw)
                np.lib.format.read_magic(stream)
                _, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
                header = io.BytesIO()
                np.lib.format.write_array_header_1_0(header, {
                    "descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": fortran,
                    "shape": shape})
                raw = header.getvalue() + raw[stream.tell():]
            target.writestr(info.filename, raw)
    return out.getvalue()


def _valid_npz() -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, X=np.arange(12.0).reshape(6, 2), y=np.arange(6) % 2)
    return buffer.getvalue()


@FUZZ
@given(st.data())
def test_fuzz_npz(tmp_path, data):
    choice = data.draw(st.sampled_from(["generated", "mutated", "declared"]))
    if choice == "generated":
        content = data.draw(npz_archives())
    elif choice == "mutated":
        content = mutate(_valid_npz(), data.draw)
    else:  # a header declaring any shape, up to terabytes, over the same data
        shape = tuple(data.draw(st.lists(st.integers(0, 2**40), min_size=1, max_size=3)))
        content = _declare_shape(_valid_npz(), data.draw(st.sampled_from(["X.npy", "y.npy"])),
                                 shape)
    check_load(write(tmp_path, "f.npz", content))


SVM_TOKENS = st.one_of(
    st.builds("{}:{}".format, st.integers(-5, 2**65), st.floats(allow_nan=True).map(repr)),
    st.sampled_from(["qid:1", "qid:x", ":", "1:", ":1", "#comment", "1:2:3", "nan", "1e400",
                     "\t", "\x00", "é"]),
)


@FUZZ
@given(st.data())
def test_fuzz_svmlight(tmp_path, data):
    lines = data.draw(st.lists(st.lists(SVM_TOKENS, max_size=4).map(" ".join), max_size=6))
    labels = data.draw(st.lists(st.sampled_from(["1", "-1", "0", "2.5", "x", "nan", ""]),
                                min_size=len(lines), max_size=len(lines)))
    content = "\n".join(f"{label} {line}" for label, line in zip(labels, lines, strict=True))
    raw = content.encode("utf-8", errors="replace")
    if data.draw(st.booleans()):
        raw = gzip.compress(raw)
    check_load(write(tmp_path, data.draw(st.sampled_from(["f.svm", "f.libsvm.gz"])), raw))


IDX_CODES = [0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x07, 0xFF]


@st.composite
def idx_files(draw) -> bytes:
    code = draw(st.sampled_from(IDX_CODES))
    ndim = draw(st.integers(0, 4))
    dims = draw(st.lists(st.one_of(st.integers(0, 5), st.integers(0, 2**32 - 1)),
                         min_size=ndim, max_size=ndim))
    header = bytes([draw(st.sampled_from([0, 1])), 0, code, ndim]) + struct.pack(
        f">{ndim}I", *dims)
    body = draw(st.binary(max_size=64))
    content = header + body
    return mutate(content, draw) if draw(st.booleans()) else content


def _idx_pair(tmp_path: Path, images: bytes, labels: bytes, compress: bool) -> Path:
    directory = tmp_path / "idx"
    directory.mkdir(exist_ok=True)
    for name in list(directory.iterdir()):
        name.unlink()
    suffix = ".gz" if compress else ""
    (directory / f"train-images-idx3-ubyte{suffix}").write_bytes(
        gzip.compress(images) if compress else images)
    (directory / f"train-labels-idx1-ubyte{suffix}").write_bytes(
        gzip.compress(labels) if compress else labels)
    return directory


VALID_LABELS = b"\x00\x00\x08\x01" + struct.pack(">I", 4) + bytes([0, 1, 0, 1])
VALID_IMAGES = b"\x00\x00\x08\x03" + struct.pack(">3I", 4, 2, 2) + bytes(range(16))


@FUZZ
@given(st.data())
@pytest.mark.parametrize("compress", [False, True], ids=["raw", "gzip"])
def test_fuzz_idx(tmp_path, compress, data):
    images = data.draw(st.one_of(idx_files(), st.just(VALID_IMAGES)))
    labels = data.draw(st.one_of(st.just(VALID_LABELS), idx_files()))
    check_load(_idx_pair(tmp_path, images, labels, compress))


# =========================================================================== the command
def _gzip_of_zeros(header: bytes, n_bytes: int) -> bytes:
    """``header`` then ``n_bytes`` zero bytes, gzipped without holding them."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [compressor.compress(header)]
    chunk = bytes(1 << 20)
    for _ in range(n_bytes >> 20):
        parts.append(compressor.compress(chunk))
    parts.append(compressor.flush())
    return b"".join(parts)


def _csv_bomb() -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [compressor.compress(b"a,b,target\n")]
    block = b"0,0,1\n" * (1 << 17)
    for _ in range(BOMB_BYTES // len(block)):
        parts.append(compressor.compress(block))
    parts.append(compressor.flush())
    return b"".join(parts)


def _zip_bomb_npz() -> bytes:
    header = io.BytesIO()
    rows = BOMB_BYTES // 8
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (rows, 1)})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("X.npy", "w", force_zip64=True) as member:
            member.write(header.getvalue())
            for _ in range(BOMB_BYTES >> 20):
                member.write(bytes(1 << 20))
        archive.writestr("y.npy", _npy(np.zeros(4)))
    return out.getvalue()


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


class _RunsCode:
    """Unpickling this creates a marker file: proof that a file's code ran."""

    marker = ""

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _hostile_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name → (path, what the one-line error must say)."""
    files = {}

    def add(name, filename, content, says):
        files[name] = (write(tmp_path, filename, content), says)

    huge_dims = b"\x00\x00\x08\x03" + struct.pack(">3I", 2**32 - 1, 2**32 - 1, 2**32 - 1)
    directory = _idx_pair(tmp_path, huge_dims + bytes(16), VALID_LABELS, compress=False)
    files["IDX declaring 2^96 pixels"] = (directory, "promises 4294967295×4294967295")
    bomb_dir = tmp_path / "idx-bomb"
    bomb_dir.mkdir()
    (bomb_dir / "train-images-idx3-ubyte.gz").write_bytes(_gzip_of_zeros(
        b"\x00\x00\x08\x03" + struct.pack(">3I", 2**20, 2**10, 2**10), BOMB_BYTES))
    (bomb_dir / "train-labels-idx1-ubyte").write_bytes(VALID_LABELS)
    files["IDX gzip bomb"] = (bomb_dir, "decompression bomb")
    add("truncated Parquet", "t.parquet", _parquet_bytes()[:-20], "malformed")
    add("Parquet without its head", "h.parquet", _parquet_bytes()[40:], "malformed")
    add("NPZ with object arrays", "o.npz", _npz_of(X=np.array([[1, "a"]], dtype=object),
                                                   y=np.array([1])), "Python objects")
    add("NPZ declaring 10^12 rows", "s.npz", _declare_shape(_valid_npz(), "X.npy",
                                                            (10**12, 2)), "declares shape")
    add("NPZ zip bomb", "b.npz", _zip_bomb_npz(), "decompression bomb")
    add("pickle named .npz", "p.npz", pickle.dumps(_RunsCode()), "not an NPZ archive")
    add("CSV with a million columns in one line", "w.csv",
        (",".join(f"c{i}" for i in range(10**6)) + ",target\n" + "0," * 10**6 + "1\n").encode(),
        "1,000,001 columns")
    add("CSV gzip bomb", "b.csv.gz", _csv_bomb(), "decompression bomb")
    add("svmlight index 2^64", "i.svm", b"1 18446744073709551616:1\n0 1:1\n", "too large")
    add("svmlight gzip bomb", "b.svm.gz", gzip.compress(b"1 1:1\n" * (BOMB_BYTES // 6)),
        "decompression bomb")
    add("binary garbage as CSV", "g.csv", bytes(range(256)) * 4, "error")
    return files


def _npz_of(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return _hostile_files(tmp_path_factory.mktemp("hostile"))


def test_hostile_files_through_the_command(hostile, capsys, tmp_path):
    for name, (path, says) in hostile.items():
        check_command(path, capsys, tmp_path)
        status = main([*COMPARE, "--data", str(path), "--out", str(tmp_path / "r")])
        err = capsys.readouterr().err
        assert status == 2 and says in err, (name, err)


def test_hostile_files_are_read_with_bounded_memory(hostile):
    # Python-level allocations (bytes, NumPy arrays): a bomb stops at the expansion
    # allowance, read in chunks (at most about twice the allowance at once).
    tracemalloc.start()
    try:
        for name, (path, _) in hostile.items():
            tracemalloc.reset_peak()
            with pytest.raises(DataError):
                load_dataset(path)
            peak = tracemalloc.get_traced_memory()[1]
            assert peak < 2 * EXPANSION_ALLOWANCE + (32 << 20), (name, peak >> 20)
    finally:
        tracemalloc.stop()


def test_pickles_are_never_run(tmp_path, capsys):
    marker = tmp_path / "code-ran"
    _RunsCode.marker = str(marker)
    payloads = {
        "pickle.npz": pickle.dumps(_RunsCode()),
        "object.npz": _npz_of(X=np.array([_RunsCode()], dtype=object), y=np.array([1])),
        "pickle.csv": pickle.dumps(_RunsCode()),
        "pickle.parquet": pickle.dumps(_RunsCode()),
        "pickle.svm": pickle.dumps(_RunsCode()),
    }
    for name, content in payloads.items():
        check_command(write(tmp_path, name, content), capsys, tmp_path)
    assert not marker.exists()


def test_valid_files_still_run_the_comparison(tmp_path, capsys):
    # The guards refuse only what they must: small files of every format still work.
    rng = np.random.RandomState(0)
    X, y = rng.uniform(size=(40, 3)), np.arange(40) % 2
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(target=y)
    frame.to_parquet(tmp_path / "d.parquet")
    (tmp_path / "d.csv.gz").write_bytes(gzip.compress(frame.to_csv(index=False).encode()))
    np.savez_compressed(tmp_path / "d.npz", X=X, y=y)
    for name in ("d.parquet", "d.csv.gz", "d.npz"):
        data = check_load(tmp_path / name)
        assert data is not None, name  # loaded, not refused
        # Every value read back as written (the CSV as text: to its 17 significant digits).
        np.testing.assert_allclose(data.X, X, rtol=1e-15, err_msg=name)
        np.testing.assert_array_equal(np.asarray(data.y).astype(int), y, err_msg=name)
        check_command(tmp_path / name, capsys, tmp_path, must_fail=False)


def test_hostile_file_in_a_memory_limited_subprocess(hostile, tmp_path):
    limit = 2 << 30  # address space: the interpreter and libraries need about 1.3 GB

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    for name in ("CSV gzip bomb",):
        path, says = hostile[name]
        result = subprocess.run(
            [sys.executable, "-m", "kernelmaps", *COMPARE, "--data", str(path),
             "--out", str(tmp_path / "r")],
            capture_output=True, text=True, timeout=300, preexec_fn=limit_memory)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2, result.stderr
        assert len(lines) == 1 and says in lines[0] and "Traceback" not in result.stderr
