r"""Nyström kernel ridge (FALKON) on Dask collections: one Nyström system per row chunk.

:class:`kernelmaps.models.KernelRidge` and :class:`~kernelmaps.models.KernelRidgeClassifier`
with ``solver='nystrom'`` solve :math:`(K_{nM}^\top W K_{nM} + \alpha K_{MM})\beta =
K_{nM}^\top W Y` by preconditioned conjugate gradient. Everything of size M stays on the
client — the centres' kernel matrix, the FALKON preconditioner, the CG vectors — and
everything of size n on the workers: each row chunk becomes one
:class:`~kernelmaps.models.interface.NystromSystem`, built on the worker holding the chunk and
kept there (``persist``) for the whole fit. Its first pass gives the chunk's right-hand side
and keeps the chunk's kernel blocks in memory while the fit's ``kernel_cache_bytes`` budget
lasts (the client shares it out over the chunks in order); each CG iteration then ships the
current :math:`M\times t` direction to every chunk, which sweeps its cached blocks (or
recomputes them beyond the budget), and Dask's tree reduction sums the :math:`M\times t`
partials. The solve and the fitted state are the model's own
(:func:`~kernelmaps.models.interface.solve_nystrom`), so the Dask fit is the in-memory one
up to the order of the sums.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import dask
import dask.array as da
import numpy as np
from sklearn.base import is_classifier
from sklearn.utils import check_random_state

from kernelmaps._config import config_context, get_config
from kernelmaps._engine import threads_per_task
from kernelmaps._ridge import check_alpha
from kernelmaps.distributed._collections import SPLIT_EVERY, aligned_rows, as_dask_rows, ship
from kernelmaps.distributed._fit import sample_landmarks
from kernelmaps.models.interface import (
    FitProgress,
    NystromSystem,
    attainable_residual,
    cache_budget,
    encode_targets,
    fit_kernel,
    n_targets,
    set_classes,
    solve_nystrom,
    warn_approximate_solver,
)

__all__ = ["DASK_CACHE_FRACTION", "DaskNystromSystem", "dask_cache_budget", "fit_kernel_ridge"]


def fit_kernel_ridge(model: Any, X: Any, y: Any, sample_weight: Any = None) -> Any:
    """Fit ``KernelRidge``/``KernelRidgeClassifier(solver='nystrom')`` on a Dask collection.

    What the model's ``fit`` does with a dask ``X``. The centres are drawn as Nyström's
    landmarks by :func:`kernelmaps.distributed._fit.sample_landmarks` (an exact uniform
    sample of rows, or a data-driven strategy on a uniform sample). ``solver='auto'`` means
    ``'nystrom'`` here, and says so once (the models' one
    :class:`~kernelmaps.models.ApproximateSolverWarning` message); ``'falkon'`` (its other
    name) says nothing; ``'exact'`` (the n × n kernel matrix) is refused.
    """
    owner = f"{type(model).__name__}.fit"
    if model.solver == "exact":
        raise ValueError("solver='exact' needs the n × n kernel matrix in memory; on a Dask "
                         "collection use solver='nystrom' (or 'auto').")
    X, columns = as_dask_rows(X, owner=owner)
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None.")
    Y, ravel = _targets(model, y, X)
    try:
        alpha = check_alpha(model.alpha, Y.shape[1], "nystrom")
    except ValueError as error:  # one message for Dask users: a single positive alpha
        raise ValueError(f"solver='nystrom' takes a single positive alpha for all targets; "
                         f"got {model.alpha!r}.") from error
    weights = da.ones((X.shape[0], 1), chunks=(X.chunks[0], 1)) if sample_weight is None \
        else aligned_rows(sample_weight, X, name="sample_weight", dtype=np.float64)
    # gamma="scale": the (weighted) variance of all of X, from Dask's reductions.
    kernel = fit_kernel(model, X, None if sample_weight is None else weights[:, 0],
                        precomputed=False)
    centres, indices = sample_landmarks(
        X, model.landmarks, kernel, min(model.n_components, X.shape[0]),
        check_random_state(model.random_state), options=model.landmark_params)
    if model.solver == "auto":
        warn_approximate_solver(
            model, X.shape[0], "a Dask collection is fitted on its workers, and the exact "
            "solve needs the n × n kernel matrix in one process",
            exact_hint="Compute X into memory (X.compute()) and pass solver='exact' for the "
                       "exact model", stacklevel=5)
    progress = FitProgress(model.verbose, type(model).__name__)
    system = DaskNystromSystem(kernel, X, centres, weights, Y, passes=model.max_iter)
    progress.phase(f"first pass over K_nM on {len(system.chunk_rows)} chunks "
                   f"({system.info['path']})")
    solve_nystrom(model, system, kernel, centres, indices, float(alpha[0]), ravel,
                  total_weight=system.total_weight, n_features_in=X.shape[1],
                  feature_names_in=columns, progress=progress)
    system.release()
    return model


def _targets(model: Any, y: Any, X: da.Array) -> tuple[da.Array, bool]:
    """``(Y, ravel)``: the float64 targets in X's row chunks (a classifier's ±1 encoding of
    its labels, chunk by chunk) and whether ``dual_coef_`` is 1-D."""
    Y = aligned_rows(y, X, name="y")
    if is_classifier(model):
        if getattr(y, "ndim", 1) != 1:
            raise ValueError(f"{type(model).__name__} takes one label per sample (1-D y); "
                             f"got y of shape {y.shape}.")
        set_classes(model, np.unique(da.unique(Y[:, 0]).compute()))
        width = n_targets(model)
        return Y.map_blocks(partial(encode_targets, model), chunks=(Y.chunks[0], (width,)),
                            dtype=np.float64), width == 1
    if Y.dtype.kind not in "fiub":
        raise ValueError(f"y must be numeric for {type(model).__name__}; got dtype {Y.dtype}.")
    return Y.astype(np.float64), getattr(y, "ndim", 2) == 1


class DaskNystromSystem:
    r"""The Nyström system of a row-chunked dask array: one
    :class:`~kernelmaps.models.interface.NystromSystem` per chunk, persisted where the chunk
    lives, with the interface :func:`~kernelmaps.models.interface.solve_nystrom` needs (``rhs``,
    ``total_weight``, ``gram_times``, ``info``).

    The cache budget (:func:`dask_cache_budget`) is shared out evenly over the chunks, so a
    worker holding a fair share of the chunks holds a fair share of the blocks: a chunk
    keeps the blocks of as many of its rows as its share allows and recomputes the others.

    How a chunk's CG passes multiply its float32 cache — the compiled kernel or BLAS
    (:func:`~kernelmaps.models.interface.compiled_sweep`) — is the chunk's own
    :class:`~kernelmaps.models.interface.NystromSystem`'s choice, from ``passes`` and the
    ``jit`` setting of the client at construction: that setting travels with the chunk
    tasks (as the cache budget does), so a worker process's own setting does not choose,
    and the local scheduler and a cluster make the same choice. Under ``jit="auto"`` a
    chunk compiles when its own cache's elements × ``passes`` repay loading Numba — the
    chunk's known work, the same on any worker and in any order. The load is paid once per
    worker process (once in all on the local scheduler), so the rule is conservative: it
    never loads Numba for a worker whose chunks' work would not repay it, but keeps BLAS
    for chunks below the crossover (about 0.87 GB of float32 blocks each at ``passes``
    = 100) even where a worker's chunks together would repay it; ``jit=True`` compiles
    every chunk's sweep.

    Parameters
    ----------
    kernel : Kernel
        The fitted kernel.
    X : dask.array.Array of shape (n, d)
        The rows, chunked by rows only.
    centres : ndarray of shape (M, d)
        The centres.
    weights : dask.array.Array of shape (n, 1)
        Sample weights, in X's row chunks.
    Y : dask.array.Array of shape (n, t)
        float64 targets, in X's row chunks.
    cache_bytes : int or None, default=None
        The cache budget of the whole fit; ``None``: :func:`dask_cache_budget`.
    passes : int or None, default=None
        The most :meth:`gram_times` calls the solver will make (the model's ``max_iter``),
        passed to every chunk's system; ``None``: unknown, so only ``jit=True`` compiles.

    Attributes
    ----------
    info : dict
        As :attr:`kernelmaps.models.interface.NystromSystem.info`, for the
        whole fit — ``path``, ``cached_rows``, ``cache_bytes``, ``cache_budget_bytes``,
        ``first_pass_s`` (the client's wall time of all chunks' first passes) — with
        ``chunks`` (their number), ``sweep``: how the chunks holding a cache multiply it, the
        chunks' common value (``"compiled"``, ``"blas"``, ``"float64"`` after
        :meth:`widen`), ``"mixed"`` when they differ (under ``jit="auto"``, chunks on both
        sides of the crossover) or ``None`` when no chunk caches; and ``chunk_sweeps``: how
        many of those chunks sweep each way (``{"compiled": 4, "blas": 1}``).
    """

    def __init__(self, kernel: Any, X: da.Array, centres: np.ndarray, weights: da.Array,
                 Y: da.Array, *, cache_bytes: int | None = None,
                 passes: int | None = None) -> None:
        start = time.perf_counter()
        M = centres.shape[0]
        itemsize = np.result_type(X.dtype, centres.dtype).itemsize
        budget = dask_cache_budget(X, Y) if cache_bytes is None else int(cache_bytes)
        self.chunk_rows = [int(rows) for rows in X.chunks[0]]
        share = max(budget, 0) // max(1, len(self.chunk_rows))
        allotments = [min(rows * M * itemsize, share) for rows in self.chunk_rows]
        shared = (ship(kernel), ship(centres))
        jit = get_config()["jit"]  # the client's, whichever process builds the chunks
        systems = [
            dask.delayed(_chunk_system, pure=True)(x, y, w, *shared, allotment, passes, jit)
            for x, y, w, allotment in zip(X.to_delayed().ravel(), Y.to_delayed().ravel(),
                                          weights.to_delayed().ravel(), allotments,
                                          strict=True)]
        # The systems (their rows' references and cached blocks) stay on the workers.
        self._systems = list(dask.persist(*systems))
        self._shape = (M, Y.shape[1])
        rhs, total_weight, infos, floors = dask.compute(
            self._sum(_chunk_rhs), weights.sum(),
            [dask.delayed(_chunk_info)(system) for system in self._systems],
            [dask.delayed(_chunk_floor)(system) for system in self._systems])
        #: The chunks' attainable relative residual (their products' precision), and whether
        #: :meth:`widen` switched them to float64 products.
        self.attainable_residual = max(floors)
        self._wide = False
        self.rhs, self.total_weight = rhs, float(total_weight)
        cached = sum(info["cached_rows"] for info in infos)
        n = sum(self.chunk_rows)
        self.info = {
            "path": "cached" if cached == n else "recompute" if cached == 0
            else "partly cached",
            "cached_rows": cached,
            "cache_bytes": sum(info["cache_bytes"] for info in infos),
            "cache_budget_bytes": budget,
            "first_pass_s": time.perf_counter() - start,
            "chunks": len(self.chunk_rows),
            **_sweeps([info["sweep"] for info in infos]),
        }

    def _sum(self, fn: Any, *args: Any) -> da.Array:
        """``Σ_chunks fn(system, *args)``, summed by Dask's tree reduction (lazy)."""
        parts = [da.from_delayed(dask.delayed(fn)(system, *args), shape=self._shape,
                                 dtype=np.float64) for system in self._systems]
        return da.stack(parts).sum(axis=0, split_every=SPLIT_EVERY)

    def gram_times(self, V: np.ndarray) -> np.ndarray:
        r""":math:`K_{nM}^\top W K_{nM} V`: V (M × t) travels to every chunk, the M × t
        partial sums back."""
        return self._sum(_chunk_gram_times, ship(V), self._wide).compute()

    def widen(self) -> float:
        """Float64 products on every chunk from now on (see
        :meth:`~kernelmaps.models.interface.NystromSystem.widen`); the new attainable
        residual."""
        self._wide = True
        cached = sum(self.info["chunk_sweeps"].values())
        self.info.update(_sweeps(["float64"] * cached))
        self.attainable_residual = attainable_residual(np.float64, self._shape[0])
        return self.attainable_residual

    def release(self) -> None:
        """Let the workers drop the systems and their cached blocks."""
        self._systems = []


#: On a cluster whose workers have memory limits, the kernel blocks may use this fraction of
#: their sum (less the persisted rows): Dask starts spilling a worker's data to disk at 60 %
#: of its limit (``distributed.worker.memory.target``), and the rows, the tasks' blocks and
#: Python itself need the rest.
DASK_CACHE_FRACTION = 0.25


def dask_cache_budget(X: da.Array, Y: da.Array) -> int:
    """The cache budget of a Dask fit: the ``kernel_cache_bytes`` setting when it is set;
    else, on a ``dask.distributed`` cluster whose workers have memory limits,
    :data:`DASK_CACHE_FRACTION` of their sum less the persisted rows (X, targets, weights);
    else (local threads, or workers without a limit)
    :func:`~kernelmaps.models.interface.cache_budget` of this machine."""
    if get_config()["kernel_cache_bytes"] is not None:
        return cache_budget()
    try:
        from distributed import get_client

        workers = get_client().scheduler_info()["workers"].values()
        limits = [worker.get("memory_limit") or 0 for worker in workers]
    except (ImportError, ValueError):  # no cluster: the local scheduler
        limits = []
    if not limits or min(limits) <= 0:
        return cache_budget()
    data = X.nbytes + Y.nbytes + 8 * X.shape[0]
    return max(0, int(DASK_CACHE_FRACTION * sum(limits) - data))


def _chunk_system(X: np.ndarray, Y: np.ndarray, weights: np.ndarray, kernel: Any,
                  centres: np.ndarray, cache_bytes: int, passes: int | None,
                  jit: bool | str) -> NystromSystem:
    """One chunk's :class:`NystromSystem` (its first pass runs here, on the worker), its
    sweep chosen under the client's ``jit`` setting."""
    if not np.isfinite(Y).all():
        raise ValueError("y contains NaN or infinity; every target must be finite.")
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError("sample_weight must be finite and non-negative.")
    with threads_per_task(1), config_context(jit=jit):  # Dask runs one task per core
        return NystromSystem(kernel, X, centres, weights[:, 0], Y, cache_bytes=cache_bytes,
                             passes=passes)


def _sweeps(sweeps: list) -> dict:
    """``sweep`` and ``chunk_sweeps`` of :attr:`DaskNystromSystem.info` from the chunks'
    ``sweep`` (``None``: a chunk without a cache)."""
    counts: dict = {}
    for sweep in sweeps:
        if sweep is not None:
            counts[sweep] = counts.get(sweep, 0) + 1
    summary = None if not counts else next(iter(counts)) if len(counts) == 1 else "mixed"
    return {"sweep": summary, "chunk_sweeps": counts}


def _chunk_rhs(system: NystromSystem) -> np.ndarray:
    return system.rhs


def _chunk_info(system: NystromSystem) -> dict:
    return system.info


def _chunk_floor(system: NystromSystem) -> float:
    return system.attainable_residual


def _chunk_gram_times(system: NystromSystem, V: np.ndarray, wide: bool) -> np.ndarray:
    with threads_per_task(1):
        return system.gram_times(V, wide=wide)
