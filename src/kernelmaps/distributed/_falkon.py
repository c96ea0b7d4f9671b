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
from kernelmaps.kernels import Kernel
from kernelmaps.models.ridge import falkon_solve

__all__ = ["fit_kernel_ridge"]


def fit_kernel_ridge(model: Any, X: Any, y: Any, sample_weight: Any = None) -> Any:
    """Fit ``KernelRidge(solver='nystrom')`` on a Dask collection (FALKON, chunk-wise passes).

    Centres are drawn as in :func:`kernelmaps.distributed.fit` (an exact uniform sample of
    rows, or a data-driven strategy on a uniform sample); ``solver='auto'`` means
    ``'nystrom'`` here, and ``'exact'`` (which needs the n × n kernel matrix) is refused.
    """
    model._validate_params()
    owner = f"{type(model).__name__}.fit"
    if model._precomputed:
        raise ValueError("kernel='precomputed' is not supported on Dask collections: pass a "
                         "kernel (its values are computed chunk by chunk on the workers).")
    if model.solver == "exact":
        raise ValueError("solver='exact' needs the n × n kernel matrix in memory; on a Dask "
                         "collection use solver='nystrom' (or 'auto').")
    alpha = np.atleast_1d(np.asarray(model.alpha, dtype=np.float64))
    if alpha.size > 1 and np.ptp(alpha) > 0:
        raise ValueError("solver='nystrom' takes a single alpha for all targets; fit one "
                         "model per alpha.")
    X, columns = as_dask_rows(X, owner=owner)
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None.")
    Y = aligned_rows(y, X, name="y", dtype=np.float64)
    weights = da.ones((X.shape[0], 1), chunks=(X.chunks[0], 1)) if sample_weight is None \
        else aligned_rows(sample_weight, X, name="sample_weight", dtype=np.float64)
    kernel = model._resolved()
    random_state = check_random_state(model.random_state)
    centers, indices = sample_landmarks(
        X, model.landmarks, kernel, min(model.n_components, X.shape[0]), random_state,
        options=model.landmark_params)
    K_MM = np.asarray(kernel(centers.astype(np.float64)), dtype=np.float64)

    # The rows (and targets, weights) stay in worker memory for the CG passes; the kernel
    # and the centres travel to each worker once for the whole fit.
    X, Y, weights = dask.persist(X, Y, weights)
    static = dask.persist(ship(kernel), ship(centers))
    rhs, total_weight = dask.compute(
        chunk_sums(_rhs_chunk, (centers.shape[0], Y.shape[1]), X, Y, weights, static=static),
        weights.sum())

    def matvec(V: np.ndarray) -> np.ndarray:
        # Only V (M × t) travels to the chunks, and their M × t partial sums back.
        return chunk_sums(_normal_chunk, V.shape, X, weights,
                          static=(*static, ship(V))).compute()

    beta, n_iter = falkon_solve(matvec, K_MM, float(alpha[0]), rhs=rhs,
                                total_weight=float(total_weight), max_iter=model.max_iter,
                                tol=model.tol)
    model.solver_ = "nystrom"
    model.n_iter_ = n_iter
    model.X_fit_ = centers
    if indices is None:
        model.__dict__.pop("center_indices_", None)
    else:
        model.center_indices_ = indices
    model.dual_coef_ = beta.ravel() if getattr(y, "ndim", 2) == 1 else beta
    model.n_features_in_ = X.shape[1]
    if columns is None:
        model.__dict__.pop("feature_names_in_", None)
    else:
        model.feature_names_in_ = columns
    return model


def _rhs_chunk(X: np.ndarray, Y: np.ndarray, weights: np.ndarray, kernel: Kernel,
               centers: np.ndarray) -> np.ndarray:
    r""":math:`K_c^\top W_c Y_c` of one row chunk, block by block."""
    if not np.isfinite(Y).all():
        raise ValueError("y contains NaN or infinity; every target must be finite.")
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError("sample_weight must be finite and non-negative.")

    def block(K_b, Y_b, w_b):
        return K_b.T @ (Y_b * w_b).astype(K_b.dtype, copy=False)

    return in_task(kernel, X, lambda rows: kernel.reduce(rows, centers, block, Y, weights))


def _normal_chunk(X: np.ndarray, weights: np.ndarray, kernel: Kernel, centers: np.ndarray,
                  V: np.ndarray) -> np.ndarray:
    r""":math:`K_c^\top W_c K_c V` of one row chunk, block by block (one pass)."""
    def block(K_b, w_b):
        KV = K_b @ V.astype(K_b.dtype, copy=False)
        KV *= w_b.astype(K_b.dtype, copy=False)
        return K_b.T @ KV

    return in_task(kernel, X, lambda rows: kernel.reduce(rows, centers, block, weights))
