"""Dask collections in, NumPy chunks out: input checks, shipping fitted objects, tree sums.

Everything in :mod:`kernelmaps.distributed` meets Dask through these helpers:

``as_dask_rows``
    a dask array or DataFrame → a row-chunked dask array (one chunk across the columns,
    kernelmaps' dtype policy), plus the DataFrame's column names;
``aligned_rows``
    targets and weights (dask or NumPy) cut into the same row chunks as ``X``;
``ship``
    a fitted object as one key of the graph, so each worker receives it once (not once per
    chunk);
``chunk_sums``
    a function of each row chunk summed over the chunks by Dask's tree reduction;
``in_task``
    how a chunk function runs on a worker: one engine thread per task (Dask runs one task per
    core) and the feature names a DataFrame-fitted estimator expects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dask
import dask.array as da
import numpy as np

from kernelmaps._engine import FLOAT_DTYPES, is_dask_collection, threads_per_task

__all__ = ["aligned_rows", "as_dask_rows", "chunk_sums", "in_task", "ship"]

#: Partial results combined per node of the tree reduction (Dask's ``split_every``).
SPLIT_EVERY = 8


def as_dask_rows(X: Any, *, owner: str, dtype: str = "float") -> tuple[da.Array, Any]:
    """``X`` as a 2-D dask array chunked by rows only, and its column names (or ``None``).

    A dask DataFrame is converted with known partition lengths (Dask counts the rows of each
    partition once). With ``dtype='float'`` the dtype policy of every kernelmaps estimator
    applies: float32 is kept, any other numeric dtype becomes float64.
    """
    if not is_dask_collection(X):
        raise TypeError(
            f"{owner} expects a dask array or dask DataFrame; got {type(X).__name__}. Wrap "
            "NumPy data with dask.array.from_array(X, chunks=(rows_per_chunk, -1)), or use the "
            "estimator's own methods on in-memory data."
        )
    columns = None
    if hasattr(X, "to_dask_array"):  # a dask DataFrame (or Series)
        if X.ndim != 2:
            raise ValueError(f"{owner} expects 2-D data; got a dask Series. Use "
                             "series.to_frame() for a single feature.")
        columns = np.asarray(X.columns, dtype=object)
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        raise TypeError(f"{owner} expects a dask array or dask DataFrame; got "
                        f"{type(X).__name__}.")
    if X.ndim != 2:
        raise ValueError(f"{owner} expects a 2-D array of shape (n_samples, n_features); got "
                         f"{X.ndim} dimension(s) {X.shape}. Reshape it, e.g. "
                         "X.reshape(-1, 1) for a single feature.")
    if any(np.isnan(size) for size in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if dtype == "float":
        if X.dtype.kind not in "fiub":
            raise ValueError(f"X passed to {owner} must be numeric; got dtype {X.dtype}. "
                             "Encode text or categorical columns first.")
        if X.dtype not in FLOAT_DTYPES:
            X = X.astype(np.float64)
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})  # a row chunk holds whole rows
    return X, columns


def aligned_rows(values: Any, X: da.Array, *, name: str, dtype: Any = None) -> da.Array:
    """``values`` (dask or NumPy; 1-D or 2-D) as a 2-D dask array in ``X``'s row chunks."""
    if is_dask_collection(values):
        if hasattr(values, "to_dask_array"):
            values = values.to_dask_array(lengths=True)
    else:
        values = np.asarray(values)
    if values.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D; got shape {values.shape}.")
    if values.shape[0] != X.shape[0]:
        raise ValueError(f"{name} has {values.shape[0]} rows but X has {X.shape[0]}: give one "
                         f"value per row of X.")
    if dtype is not None:
        values = values.astype(dtype)
    column = values.reshape(-1, 1) if values.ndim == 1 else values
    if isinstance(column, da.Array):
        if any(np.isnan(size) for size in column.chunks[0]):
            column = column.compute_chunk_sizes()
        return column.rechunk((X.chunks[0], -1))
    return da.from_array(column, chunks=(X.chunks[0], -1))


def ship(obj: Any) -> Any:
    """``obj`` as one key of the task graph (a :class:`dask.delayed.Delayed`).

    Every chunk task depends on that key instead of carrying its own copy: the object is
    serialised once into the graph, and each worker receives it once, from the scheduler or a
    peer, and keeps it while its chunk tasks run. The key is a hash of the object, so shipping
    the same fitted estimator twice gives the same key.
    """
    return dask.delayed(obj, pure=True)


def in_task(estimator: Any, block: Any, fn: Callable[[Any], Any]) -> Any:
    """Run ``fn(block)`` as a chunk task: one engine thread, feature names as at fit time."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None and isinstance(block, np.ndarray):
        import pandas as pd  # present: the estimator was fitted on a DataFrame

        block = pd.DataFrame(block, columns=names, copy=False)
    with threads_per_task(1):
        return fn(block)


def chunk_sums(fn: Callable[..., np.ndarray], shape: tuple[int, ...], X: da.Array,
               *aligned: da.Array, static: tuple = ()) -> da.Array:
    """``Σ_chunks fn(X_c, *aligned_c, *static)``, a lazy array of ``shape`` (float64).

    Each row chunk of ``X`` (with the same rows of the ``aligned`` arrays) becomes one partial
    result on the worker that holds it; Dask's tree reduction (``sum`` with ``split_every``)
    adds the partials ``SPLIT_EVERY`` at a time, so only ``shape``-sized arrays travel and no
    node holds more than ``SPLIT_EVERY + 1`` of them. ``static`` are shipped objects
    (:func:`ship`) every chunk needs.
    """
    extra = tuple(range(2, 2 + len(shape)))
    letters = "abcdefgh"[: len(shape)]

    def partial(x_chunk, *rest):
        return np.asarray(fn(x_chunk, *rest), dtype=np.float64)[None]

    args: list[Any] = [X, "ij"]
    for column_index, array in zip("pqrstuvw", aligned, strict=False):
        args += [array, "i" + column_index]  # own column index: widths differ
    for obj in static:
        args += [obj, None]
    partials = da.blockwise(
        partial, "i" + letters, *args,
        new_axes=dict(zip(letters, shape, strict=True)), adjust_chunks={"i": 1},
        concatenate=True, dtype=np.float64, meta=np.empty((0,) * (1 + len(extra))),
    )
    return partials.sum(axis=0, split_every=SPLIT_EVERY)
