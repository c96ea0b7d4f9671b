r"""What a kernel ridge fit will cost, before it runs: time from a short probe, memory from shapes.

:func:`estimate_fit_cost` times the fit's own building blocks on a few rows of the data — a
kernel block against M points with the products CG does on it, and the same products on a
block read from memory (the cached path) — and scales them to the data's size, the cache
budget and the thread count; the :math:`M^3` factorisations are timed on a matrix product of
up to 1,024² and scaled by their flop counts. Memory is counted from the shapes: the cached
kernel blocks, the M × M preconditioner buffer and :math:`K_{MM}`'s evaluation, the
float64 targets and weights, and one block (plus its float64 copy) per thread.

The number of CG iterations is not known before the fit (a few tens for the FALKON preconditioner,
up to ``max_iter``), so the estimate gives the time per iteration and
:meth:`~kernelmaps.models.FitCost.seconds` the total for any count. Probes take about 0.1 s; on a
busy machine they are as noisy as the machine.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np
from sklearn.base import clone

from kernelmaps._config import get_config, resolve_n_threads
from kernelmaps._validation import validate_input
from kernelmaps.models._common import fit_kernel
from kernelmaps.models._nystrom import cache_budget, cross_block, gram_block

__all__ = ["FitCost", "estimate_fit_cost"]

#: Rows of the probe block (fewer when M is large, so the block stays a few MB).
_PROBE_ENTRIES = 1 << 20


class FitCost(NamedTuple):
    """The estimate of :func:`estimate_fit_cost`: seconds on this machine now, and bytes.

    Attributes
    ----------
    solver : str
        ``"exact"`` or ``"nystrom"``.
    path : str
        Nyström: ``"cached"``, ``"partly cached"`` or ``"recompute"`` (as ``fit_info_``).
    first_pass_s : float
        The kernel matrix (exact) or the first pass over :math:`K_{nM}` with the right-hand
        side.
    factorisation_s : float
        Cholesky factorisations (n × n exact; the M × M preconditioner).
    iteration_s : float
        One CG iteration (0 for the exact solver).
    cache_bytes : int
        Kernel blocks kept between passes.
    memory_bytes : int
        Peak memory of the fit beyond the data.
    """

    solver: str
    path: str
    first_pass_s: float
    factorisation_s: float
    iteration_s: float
    cache_bytes: int
    memory_bytes: int

    def seconds(self, iterations: int) -> float:
        """Estimate the whole fit's time with a given number of CG iterations.

        Parameters
        ----------
        iterations : int
            Conjugate-gradient iterations (the exact solver runs none).

        Returns
        -------
        float
            ``first_pass_s + factorisation_s + iterations * iteration_s``, in seconds.
        """
        return self.first_pass_s + self.factorisation_s + iterations * self.iteration_s

    def __str__(self) -> str:
        gib = 1024**3
        lines = [f"{self.solver} ({self.path}): first pass {self.first_pass_s:.2f} s, "
                 f"factorisation {self.factorisation_s:.2f} s"]
        if self.solver == "nystrom":
            lines.append(f"{self.iteration_s:.3f} s per CG iteration: "
                         f"{self.seconds(20):.1f} s with 20, {self.seconds(100):.1f} s with 100")
        lines.append(f"memory {self.memory_bytes / gib:.2f} GiB beyond the data "
                     f"({self.cache_bytes / gib:.2f} GiB of cached kernel blocks)")
        return "; ".join(lines)


def _best_time(fn: Any, repeats: int = 3) -> float:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _factorisation_rate() -> float:
    """Flops per second of a Cholesky-like LAPACK kernel: half a float64 product's rate."""
    size = 512
    a = np.random.default_rng(0).standard_normal((size, size))
    return 0.5 * 2 * size**3 / max(_best_time(lambda: a @ a), 1e-9)


def estimate_fit_cost(model: Any, X: Any, *, n_targets: int = 1) -> FitCost:
    """Estimate the time and memory of ``model.fit(X, y)`` before running it.

    Parameters
    ----------
    model : KernelRidge or KernelRidgeClassifier
        The unfitted model (its parameters are read; it is not changed).
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The training data (in memory; a few rows are read for the probe).
    n_targets : int, default=1
        Columns of the target matrix (the number of classes for a classifier with more
        than two).

    Returns
    -------
    FitCost
        Seconds (per phase; :meth:`~kernelmaps.models.FitCost.seconds` for a total) and
        bytes. The centre selection (k-means, leverage) is not included.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import KernelRidge, estimate_fit_cost
    >>> X = np.random.RandomState(0).normal(size=(20_000, 10)).astype(np.float32)
    >>> cost = estimate_fit_cost(KernelRidge(kernel="rbf", solver="nystrom",
    ...                                      n_components=500), X)
    >>> cost.solver, cost.cache_bytes == 20_000 * 500 * 4 or cost.path != "cached"
    ('nystrom', True)
    """
    probe_model = clone(model)
    X = validate_input(probe_model, X, reset=True)
    kernel = fit_kernel(probe_model, X)
    n = X.shape[0]
    threads = resolve_n_threads()
    solver = probe_model._choose_solver(n)
    itemsize = X.dtype.itemsize
    if solver == "exact":
        rows = max(1, min(n, _PROBE_ENTRIES // max(n, 1)))
        per_row = _best_time(lambda: kernel.evaluate(X[:rows], X)) / rows
        flops = n**3 / 3 + 2 * n * n * n_targets
        return FitCost("exact", "direct", n * per_row / threads,
                       flops / (_factorisation_rate() * threads), 0.0, 0,
                       int(8 * n * n + itemsize * n * n))
    M = min(probe_model.n_components, n)
    centres = X[:M] if kernel.name != "precomputed" else np.arange(M)
    rows = max(1, min(n, _PROBE_ENTRIES // M))
    block = X[:rows]
    weights, Y = np.ones(rows), np.ones((rows, n_targets))
    V = np.ones((M, n_targets))
    evaluate = _best_time(lambda: gram_block(kernel.evaluate(block, centres), weights, V))
    cross = _best_time(lambda: cross_block(kernel.evaluate(block, centres), weights, Y))
    cached_block = kernel.evaluate(block, centres)
    sweep = _best_time(lambda: gram_block(cached_block, weights, V))
    budget = cache_budget()
    cached = int(min(n, budget // (M * cached_block.dtype.itemsize)))
    path = "cached" if cached == n else "recompute" if cached == 0 else "partly cached"
    # The engine's threads share the blocks evenly; BLAS runs one thread per block.
    iteration = (cached * sweep + (n - cached) * evaluate) / rows / threads
    # Four triangular solves per iteration read the M × M buffer: memory-bound, so timed as
    # flops at a quarter of the factorisation rate.
    rate = _factorisation_rate() * threads
    iteration += 4 * 2 * M * M * n_targets / (0.25 * rate)
    factorisation = M**3 / rate  # potrf + lauum + potrf: M³/3 each
    cache_bytes = cached * M * cached_block.dtype.itemsize
    block_bytes = get_config()["block_bytes"]
    memory = (cache_bytes + 8 * M * M + itemsize * M * M + 8 * n * (n_targets + 1)
              + threads * block_bytes * (1 + 8 // max(itemsize, 1)))
    return FitCost("nystrom", path, n * cross / rows / threads, factorisation, iteration,
                   int(cache_bytes), int(memory))
