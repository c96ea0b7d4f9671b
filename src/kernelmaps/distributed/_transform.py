"""Lazy, chunk-by-chunk feature maps on Dask collections."""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np
from sklearn.utils import get_tags
from sklearn.utils.validation import _check_feature_names, _check_n_features, check_is_fitted

from kernelmaps.distributed._collections import as_dask_rows, in_task, ship
from kernelmaps.maps import FeatureMap

__all__ = ["check_fitted_input", "map_rows", "transform"]


def transform(feature_map: FeatureMap, X: Any) -> da.Array:
    """The features z(X) of a fitted kernelmaps map, lazily, one row chunk at a time.

    Each row chunk of ``X`` is transformed where it lives by the map's own ``transform``, so
    the result equals the in-memory transform row for row (same code, same dtype policy:
    float32 in → float32 out) and the map's input checks (finiteness, non-negativity for the
    χ² maps, …) run on every chunk. The fitted map travels once: it is a single key of the
    graph that every chunk task depends on, so each
    worker receives it once, not once per chunk. Nothing is computed until the result is
    (``.compute()``, ``.persist()``, ``.to_zarr()``, or a reduction such as
    :class:`~kernelmaps.distributed.FeatureRidge`).

    ``feature_map.transform(X)`` with a dask ``X`` returns this same lazy array.

    Parameters
    ----------
    feature_map : FeatureMap
        A fitted kernelmaps map (any of them; fitted in memory or by
        :func:`kernelmaps.distributed.fit`).
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        Row-chunked data. Column chunks are merged (a chunk must hold whole rows); a
        DataFrame's columns must match the map's ``feature_names_in_`` when it has them.

    Returns
    -------
    Z : dask.array.Array of shape (n_samples, n_features_out)
        Chunked like ``X``'s rows, one chunk across the features; float32 if ``X`` is
        float32, else float64 (sparse chunks stay sparse where the map keeps them sparse).

    Examples
    --------
    >>> import dask.array as da
    >>> from kernelmaps import RBFSampler
    >>> from kernelmaps.distributed import transform
    >>> X = da.random.default_rng(0).standard_normal((10_000, 5), chunks=(2_500, 5))
    >>> rff = RBFSampler(n_components=64, random_state=0).fit(X[:10].compute())
    >>> Z = transform(rff, X)
    >>> Z.shape, Z.chunks[0]
    ((10000, 64), (2500, 2500, 2500, 2500))
    >>> bool(abs(Z[:10].compute() - rff.transform(X[:10].compute())).max() == 0)
    True
    """
    return map_rows(feature_map, X, "transform", owner="kernelmaps.distributed.transform")


def map_rows(estimator: Any, X: Any, method: str, *, owner: str | None = None) -> da.Array:
    """``getattr(estimator, method)`` of a fitted estimator on each row chunk of ``X``, lazily.

    The estimator is shipped once (:func:`~kernelmaps.distributed._collections.ship`) and
    its in-memory method runs on every chunk, so the result is the in-memory one row for
    row. The output's type, dtype and width come from the method applied to one zero row.
    """
    owner = owner or f"{type(estimator).__name__}.{method.strip('_')}"
    X = check_fitted_input(estimator, X, owner=owner)
    sample = np.zeros((1, X.shape[1]), dtype=X.dtype)
    if hasattr(X._meta, "tocsr"):  # sparse chunks: the estimator decides the output container
        sample = X._meta.__class__(sample)
    meta = _as_array(in_task(estimator, sample, getattr(estimator, method)))[:0]
    shape = {"drop_axis": 1, "chunks": (X.chunks[0],)} if meta.ndim == 1 \
        else {"chunks": (X.chunks[0], (meta.shape[1],))}
    return X.map_blocks(_method_chunk, ship(estimator), method, dtype=meta.dtype, meta=meta,
                        token=f"kernelmaps-{method.strip('_')}", **shape)


def check_fitted_input(estimator: Any, X: Any, *, owner: str) -> da.Array:
    """``X`` as row chunks, checked against a fitted estimator's features (no data read)."""
    if get_tags(estimator).requires_fit:
        check_is_fitted(estimator)
    X, columns = as_dask_rows(X, owner=owner)
    if columns is not None:
        import pandas as pd

        _check_feature_names(estimator, pd.DataFrame(columns=columns), reset=False)
    _check_n_features(estimator, X, reset=False)
    return X


def _method_chunk(block: Any, estimator: Any, method: str) -> Any:
    return _as_array(in_task(estimator, block, getattr(estimator, method)))


def _as_array(result: Any) -> Any:
    """NumPy (or SciPy sparse) out of a method whose output may be pandas (``set_output``)."""
    return result.to_numpy() if hasattr(result, "to_numpy") else result
