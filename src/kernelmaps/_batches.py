r"""Files larger than memory as a stream of row batches: Parquet, CSV/TSV and ``.npy``.

:func:`iter_batches` (public as :func:`kernelmaps.io.iter_batches`) yields ``(X, y)``
NumPy blocks of ``batch_rows`` rows (the last one shorter) and never holds more than two
batches' worth of rows, so a model's ``partial_fit`` (or any one-pass algorithm) sees every
row of a file of any size in bounded memory:

* **Parquet**: pyarrow's :meth:`pyarrow.parquet.ParquetFile.iter_batches`, reading only the
  columns asked for; memory is one batch plus the pages of the row group pyarrow decodes it from
  (read without pyarrow's pre-buffering, which would read ahead through the whole file);
* **CSV/TSV** (``.csv``, ``.tsv``, ``.tab``, optionally ``.gz``/``.bz2``/``.xz``/``.zip``):
  pandas' :func:`pandas.read_csv` with ``chunksize=batch_rows``;
* **.npy**: :func:`numpy.load` with ``mmap_mode="r"``: the operating system pages the
  file in; each batch is a copy of ``batch_rows`` rows in the dtype asked for. The target is a
  column of the array (``target=-1``) or a second ``.npy`` file of the same length.

Every problem is a ``ValueError`` naming the file, the column and the fix (a missing target
column, a non-numeric column, NaN or infinite values and the row they are in); a missing
pyarrow or pandas is an ``ImportError`` naming the extra that installs it.

:func:`estimated_bytes` is what the whole file would take as float64 in memory, from its
metadata alone (the ``kernelmaps`` command compares it with the memory available).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from kernelmaps._optional import import_optional
from kernelmaps._progress import Progress
from kernelmaps._suggest import did_you_mean

__all__ = ["BATCH_ROWS", "CSV_SUFFIXES", "NPY_SUFFIXES", "PARQUET_SUFFIXES", "estimated_bytes",
           "file_kind", "iter_batches"]

#: Rows per batch by default: 65,536 rows × 20 float64 columns is 10 MB.
BATCH_ROWS = 65_536
PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
NPY_SUFFIXES = (".npy",)
_COMPRESSED = (".gz", ".bz2", ".xz", ".zip")
_FORMATS = "Parquet (.parquet, .pq), CSV/TSV (.csv, .tsv, .tab, optionally compressed) or .npy"


def file_kind(path: str | PathLike[str]) -> str:
    """``"parquet"``, ``"csv"`` or ``"npy"``, from the file's suffix; else a ``ValueError``."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if len(suffixes) > 1 and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    suffix = suffixes[-1] if suffixes else ""
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    if suffix in CSV_SUFFIXES:
        return "csv"
    if suffix in NPY_SUFFIXES:
        return "npy"
    raise ValueError(f"{path}: cannot stream a {suffix or 'suffix-less'} file in batches; "
                     f"stream {_FORMATS} (convert other formats to Parquet, e.g. with "
                     "pandas' DataFrame.to_parquet in chunks).")


def iter_batches(path: str | PathLike[str], target: str | int | PathLike[str] | None = None,
                 *, columns: Sequence[str] | Sequence[int] | None = None,
                 batch_rows: int = BATCH_ROWS, dtype: Any = np.float64,
                 progress: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """Stream a Parquet, CSV/TSV or ``.npy`` file as ``(X, y)`` batches in bounded memory.

    Each batch holds ``batch_rows`` rows, the last one the rest, in the file's order; at
    most two batches' worth of rows are held at a time, whatever the file's size. With
    ``FeatureRidge(...).partial_fit`` over the batches, a model sees every row of a file
    larger than memory (see the "Online and out-of-core" guide).

    Parameters
    ----------
    path : str or path-like
        A ``.parquet``/``.pq`` file, a ``.csv``/``.tsv``/``.tab`` file with a header row
        (optionally compressed: ``.gz``, ``.bz2``, ``.xz``, ``.zip``), or a 2-D ``.npy``
        array.
    target : str, int, path-like or None, default=None
        The target: a column name (tables); for ``.npy``, a column index of the array
        (``-1``: the last) or the path of a second ``.npy`` file holding one target per row.
        ``None``: no target (``y`` is None) and every column is a feature.
    columns : sequence of str or int, or None, default=None
        The feature columns (names for tables, indices for ``.npy``), in this order.
        ``None``: every column but the target. Only these columns are read (Parquet reads
        them alone from disk).
    batch_rows : int, default=65536
        Rows per batch.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        The dtype of ``X``. ``y`` is float64 when numeric, else the labels as they are
        (strings stay strings for a classifier).
    progress : bool, default=False
        Draw a progress bar (rows read, rows/s, ETA when the number of rows is known:
        Parquet and ``.npy``) with kernelmaps' one progress renderer: rich when it is
        installed, else tqdm, else records on the ``"kernelmaps"`` logger.

    Yields
    ------
    X : ndarray of shape (n_batch, n_features)
        Finite features of the batch, C-ordered, of ``dtype``.
    y : ndarray of shape (n_batch,) or None
        The batch's targets.

    Raises
    ------
    ValueError
        The file's format is not one of these, the target or a feature column is missing
        (with the close names), a feature column is not numeric, or a value is NaN or
        infinite (the row and column are named).
    ImportError
        pyarrow (Parquet) or pandas (CSV) is not installed; the message names the extra.

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> from kernelmaps.io import iter_batches
    >>> path = os.path.join(tempfile.mkdtemp(), "data.npy")
    >>> np.save(path, np.arange(30.0).reshape(10, 3))
    >>> [(X.shape, float(y[0])) for X, y in iter_batches(path, target=-1, batch_rows=4)]
    [((4, 2), 2.0), ((4, 2), 14.0), ((2, 2), 26.0)]
    """
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, int | np.integer) \
            or batch_rows < 1:
        raise ValueError(f"batch_rows must be a positive integer; got {batch_rows!r}.")
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be numpy.float64 or numpy.float32; got {dtype}.")
    path = Path(path)
    kind = file_kind(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file.")
    readers = {"parquet": _parquet_pieces, "csv": _csv_pieces, "npy": _npy_pieces}
    pieces, total = readers[kind](path, target, columns, batch_rows, dtype)
    batches = _rebatch(pieces, batch_rows)
    if not progress:
        yield from batches
        return
    with Progress(enabled=True) as bar:
        bar.phase(f"reading {path.name}")
        start, done = time.perf_counter(), 0
        for X, y in batches:
            done += X.shape[0]
            bar.step(done, total, status=_rate_text(done, total, time.perf_counter() - start))
            yield X, y


def _rate_text(done: int, total: int | None, seconds: float) -> str:
    """``"152,000 rows/s, ETA 12 s"`` (no ETA when the total is unknown)."""
    rate = done / seconds if seconds > 0 else float("inf")
    text = f"{rate:,.0f} rows/s"
    if total is not None and np.isfinite(rate) and rate > 0:
        text += f", ETA {max(total - done, 0) / rate:,.0f} s"
    return text


def _rebatch(pieces: Iterator[tuple[np.ndarray, np.ndarray | None]],
             batch_rows: int) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """Pieces of any length as batches of exactly ``batch_rows`` rows (the last shorter).
    Fewer than ``batch_rows`` rows wait here, so at most two batches' worth is held."""
    held_X: list[np.ndarray] = []
    held_y: list[np.ndarray | None] = []
    n_held = 0
    for X, y in pieces:
        held_X.append(X)
        held_y.append(y)
        n_held += X.shape[0]
        while n_held >= batch_rows:
            X_all = held_X[0] if len(held_X) == 1 else np.concatenate(held_X)
            y_all = (None if held_y[0] is None else
                     held_y[0] if len(held_y) == 1 else np.concatenate(held_y))
            yield (np.ascontiguousarray(X_all[:batch_rows]),
                   None if y_all is None else y_all[:batch_rows])
            held_X = [X_all[batch_rows:]]
            held_y = [None if y_all is None else y_all[batch_rows:]]
            n_held -= batch_rows
    if n_held:
        X_all = np.ascontiguousarray(np.concatenate(held_X))
        yield X_all, None if held_y[0] is None else np.concatenate(held_y)


def _check_finite(X: np.ndarray, path: Path, names: Sequence[Any], first_row: int,
                  row_word: str = "row", row_offset: int = 0) -> None:
    """A ``ValueError`` naming the first NaN/inf value's row and column."""
    if np.isfinite(X).all():
        return
    rows, cols = np.nonzero(~np.isfinite(X))
    value = X[rows[0], cols[0]]
    raise ValueError(f"{path}: column {names[cols[0]]!r} is {value} at {row_word} "
                     f"{first_row + int(rows[0]) + row_offset}; drop or impute the rows with "
                     "missing or infinite values first (or leave the column out with "
                     "columns=).")


def _check_target(y: np.ndarray, path: Path, target: Any, first_row: int,
                  row_word: str = "row", row_offset: int = 0) -> np.ndarray:
    if y.dtype.kind in "biu":
        return y.astype(np.float64)
    if y.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(y))
    else:
        bad = np.flatnonzero([v is None or (isinstance(v, float) and v != v) for v in y])
    if bad.size:
        raise ValueError(f"{path}: the target {target!r} is missing at {row_word} "
                         f"{first_row + int(bad[0]) + row_offset}; drop those rows first.")
    return y.astype(np.float64) if y.dtype.kind == "f" else y


def _feature_columns(path: Path, names: list[str], target: Any,
                     columns: Sequence[Any] | None) -> list[str]:
    """The feature columns: ``columns`` checked against the file's, or all but the target."""
    shown = names if len(names) <= 20 else [*names[:20], "…"]
    if target is not None and target not in names:
        raise ValueError(f"{path}: no target column {target!r}{did_you_mean(target, names)}; "
                         f"the columns are {shown}. Pass target= one of them (or None to "
                         "read features only).")
    if columns is None:
        return [name for name in names if name != target]
    columns = list(columns)
    missing = [c for c in columns if c not in names]
    if missing:
        raise ValueError(f"{path}: no column {missing[0]!r}{did_you_mean(missing[0], names)}; "
                         f"the columns are {shown}. Fix columns=.")
    if target in columns:
        raise ValueError(f"{path}: the target {target!r} is also in columns=; leave it out.")
    if not columns:
        raise ValueError(f"{path}: columns= is empty; name at least one feature column.")
    return columns


# ---------------------------------------------------------------------- Parquet
def _parquet_file(path: Path) -> Any:
    parquet = import_optional("pyarrow.parquet")
    pyarrow = import_optional("pyarrow")
    try:
        # pre_buffer=False: pyarrow's default reads ahead through the whole file (the
        # memory of every row group, measured), not one row group at a time.
        return parquet.ParquetFile(path, pre_buffer=False)
    except (pyarrow.ArrowException, OSError) as error:
        raise ValueError(f"{path}: unreadable or malformed Parquet file ({error}).") from error


def _parquet_pieces(path: Path, target: Any, columns: Sequence[Any] | None, batch_rows: int,
                    dtype: np.dtype) -> tuple[Iterator[Any], int]:
    pyarrow = import_optional("pyarrow")
    handle = _parquet_file(path)
    schema = handle.schema_arrow
    names = list(schema.names)
    features = _feature_columns(path, names, target, columns)
    for name in features:
        kind = schema.field(name).type
        if not (pyarrow.types.is_integer(kind) or pyarrow.types.is_floating(kind)
                or pyarrow.types.is_boolean(kind) or pyarrow.types.is_decimal(kind)):
            raise ValueError(f"{path}: column {name!r} is not numeric (Parquet type {kind}); "
                             "encode it as numbers (e.g. one-hot) or leave it out with "
                             "columns=[...].")
    read = [*features, target] if target is not None else features

    def pieces() -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        first = 0
        for batch in handle.iter_batches(batch_size=batch_rows, columns=read):
            n = batch.num_rows
            X = np.empty((n, len(features)), dtype=dtype)
            for j in range(len(features)):
                column = batch.column(j)
                if column.null_count:
                    row = first + int(np.flatnonzero(column.is_null().to_numpy(
                        zero_copy_only=False))[0])
                    raise ValueError(f"{path}: column {features[j]!r} is missing (null) at row "
                                     f"{row}; drop or impute those rows first (or leave the "
                                     "column out with columns=).")
                X[:, j] = column.to_numpy(zero_copy_only=False)
            _check_finite(X, path, features, first)
            y = None
            if target is not None:
                y = _check_target(batch.column(len(features)).to_numpy(zero_copy_only=False),
                                  path, target, first)
            first += n
            yield X, y

    return pieces(), int(handle.metadata.num_rows)


# ---------------------------------------------------------------------- CSV
def _csv_pieces(path: Path, target: Any, columns: Sequence[Any] | None, batch_rows: int,
                dtype: np.dtype) -> tuple[Iterator[Any], None]:
    pd = import_optional("pandas")
    suffix = [s.lower() for s in path.suffixes if s.lower() not in _COMPRESSED][-1]
    separator = CSV_SUFFIXES[suffix]
    try:
        names = [str(c) for c in pd.read_csv(path, sep=separator, nrows=0).columns]
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: unreadable CSV header ({error}).") from error
    features = _feature_columns(path, names, target, columns)
    read = [*features, target] if target is not None else features

    def pieces() -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        first = 0
        reader = pd.read_csv(path, sep=separator, usecols=read, chunksize=batch_rows)
        with reader:
            try:
                for frame in reader:
                    for name in features:
                        if not (pd.api.types.is_numeric_dtype(frame[name])
                                or pd.api.types.is_bool_dtype(frame[name])):
                            values = frame[name]
                            bad = (pd.to_numeric(values, errors="coerce").isna()
                                   & values.notna()).to_numpy()
                            where = int(np.flatnonzero(bad)[0]) if bad.any() else 0
                            raise ValueError(
                                f"{path}: column {name!r} is not numeric ({values.iloc[where]!r} "
                                f"at line {first + where + 2}); encode it as numbers (e.g. "
                                "one-hot) or leave it out with columns=[...].")
                    X = frame[features].to_numpy(dtype=dtype, na_value=np.nan)
                    # File lines: the header is line 1, so row i is line i + 2.
                    _check_finite(X, path, features, first, "line", 2)
                    y = None
                    if target is not None:
                        y = _check_target(frame[target].to_numpy(), path, target, first,
                                          "line", 2)
                    first += X.shape[0]
                    yield X, y
            except pd.errors.ParserError as error:
                raise ValueError(f"{path}: malformed CSV after line {first + 1} "
                                 f"({str(error).strip().splitlines()[0]}).") from error

    return pieces(), None


# ---------------------------------------------------------------------- .npy
def _open_npy(path: Path) -> np.ndarray:
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable .npy array ({error}); save it with "
                         "numpy.save.") from error
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{path}: the array is not numeric (dtype {array.dtype}); save numbers "
                         "only.")
    return array


def _npy_pieces(path: Path, target: Any, columns: Sequence[Any] | None, batch_rows: int,
                dtype: np.dtype) -> tuple[Iterator[Any], int]:
    array = _open_npy(path)
    if array.ndim != 2:
        raise ValueError(f"{path}: a {array.ndim}-D array; stream a 2-D array of one row per "
                         "sample (reshape it to (n_samples, n_features) before numpy.save).")
    n, d = array.shape
    y_array = None
    target_column = None
    if target is None:
        pass
    elif isinstance(target, int | np.integer) and not isinstance(target, bool):
        if not -d <= target < d:
            raise ValueError(f"{path}: target column {target} is out of range for an array of "
                             f"{d} columns; pass target= an index in [-{d}, {d - 1}].")
        target_column = int(target) % d
    elif isinstance(target, str | os.PathLike):
        y_array = _open_npy(Path(target))
        if y_array.ndim != 1 or y_array.shape[0] != n:
            raise ValueError(f"{target}: the target file holds shape {y_array.shape}; it must "
                             f"be 1-D with one value per row of {path} ({n} rows).")
    else:
        raise ValueError(f"{path}: for a .npy file, target= is a column index or the path of "
                         f"a .npy file of targets; got {target!r}.")
    if columns is None:
        features = [j for j in range(d) if j != target_column]
    else:
        features = [int(j) % d if -d <= int(j) < d else -1 for j in columns]
        if -1 in features or not features:
            raise ValueError(f"{path}: columns= must be column indices in [-{d}, {d - 1}]; got "
                             f"{list(columns)}.")
        if target_column is not None and target_column in features:
            raise ValueError(f"{path}: the target column {target_column} is also in columns=; "
                             "leave it out.")
    contiguous = features == list(range(features[0], features[-1] + 1))

    def pieces() -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        for first in range(0, n, batch_rows):
            block = array[first:first + batch_rows]
            X = (block[:, features[0]:features[-1] + 1] if contiguous
                 else block[:, features]).astype(dtype)
            _check_finite(X, path, features, first)
            y = None
            if target_column is not None:
                y = _check_target(np.array(block[:, target_column]), path, target, first)
            elif y_array is not None:
                y = _check_target(np.array(y_array[first:first + batch_rows]), Path(target),
                                  "target", first)
            yield X, y

    return pieces(), n


# ---------------------------------------------------------------------- size
def estimated_bytes(path: str | PathLike[str]) -> int | None:
    """Bytes the whole file would take as float64 in memory, from its metadata alone (the
    Parquet footer, the ``.npy`` header); a CSV's size on disk (uncompressed, numbers in text
    take about as many bytes as in float64). ``None`` for other files or when pyarrow is
    missing."""
    path = Path(path)
    try:
        kind = file_kind(path)
    except ValueError:
        return None
    try:
        if kind == "parquet":
            metadata = _parquet_file(path).metadata
            return 8 * metadata.num_rows * metadata.num_columns
        if kind == "npy":
            shape = np.load(path, mmap_mode="r", allow_pickle=False).shape
            return 8 * int(np.prod(shape))
        if any(s.lower() in _COMPRESSED for s in path.suffixes):
            return None
        return path.stat().st_size
    except (ImportError, ValueError, OSError):
        return None
