"""FeatureRidge / FeatureRidgeClassifier on Dask collections: fit, predict and score there."""

from __future__ import annotations

from typing import Any

import dask
import dask.array as da
import numpy as np
from sklearn.base import is_classifier
from sklearn.frozen import FrozenEstimator

from kernelmaps._ridge import encode_labels
from kernelmaps.distributed._collections import (
    aligned_rows,
    as_dask_rows,
    chunk_sums,
    in_task,
    ship,
)
from kernelmaps.distributed._fit import fit
from kernelmaps.maps import FeatureMap
from kernelmaps.maps.interface import output_width
from kernelmaps.models.interface import (
    RidgeStatistics,
    n_targets,
    new_feature_map,
    set_classes,
    set_solution,
    set_target_shape,
)

__all__ = ["dask_score", "fit_feature_ridge"]


def fit_feature_ridge(model: Any, X: Any, y: Any, sample_weight: Any) -> None:
    """Fit a FeatureRidge(Classifier) on a Dask collection: one tree-reduced pass."""
    owner = f"{type(model).__name__}.fit"
    X, columns = as_dask_rows(X, owner=owner)
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None.")
    model.n_features_in_ = X.shape[1]
    if columns is None:
        model.__dict__.pop("feature_names_in_", None)
    else:
        model.feature_names_in_ = columns
    Y = aligned_rows(y, X, name="y")
    classes = None
    if is_classifier(model):
        if getattr(y, "ndim", 1) != 1:
            raise ValueError("FeatureRidgeClassifier takes one label per sample (1-D y); got "
                             f"y of shape {y.shape}.")
        classes = np.unique(da.unique(Y[:, 0]).compute())
        set_classes(model, classes)
    else:
        if Y.dtype.kind not in "fiub":
            raise ValueError(f"y must be numeric for {type(model).__name__}; got dtype "
                             f"{Y.dtype}.")
        Y = Y.astype(np.float64)
        set_target_shape(model, getattr(y, "ndim", 2) == 1, Y.shape[1])
    weights = da.ones((X.shape[0], 1), chunks=(X.chunks[0], 1)) if sample_weight is None \
        else aligned_rows(sample_weight, X, name="sample_weight", dtype=np.float64)
    # A prefitted map (in sklearn.frozen.FrozenEstimator) is used as it is.
    frozen = isinstance(model.feature_map, FrozenEstimator)
    model.feature_map_ = new_feature_map(model) if frozen else fit(new_feature_map(model), X)
    D = output_width(model.feature_map_, X)
    size = D + 1 + n_targets(model)
    # Each chunk's RidgeStatistics.gram (upper triangle) where the chunk lives; Dask's tree
    # reduction adds them: the accumulator's exact merge.
    gram = chunk_sums(_chunk_statistics, (size, size), X, Y, weights,
                      static=(ship(model.feature_map_), classes))
    n_rows = X.shape[0] if isinstance(X.shape[0], int) else 0  # (unknown chunk sizes)
    set_solution(model, RidgeStatistics.from_gram(gram.compute(), D, n_rows))


def _chunk_statistics(X: np.ndarray, y: np.ndarray, weights: np.ndarray,
                      feature_map: FeatureMap, classes: np.ndarray | None) -> np.ndarray:
    if classes is None:
        Y = y
        if not np.isfinite(Y).all():
            raise ValueError("y contains NaN or infinity; every target must be finite.")
    else:
        Y = encode_labels(y, classes)
    weights = weights[:, 0]
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError("sample_weight must be finite and non-negative.")
    statistics = RidgeStatistics(output_width(feature_map, X), Y.shape[1])
    # One thread per chunk: the worker runs one task per core already.
    return in_task(feature_map, X, lambda block: statistics.add(
        feature_map, block, Y, weights, n_threads=1).gram)


def dask_score(model: Any, X: Any, y: Any, sample_weight: Any = None) -> float:
    """R² (regressor, averaged over targets) or accuracy (classifier), weighted, on Dask.

    One pass: the predictions, targets and weights meet chunk by chunk and only sums travel.
    """
    predictions = model.predict(X)
    rows = predictions.reshape(predictions.shape[0], -1)
    Y = aligned_rows(y, rows, name="y")
    weights = da.ones((rows.shape[0], 1), chunks=(rows.chunks[0], 1)) if sample_weight is None \
        else aligned_rows(sample_weight, rows, name="sample_weight", dtype=np.float64)
    if hasattr(model, "classes_"):
        correct, total = dask.compute((weights * (rows == Y)).sum(), weights.sum())
        return float(correct / total)
    Y = Y.astype(np.float64)
    total, first, second, residual = dask.compute(
        weights.sum(), (weights * Y).sum(axis=0), (weights * Y**2).sum(axis=0),
        (weights * (Y - rows) ** 2).sum(axis=0))
    spread = second - first**2 / total
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.where(spread > 0, 1.0 - residual / spread,
                          np.where(residual == 0, 1.0, 0.0))
    return float(scores.mean())
