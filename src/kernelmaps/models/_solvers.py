r"""Iterative solvers of the kernel machines: conjugate gradient and the FALKON preconditioner.

:class:`~kernelmaps.models.KernelRidge` with ``solver="nystrom"`` solves the normal equations
of Nyström kernel ridge regression,

.. math::

    H\beta = K_{nM}^\top W y, \qquad H = K_{nM}^\top W K_{nM} + \alpha K_{MM},

(:math:`W` the diagonal of sample weights) without forming :math:`K_{nM}`: the model hands
:func:`falkon_solve` a function computing :math:`K_{nM}^\top W K_{nM} V` in one blocked pass
over the data, and this module does the rest in :math:`O(M^2)` memory.

``conjugate_gradient``
    CG on a symmetric positive-definite operator, for several right-hand sides at once (one
    operator application per iteration for all of them, each with its own step sizes);
``FalkonPreconditioner``
    the preconditioner :math:`B = T^{-1}A^{-1}` of Rudi, Carratino & Rosasco (2017) that makes
    :math:`B^\top H B \approx \tfrac nM I`, both factors in one :math:`M\times M` buffer;
``falkon_solve``
    the two together.

The small systems are solved in float64 whatever the dtype of the kernel blocks; the
factorisations are those of :mod:`kernelmaps._linalg`.

On an array of another library (array API dispatch) the whole solve stays on its device:
:func:`conjugate_gradient` is written in the array API, and
:class:`DeviceFalkonPreconditioner` factors with the namespace's Cholesky and applies the
factors by triangular solves (PyTorch) or by their inverses, computed once (libraries whose
namespace has no triangular solve).

References
----------
A. Rudi, L. Carratino and L. Rosasco, "FALKON: An optimal large scale kernel method",
NeurIPS 2017. M. R. Hestenes and E. Stiefel, "Methods of conjugate gradients for solving
linear systems", J. Res. Nat. Bur. Standards 49(6), 1952.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import array_api_compat
import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning

from kernelmaps._array_api import is_device_array, namespace_and_device, to_numpy
from kernelmaps._engine import single_threaded_blas
from kernelmaps._linalg import (
    cholesky_in_place,
    cholesky_with_jitter,
    cholesky_with_jitter_device,
    lower_times_upper_in_place,
    mirror_lower_to_upper,
    mirror_upper_to_lower,
)

__all__ = [
    "DeviceFalkonPreconditioner",
    "FalkonPreconditioner",
    "FalkonResult",
    "cholesky_in_place",  # the factorisations live in kernelmaps._linalg; re-exported
    "cholesky_with_jitter",
    "conjugate_gradient",
    "falkon_solve",
]

#: Up to this M the factorisations and triangular solves run on one BLAS thread: one core
#: factorises a 4,096² matrix three times (potrf, lauum, potrf: M³ flops) in about 1.5 s,
#: while OpenBLAS threads spin-waiting on busy cores made them 100-1000× slower (17 s at
#: M = 1,000 on 2 loaded cores, against 0.02 s on one thread). Beyond it the M³ work is
#: large enough for the threads to pay off even when cores are shared.
SINGLE_THREAD_MAX_CENTRES = 4096

#: ``callback(iteration, relative_residual)`` after each CG iteration: the largest
#: ``‖r_k‖ / ‖b‖`` over the right-hand sides.
Callback = Callable[[int, float], None]


def conjugate_gradient(operator: Callable[[np.ndarray], np.ndarray], b: np.ndarray, *,
                       max_iter: int, tol: float,
                       callback: Callback | None = None) -> tuple[np.ndarray, int, bool]:
    r"""Solve :math:`Hx = b` for a symmetric positive-definite :math:`H` by conjugate gradient.

    ``b`` has one column per right-hand side; ``operator(V)`` returns :math:`HV` for all
    columns at once, so each iteration costs one application whatever the number of
    columns. Every column has its own step sizes and stops (its steps become 0) once its
    residual norm is below ``tol`` times its initial norm, :math:`\|r_k\| \le
    \text{tol}\,\|b\|`; the iteration ends when every column has.

    Parameters
    ----------
    operator : callable
        ``operator(V) -> H @ V`` for ``V`` of shape ``b.shape``.
    b : ndarray of shape (m, k)
        Right-hand sides.
    max_iter : int
        Maximum number of operator applications.
    tol : float
        Relative residual tolerance.
    callback : callable, default=None
        ``callback(iteration, relative_residual)`` after each iteration, with the largest
        :math:`\|r_k\|/\|b\|` of the columns (progress reports).

    Returns
    -------
    x : ndarray of shape (m, k)
    iterations : int
        Operator applications done.
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
    finished: list[tuple[np.ndarray, Any]] = []
    for iterations in range(max_iter):
        active = np.asarray(to_numpy(rs_old > threshold), dtype=bool)
        if not active.all():
            finished.append((columns[~active], _take_columns(xp, x, ~active)))
            columns = columns[active]
            x, residual, direction, rs_old, initial, threshold = (
                _take_columns(xp, a, active) for a in (x, residual, direction, rs_old,
                                                        initial, threshold))
            if columns.size == 0:
                return _assemble(xp, finished, x, columns), iterations, True
        H_direction = operator(direction)
        curvature = _column_dots(xp, direction, H_direction)
        step = rs_old / xp.where(curvature > 0, curvature, 1.0)
        x += direction * step
        residual -= H_direction * step
        rs_new = _column_dots(xp, residual, residual)
        direction = residual + direction * (rs_new / xp.where(rs_old > 0, rs_old, 1.0))
        rs_old = rs_new
        if callback is not None:
            callback(iterations + 1, float(xp.max(xp.sqrt(rs_new / initial))))
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


class FalkonPreconditioner:
    r"""The FALKON preconditioner of :math:`H = K_{nM}^\top W K_{nM} + \alpha K_{MM}`.

    For centres drawn from the data, :math:`K_{nM}^\top W K_{nM} \approx \tfrac nM K_{MM}^2`
    (:math:`n` the total sample weight), so

    .. math::

        H \approx \tfrac nM K_{MM}^2 + \alpha K_{MM}
          = \tfrac nM T^\top (TT^\top + \tfrac{\alpha M}{n} I)\,T
          = \tfrac nM T^\top A^\top A\,T

    with the Cholesky factors :math:`K_{MM} = T^\top T` and :math:`A^\top A = TT^\top +
    \tfrac{\alpha M}{n} I`. Then :math:`B = T^{-1}A^{-1}` gives :math:`B^\top H B \approx
    \tfrac nM I` (exactly, for the approximate :math:`H`), and CG on the preconditioned
    system converges in a few tens of iterations (Rudi, Carratino & Rosasco, 2017, Alg. 1).
    A small jitter keeps :math:`K_{MM}` positive definite when centres repeat or the kernel
    has low rank. Applying :math:`B` or :math:`B^\top` costs two triangular solves,
    :math:`O(M^2)` per column.

    Memory: one :math:`M\times M` float64 buffer, as in Falkon's implementation — the
    upper triangle holds :math:`A`, the strict lower triangle :math:`T^\top`, and the two
    diagonals are kept aside and put back before each triangular solve. :math:`TT^\top` is
    formed in place by LAPACK ``lauum``, and the regulariser needs no copy of
    :math:`K_{MM}`: :math:`B^\top(\alpha K_{MM})B = \alpha A^{-\top}A^{-1}` (see
    :func:`falkon_solve`). That is :math:`8M^2` bytes (3.2 GB at :math:`M = 20{,}000`)
    against three M × M arrays before.

    Parameters
    ----------
    K_MM : ndarray of shape (M, M)
        Kernel matrix of the centres (float64).
    alpha : float
        The ridge α.
    total_weight : float
        :math:`n`: the number of samples, or the sum of the sample weights.
    overwrite : bool, default=False
        Factorise in ``K_MM``'s memory (a C-contiguous float64 array, which then becomes
        the buffer) instead of a copy.

    Attributes
    ----------
    jitter : float
        What was added to the diagonal of :math:`K_{MM}` to factorise it.
    """

    def __init__(self, K_MM: np.ndarray, alpha: float, total_weight: float, *,
                 overwrite: bool = False) -> None:
        if not (overwrite and isinstance(K_MM, np.ndarray) and K_MM.dtype == np.float64
                and K_MM.flags.c_contiguous):
            K_MM = np.array(K_MM, dtype=np.float64, order="C")
        buffer, M = K_MM, K_MM.shape[0]
        # Jitter against duplicate centres / low-rank kernels (Cholesky needs K_MM ≻ 0).
        jitter = M * np.finfo(np.float64).eps * max(float(np.trace(buffer)) / M, 1e-300)
        _, self.jitter = cholesky_in_place(buffer, jitter, what="centre kernel matrix")
        self._T_diagonal = buffer.diagonal().copy()
        mirror_upper_to_lower(buffer)  # strict lower := Tᵀ: kept while A takes the upper
        shift = alpha * M / total_weight
        for _ in range(12):
            lower_times_upper_in_place(buffer)  # upper := TTᵀ
            buffer.flat[:: M + 1] += shift
            _, info = scipy.linalg.lapack.dpotrf(buffer.T, lower=1, clean=0, overwrite_a=1)
            if info == 0:
                break
            # TTᵀ + shift·I is positive definite; rounding can say otherwise when the shift
            # is tiny next to ‖T‖²: put T back and try a larger one.
            mirror_lower_to_upper(buffer)
            buffer.flat[:: M + 1] = self._T_diagonal
            shift = max(shift * 100, 1e-12)
        else:  # pragma: no cover - TTᵀ + I·1e12 is always positive definite
            raise ValueError("The FALKON preconditioner could not be factorised.")
        self._A_diagonal = buffer.diagonal().copy()
        self.buffer = buffer

    def solve_A(self, V: np.ndarray, *, transpose: bool = False) -> np.ndarray:
        """:math:`A^{-1}V` (or :math:`A^{-\top}V`)."""
        self.buffer.flat[:: self.buffer.shape[0] + 1] = self._A_diagonal
        return scipy.linalg.solve_triangular(self.buffer, V, lower=False, trans=int(transpose),
                                             check_finite=False)

    def solve_T(self, V: np.ndarray, *, transpose: bool = False) -> np.ndarray:
        """:math:`T^{-1}V` (or :math:`T^{-\top}V`), from :math:`T^\top` in the lower triangle."""
        self.buffer.flat[:: self.buffer.shape[0] + 1] = self._T_diagonal
        return scipy.linalg.solve_triangular(self.buffer, V, lower=True,
                                             trans=int(not transpose), check_finite=False)

    def apply(self, V: np.ndarray) -> np.ndarray:
        """:math:`BV = T^{-1}A^{-1}V`."""
        return self.solve_T(self.solve_A(V))

    def apply_transpose(self, V: np.ndarray) -> np.ndarray:
        """:math:`B^\top V = A^{-\top}T^{-\top}V`."""
        return self.solve_A(self.solve_T(V, transpose=True), transpose=True)


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
                 overwrite: bool = False, callback: Callback | None = None) -> FalkonResult:
    r"""Solve :math:`(K_{nM}^\top W K_{nM} + \alpha K_{MM})\beta = K_{nM}^\top W y` (FALKON).

    Conjugate gradient on the preconditioned system :math:`B^\top H B\,\gamma = B^\top r`,
    then :math:`\beta = B\gamma` (see :class:`FalkonPreconditioner`). With
    :math:`W_V = A^{-1}V`, one application is

    .. math::

        B^\top H B\,V = A^{-\top}\bigl(T^{-\top} K_{nM}^\top W K_{nM}\,T^{-1}W_V
                                        + \alpha W_V\bigr),

    four triangular solves and one data pass; :math:`K_{MM}` itself is not needed after the
    factorisation. :math:`H` uses :math:`K_{MM}` plus the jitter its Cholesky factor needed
    (:math:`T^\top T`), so it is positive definite even where :math:`K_{MM}` is only
    numerically PSD (float32 kernel values of a low-rank or nearly constant kernel are
    indefinite at rounding level, and CG on an indefinite system diverges). Warns with a
    :class:`~sklearn.exceptions.ConvergenceWarning` if ``max_iter`` is reached first.

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
        As in :func:`conjugate_gradient`, on the preconditioned residual.
    overwrite : bool, default=False
        Factorise in ``K_MM``'s memory (see :class:`FalkonPreconditioner`).

    Returns
    -------
    FalkonResult
        ``(coef, iterations, converged, jitter, preconditioner_s)``.
    """
    start = time.perf_counter()
    if is_device_array(K_MM):
        preconditioner: Any = DeviceFalkonPreconditioner(K_MM, alpha, total_weight)
        return _cg(preconditioner, matvec, alpha, rhs, max_iter, tol, callback, start)
    if K_MM.shape[0] > SINGLE_THREAD_MAX_CENTRES:
        preconditioner = FalkonPreconditioner(K_MM, alpha, total_weight, overwrite=overwrite)
        return _cg(preconditioner, matvec, alpha, rhs, max_iter, tol, callback, start)
    with single_threaded_blas():  # the data passes set their own threads
        preconditioner = FalkonPreconditioner(K_MM, alpha, total_weight, overwrite=overwrite)
        return _cg(preconditioner, matvec, alpha, rhs, max_iter, tol, callback, start)


def _cg(preconditioner: Any, matvec: Callable, alpha: float, rhs: Any, max_iter: int,
        tol: float, callback: Callback | None, start: float) -> FalkonResult:
    """CG on the system :func:`falkon_solve` describes, with a built preconditioner."""
    factorised = time.perf_counter() - start
    solve_A, solve_T = preconditioner.solve_A, preconditioner.solve_T

    def operator(V: np.ndarray) -> np.ndarray:
        W_V = solve_A(V)
        HBV = solve_T(matvec(solve_T(W_V)), transpose=True)
        HBV += alpha * W_V
        return solve_A(HBV, transpose=True)

    gamma, iterations, converged = conjugate_gradient(
        operator, preconditioner.apply_transpose(rhs), max_iter=max_iter, tol=tol,
        callback=callback)
    if not converged:
        warnings.warn(f"Conjugate gradient did not converge in max_iter={max_iter} "
                      "iterations; increase max_iter or alpha, or loosen tol.",
                      ConvergenceWarning, stacklevel=4)
    return FalkonResult(preconditioner.apply(gamma), iterations, converged,
                        preconditioner.jitter, factorised)


# ----------------------------------------------------------------------------- on a device
class _UpperTriangular:
    """Solves with an upper-triangular factor R on its device: ``R⁻¹V`` and ``R⁻ᵀV``.

    PyTorch has triangular solves; the array API standard does not, so other libraries use
    R⁻¹, computed once (O(M³), like the factorisation) and applied by matrix products.
    """

    def __init__(self, xp, R) -> None:
        self.xp, self.R = xp, R
        self.inverse = None if array_api_compat.is_torch_array(R) else xp.linalg.inv(R)

    def solve(self, V, *, transpose: bool = False):
        if self.inverse is not None:
            return (self.inverse.T if transpose else self.inverse) @ V
        import torch  # only reached with torch tensors

        R = self.R.mT if transpose else self.R
        return torch.linalg.solve_triangular(R, V, upper=not transpose)


class DeviceFalkonPreconditioner:
    """:class:`FalkonPreconditioner` with its factors on ``K_MM``'s device (same algebra;
    the factors in two arrays, as the array API has no in-place factorisation)."""

    def __init__(self, K_MM, alpha: float, total_weight: float) -> None:
        xp, _ = namespace_and_device(K_MM)
        M = K_MM.shape[0]
        trace = float(xp.sum(xp.linalg.diagonal(K_MM)))
        # A Python float: a NumPy scalar would turn a CPU array into a NumPy array.
        self.jitter = float(M * np.finfo(np.float64).eps * max(trace / M, 1e-300))
        T = cholesky_with_jitter_device(xp, K_MM, self.jitter)
        A = cholesky_with_jitter_device(xp, T @ T.T, alpha * M / total_weight)
        self.T, self.A = _UpperTriangular(xp, T), _UpperTriangular(xp, A)

    def solve_A(self, V, *, transpose: bool = False):
        """:math:`A^{-1}V` (or :math:`A^{-\top}V`)."""
        return self.A.solve(V, transpose=transpose)

    def solve_T(self, V, *, transpose: bool = False):
        """:math:`T^{-1}V` (or :math:`T^{-\top}V`)."""
        return self.T.solve(V, transpose=transpose)

    def apply(self, V):
        """:math:`BV = T^{-1}A^{-1}V`."""
        return self.T.solve(self.A.solve(V))

    def apply_transpose(self, V):
        """:math:`B^\top V = A^{-\top}T^{-\top}V`."""
        return self.A.solve(self.T.solve(V, transpose=True), transpose=True)
