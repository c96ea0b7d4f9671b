"""What every loader returns and how it checks the data: :class:`Dataset`, :class:`DataError`.

A loader turns its input into finite float64 features (:func:`as_features`; CSR stays
sparse) and a target without missing values (:func:`check_target`); a problem is a
:class:`DataError` saying how many bad values there are and where (row or file line, column).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["ARGUMENTS", "DataError", "Dataset", "as_features", "check_finite_features",
           "check_target", "default_row", "same_length"]


#: How messages write the loaders' arguments: :func:`~kernelmaps.cli.data.load_dataset`'s
#: keywords. A front end restates them in its own terms with :meth:`DataError.describe`.
ARGUMENTS = {"target": "target=COLUMN"}


class DataError(ValueError):
    """Bad input data: the message says what is wrong, where, and how to fix it.

    Parameters
    ----------
    problem : str
        What is wrong and where, in terms of the data.
    fix : str, default=""
        What to do, when that is to change an argument: a template naming the argument as
        ``{target}`` (see :data:`ARGUMENTS`).
    """

    def __init__(self, problem: str, fix: str = "") -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(self.describe(ARGUMENTS))

    def describe(self, arguments: dict[str, str]) -> str:
        """The message with the arguments written as ``arguments`` says (e.g. CLI options)."""
        return f"{self.problem}; {self.fix.format_map(arguments)}" if self.fix else self.problem


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
    target : str or None
        The target column of a table file (None for other data).
    """

    name: str
    X: Any
    y: np.ndarray | None
    X_test: Any = None
    y_test: np.ndarray | None = None
    feature_names: tuple[str, ...] | None = None
    source: str = ""
    description: str = ""
    target: str | None = None

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


def _where(row_label: Callable[[int], str], names: tuple[str, ...] | None,
           rows: np.ndarray, cols: np.ndarray, limit: int = 3) -> str:
    places = []
    for r, c in zip(rows[:limit], cols[:limit], strict=False):
        column = repr(names[c]) if names is not None else str(c)
        places.append(f"{row_label(int(r))} column {column}")
    more = ", …" if rows.size > limit else ""
    return ", ".join(places) + more


def default_row(i: int) -> str:
    return f"row {i}"


def check_finite_features(X: Any, what: str = "X", *, names: tuple[str, ...] | None = None,
                          row_label: Callable[[int], str] = default_row) -> None:
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


def check_target(y: np.ndarray, what: str,
                  row_label: Callable[[int], str] = default_row) -> np.ndarray:
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


def as_features(X: Any, what: str, names: tuple[str, ...] | None = None,
                 row_label: Callable[[int], str] = default_row) -> Any:
    """Float64 2-D features (CSR kept sparse), checked for NaN/inf."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X)
        if X.dtype.kind not in "biuf":
            raise DataError(f"{what} is not numeric (dtype {X.dtype}); save numbers only.")
        if X.ndim == 0:
            raise DataError(f"{what} is a single number, not an array with one row per "
                            "sample.")
        if X.shape[0] == 0:  # before reshaping ((0, -1) is ambiguous) and casting
            raise DataError(f"{what} has no rows.")
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


def same_length(X: Any, y: np.ndarray, source: str, what: str = "X") -> None:
    if X.shape[0] != y.shape[0]:
        raise DataError(
            f"{source}: {what} has {X.shape[0]} rows but its target has {y.shape[0]}; they must "
            "match row for row."
        )
