r"""Data loading for the ``kernelmaps`` command, from local files only.

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
values (how many and where). Messages speak of the data; where the fix is to change an
argument (``target=``), :meth:`DataError.describe` lets a front end name its own option
instead (:mod:`kernelmaps.cli.commands` says ``--target``).

Modules: :mod:`~kernelmaps.cli.data._base` (:class:`Dataset`, :class:`DataError`, the
checks), :mod:`~kernelmaps.cli.data.idx` (IDX files, Fashion-MNIST),
:mod:`~kernelmaps.cli.data.files` (CSV/TSV/Parquet, NPZ, svmlight) and
:mod:`~kernelmaps.cli.data.catalog` (the named data sets, :func:`load_dataset`).
"""

from kernelmaps.cli.data._base import DataError, Dataset, check_finite_features
from kernelmaps.cli.data.catalog import (
    BUNDLED,
    DEFAULT_DATASET,
    DatasetInfo,
    available_datasets,
    load_dataset,
)
from kernelmaps.cli.data.files import load_npz, load_svmlight, load_table
from kernelmaps.cli.data.idx import (
    FASHION_MNIST_DIR,
    load_fashion_mnist,
    load_idx_directory,
    read_idx,
)

__all__ = [
    "BUNDLED",
    "DEFAULT_DATASET",
    "FASHION_MNIST_DIR",
    "DataError",
    "Dataset",
    "DatasetInfo",
    "available_datasets",
    "check_finite_features",
    "load_dataset",
    "load_fashion_mnist",
    "load_idx_directory",
    "load_npz",
    "load_svmlight",
    "load_table",
    "read_idx",
]
