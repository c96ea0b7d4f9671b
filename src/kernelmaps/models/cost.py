r"""What a kernel ridge fit will cost, before it runs: time from the cost model, memory from shapes.

:func:`estimate_fit_cost` prices the fit's own building blocks with kernelmaps' one cost
model (the flop count of each operation at this machine's measured matrix-product rate,
the same numbers ``compare`` decides its exact baseline on): the kernel matrix and a
Cholesky factorisation (exact solver); the first pass over :math:`K_{nM}` with the
right-hand side, the :math:`M^3` factorisations of the preconditioner, and each CG
iteration — a sweep over the cached kernel blocks, the kernel values of the rows beyond the
cache recomputed, four triangular solves with the M × M preconditioner (Nyström/FALKON).
Memory is counted from the shapes: the cached kernel blocks, the M × M preconditioner
buffer and :math:`K_{MM}`'s evaluation, the float64 targets and weights, and one block
(plus its float64 copy) per thread.

The number of CG iterations is not known before the fit (a few tens for the FALKON preconditioner,
up to ``max_iter``), so the estimate gives the time per iteration and
:meth:`~kernelmaps.models.FitCost.seconds` the total for any count. The rate is measured
once per process and thread count (a probe of about 0.2 s); on a busy machine it is as
slow as the machine. The flop counts are calibrated on the RBF kernel: kernels without an
exponential run faster than estimated, ``chi2`` and other pairwise kernels slower.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sklearn.base import clone

from kernelmaps import _cost
from kernelmaps._config import get_config, resolve_n_threads
from kernelmaps._validation import validate_input
from kernelmaps.models._common import fit_kernel
from kernelmaps.models._kernel_blocks import cache_budget

__all__ = ["FitCost", "estimate_fit_cost"]

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
    >>> from kernelmaps import config_context
    >>> from kernelmaps.models import KernelRidge, estimate_fit_cost
    >>> X = np.random.RandomState(0).normal(size=(20_000, 10)).astype(np.float32)
    >>> model = KernelRidge(kernel="rbf", solver="nystrom", n_components=500)
    >>> with config_context(kernel_cache_bytes=20_000 * 500 * 4):  # room for K_nM
    ...     cost = estimate_fit_cost(model, X)
    >>> cost.solver, cost.path, cost.cache_bytes  # K_nM in float32: 20,000 × 500 × 4 bytes
    ('nystrom', 'cached', 40000000)
    >>> with config_context(kernel_cache_bytes=0):  # every iteration recomputes K_nM
    ...     recompute = estimate_fit_cost(model, X)
    >>> recompute.path, recompute.iteration_s > 2 * cost.iteration_s
    ('recompute', True)
    """
    probe_model = clone(model)
    X = validate_input(probe_model, X, reset=True)
    fit_kernel(probe_model, X)  # the kernel's parameter errors, as fit raises them
    n, d = X.shape
    threads = resolve_n_threads()
    solver, _ = probe_model._choose_solver(X, n_targets)
    itemsize = X.dtype.itemsize
    if solver == "exact":
        factorisation = (_cost.cholesky_flops(n) + 2.0 * n * n * n_targets)
        return FitCost("exact", "direct",
                       _cost.seconds(_cost.kernel_matrix_flops(n, n, d, itemsize), threads),
                       _cost.seconds(factorisation, threads), 0.0, 0,
                       int(_cost.exact_fit_memory(n, itemsize)))
    M = min(probe_model.n_components, n)
    budget = cache_budget()
    cached = int(min(n, budget // (M * itemsize)))
    path = "cached" if cached == n else "recompute" if cached == 0 else "partly cached"
    first_pass = _cost.nystrom_first_pass_flops(n, M, d, n_targets, itemsize)
    factorisation = (_cost.kernel_matrix_flops(M, M, d, itemsize)
                     + _cost.preconditioner_flops(M))
    iteration = _cost.cg_iteration_flops(cached, n - cached, M, d, n_targets, itemsize)
    cache_bytes = cached * M * itemsize
    block_bytes = get_config()["block_bytes"]
    memory = (cache_bytes + 8 * M * M + itemsize * M * M + 8 * n * (n_targets + 1)
              + threads * block_bytes * (1 + 8 // max(itemsize, 1)))
    return FitCost("nystrom", path, _cost.seconds(first_pass, threads),
                   _cost.seconds(factorisation, threads), _cost.seconds(iteration, threads),
                   int(cache_bytes), int(memory))
