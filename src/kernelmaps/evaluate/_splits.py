"""What each comparison run learns from and is scored on: task, target checks, splits.

:func:`task_of` decides classification or regression, :func:`check_target` validates a
target, :func:`make_splits` makes one hold-out split, ``cv`` (stratified) folds, or uses a
fixed test set. Private to :mod:`kernelmaps.evaluate`; ``compare``'s parameters document it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.utils.multiclass import type_of_target

__all__ = ["MAX_AUTO_CLASSES", "Split", "check_split", "check_target", "make_splits", "task_of"]


#: A float target with integral values is taken as class labels up to this many classes.
MAX_AUTO_CLASSES = 20
_TASKS = ("auto", "classification", "regression")


def task_of(y: np.ndarray, task: str = "auto") -> str:
    """``'classification'`` or ``'regression'`` (see ``compare(task=...)``)."""
    if task not in _TASKS:
        raise ValueError(f"task must be one of {list(_TASKS)}; got {task!r}.")
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass", "continuous"):
        raise ValueError(
            f"y must hold class labels or real numbers (one target per row); its type is "
            f"{kind!r}."
        )
    if task != "auto":
        if task == "regression" and y.dtype.kind not in "biuf":
            raise ValueError("task='regression' needs a numeric y; it holds labels.")
        return task
    # scikit-learn calls integral floats 'multiclass'; a float target with many distinct
    # values (e.g. diabetes progression) is a regression target all the same.
    if kind == "continuous" or (y.dtype.kind == "f"
                                and len(np.unique(y)) > MAX_AUTO_CLASSES):
        return "regression"
    return "classification"


def check_target(y: Any, n: int, name: str) -> np.ndarray:
    """``y`` as a 1-D array of ``n`` values, without NaN or inf."""
    y = np.asarray(y)
    if y.ndim != 1:
        y = y.reshape(-1) if y.ndim == 2 and 1 in y.shape else y
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"{name} must be 1-D with one value per row ({n}); got shape "
                         f"{np.shape(y)}.")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        bad = np.flatnonzero(~np.isfinite(y))
        raise ValueError(f"{name} has {bad.size} NaN/inf value(s), first at row(s) "
                         f"{bad[:5].tolist()}; drop or impute them.")
    return y


@dataclass
class Split:
    """One train/test split, with the rows and kernel matrix the error is measured on."""

    index: int
    X_train: Any
    y_train: np.ndarray
    X_test: Any
    y_test: np.ndarray
    error_rows: np.ndarray = field(default_factory=lambda: np.arange(0))
    K_error: np.ndarray | None = None


def min_class_count(y: np.ndarray) -> int:
    return int(np.unique(y, return_counts=True)[1].min())


def make_splits(X: Any, y: np.ndarray, task: str, *, test_size: float, cv: int | None,
                test_data: tuple[Any, Any] | None, seed: int) -> list[Split]:
    """The train/test splits of a comparison: ``test_data``, ``cv`` folds or one hold-out."""
    n = X.shape[0]
    classify = task == "classification"
    if test_data is not None:
        X_test, y_test = test_data
        return [Split(0, X, y, X_test, y_test)]
    if cv is not None:
        if not isinstance(cv, (int, np.integer)) or cv < 2:
            raise ValueError(f"cv must be an int >= 2 (folds) or None; got {cv!r}.")
        if n < 2 * cv:
            raise ValueError(
                f"too little data for {cv}-fold cross-validation: {n} rows; need at least "
                f"{2 * cv} (use fewer folds or more data)."
            )
        stratified = classify and min_class_count(y) >= cv
        splitter = (StratifiedKFold if stratified else KFold)(
            n_splits=cv, shuffle=True, random_state=seed)
        return [Split(i, X[train], y[train], X[test], y[test])
                for i, (train, test) in enumerate(splitter.split(X, y))]
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be in (0, 1); got {test_size!r}.")
    n_test = math.ceil(test_size * n)
    n_train = n - n_test
    if n_test < 1 or n_train < 2:
        raise ValueError(
            f"too little data for the split: {n} rows with test_size={test_size} leave "
            f"{n_train} training and {n_test} test rows; need at least 2 and 1 (use more "
            "data or another test_size)."
        )
    n_classes = len(np.unique(y)) if classify else 0
    stratify = y if classify and min_class_count(y) >= 2 and min(n_test, n_train) >= \
        n_classes else None
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=n_test, random_state=seed, stratify=stratify)
    return [Split(0, X_train, y_train, X_test, y_test)]


def check_split(split: Split, task: str) -> None:
    """Refuse a classification split whose training part holds a single class."""
    if task == "classification" and len(np.unique(split.y_train)) < 2:
        raise ValueError(
            "too little data for the split: the training part holds a single class; use more "
            "data (or fewer folds) so every split sees at least two classes."
        )


#: Feature scalings ``compare(scale=...)`` accepts.
SCALES = ("none", "standard", "minmax")


def make_scaler(scale: str, sparse: bool) -> Any:
    """The unfitted scaler for ``scale`` (None for ``'none'``).

    ``'standard'`` is :class:`~sklearn.preprocessing.StandardScaler` (without centring for
    sparse input, which would densify it); ``'minmax'`` is
    :class:`~sklearn.preprocessing.MinMaxScaler` (dense input only).
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {list(SCALES)}; got {scale!r}.")
    if scale == "none":
        return None
    if scale == "minmax":
        if sparse:
            raise ValueError("scale='minmax' would densify sparse input; use scale='standard' "
                             "(scaled without centring) or scale='none'.")
        return MinMaxScaler()
    return StandardScaler(with_mean=not sparse)


def scale_split(split: Split, scale: str) -> None:
    """Fit the scaler on ``split``'s training rows only and apply it to both parts."""
    scaler = make_scaler(scale, sp.issparse(split.X_train))
    if scaler is None:
        return
    split.X_train = scaler.fit_transform(split.X_train)
    split.X_test = scaler.transform(split.X_test)


def scale_ratio(X: Any) -> float:
    """Largest over smallest positive per-feature standard deviation (1.0 if < 2 such)."""
    if sp.issparse(X):
        mean = np.asarray(X.mean(axis=0)).ravel()
        spread = np.sqrt(np.maximum(np.asarray(X.multiply(X).mean(axis=0)).ravel() - mean**2, 0))
    else:
        spread = np.asarray(X, dtype=np.float64).std(axis=0)
    spread = spread[spread > 0]
    return float(spread.max() / spread.min()) if spread.size >= 2 else 1.0
