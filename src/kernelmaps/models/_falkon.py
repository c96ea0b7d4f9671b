r"""FALKON: Nyström kernel ridge regression by preconditioned conjugate gradient.

:class:`~kernelmaps.models.KernelRidge` with ``solver="nystrom"`` solves the normal equations
of Nyström kernel ridge regression,

.. math::

    H\beta = K_{nM}^\top W y, \qquad H = K_{nM}^\top W K_{nM} + \alpha K_{MM},

(:math:`W` the diagonal of sample weights) without forming :math:`K_{nM}`: the model hands
:func:`falkon_solve` a function computing :math:`K_{nM}^\top W K_{nM} V` in one blocked pass
over the data, and this module does the rest in :math:`O(M^2)` memory — the preconditioner
(:mod:`kernelmaps.models._preconditioner`, host or device) handed to the one preconditioned
CG (:mod:`kernelmaps.models._cg`) through their interface
(:class:`~kernelmaps.models._cg.Preconditioner`).

The small systems are solved in float64 whatever the dtype of the kernel blocks; the
factorisations are those of :mod:`kernelmaps._linalg`.

References
----------
A. Rudi, L. Carratino and L. Rosasco, "FALKON: An optimal large scale kernel method",
NeurIPS 2017.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from kernelmaps._array_api import is_device_array
from kernelmaps._engine import single_threaded_blas
from kernelmaps.models._cg import (
    STALL_FACTOR,
    TRUE_RESIDUAL_EVERY,
    Callback,
    Preconditioner,
    preconditioned_conjugate_gradient,
)
from kernelmaps.models._preconditioner import DeviceFalkonPreconditioner, FalkonPreconditioner

__all__ = ["SINGLE_THREAD_MAX_CENTRES", "FalkonResult", "ToleranceBelowPrecisionWarning",
           "falkon_solve"]


#: Float32 products are widened to float64 (:meth:`NystromSystem.widen`) when the factor T
#: of K_MM has a diagonal spread (a lower bound of κ(T)) above this: the preconditioned
#: operator then amplifies their rounding by about κ(T)². Measured: 7-25 on well-posed
#: systems (Fashion-MNIST M = 1,000, the 1M case's M = 2,000, an M = 80 test problem), 2e5
#: to 1.6e7 on numerically singular ones (rbf γ = 1e-9 … 1e-3 on [0, 1]⁴, linear and poly
#: kernels with more centres than their rank), where float32 products made CG diverge.
WIDEN_ABOVE_CONDITION = 100.0
#: Attainable residuals at or below this are float64 products' (nothing to widen).
FLOAT64_FLOOR = 1e-11


class ToleranceBelowPrecisionWarning(UserWarning):
    """``tol`` is below the relative residual the data's dtype lets CG reach: the solve
    stops at that residual instead (see :func:`falkon_solve`)."""

#: Up to this M the factorisations and triangular solves run on one BLAS thread: one core
#: factorises a 4,096² matrix three times (potrf, lauum, potrf: M³ flops) in about 1.5 s,
#: while OpenBLAS threads spin-waiting on busy cores made them 100-1000× slower (17 s at
#: M = 1,000 on 2 loaded cores, against 0.02 s on one thread). Beyond it the M³ work is
#: large enough for the threads to pay off even when cores are shared.
SINGLE_THREAD_MAX_CENTRES = 4096


class FalkonResult(NamedTuple):
    """What :func:`falkon_solve` returns."""

    #: β, shape (M, k).
    coef: Any
    #: CG iterations (data passes) run.
    iterations: int
    #: Whether every target reached ``tol``.
    converged: bool
    #: The jitter added to K_MM's diagonal (part of the system solved).
    jitter: float
    #: Seconds spent factorising the preconditioner.
    preconditioner_s: float = 0.0


def falkon_solve(matvec: Callable[[np.ndarray], np.ndarray], K_MM: np.ndarray, alpha: float,
                 *, rhs: np.ndarray, total_weight: float, max_iter: int, tol: float,
                 overwrite: bool = False, callback: Callback | None = None,
                 attainable_residual: float = 0.0,
                 widen: Callable[[], float] | None = None) -> FalkonResult:
    r"""Solve :math:`(K_{nM}^\top W K_{nM} + \alpha K_{MM})\beta = K_{nM}^\top W y` (FALKON).

    Conjugate gradient on the preconditioned system :math:`B^\top H B\,\gamma = B^\top r`,
    then :math:`\beta = B\gamma` (see
    :class:`~kernelmaps.models._preconditioner.FalkonPreconditioner`): one application of
    :math:`B^\top H B` is four triangular solves and one data pass; :math:`K_{MM}` itself
    is not needed after the factorisation. :math:`H` uses :math:`K_{MM}` plus the jitter
    its Cholesky factor needed (:math:`T^\top T`), so it is positive definite even where
    :math:`K_{MM}` is only numerically PSD (float32 kernel values of a low-rank or nearly
    constant kernel are indefinite at rounding level, and CG on an indefinite system
    diverges). Warns with a :class:`~sklearn.exceptions.ConvergenceWarning` if
    ``max_iter`` is reached first.

    **Attainable residual.** With float32 data the passes multiply in float32
    (:mod:`kernelmaps.models._nystrom`), so the operator is known to about
    :math:`(\sqrt M + \sqrt b)\,\varepsilon_{32}` relative and CG cannot bring the relative
    residual much below :math:`10(\sqrt M+\sqrt b)\,\varepsilon_{32}` — 4.7e-5 to 7.5e-5
    for M = 1,000-3,000 with b = 64 (:func:`~kernelmaps.models._kernel_blocks.attainable_residual`;
    float64 data: about 1e-13). Measured stalls: 8e-6 (Fashion-MNIST, M = 1,000) to 2e-4 (an
    ill-conditioned M = 80 system). A ``tol`` below ``attainable_residual`` warns with
    :class:`ToleranceBelowPrecisionWarning` and CG stops there instead of iterating on
    rounding noise — unless K_MM's factor is ill-conditioned (:data:`WIDEN_ABOVE_CONDITION`),
    where ``widen`` switches the passes to float64 products first. Where ``tol`` is within
    :data:`~kernelmaps.models._cg.STALL_FACTOR` of that floor, the true residual is checked every
    :data:`~kernelmaps.models._cg.TRUE_RESIDUAL_EVERY` iterations (in the same data pass)
    and CG stops where it stalls; far above it the updated residual's drift is below tol.

    Parameters
    ----------
    matvec : callable
        ``matvec(V)`` returns :math:`K_{nM}^\top W K_{nM} V` (one pass over the data).
    K_MM : ndarray of shape (M, M)
        Kernel matrix of the centres, float64.
    alpha : float
        The ridge α > 0.
    rhs : ndarray of shape (M, k)
        :math:`K_{nM}^\top W Y`, one column per target.
    total_weight : float
        The number of samples, or the sum of the sample weights.
    max_iter, tol, callback :
        As in :func:`~kernelmaps.models._cg.conjugate_gradient`, on the preconditioned
        residual.
    overwrite : bool, default=False
        Factorise in ``K_MM``'s memory (see
        :class:`~kernelmaps.models._preconditioner.FalkonPreconditioner`).
    attainable_residual : float, default=0.0
        The relative residual ``matvec``'s precision allows (the system's
        ``attainable_residual``); a larger one replaces ``tol``, with a warning.
    widen : callable or None, default=None
        Switch ``matvec`` to float64 products and return the new attainable residual
        (:meth:`~kernelmaps.models._nystrom.NystromSystem.widen`); called before CG when the
        factor T of K_MM is ill-conditioned (:data:`WIDEN_ABOVE_CONDITION`).

    Returns
    -------
    FalkonResult
        ``(coef, iterations, converged, jitter, preconditioner_s)``.
    """
    start = time.perf_counter()
    if is_device_array(K_MM):
        preconditioner: Preconditioner = DeviceFalkonPreconditioner(K_MM, alpha, total_weight)
        return _solve(preconditioner, matvec, alpha, rhs, max_iter, tol, callback, start,
                      attainable_residual, widen)
    if K_MM.shape[0] > SINGLE_THREAD_MAX_CENTRES:
        preconditioner = FalkonPreconditioner(K_MM, alpha, total_weight, overwrite=overwrite)
        return _solve(preconditioner, matvec, alpha, rhs, max_iter, tol, callback, start,
                      attainable_residual, widen)
    with single_threaded_blas():  # the data passes set their own threads
        preconditioner = FalkonPreconditioner(K_MM, alpha, total_weight, overwrite=overwrite)
        return _solve(preconditioner, matvec, alpha, rhs, max_iter, tol, callback, start,
                      attainable_residual, widen)


def _solve(preconditioner: Preconditioner, matvec: Callable, alpha: float, rhs: Any,
           max_iter: int, tol: float, callback: Callback | None, start: float,
           attainable: float, widen: Callable[[], float] | None) -> FalkonResult:
    """CG on the system :func:`falkon_solve` describes, with a built preconditioner."""
    factorised = time.perf_counter() - start
    if (widen is not None and attainable > FLOAT64_FLOOR
            and isinstance(preconditioner, FalkonPreconditioner)):
        diagonal = preconditioner._T_diagonal  # κ(T) ≥ its max/min
        if diagonal.max() > WIDEN_ABOVE_CONDITION * diagonal.min():
            attainable = widen()
    if tol < attainable:
        warnings.warn(f"tol={tol:g} is below the relative residual {attainable:.1g} that "
                      "conjugate gradient can reach with this data's precision (float32 "
                      "products); stopping there instead. Pass float64 data for a lower tol.",
                      ToleranceBelowPrecisionWarning, stacklevel=4)
        tol = attainable
    coef, iterations, converged = preconditioned_conjugate_gradient(
        preconditioner, matvec, alpha, rhs, max_iter=max_iter, tol=tol, callback=callback,
        # The check matters only near the floor: far above it the updated residual's drift
        # (about the floor) is below tol, and each check doubles one pass's columns.
        true_residual_every=TRUE_RESIDUAL_EVERY if tol < STALL_FACTOR * attainable else None,
        attainable=attainable)
    if not converged:
        stalled = ("" if iterations >= max_iter else
                   " (it stopped where the true residual stopped decreasing: the precision "
                   "floor of the kernel blocks' dtype)")
        warnings.warn(f"Conjugate gradient did not converge in {iterations} iterations "
                      f"(max_iter={max_iter}){stalled}; increase max_iter or alpha, or loosen "
                      "tol.",
                      ConvergenceWarning, stacklevel=4)
    return FalkonResult(coef, iterations, converged, preconditioner.jitter, factorised)
