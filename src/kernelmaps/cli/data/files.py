"""Data files with one row per sample: CSV/TSV (optionally compressed), Parquet, NPZ, svmlight.

Tables have a header row and a target column (given, or the one column named like a
target, :data:`TARGET_NAMES`); NPZ archives hold arrays ``X`` and ``y`` (optionally
``X_test``/``y_test``) and are read without unpickling; svmlight/libsvm files stay sparse.
pandas (the ``cli`` extra) reads the tables.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import load_svmlight_file

from kernelmaps._optional import import_optional
from kernelmaps.cli.data._base import (
    DataError,
    Dataset,
    as_features,
    check_target,
    default_row,
    same_length,
)

__all__ = ["PARQUET_SUFFIXES", "SVMLIGHT_SUFFIXES", "TABLE_SUFFIXES", "TARGET_NAMES",
           "file_suffix", "load_npz", "load_svmlight", "load_table"]

#: Column names taken as the target when none is given (case-insensitive).
TARGET_NAMES = ("target", "label", "labels", "class", "y")
TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
PARQUET_SUFFIXES = (".parquet", ".pq")
SVMLIGHT_SUFFIXES = (".svm", ".svmlight", ".libsvm")


def _line_of_row(i: int) -> str:
    return f"line {i + 2}"  # 1-based file lines, the header being line 1


def _resolve_target(columns: list[str], target: str | None, source: str,
                    require_target: bool) -> str | None:
    shown = columns if len(columns) <= 20 else [*columns[:20], "…"]
    if target is not None:
        if target not in columns:
            raise DataError(f"{source}: unknown target column {target!r}; columns are {shown}.")
        return target
    candidates = [c for c in columns if str(c).lower() in TARGET_NAMES]
    if len(candidates) == 1:
        return candidates[0]
    if require_target:
        found = (f"several are named like one: {candidates}" if candidates else
                 f"none is called {', '.join(TARGET_NAMES[:-1])} or {TARGET_NAMES[-1]}")
        raise DataError(f"{source}: which column is the target? {found}; columns are {shown}",
                        "name it with {target}.")
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
                                                         else ""))


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
            frame = pd.read_parquet(path)
            row_label = default_row
        else:
            frame = pd.read_csv(path, sep=TABLE_SUFFIXES[suffix])
            row_label = _line_of_row
    except ImportError as error:  # pragma: no cover - pyarrow is in the cli extra
        raise DataError(f"{path}: reading Parquet needs pyarrow: pip install "
                        f"'kernelmaps[cli]' ({error}).") from error
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError,
            pd.errors.EmptyDataError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        raise DataError(f"{path}: unreadable or malformed file ({message}).") from error
    return _table_dataset(frame, path, target, require_target, row_label)


def load_npz(path: str | PathLike[str]) -> Dataset:
    """Load an ``.npz`` archive holding ``X`` and ``y`` (optionally ``X_test``, ``y_test``)."""
    path = Path(path)
    if not zipfile.is_zipfile(path):  # np.load would try to unpickle anything else
        raise DataError(f"{path}: not an NPZ archive (not a zip file); save it with "
                        "numpy.savez(path, X=X, y=y).")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except ValueError as error:
        raise DataError(f"{path}: the archive holds Python objects (pickles), which are not "
                        "loaded for safety; save numeric arrays.") from error
    except (OSError, EOFError, zipfile.BadZipFile) as error:
        raise DataError(f"{path}: unreadable or malformed NPZ file ({error}).") from error
    missing = [key for key in ("X", "y") if key not in arrays]
    if missing:
        raise DataError(f"{path}: an NPZ data set must hold arrays 'X' and 'y'; missing "
                        f"{missing}, found {sorted(arrays)}.")
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


def load_svmlight(path: str | PathLike[str]) -> Dataset:
    """Load a svmlight/libsvm text file (sparse features, one target per line)."""
    path = Path(path)
    try:
        X, y = load_svmlight_file(str(path))
    except (ValueError, OSError, UnicodeDecodeError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        raise DataError(f"{path}: unreadable or malformed svmlight/libsvm file "
                        f"({message}).") from error
    X = as_features(X, str(path), row_label=lambda i: f"line {i + 1}")
    y = check_target(y, f"{path}: target", lambda i: f"line {i + 1}")
    return Dataset(name=path.name, X=X, y=y, source=str(path),
                   description=f"svmlight file {path.name}")
