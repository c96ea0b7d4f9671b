r"""Data sets for examples and the ``kernelmaps`` command, read from local files only.

* The data sets bundled with scikit-learn, always available offline: ``digits`` (the
  default: 1,797 handwritten digits, 8×8 pixels), ``iris``, ``wine``, ``breast_cancer`` and
  ``diabetes`` (regression).
* ``fashion-mnist``: 70,000 Zalando article images, 28×28 pixels, 10 classes, MIT licence,
  read from Debian's ``dataset-fashion-mnist`` package (``apt-get install
  dataset-fashion-mnist``), which installs gzipped IDX files in :data:`FASHION_MNIST_DIR`.
  Its official split is kept: 60,000 training and 10,000 test rows.
* Files: any directory of MNIST-style IDX files (``train-images-idx3-ubyte[.gz]`` with
  ``train-labels-idx1-ubyte[.gz]``, optionally ``t10k-…`` as the test split), CSV/TSV with
  a target column, Parquet (pandas + pyarrow), NPZ holding ``X`` and ``y`` (optionally
  ``X_test``/``y_test``), and svmlight/libsvm text files.

Nothing is ever downloaded. Every problem with a file is a :class:`DataError` (a
``ValueError``) whose message says what is wrong, where, and what to do: a missing file, an
unreadable or malformed one, an unknown target column, non-numeric features, NaN or infinite
values (how many and where).
"""

from __future__ import annotations

import gzip
import math
import re
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "BUNDLED",
    "FASHION_MNIST_DIR",
    "DataError",
    "Dataset",
    "DatasetInfo",
    "available_datasets",
    "load_dataset",
    "read_idx",
]

#: Where Debian's ``dataset-fashion-mnist`` package installs the gzipped IDX files.
FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")
FASHION_MNIST_HINT = (
    "install it with `apt-get install dataset-fashion-mnist` (Debian/Ubuntu), or pass "
    "--data DIR for a directory of MNIST-style IDX files"
)
#: Column names taken as the target when none is given (case-insensitive).
TARGET_NAMES = ("target", "label", "labels", "class", "y")
_TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
_PARQUET_SUFFIXES = (".parquet", ".pq")
_SVMLIGHT_SUFFIXES = (".svm", ".svmlight", ".libsvm")
_SUPPORTED = ("a bundled name, a directory of IDX files, .csv/.tsv (optionally .gz), "
              ".parquet, .npz (X, y), .svm/.svmlight/.libsvm")


class DataError(ValueError):
    """Bad input data: the message says what is wrong, where, and how to fix it."""


@dataclass(frozen=True)
class Dataset:
    """Features and target, with an optional fixed test split.

    Attributes
    ----------
    name : str
        Short name (a bundled name or the file name).
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Finite float64 features.
    y : ndarray of shape (n_samples,) or None
        Target (None when loaded with ``require_target=False`` and none was found).
    X_test, y_test : ndarray or None
        The data set's own test split, if it has one (Fashion-MNIST, IDX ``t10k`` files,
        NPZ ``X_test``/``y_test``).
    feature_names : tuple of str or None
    source : str
        Where it was read from.
    description : str
    """

    name: str
    X: Any
    y: np.ndarray | None
    X_test: Any = None
    y_test: np.ndarray | None = None
    feature_names: tuple[str, ...] | None = None
    source: str = ""
    description: str = ""

    @property
    def n_samples(self) -> int:
        """Rows of ``X`` (the training part when there is a fixed test split)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Columns of ``X``."""
        return int(self.X.shape[1])

    def shape_text(self) -> str:
        """``"1797 × 64"``, or ``"60000 train + 10000 test × 784"``."""
        rows = str(self.n_samples)
        if self.X_test is not None:
            rows = f"{self.n_samples} train + {self.X_test.shape[0]} test"
        return f"{rows} × {self.n_features}"


# =========================================================================== validation
def _where(row_label: Callable[[int], str], names: tuple[str, ...] | None,
           rows: np.ndarray, cols: np.ndarray, limit: int = 3) -> str:
    places = []
    for r, c in zip(rows[:limit], cols[:limit], strict=False):
        column = repr(names[c]) if names is not None else str(c)
        places.append(f"{row_label(int(r))} column {column}")
    more = ", …" if rows.size > limit else ""
    return ", ".join(places) + more


def _default_row(i: int) -> str:
    return f"row {i}"


def check_finite_features(X: Any, what: str = "X", *, names: tuple[str, ...] | None = None,
                          row_label: Callable[[int], str] = _default_row) -> None:
    """Raise :class:`DataError` if ``X`` holds NaN or inf, saying how many and where."""
    if sp.issparse(X):
        coo = X.tocoo()
        bad = ~np.isfinite(coo.data)
        rows, cols, values = coo.row[bad], coo.col[bad], coo.data[bad]
    else:
        mask = ~np.isfinite(X)
        if not mask.any():
            return
        rows, cols = np.nonzero(mask)
        values = X[rows, cols]
    if rows.size == 0:
        return
    n_nan = int(np.isnan(values).sum())
    n_inf = rows.size - n_nan
    counts = " and ".join(part for part in (f"{n_nan} NaN" if n_nan else "",
                                            f"{n_inf} infinite" if n_inf else "") if part)
    n_rows = np.unique(rows).size
    raise DataError(
        f"{what} has {counts} value(s) in {n_rows} row(s): "
        f"{_where(row_label, names, rows, cols)}; drop or impute them first."
    )


def _check_target(y: np.ndarray, what: str,
                  row_label: Callable[[int], str] = _default_row) -> np.ndarray:
    y = np.asarray(y)
    if y.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(y))
    elif y.dtype.kind == "O":
        bad = np.flatnonzero([v is None or (isinstance(v, float) and math.isnan(v))
                              for v in y])
    else:
        bad = np.arange(0)
    if bad.size:
        places = ", ".join(row_label(int(i)) for i in bad[:3]) + (", …" if bad.size > 3 else "")
        raise DataError(f"{what} has {bad.size} missing value(s): {places}; drop those rows.")
    return y


def _as_features(X: Any, what: str, names: tuple[str, ...] | None = None,
                 row_label: Callable[[int], str] = _default_row) -> Any:
    """Float64 2-D features (CSR kept sparse), checked for NaN/inf."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X)
        if X.dtype.kind not in "biuf":
            raise DataError(f"{what} is not numeric (dtype {X.dtype}); save numbers only.")
        X = X.astype(np.float64, copy=False)
        if X.ndim == 1:
            X = X.reshape(-1, 1)
        elif X.ndim > 2:  # images: one row per sample
            X = X.reshape(X.shape[0], -1)
    if X.shape[0] == 0:
        raise DataError(f"{what} has no rows.")
    if X.shape[1] == 0:
        raise DataError(f"{what} has no feature columns.")
    check_finite_features(X, what, names=names, row_label=row_label)
    return X


def _same_length(X: Any, y: np.ndarray, source: str, what: str = "X") -> None:
    if X.shape[0] != y.shape[0]:
        raise DataError(
            f"{source}: {what} has {X.shape[0]} rows but its target has {y.shape[0]}; they must "
            "match row for row."
        )


# =========================================================================== IDX files
#: IDX type codes (third byte of the magic number) → big-endian NumPy dtypes.
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_GZIP_MAGIC = b"\x1f\x8b"


def _read_bytes(path: Path) -> bytes:
    with open(path, "rb") as handle:
        raw = handle.read()
    if raw[:2] == _GZIP_MAGIC:  # decided by content, not by the file name
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as error:  # gzip.BadGzipFile is an OSError
            raise DataError(f"{path}: unreadable gzip data ({error}).") from error
    return raw


def read_idx(path: str | PathLike[str]) -> np.ndarray:
    """Read an IDX file (the MNIST format), gzipped or not.

    The format (LeCun et al., http://yann.lecun.com/exdb/mnist/): a magic number of two zero
    bytes, a type code (``0x08`` uint8, ``0x09`` int8, ``0x0B`` int16, ``0x0C`` int32,
    ``0x0D`` float32, ``0x0E`` float64) and the number of dimensions; then each dimension as
    a big-endian uint32; then the values, big-endian, in C order. Gzip is recognised by its
    magic bytes, whatever the file is called.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    ndarray
        With the file's shape and the native-endian version of its dtype.

    Raises
    ------
    DataError
        If the file is not IDX, has an unknown type code, or its size does not match its
        header (truncated or trailing bytes).
    """
    path = Path(path)
    raw = _read_bytes(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise DataError(
            f"{path}: not an IDX file (magic number {raw[:4].hex() or 'missing'}; an IDX file "
            "starts with 00 00 <type> <ndim>)."
        )
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES:
        raise DataError(
            f"{path}: unknown IDX type code 0x{code:02X}; valid codes are "
            f"{', '.join(f'0x{c:02X}' for c in _IDX_DTYPES)}."
        )
    if ndim == 0:
        raise DataError(f"{path}: malformed IDX header (0 dimensions).")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise DataError(f"{path}: truncated IDX header ({len(raw)} bytes, {header} needed).")
    dims = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = np.dtype(_IDX_DTYPES[code])
    count = math.prod(dims)
    if len(raw) - header != count * dtype.itemsize:
        raise DataError(
            f"{path}: malformed IDX file: its header promises {'×'.join(map(str, dims))} "
            f"values of {dtype.itemsize} byte(s) ({count * dtype.itemsize} bytes) but "
            f"{len(raw) - header} bytes follow (truncated or corrupted file)."
        )
    values = np.frombuffer(raw, dtype=dtype, count=count, offset=header)
    return values.astype(dtype.newbyteorder("="), copy=True).reshape(dims)


_IDX_NAME = re.compile(
    r"^(?P<prefix>.+?)[-_.](?P<kind>images|labels)[-.]idx(?P<ndim>\d)-ubyte(?:\.gz)?$")
_TEST_PREFIXES = ("t10k", "test")


def _idx_pairs(directory: Path) -> dict[str, dict[str, Path]]:
    pairs: dict[str, dict[str, Path]] = {}
    for path in sorted(directory.iterdir()):
        match = _IDX_NAME.match(path.name)
        if match and path.is_file():
            pairs.setdefault(match["prefix"], {})[match["kind"]] = path
    return pairs


def _read_idx_pair(files: dict[str, Path]) -> tuple[np.ndarray, np.ndarray]:
    images, labels = read_idx(files["images"]), read_idx(files["labels"])
    if labels.ndim != 1:
        raise DataError(f"{files['labels']}: labels must be 1-D; got shape {labels.shape}.")
    X = _as_features(images, str(files["images"]))
    _same_length(X, labels, str(files["images"].parent), files["images"].name)
    return X, labels.astype(np.int64)


def load_idx_directory(directory: str | PathLike[str], name: str | None = None) -> Dataset:
    """Load a directory of MNIST-style IDX files.

    Files are paired by prefix: ``<prefix>-images-idx<k>-ubyte[.gz]`` with
    ``<prefix>-labels-idx1-ubyte[.gz]`` (``.`` or ``_`` may replace the first ``-``). With a
    ``train`` pair and a ``t10k`` (or ``test``) pair, the second becomes the fixed test split;
    a single pair is the whole data set. Images are flattened to one row each.

    Parameters
    ----------
    directory : str or path-like
    name : str or None
        Name of the data set (default: the directory name).

    Returns
    -------
    Dataset
    """
    directory = Path(directory)
    pairs = {prefix: files for prefix, files in _idx_pairs(directory).items()
             if {"images", "labels"} <= set(files)}
    if not pairs:
        found = sorted(p.name for p in directory.iterdir())[:10]
        raise DataError(
            f"{directory}: no pair of IDX files (<prefix>-images-idx3-ubyte[.gz] with "
            f"<prefix>-labels-idx1-ubyte[.gz]) in this directory; found {found}."
        )
    test_prefix = next((p for p in _TEST_PREFIXES if p in pairs), None)
    if "train" in pairs:
        train_prefix = "train"
    elif len(pairs) == 1:
        train_prefix = next(iter(pairs))
    else:
        raise DataError(
            f"{directory}: several IDX pairs {sorted(pairs)} and none is called 'train'; keep "
            "one pair, or name them train-… and t10k-…."
        )
    X, y = _read_idx_pair(pairs[train_prefix])
    X_test = y_test = None
    if test_prefix is not None and test_prefix != train_prefix:
        X_test, y_test = _read_idx_pair(pairs[test_prefix])
        if X_test.shape[1] != X.shape[1]:
            raise DataError(f"{directory}: test images have {X_test.shape[1]} pixels but "
                            f"training images have {X.shape[1]}.")
    return Dataset(name=name or directory.name, X=X, y=y, X_test=X_test, y_test=y_test,
                   source=str(directory),
                   description=f"IDX files in {directory}")


def load_fashion_mnist(directory: str | PathLike[str] = FASHION_MNIST_DIR) -> Dataset:
    """Fashion-MNIST (Xiao, Rasul & Vollgraf, 2017) from Debian's ``dataset-fashion-mnist``.

    60,000 training and 10,000 test images of 28×28 grey levels (0–255, kept as they are),
    10 classes of clothing. MIT licence.

    Raises
    ------
    DataError
        If the files are not there, saying what to install.
    """
    directory = Path(directory)
    if not (directory / "train-images-idx3-ubyte.gz").exists():
        raise DataError(f"Fashion-MNIST is not installed ({directory} has no IDX files): "
                        f"{FASHION_MNIST_HINT}.")
    data = load_idx_directory(directory, name="fashion-mnist")
    return Dataset(name="fashion-mnist", X=data.X, y=data.y, X_test=data.X_test,
                   y_test=data.y_test, source=str(directory),
                   description="Fashion-MNIST: 28×28 grey images of 10 kinds of clothing "
                               "(Debian dataset-fashion-mnist, MIT licence)")


# =========================================================================== tables
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
        raise DataError(
            f"{source}: which column is the target? Pass --target COLUMN (target=...); "
            f"columns are {shown}."
        )
    return None


def _table_dataset(frame: Any, source: Path, target: str | None, require_target: bool,
                   row_label: Callable[[int], str]) -> Dataset:
    import pandas as pd

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
    X = _as_features(features.to_numpy(dtype=np.float64, na_value=np.nan), str(source), names,
                     row_label)
    y = None
    if target is not None:
        y = _check_target(frame[target].to_numpy(), f"{source}: target column {target!r}",
                          row_label)
    return Dataset(name=source.name, X=X, y=y, feature_names=names, source=str(source),
                   description=f"table {source.name}" + (f", target {target!r}" if target
                                                         else ""))


def _suffix(path: Path) -> str:
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
    import pandas as pd

    path = Path(path)
    suffix = _suffix(path)
    try:
        if suffix in _PARQUET_SUFFIXES:
            frame = pd.read_parquet(path)
            row_label = _default_row
        else:
            frame = pd.read_csv(path, sep=_TABLE_SUFFIXES[suffix])
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
    X = _as_features(arrays["X"], f"{path}: X")
    y = _check_target(np.asarray(arrays["y"]).ravel(), f"{path}: y")
    _same_length(X, y, str(path))
    X_test = y_test = None
    if "X_test" in arrays or "y_test" in arrays:
        if not {"X_test", "y_test"} <= set(arrays):
            raise DataError(f"{path}: a test split needs both 'X_test' and 'y_test'.")
        X_test = _as_features(arrays["X_test"], f"{path}: X_test")
        y_test = _check_target(np.asarray(arrays["y_test"]).ravel(), f"{path}: y_test")
        _same_length(X_test, y_test, str(path), "X_test")
        if X_test.shape[1] != X.shape[1]:
            raise DataError(f"{path}: X_test has {X_test.shape[1]} columns but X has "
                            f"{X.shape[1]}.")
    return Dataset(name=path.name, X=X, y=y, X_test=X_test, y_test=y_test, source=str(path),
                   description=f"NPZ archive {path.name}")


def load_svmlight(path: str | PathLike[str]) -> Dataset:
    """Load a svmlight/libsvm text file (sparse features, one target per line)."""
    from sklearn.datasets import load_svmlight_file

    path = Path(path)
    try:
        X, y = load_svmlight_file(str(path))
    except (ValueError, OSError, UnicodeDecodeError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        raise DataError(f"{path}: unreadable or malformed svmlight/libsvm file "
                        f"({message}).") from error
    X = _as_features(X, str(path), row_label=lambda i: f"line {i + 1}")
    y = _check_target(y, f"{path}: target", lambda i: f"line {i + 1}")
    return Dataset(name=path.name, X=X, y=y, source=str(path),
                   description=f"svmlight file {path.name}")


# =========================================================================== bundled
def _sklearn_loader(function: str, description: str) -> Callable[[], Dataset]:
    def load() -> Dataset:
        import sklearn.datasets

        bunch = getattr(sklearn.datasets, function)()
        names = tuple(str(n) for n in getattr(bunch, "feature_names", ())) or None
        return Dataset(name=function.removeprefix("load_"), X=_as_features(bunch.data, "X"),
                       y=np.asarray(bunch.target), feature_names=names,
                       source=f"sklearn.datasets.{function}", description=description)
    return load


#: Named data sets: name → (loader, description, shape, location).
BUNDLED: dict[str, tuple[Callable[[], Dataset], str, str, Path | None]] = {
    "digits": (_sklearn_loader("load_digits", "handwritten digits, 8×8 pixels, 10 classes"),
               "handwritten digits, 8×8 pixels, 10 classes (default)", "1797 × 64", None),
    "iris": (_sklearn_loader("load_iris", "iris flowers, 3 classes"),
             "iris flowers, 3 classes", "150 × 4", None),
    "wine": (_sklearn_loader("load_wine", "wine cultivars, 3 classes"),
             "wine cultivars, 3 classes", "178 × 13", None),
    "breast_cancer": (_sklearn_loader("load_breast_cancer", "breast cancer diagnosis, 2 classes"),
                      "breast cancer diagnosis, 2 classes", "569 × 30", None),
    "diabetes": (_sklearn_loader("load_diabetes", "diabetes progression (regression)"),
                 "diabetes progression (regression)", "442 × 10", None),
    "fashion-mnist": (load_fashion_mnist,
                      "Zalando clothing images, 28×28 pixels, 10 classes (MIT licence)",
                      "60000 train + 10000 test × 784", FASHION_MNIST_DIR),
}
DEFAULT_DATASET = "digits"


@dataclass(frozen=True)
class DatasetInfo:
    """One line of :func:`available_datasets`."""

    name: str
    description: str
    shape: str
    available: bool
    location: str


def available_datasets() -> list[DatasetInfo]:
    """The named data sets and whether each can be loaded offline on this machine."""
    infos = []
    for name, (_, description, shape, location) in BUNDLED.items():
        if location is None:
            infos.append(DatasetInfo(name, description, shape, True, "bundled with scikit-learn"))
        else:
            there = (location / "train-images-idx3-ubyte.gz").exists()
            infos.append(DatasetInfo(name, description, shape, there,
                                     str(location) if there else FASHION_MNIST_HINT))
    return infos


def load_dataset(source: str | PathLike[str] | None = None, *, target: str | None = None,
                 require_target: bool = True) -> Dataset:
    """Load a named data set or a data file, by name or by file type.

    Parameters
    ----------
    source : str, path-like or None
        ``None``: ``digits``. A name from :data:`BUNDLED` (``digits``, ``iris``, ``wine``,
        ``breast_cancer``, ``diabetes``, ``fashion-mnist``), or a path: a directory of IDX
        files, ``.csv``/``.tsv``/``.tab`` (optionally compressed), ``.parquet``/``.pq``,
        ``.npz``, ``.svm``/``.svmlight``/``.libsvm``. An existing path wins over a name.
    target : str or None
        Target column of a CSV/TSV/Parquet file (see :func:`load_table`); only for tables.
    require_target : bool, default=True
        ``False`` lets a table without a target column load as features only.

    Returns
    -------
    Dataset

    Raises
    ------
    DataError
        Missing file, unknown format, unreadable or malformed content, unknown target column,
        non-numeric features, NaN/inf values.

    Examples
    --------
    >>> from kernelmaps.datasets import load_dataset
    >>> load_dataset().shape_text()
    '1797 × 64'
    """
    source = DEFAULT_DATASET if source is None else source
    path = Path(source)
    if not path.exists():
        if str(source) in BUNDLED:
            if target is not None:
                raise DataError(f"--target/target applies to table files, not to the bundled "
                                f"data set {source!r}.")
            return BUNDLED[str(source)][0]()
        raise DataError(f"no such file or directory: {source} (or use a data set name: "
                        f"{', '.join(BUNDLED)}).")
    if path.is_dir():
        return load_idx_directory(path)
    suffix = _suffix(path)
    if target is not None and suffix not in (*_TABLE_SUFFIXES, *_PARQUET_SUFFIXES):
        raise DataError(f"{path}: --target/target applies to CSV/TSV/Parquet files only.")
    if suffix in _TABLE_SUFFIXES or suffix in _PARQUET_SUFFIXES:
        return load_table(path, target, require_target=require_target)
    if suffix == ".npz":
        return load_npz(path)
    if suffix in _SVMLIGHT_SUFFIXES:
        return load_svmlight(path)
    raise DataError(f"{path}: unknown data format {suffix or '(no extension)'!r}; supported: "
                    f"{_SUPPORTED}.")
