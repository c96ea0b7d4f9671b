r"""Conjugate gradient for several right-hand sides, and the interface of its preconditioners.

``conjugate_gradient``
    CG on a symmetric positive-definite operator, for several right-hand sides at once (one
    operator application per iteration for all of them, each with its own step sizes; the
    columns that converge leave the iteration);
``Preconditioner``
    what preconditioned CG needs of a split preconditioner :math:`B` of the kernel machines'
    system :math:`H = K_{nM}^\top W K_{nM} + \alpha K_{MM}`: :math:`BV`, :math:`B^\top V`
    and the operator :math:`V \mapsto B^\top H B V`. The FALKON preconditioners
    (:mod:`kernelmaps.models._preconditioner`, on the host and on a device) implement it;
``preconditioned_conjugate_gradient``
    CG on :math:`B^\top H B\,\gamma = B^\top r`, then :math:`\beta = B\gamma`, for any
    :class:`Preconditioner`.

Written in the array API (NumPy on the host, or the device's namespace under array API
dispatch), so one CG serves both.

References
----------
M. R. Hestenes and E. Stiefel, "Methods of conjugate gradients for solving linear systems",
J. Res. Nat. Bur. Standards 49(6), 1952.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import array_api_compat
import numpy as np

from kernelmaps._array_api import namespace_and_device, to_numpy

__all__ = [
    "STALL_FACTOR",
    "TRUE_RESIDUAL_EVERY",
    "Callback",
    "Preconditioner",
    "conjugate_gradient",
    "preconditioned_conjugate_gradient",
]

#: ``callback(iteration, relative_residual)`` after each CG iteration: the largest
#: ``‖r_k‖ / ‖b‖`` over the right-hand sides.
Callback = Callable[[int, float], None]


class Preconditioner(Protocol):
    r"""A split preconditioner :math:`B` of :math:`H = K_{nM}^\top W K_{nM} + \alpha K_{MM}`.

    CG runs on :math:`B^\top H B`, which is close to a multiple of the identity when
    :math:`B` is good. The operator is the preconditioner's to give, not :math:`B^\top` times
    :math:`H` times :math:`B` composed here, because a preconditioner built from
    :math:`K_{MM}` knows a cheaper form of :math:`B^\top(\alpha K_{MM})B` (FALKON's needs no
    :math:`K_{MM}` at all).

    Attributes
    ----------
    jitter : float
        What was added to the diagonal of :math:`K_{MM}` to factorise it (so part of the
        system solved).
    """

    jitter: float

    def apply(self, V: Any) -> Any:
        """:math:`BV`."""

    def apply_transpose(self, V: Any) -> Any:
        r""":math:`B^\top V`."""

    def operator(self, matvec: Callable[[Any], Any], alpha: float) -> Callable[[Any], Any]:
        r"""``V ↦ BᵀHBV``, given ``matvec(V) = K_nMᵀ W K_nM V`` (one pass over the data)."""


def preconditioned_conjugate_gradient(preconditioner: Preconditioner,
                                      matvec: Callable[[Any], Any], alpha: float, rhs: Any,
                                      *, max_iter: int, tol: float,
                                      callback: Callback | None = None,
                                      true_residual_every: int | None = None,
                                      attainable: float = 0.0,
                                      ) -> tuple[Any, int, bool]:
    r"""Solve :math:`H\beta = r` by CG on :math:`B^\top H B\,\gamma = B^\top r`,
    :math:`\beta = B\gamma`.

    Parameters
    ----------
    preconditioner : Preconditioner
        Any object with ``apply``, ``apply_transpose`` and ``operator``.
    matvec : callable
        ``matvec(V)`` returns :math:`K_{nM}^\top W K_{nM} V`.
    alpha : float
        The ridge α.
    rhs : array of shape (M, k)
        :math:`r`, one column per target.
    max_iter, tol, callback, true_residual_every, attainable :
        As in :func:`conjugate_gradient`, on the preconditioned residual.

    Returns
    -------
    coef : array of shape (M, k)
        :math:`\beta`.
    iterations : int
    converged : bool
    """
    gamma, iterations, converged = conjugate_gradient(
        preconditioner.operator(matvec, alpha), preconditioner.apply_transpose(rhs),
        max_iter=max_iter, tol=tol, callback=callback,
        true_residual_every=true_residual_every, attainable=attainable)
    return preconditioner.apply(gamma), iterations, converged


#: Every this many iterations CG recomputes its residual as b − Hx (as Falkon's
#: ``cg_full_gradient_every``, 10) instead of updating it.
TRUE_RESIDUAL_EVERY = 10
#: CG stops on a stall (no progress over two recomputed residuals) only within this factor
#: of the attainable residual: measured stalls of float32 fits lay at 0.4× (Fashion-MNIST,
#: M = 1,000) to 10× (an ill-conditioned M = 80 system) of it.
STALL_FACTOR = 30.0


def conjugate_gradient(operator: Callable[[np.ndarray], np.ndarray], b: np.ndarray, *,
                       max_iter: int, tol: float,
                       callback: Callback | None = None,
                       true_residual_every: int | None = None,
                       attainable: float = 0.0) -> tuple[np.ndarray, int, bool]:
    r"""Solve :math:`Hx = b` for a symmetric positive-definite :math:`H` by conjugate gradient.

    ``b`` has one column per right-hand side; ``operator(V)`` returns :math:`HV` for all
    columns at once, so each iteration costs one application whatever the number of
    columns. Every column has its own step sizes and stops (its steps become 0) once its
    residual norm is below ``tol`` times its initial norm, :math:`\|r_k\| \le
    \text{tol}\,\|b\|`; the iteration ends when every column has.

    The updated residual :math:`r_{k+1} = r_k - s_k Hp_k` drifts from the true one
    :math:`b - Hx_{k+1}` when the operator is applied with rounding error (float32 products,
    :mod:`kernelmaps.models._nystrom`): it keeps falling while the true residual stalls, so
    CG would report a convergence that did not happen. Every ``true_residual_every``
    iterations (when more follow) the true residual is therefore recomputed, as Falkon does
    (``cg_full_gradient_every``) — but without an extra pass: the operator is applied to
    :math:`[p_k, x_k]` together (one data pass, twice the columns, which a memory-bound
    sweep barely notices). It is a check, not a replacement: replacing the updated residual
    by it (Falkon's way) made CG on a noisy operator diverge (relative residual 7e-4, then
    2.8 after 400 iterations, against 5e-5 for plain CG; ``tests/models/test_solvers.py``).
    When the largest relative true residual, already within :data:`STALL_FACTOR` of
    ``attainable``, has not improved over two checks, the iterates follow the operator's
    rounding rather than the system: CG stops there (not converged) and returns the best
    checked iterate (far above the floor a plateau is CG's own, and it goes on).

    Parameters
    ----------
    operator : callable
        ``operator(V) -> H @ V`` for ``V`` of shape ``(m, j)``, any ``j``.
    b : ndarray of shape (m, k)
        Right-hand sides.
    max_iter : int
        Maximum number of operator applications.
    tol : float
        Relative residual tolerance.
    callback : callable, default=None
        ``callback(iteration, relative_residual)`` after each iteration, with the largest
        :math:`\|r_k\|/\|b\|` of the columns (progress reports).
    true_residual_every : int or None, default=None
        Recompute the residual every this many iterations (``None``: never; the FALKON
        solver passes :data:`TRUE_RESIDUAL_EVERY`).
    attainable : float, default=0.0
        The relative residual the operator's precision allows
        (:func:`kernelmaps.models._kernel_blocks.attainable_residual`); 0 disables the stall
        test.

    Returns
    -------
    x : ndarray of shape (m, k)
    iterations : int
        Iterations done (operator applications).
    converged : bool
        Whether every column reached the tolerance.
    """
    xp = array_api_compat.array_namespace(b)  # NumPy, or the device's namespace
    x = xp.zeros_like(b)
    residual = xp.asarray(b, copy=True)
    direction = xp.asarray(residual, copy=True)
    rs_old = _column_dots(xp, residual, residual)
    initial = xp.clip(rs_old, min=float(xp.finfo(b.dtype).smallest_normal))
    threshold = (tol ** 2) * initial
    # Columns that reach the tolerance leave the iteration: the operator is applied to the
    # others only (with many targets, e.g. one per class, the last ones are few).
    columns = np.arange(b.shape[1])
    b_active = b
    # The smallest largest-relative true residual at a refresh, its iterate (while no column
    # has left), and how many refreshes since have not improved on it.
    best_true, best_x, no_progress = float("inf"), None, 0
    finished: list[tuple[np.ndarray, Any]] = []
    for iterations in range(max_iter):
        active = np.asarray(to_numpy(rs_old > threshold), dtype=bool)
        if not active.all():
            finished.append((columns[~active], _take_columns(xp, x, ~active)))
            columns = columns[active]
            x, residual, direction, rs_old, initial, threshold, b_active = (
                _take_columns(xp, a, active) for a in (x, residual, direction, rs_old,
                                                        initial, threshold, b_active))
            if columns.size == 0:
                return _assemble(xp, finished, x, columns), iterations, True
        refresh = (true_residual_every is not None and iterations + 1 < max_iter
                   and (iterations + 1) % true_residual_every == 0)
        if refresh:  # H p and H x in one application: the true residual of x_k
            k = direction.shape[1]
            both = operator(xp.concat([direction, x], axis=1))
            H_direction, H_x = both[:, :k], both[:, k:]
        else:
            H_direction = operator(direction)
        stalled = False
        if refresh:
            true_residual = b_active - H_x
            true = float(xp.max(xp.sqrt(_column_dots(xp, true_residual, true_residual)
                                        / initial)))
            # Stalled: no progress over two checks (one can be a bump: CG's residuals are
            # not monotone). The best checked iterate is returned.
            no_progress = no_progress + 1 if true >= best_true else 0
            if true < best_true:
                best_true = true
                best_x = xp.asarray(x, copy=True) if columns.size == b.shape[1] else None
            stalled = no_progress >= 2 and best_true <= STALL_FACTOR * attainable
        curvature = _column_dots(xp, direction, H_direction)
        step = rs_old / xp.where(curvature > 0, curvature, 1.0)
        x += direction * step
        residual -= H_direction * step
        rs_new = _column_dots(xp, residual, residual)
        direction = residual + direction * (rs_new / xp.where(rs_old > 0, rs_old, 1.0))
        rs_old = rs_new
        if callback is not None:
            callback(iterations + 1, float(xp.max(xp.sqrt(rs_new / initial))))
        if stalled:  # rounding, not the system, drives the iterates now
            if best_x is not None and columns.size == b.shape[1]:
                x = best_x
            return _assemble(xp, finished, x, columns), iterations + 1, False
    converged = bool(xp.all(rs_old <= threshold))
    return _assemble(xp, finished, x, columns), max_iter, converged


def _take_columns(xp: Any, a: Any, selection: np.ndarray) -> Any:
    """The columns (last axis) of ``a`` a host boolean mask or index array selects."""
    index = np.flatnonzero(selection) if selection.dtype == bool else selection
    if isinstance(a, np.ndarray):
        return a[..., index]
    _, device = namespace_and_device(a)
    return xp.take(a, xp.asarray(index, device=device), axis=a.ndim - 1)


def _assemble(xp: Any, finished: list, x: Any, columns: np.ndarray) -> Any:
    """The solution's columns back in their original order."""
    if not finished:
        return x
    order = np.concatenate([c for c, _ in finished] + [columns])
    parts = [part for _, part in finished] + ([x] if columns.size else [])
    return _take_columns(xp, xp.concat(parts, axis=1), np.argsort(order))


def _column_dots(xp, a, b):
    """Column-wise dot products (one per right-hand side)."""
    if isinstance(a, np.ndarray):
        return np.einsum("ij,ij->j", a, b)
    return xp.sum(a * b, axis=0)
