"""Data files with one row per sample: CSV/TSV (optionally compressed), Parquet, NPZ, svmlight.

Tables have a header row and a target column (given, or the one column named like a
target, :data:`TARGET_NAMES`); NPZ archives hold arrays ``X`` and ``y`` (optionally
``X_test``/``y_test``) and are read without unpickling; svmlight/libsvm files stay sparse.
pandas (the ``cli`` extra) reads the tables.
"""

from __future__ import annotations

import io
import math
import zipfile
import zlib
from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import load_svmlight_file

from kernelmaps._batches import CSV_SUFFIXES, PARQUET_SUFFIXES
from kernelmaps._optional import import_optional
from kernelmaps._suggest import did_you_mean
from kernelmaps.cli.data._base import (
    DataError,
    Dataset,
    as_features,
    check_target,
    default_row,
    same_length,
)
from kernelmaps.cli.data._streams import (
    EXPANSION_ALLOWANCE,
    MAX_EXPANSION,
    MAX_TABLE_COLUMNS,
    check_table_width,
    expansion_limit,
    open_data,
    read_capped,
    read_upto,
)

__all__ = ["PARQUET_SUFFIXES", "SVMLIGHT_SUFFIXES", "TABLE_SUFFIXES", "TARGET_NAMES",
           "file_suffix", "load_npz", "load_svmlight", "load_table"]

#: Column names taken as the target when none is given (case-insensitive).
TARGET_NAMES = ("target", "label", "labels", "class", "y")
# The table suffixes are the streaming reader's (kernelmaps.io.iter_batches): one list.
TABLE_SUFFIXES = CSV_SUFFIXES
SVMLIGHT_SUFFIXES = (".svm", ".svmlight", ".libsvm")
#: Bytes of a table read to count its header's columns before pandas parses it.
_HEAD_BYTES = 16 << 20


def _line_of_row(i: int) -> str:
    return f"line {i + 2}"  # 1-based file lines, the header being line 1


#: A long header is listed as its first and last columns (a target is most often the last):
#: this many of each, and how many are hidden between them.
_SHOWN_HEAD, _SHOWN_TAIL = 16, 4


def _columns_text(columns: list[str]) -> str:
    """``['a', 'b', …]``: every column up to 20, else the first 16, how many are hidden, and
    the last 4."""
    if len(columns) <= _SHOWN_HEAD + _SHOWN_TAIL:
        return repr(list(columns))
    hidden = len(columns) - _SHOWN_HEAD - _SHOWN_TAIL
    return ("[" + ", ".join(map(repr, columns[:_SHOWN_HEAD])) + f", … {hidden:,} more …, "
            + ", ".join(map(repr, columns[-_SHOWN_TAIL:])) + "]")


def _resolve_target(columns: list[str], target: str | None, source: str,
                    require_target: bool) -> str | None:
    shown = _columns_text(columns)
    if target is not None:
        if target not in columns:
            # The close names first: a long header is cut at 20 columns, a match never is.
            raise DataError(f"{source}: unknown target column {target!r}"
                            f"{did_you_mean(target, columns)}; columns are {shown}.")
        return target
    candidates = [c for c in columns if str(c).lower() in TARGET_NAMES]
    if len(candidates) == 1:
        return candidates[0]
    if require_target:
        found = (f"several are named like one: {candidates}" if candidates else
                 f"none is called {', '.join(TARGET_NAMES[:-1])} or {TARGET_NAMES[-1]}")
        # The likely one: a named candidate, else the last column (where data sets from
        # scikit-learn's loaders, UCI and most exports put the target).
        likely = candidates[0] if candidates else columns[-1]
        raise DataError(f"{source}: which column is the target? {found}; columns are {shown}",
                        f"name it with {{target}} (the likely one: {likely!r}"
                        + (", the last column" if likely == columns[-1] else "") + ").")
    return None


def _table_dataset(frame: Any, source: Path, target: str | None, require_target: bool,
                   row_label: Callable[[int], str]) -> Dataset:
    pd = import_optional("pandas")

    if frame.shape[0] == 0:
        raise DataError(f"{source}: no data rows.")
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    target = _resolve_target(columns, target, str(source), require_target)
    features = frame.drop(columns=[target]) if target is not None else frame
    non_numeric = [c for c in features.columns
                   if not (pd.api.types.is_numeric_dtype(features[c])
                           or pd.api.types.is_bool_dtype(features[c]))]
    if non_numeric:
        column = non_numeric[0]
        values = features[column]
        unparsable = pd.to_numeric(values, errors="coerce").isna() & values.notna()
        positions = np.flatnonzero(unparsable.to_numpy())
        example = (f" (e.g. {values.iloc[positions[0]]!r} at {row_label(int(positions[0]))})"
                   if positions.size else "")
        raise DataError(
            f"{source}: non-numeric feature column(s) {non_numeric[:5]}{example}; encode them "
            "as numbers (e.g. one-hot) or drop them."
        )
    names = tuple(features.columns)
    X = as_features(features.to_numpy(dtype=np.float64, na_value=np.nan), str(source), names,
                     row_label)
    y = None
    if target is not None:
        y = check_target(frame[target].to_numpy(), f"{source}: target column {target!r}",
                          row_label)
    return Dataset(name=source.name, X=X, y=y, feature_names=names, source=str(source),
                   description=f"table {source.name}" + (f", target {target!r}" if target
                                                         else ""), target=target)


def file_suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".xz", ".zip") and len(suffixes) > 1:
        return suffixes[-2]
    return suffixes[-1] if suffixes else ""


def load_table(path: str | PathLike[str], target: str | None = None, *,
               require_target: bool = True) -> Dataset:
    """Load a CSV/TSV (optionally compressed) or Parquet file with a header row.

    Parameters
    ----------
    path : str or path-like
    target : str or None
        The target column; ``None`` takes the one column named ``target``, ``label``,
        ``labels``, ``class`` or ``y`` (case-insensitive), if there is exactly one.
    require_target : bool, default=True
        ``False``: without a target column every column is a feature (``y`` is None).

    Returns
    -------
    Dataset
    """
    pd = import_optional("pandas")

    path = Path(path)
    suffix = file_suffix(path)
    try:
        if suffix in PARQUET_SUFFIXES:
            frame = _read_parquet(path)
            row_label = default_row
        else:
            source, separator = _table_source(path, TABLE_SUFFIXES[suffix])
            frame = pd.read_csv(source, sep=separator, compression=None)
            row_label = _line_of_row
    except DataError:
        raise
    except ImportError as error:  # pragma: no cover - pyarrow is in the cli extra
        raise DataError(f"{path}: reading Parquet needs pyarrow: pip install "
                        f"'kernelmaps[cli]' ({error}).") from error
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        raise DataError(f"{path}: unreadable or malformed file ({message}).") from error
    return _table_dataset(frame, path, target, require_target, row_label)


def _table_source(path: Path, separator: str) -> tuple[Path | io.BytesIO, str]:
    """The file for pandas: itself, or its decompressed bytes (within the expansion limit),
    and its separator (:func:`_separator`); a table wider than :data:`MAX_TABLE_COLUMNS` is
    refused before parsing."""
    stream, method = open_data(path)
    with stream:
        if method is None:
            head = read_upto(stream, _HEAD_BYTES, path, None)
            separator = _separator(head, separator)
            check_table_width(head, separator, path)
            return path, separator
        data = read_capped(stream, expansion_limit(path.stat().st_size), path, method)
    separator = _separator(data[:_HEAD_BYTES], separator)
    check_table_width(data[:_HEAD_BYTES], separator, path)
    return io.BytesIO(data), separator


#: Separators a table's header line is looked at for when its suffix's one is absent.
_SEPARATORS = (",", ";", "\t", "|")


def _separator(head: bytes, expected: str) -> str:
    """The suffix's separator (``,`` for .csv), or, when the header line has none of it and
    exactly one other separator, that one: Excel writes ``;``-separated .csv files where the
    decimal mark is a comma, and a header read as one column helps nobody."""
    end = head.find(b"\n")
    header = head[: len(head) if end < 0 else end]
    if expected.encode() in header:
        return expected
    found = [sep for sep in _SEPARATORS if sep.encode() in header]
    return found[0] if len(found) == 1 else expected


def _read_parquet(path: Path) -> Any:
    """The Parquet file as a DataFrame, after :func:`_check_parquet_size`. Arrow's own errors
    that are neither ValueError nor OSError, and those of a corrupted pandas metadata block
    (the JSON in the schema, which pandas trusts: a KeyError for a missing key), are
    DataErrors too."""
    pd = import_optional("pandas")
    pyarrow = import_optional("pyarrow")
    try:
        _check_parquet_size(path)
        return pd.read_parquet(path)
    except (pyarrow.ArrowException, KeyError, TypeError, IndexError, AttributeError,
            NotImplementedError) as error:
        raise DataError(f"{path}: unreadable or malformed Parquet file "
                        f"({type(error).__name__}: {error}).") from error


def _check_parquet_size(path: Path) -> None:
    """Refuse, from the footer alone, a Parquet file too wide or whose values (as float64)
    would exceed what its size may expand to (run-length encoding can declare any number of
    rows in a few bytes)."""
    parquet = import_optional("pyarrow.parquet")
    metadata = parquet.ParquetFile(path).metadata
    if metadata.num_columns > MAX_TABLE_COLUMNS:
        raise DataError(f"{path}: {metadata.num_columns:,} columns, more than the "
                        f"{MAX_TABLE_COLUMNS:,} a table may have here; save wide data as NPZ "
                        "(numpy.savez) or svmlight.")
    decoded = 8 * metadata.num_rows * metadata.num_columns
    if decoded > expansion_limit(path.stat().st_size):
        raise DataError(
            f"{path}: its footer declares {metadata.num_rows:,} rows × "
            f"{metadata.num_columns:,} columns ({decoded:,} bytes as float64), more than its "
            f"{path.stat().st_size:,} bytes may expand to ({MAX_EXPANSION}× the file, or "
            f"{EXPANSION_ALLOWANCE >> 20} MiB): refused as a likely decompression bomb."
        )


def load_npz(path: str | PathLike[str]) -> Dataset:
    """Load an ``.npz`` archive holding ``X`` and ``y`` (optionally ``X_test``, ``y_test``)."""
    path = Path(path)
    if not zipfile.is_zipfile(path):  # np.load would try to unpickle anything else
        raise DataError(f"{path}: not an NPZ archive (not a zip file); save it with "
                        "numpy.savez(path, X=X, y=y).")
    try:
        with zipfile.ZipFile(path) as archive:
            found = sorted(name.removesuffix(".npy") for name in archive.namelist())
            arrays = {key: _npz_array(archive, member, path)
                      for key, member in _npz_members(archive).items()}
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError) as error:
        raise DataError(f"{path}: unreadable or malformed NPZ file ({error}).") from error
    missing = [key for key in ("X", "y") if key not in arrays]
    if missing:
        raise DataError(f"{path}: an NPZ data set must hold arrays 'X' and 'y'; missing "
                        f"{missing}, found {found[:20]}.")
    X = as_features(arrays["X"], f"{path}: X")
    y = check_target(np.asarray(arrays["y"]).ravel(), f"{path}: y")
    same_length(X, y, str(path))
    X_test = y_test = None
    if "X_test" in arrays or "y_test" in arrays:
        if not {"X_test", "y_test"} <= set(arrays):
            raise DataError(f"{path}: a test split needs both 'X_test' and 'y_test'.")
        X_test = as_features(arrays["X_test"], f"{path}: X_test")
        y_test = check_target(np.asarray(arrays["y_test"]).ravel(), f"{path}: y_test")
        same_length(X_test, y_test, str(path), "X_test")
        if X_test.shape[1] != X.shape[1]:
            raise DataError(f"{path}: X_test has {X_test.shape[1]} columns but X has "
                            f"{X.shape[1]}.")
    return Dataset(name=path.name, X=X, y=y, X_test=X_test, y_test=y_test, source=str(path),
                   description=f"NPZ archive {path.name}")


_NPZ_KEYS = ("X", "y", "X_test", "y_test")


def _npz_members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """The members holding the arrays a data set uses (others are never read)."""
    return {info.filename[:-4]: info for info in archive.infolist()
            if info.filename.endswith(".npy") and info.filename[:-4] in _NPZ_KEYS}


def _npz_array(archive: zipfile.ZipFile, member: zipfile.ZipInfo, path: Path) -> np.ndarray:
    """One ``.npy`` member, read only after its header is checked: no Python objects, and a
    shape whose size is what the member holds (and within the expansion limit when it is
    compressed), so the header cannot size an allocation on its own."""
    name = f"{path}: {member.filename}"
    if member.file_size > max(expansion_limit(member.compress_size), member.compress_size):
        raise DataError(f"{name} expands from {member.compress_size:,} to "
                        f"{member.file_size:,} bytes (more than {MAX_EXPANSION}×): refused as a "
                        "likely decompression bomb.")
    with archive.open(member) as stream:
        try:
            version = np.lib.format.read_magic(stream)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, fortran_order, dtype = read_header(stream)
        except ValueError as error:
            raise DataError(f"{name} is not a valid .npy array ({error}).") from error
        if dtype.hasobject:
            raise DataError(f"{path}: the archive holds Python objects (pickles), which are "
                            "not loaded for safety; save numeric arrays.")
        promised = math.prod(shape) * dtype.itemsize
        held = member.file_size - stream.tell()
        if promised != held:
            raise DataError(f"{name}: its header declares shape {shape} ({promised:,} bytes) "
                            f"but the member holds {held:,} bytes (truncated or corrupted).")
        data = read_upto(stream, promised, path, "zip")
    if len(data) != promised:
        raise DataError(f"{name}: {len(data):,} bytes of array data, {promised:,} expected "
                        "(truncated or corrupted).")
    order = "F" if fortran_order else "C"
    return np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy()


def load_svmlight(path: str | PathLike[str]) -> Dataset:
    """Load a svmlight/libsvm text file (sparse features, one target per line)."""
    path = Path(path)
    try:
        stream, method = open_data(path)
        with stream:
            # Decompressed by content within the expansion limit (scikit-learn would go by
            # the name, without a limit).
            source = stream if method is None else io.BytesIO(
                read_capped(stream, expansion_limit(path.stat().st_size), path, method))
            X, y = load_svmlight_file(source)
    except DataError:
        raise
    except OverflowError as error:  # a feature index beyond int64/int32
        raise DataError(f"{path}: a feature index is too large ({error}); svmlight indices "
                        "must be below 2**31.") from error
    except (ValueError, OSError, UnicodeDecodeError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        raise DataError(f"{path}: unreadable or malformed svmlight/libsvm file "
                        f"({message}).") from error
    X = as_features(X, str(path), row_label=lambda i: f"line {i + 1}")
    y = check_target(y, f"{path}: target", lambda i: f"line {i + 1}")
    return Dataset(name=path.name, X=X, y=y, source=str(path),
                   description=f"svmlight file {path.name}")
