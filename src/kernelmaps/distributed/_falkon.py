r"""Nyström kernel ridge (FALKON) on Dask collections: the K_nM passes run on the workers.

:class:`kernelmaps.models.KernelRidge` with ``solver='nystrom'`` solves
:math:`(K_{nM}^\top W K_{nM} + \alpha K_{MM})\beta = K_{nM}^\top W y` by preconditioned
conjugate gradient. Everything of size M stays on the client — the centres' kernel matrix
:math:`K_{MM}`, the FALKON preconditioner, the CG vectors — and everything of size n stays on
the workers: each CG iteration ships the current :math:`M\times t` direction :math:`V` to
every row chunk, the chunk computes :math:`K_c^\top W_c (K_c V)` block by block (never
holding its :math:`K_c`), and Dask's tree reduction sums the :math:`M\times t` partials.
``X`` is persisted on the workers for the iterations, so each pass reads memory, not the
source. The CG itself is the in-memory solver's (:func:`falkon_solve`), so the iterates
are the in-memory ones up to summation order.
"""

from __future__ import annotations

from typing import Any

import dask
import dask.array as da
import numpy as np
from sklearn.utils import check_random_state

from kernelmaps.distributed._collections import (
    aligned_rows,
    as_dask_rows,
    chunk_sums,
    in_task,
    ship,
)
from kernelmaps.distributed._fit import sample_landmarks
from kernelmaps.models._common import centre_gram, fit_kernel
from kernelmaps.models._solvers import falkon_solve

__all__ = ["fit_kernel_ridge"]


def fit_kernel_ridge(model: Any, X: Any, y: Any, sample_weight: Any = None) -> Any:
    """Fit ``KernelRidge(solver='nystrom')`` on a Dask collection (FALKON, chunk-wise passes).

    What ``KernelRidge.fit`` does with a dask ``X``. The centres are drawn as Nyström's
    landmarks by :func:`kernelmaps.distributed.fit` (an exact uniform sample of rows, or a
    data-driven strategy on a uniform sample); each chunk runs the model's own blocked data
    passes (``_weighted_gram_times``, ``_weighted_cross``) on its rows. ``solver='auto'``
    means ``'nystrom'`` here; ``'exact'`` (the n × n kernel matrix) is refused.
    """
    owner = f"{type(model).__name__}.fit"
    if model.solver == "exact":
        raise ValueError("solver='exact' needs the n × n kernel matrix in memory; on a Dask "
                         "collection use solver='nystrom' (or 'auto').")
    alpha = np.atleast_1d(np.asarray(model.alpha, dtype=np.float64))
    if alpha.ndim != 1 or np.any(alpha <= 0) or (alpha.size > 1 and np.ptp(alpha) > 0):
        raise ValueError("solver='nystrom' takes a single positive alpha for all targets; got "
                         f"{model.alpha!r}.")
    kernel = fit_kernel(model, precomputed=False)
    X, columns = as_dask_rows(X, owner=owner)
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None.")
    Y = aligned_rows(y, X, name="y", dtype=np.float64)
    weights = da.ones((X.shape[0], 1), chunks=(X.chunks[0], 1)) if sample_weight is None \
        else aligned_rows(sample_weight, X, name="sample_weight", dtype=np.float64)
    centres, indices = sample_landmarks(
        X, model.landmarks, kernel, min(model.n_components, X.shape[0]),
        check_random_state(model.random_state), options=model.landmark_params)

    model.kernel_ = kernel
    model._columns = model.X_fit_ = centres
    model.__dict__.pop("center_indices_", None)
    if indices is not None:
        model.center_indices_ = indices
    model.n_features_in_ = X.shape[1]
    model.__dict__.pop("feature_names_in_", None)
    if columns is not None:
        model.feature_names_in_ = columns
    # The rows (targets, weights) stay in worker memory for the CG passes; the model with
    # its kernel and centres travels to each worker once for the whole fit.
    X, Y, weights = dask.persist(X, Y, weights)
    (shipped,) = dask.persist(ship(model))
    rhs, total_weight = dask.compute(
        chunk_sums(_cross_chunk, (centres.shape[0], Y.shape[1]), X, Y, weights,
                   static=(shipped,)),
        weights.sum())

    def matvec(V: np.ndarray) -> np.ndarray:
        # Only V (M × t) travels to the chunks, and their M × t partial sums back.
        return chunk_sums(_gram_times_chunk, V.shape, X, weights,
                          static=(shipped, ship(V))).compute()

    beta, model.n_iter_ = falkon_solve(
        matvec, centre_gram(kernel, centres, centres), float(alpha[0]), rhs=rhs,
        total_weight=float(total_weight), max_iter=model.max_iter, tol=model.tol)
    model.solver_ = "nystrom"
    model.dual_coef_ = beta.ravel() if getattr(y, "ndim", 2) == 1 else beta
    return model


def _cross_chunk(X: np.ndarray, Y: np.ndarray, weights: np.ndarray, model: Any) -> np.ndarray:
    r""":math:`K_c^\top W_c Y_c` of one row chunk (the model's own blocked pass)."""
    if not np.isfinite(Y).all():
        raise ValueError("y contains NaN or infinity; every target must be finite.")
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError("sample_weight must be finite and non-negative.")
    return in_task(model.kernel_, X,
                   lambda rows: model._weighted_cross(rows, Y, weights[:, 0]))


def _gram_times_chunk(X: np.ndarray, weights: np.ndarray, model: Any,
                      V: np.ndarray) -> np.ndarray:
    r""":math:`K_c^\top W_c K_c V` of one row chunk (the model's own blocked pass)."""
    return in_task(model.kernel_, X,
                   lambda rows: model._weighted_gram_times(rows, V, weights[:, 0]))
