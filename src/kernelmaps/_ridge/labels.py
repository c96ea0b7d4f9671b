"""Class labels and ridge's ±1 codes, both ways, written once.

Ridge classifies by regressing one-vs-rest ±1 codes (one column for two classes, as
:class:`~sklearn.linear_model.RidgeClassifier`): :func:`encode_targets` turns labels into
those codes (:func:`encode_labels`, the one ±1 encoder: ``LabelBinarizer``'s codes), and
:func:`labels_from_scores` turns scores back into labels — the class of the largest score,
or, with one column, ``classes[1]`` where the score is positive. Every ridge in kernelmaps
(the α paths, the exact baseline, ``KernelRidgeClassifier``, ``FeatureRidgeClassifier``,
``KernelFisher``) decodes with :func:`labels_from_scores`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils.multiclass import unique_labels

from kernelmaps._array_api import namespace_and_device, on_device, to_numpy

__all__ = ["TASKS", "check_target", "check_task", "encode_labels", "encode_targets",
           "label_binarizer", "labels_from_scores"]

#: What a ridge path fits: numeric targets or class labels.
TASKS = ("regression", "classification")


def check_task(task: str) -> str:
    """``task`` if it is one of :data:`TASKS`."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {list(TASKS)}; got {task!r}.")
    return task


def label_binarizer(classes: np.ndarray) -> LabelBinarizer:
    """The fitted ±1 binarizer of ``classes`` (what ``RidgeClassifier`` stores)."""
    return LabelBinarizer(pos_label=1, neg_label=-1).fit(classes)


def encode_labels(y: Any, classes: np.ndarray) -> np.ndarray:
    """One-vs-rest ±1 targets of the labels ``y`` for the sorted ``classes``, float64: one
    column for two classes (+1 for ``classes[1]``), as ``RidgeClassifier`` and
    :class:`~sklearn.preprocessing.LabelBinarizer` ``(pos_label=1, neg_label=-1)`` code them;
    a label outside ``classes`` is −1 in every column."""
    y = np.asarray(y).reshape(-1)
    if classes.size == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


def encode_targets(y: Any, n: int, task: str, rows_of: str = "Z"
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """Targets as an ``(n, n_outputs)`` float64 array (±1 class codes for classification)
    and the sorted classes (``None`` for regression); ``rows_of`` names the array whose rows
    the targets belong to, in the error."""
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} rows but {rows_of} has {n}: one target per "
                         "row.")
    if task == "classification":
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D class labels for classification; got shape "
                             f"{y.shape}.")
        classes = unique_labels(y)  # LabelBinarizer's classes_ (and its refusals)
        if classes.size < 2:
            raise ValueError("y holds a single class; classification needs at least two.")
        return encode_labels(y, classes), classes
    Y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(Y)):
        raise ValueError("y contains NaN or infinite values; drop or impute them.")
    return (Y.reshape(n, 1) if Y.ndim == 1 else Y), None


def labels_from_scores(classes: np.ndarray, scores: Any, axis: int = 1) -> Any:
    """The class of the largest score along ``axis`` (one score column — 1-D scores, or
    size 1 along ``axis`` — two classes: ``classes[1]`` where the score is positive).

    NumPy scores may carry more axes (an α path's ``(n, n_outputs, n_alphas)``); other
    namespaces' scores are ``(n,)`` or ``(n, n_classes)``, and the labels stay in the
    scores' namespace and on their device when they are numbers (a device array cannot hold
    strings).
    """
    if isinstance(scores, np.ndarray):
        if scores.ndim == 1:
            index = (scores > 0).astype(int)
        elif scores.shape[axis] == 1:
            index = (np.take(scores, 0, axis=axis) > 0).astype(int)
        else:
            index = scores.argmax(axis=axis)
        return classes[index]
    xp, device = namespace_and_device(scores)
    index = xp.astype(scores > 0, xp.int64) if scores.ndim == 1 else xp.argmax(scores, axis=1)
    if classes.dtype.kind not in "biuf":
        return classes[to_numpy(index)]
    return xp.take(on_device(classes, xp, device), index)


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
