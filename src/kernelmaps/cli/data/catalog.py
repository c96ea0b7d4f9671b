"""The named data sets and :func:`load_dataset`, which loads a name or a file by its type.

Named: the data sets bundled with scikit-learn (``digits``, the default, ``iris``, ``wine``,
``breast_cancer``, ``diabetes``) and ``fashion-mnist`` (when Debian's package is installed).
A path is loaded by what it is: a directory of IDX files, or a file by its suffix.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np
import sklearn.datasets

from kernelmaps._suggest import close_matches, did_you_mean
from kernelmaps.cli.data._base import DataError, Dataset, as_features
from kernelmaps.cli.data.files import (
    PARQUET_SUFFIXES,
    SVMLIGHT_SUFFIXES,
    TABLE_SUFFIXES,
    file_suffix,
    load_npz,
    load_svmlight,
    load_table,
)
from kernelmaps.cli.data.idx import (
    FASHION_MNIST_DIR,
    FASHION_MNIST_HINT,
    load_fashion_mnist,
    load_idx_directory,
)

__all__ = ["BUNDLED", "DEFAULT_DATASET", "DatasetInfo", "available_datasets", "load_dataset"]

_SUPPORTED = ("a bundled name, a directory of IDX files, .csv/.tsv (optionally .gz), "
              ".parquet, .npz (X, y), .svm/.svmlight/.libsvm")


def _sklearn_loader(function: str, description: str) -> Callable[[], Dataset]:
    def load() -> Dataset:
        bunch = getattr(sklearn.datasets, function)()
        names = tuple(str(n) for n in getattr(bunch, "feature_names", ())) or None
        return Dataset(name=function.removeprefix("load_"), X=as_features(bunch.data, "X"),
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
    >>> from kernelmaps.cli.data import load_dataset
    >>> load_dataset().shape_text()
    '1797 × 64'
    """
    source = DEFAULT_DATASET if source is None else source
    path = Path(source)
    if not path.exists():
        if str(source) in BUNDLED:
            if target is not None:
                raise DataError(f"a target column applies to table files, not to the bundled "
                                f"data set {source!r}", "drop {target}.")
            return BUNDLED[str(source)][0]()
        raise DataError(f"no such file or directory: {source}{_near_names(path)} (or use a "
                        f"data set name: {', '.join(BUNDLED)}).")
    if path.is_dir():
        return load_idx_directory(path)
    suffix = file_suffix(path)
    if target is not None and suffix not in (*TABLE_SUFFIXES, *PARQUET_SUFFIXES):
        raise DataError(f"{path}: a target column applies to table files (CSV/TSV/Parquet) "
                        "only", "drop {target}.")
    if suffix in TABLE_SUFFIXES or suffix in PARQUET_SUFFIXES:
        return load_table(path, target, require_target=require_target)
    if suffix == ".npz":
        return load_npz(path)
    if suffix in SVMLIGHT_SUFFIXES:
        return load_svmlight(path)
    raise DataError(f"{path}: unknown data format {suffix or '(no extension)'!r}; supported: "
                    f"{_SUPPORTED}.")


#: Entries of a folder looked at for a did-you-mean (a huge folder is not listed whole).
_MAX_LISTED = 2000


def _near_names(path: Path) -> str:
    """' (did you mean …?)' for a missing path: close entries of its folder
    (``wine.cvs`` → ``wine.csv``: the file on disk, not the bundled data set of the same stem,
    which would run on other data), and for a bare name without a suffix close data set
    names first (``digit`` → ``digits``). A file is suggested only when its name without the
    suffix is close too: ``nothere.csv`` is not near every other ``.csv`` file."""
    folder = path.parent
    names: list[str] = []
    if folder.is_dir():
        try:
            with os.scandir(folder) as entries:
                listed = [e.name for e in itertools.islice(entries, _MAX_LISTED)]
        except OSError:
            listed = []
        if not path.name.startswith("."):  # hidden entries (.git) only when typed so
            listed = [name for name in listed if not name.startswith(".")]
        stem = _stem(path.name)
        names = [str(folder / name) if str(folder) != "." else name
                 for name in close_matches(path.name, listed)
                 if close_matches(stem, [_stem(name)])]
    if not path.suffix:  # a bare name: the data sets first (digit → digits)
        names = [*close_matches(str(path), BUNDLED), *names][:3]
    return did_you_mean(str(path), names) if names else ""


def _stem(name: str) -> str:
    """A file name without its suffixes (``data.csv.gz`` → ``data``)."""
    return name.split(".", 1)[0] or name
