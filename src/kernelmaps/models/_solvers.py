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
    :math:`B^\top H B \approx \tfrac nM I`;
``falkon_solve``
    the two together.

The small systems are solved in float64 whatever the dtype of the kernel blocks.

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

import warnings
from collections.abc import Callable

import array_api_compat
import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning

from kernelmaps._array_api import is_device_array, namespace_and_device

__all__ = [
    "DeviceFalkonPreconditioner",
    "FalkonPreconditioner",
    "cholesky_in_place",
    "cholesky_with_jitter",
    "conjugate_gradient",
    "falkon_solve",
]

#: Times the jitter of :func:`cholesky_with_jitter` may grow (×100 each) before giving up.
_JITTER_ATTEMPTS = 12


def cholesky_with_jitter(matrix: np.ndarray, jitter: float, *, overwrite: bool = False,
                         floor: float = 1e-12) -> np.ndarray:
    """Upper Cholesky factor :math:`R` of ``matrix + jitter·I`` (:math:`R^\\top R`), growing
    the jitter ×100 (at least to ``floor``) while the matrix is not numerically positive
    definite.

    ``overwrite=True`` (a C-contiguous float64 ``matrix``) factorises in place, with no
    n × n copy: the jitter is added to the diagonal, LAPACK's ``potrf`` runs on the
    Fortran-ordered view ``matrix.T`` (the same memory; ``matrix`` is symmetric), and the
    returned ``R`` is ``matrix`` itself, whose strict lower triangle still holds the
    matrix's values (use ``R.T`` with ``lower=True`` in ``solve_triangular``/``cho_solve``,
    which read one triangle only). A failed attempt only touches the upper triangle and
    the diagonal, which are restored from the lower triangle before the next one.
    :func:`cholesky_in_place` returns the jitter used as well.

    Raises
    ------
    ValueError
        If no jitter makes it positive definite (the kernel is probably not PSD).
    """
    if overwrite:
        return cholesky_in_place(matrix, jitter, floor=floor)[0]
    identity = np.eye(matrix.shape[0])
    for _ in range(_JITTER_ATTEMPTS):
        try:
            return scipy.linalg.cholesky(matrix + jitter * identity, lower=False,
                                         check_finite=False)
        except np.linalg.LinAlgError:
            jitter = max(jitter * 100, floor)
    raise _not_positive_definite("centre kernel matrix")


def _not_positive_definite(what: str) -> ValueError:
    return ValueError(f"The {what} is not positive definite even with jitter: the "
                      "kernel is probably not PSD (see kernelmaps.check_mercer).")


#: Rows per block when cholesky_in_place restores a matrix after a failed attempt.
_RESTORE_ROWS = 1024


def cholesky_in_place(matrix: np.ndarray, jitter: float, *,
                      floor: float = 1e-12) -> tuple[np.ndarray, float]:
    """:func:`cholesky_with_jitter` with ``overwrite=True``; returns ``(R, jitter used)``."""
    if matrix.dtype != np.float64 or not matrix.flags.c_contiguous:
        raise ValueError("cholesky_in_place needs a C-contiguous float64 matrix.")
    n = matrix.shape[0]
    diagonal = matrix.diagonal().copy()
    for _ in range(_JITTER_ATTEMPTS):
        matrix.flat[::n + 1] = diagonal + jitter
        # LAPACK directly: scipy.linalg.cholesky overwrites the other triangle too.
        _, info = scipy.linalg.lapack.dpotrf(matrix.T, lower=1, clean=0, overwrite_a=1)
        if info == 0:
            return matrix, jitter
        if info < 0:  # pragma: no cover - an argument error, not a property of the data
            raise ValueError(f"dpotrf: illegal argument {-info}")
        # potrf wrote into matrix.T's lower triangle = matrix's upper one: restore it from
        # the untouched strict lower triangle, in blocks of rows.
        for start in range(0, n, _RESTORE_ROWS):
            stop = min(start + _RESTORE_ROWS, n)
            matrix[start:stop, stop:] = matrix[stop:, start:stop].T
            block = matrix[start:stop, start:stop]
            upper = np.triu_indices(stop - start, 1)
            block[upper] = block.T[upper]
            jitter = max(jitter * 100, floor)
    matrix.flat[::n + 1] = diagonal
    raise _not_positive_definite("kernel matrix")


def conjugate_gradient(operator: Callable[[np.ndarray], np.ndarray], b: np.ndarray, *,
                       max_iter: int, tol: float) -> tuple[np.ndarray, int, bool]:
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
    threshold = (tol ** 2) * xp.clip(rs_old, min=float(xp.finfo(b.dtype).smallest_normal))
    for iterations in range(max_iter):
        active = rs_old > threshold
        if not bool(xp.any(active)):
            return x, iterations, True
        H_direction = operator(direction)
        curvature = _column_dots(xp, direction, H_direction)
        step = xp.where(active, rs_old / xp.where(curvature > 0, curvature, 1.0), 0.0)
        x += direction * step
        residual -= H_direction * step
        rs_new = _column_dots(xp, residual, residual)
        direction = residual + direction * xp.where(active, rs_new / xp.where(rs_old > 0,
                                                                              rs_old, 1.0), 0.0)
        rs_old = rs_new
    return x, max_iter, bool(xp.all(rs_old <= threshold))


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

    Parameters
    ----------
    K_MM : ndarray of shape (M, M)
        Kernel matrix of the centres (float64).
    alpha : float
        The ridge α.
    total_weight : float
        :math:`n`: the number of samples, or the sum of the sample weights.
    """

    def __init__(self, K_MM: np.ndarray, alpha: float, total_weight: float) -> None:
        M = K_MM.shape[0]
        # Jitter against duplicate centres / low-rank kernels (Cholesky needs K_MM ≻ 0).
        jitter = M * np.finfo(np.float64).eps * max(float(np.trace(K_MM)) / M, 1e-300)
        self.T = cholesky_with_jitter(K_MM, jitter)
        #: K_MM plus the jitter that made it positive definite (what T factorises).
        self.K_MM = self.T.T @ self.T
        self.A = cholesky_with_jitter(self.T @ self.T.T, alpha * M / total_weight)

    def apply(self, V: np.ndarray) -> np.ndarray:
        """:math:`BV = T^{-1}A^{-1}V`."""
        solve = scipy.linalg.solve_triangular
        return solve(self.T, solve(self.A, V, check_finite=False), check_finite=False)

    def apply_transpose(self, V: np.ndarray) -> np.ndarray:
        """:math:`B^\\top V = A^{-\\top}T^{-\\top}V`."""
        solve = scipy.linalg.solve_triangular
        return solve(self.A, solve(self.T, V, trans="T", check_finite=False), trans="T",
                     check_finite=False)


def falkon_solve(matvec: Callable[[np.ndarray], np.ndarray], K_MM: np.ndarray, alpha: float,
                 *, rhs: np.ndarray, total_weight: float, max_iter: int,
                 tol: float) -> tuple[np.ndarray, int]:
    r"""Solve :math:`(K_{nM}^\top W K_{nM} + \alpha K_{MM})\beta = K_{nM}^\top W y` (FALKON).

    Conjugate gradient on the preconditioned system :math:`B^\top H B\,\gamma = B^\top r`,
    then :math:`\beta = B\gamma` (see :class:`FalkonPreconditioner`). :math:`H` uses
    :math:`K_{MM}` plus the jitter its Cholesky factor needed, so it is positive definite
    even where :math:`K_{MM}` is only numerically PSD (float32 kernel values of a low-rank
    or nearly constant kernel are indefinite at rounding level, and CG on an indefinite
    system diverges). Warns with a
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
    max_iter, tol :
        As in :func:`conjugate_gradient`, on the preconditioned residual.

    Returns
    -------
    beta : ndarray of shape (M, k)
    iterations : int
        CG iterations (data passes) run.
    """
    kind = DeviceFalkonPreconditioner if is_device_array(K_MM) else FalkonPreconditioner
    preconditioner = kind(K_MM, alpha, total_weight)
    B, Bt = preconditioner.apply, preconditioner.apply_transpose

    K_MM = preconditioner.K_MM

    def operator(V: np.ndarray) -> np.ndarray:
        BV = B(V)
        return Bt(matvec(BV) + alpha * (K_MM @ BV))

    gamma, iterations, converged = conjugate_gradient(operator, Bt(rhs), max_iter=max_iter,
                                                      tol=tol)
    if not converged:
        warnings.warn(f"Conjugate gradient did not converge in max_iter={max_iter} "
                      "iterations; increase max_iter or alpha, or loosen tol.",
                      ConvergenceWarning, stacklevel=3)
    return B(gamma), iterations


# ----------------------------------------------------------------------------- on a device
def _cholesky_with_jitter_device(xp, matrix, jitter: float):
    """:func:`cholesky_with_jitter` in ``matrix``'s namespace (upper factor R, RᵀR)."""
    _, device = namespace_and_device(matrix)
    identity = xp.eye(matrix.shape[0], dtype=matrix.dtype, device=device)
    for _ in range(_JITTER_ATTEMPTS):
        try:
            factor = xp.linalg.cholesky(matrix + jitter * identity, upper=True)
        except (RuntimeError, ValueError, np.linalg.LinAlgError):  # not positive definite
            factor = None
        # Some libraries (CuPy) return NaNs instead of raising: check the diagonal.
        if factor is not None and bool(xp.all(xp.isfinite(xp.linalg.diagonal(factor)))):
            return factor
        jitter = max(jitter * 100, 1e-12)
    raise ValueError("The centre kernel matrix is not positive definite even with jitter: the "
                     "kernel is probably not PSD (see kernelmaps.check_mercer).")


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
    """:class:`FalkonPreconditioner` with its factors on ``K_MM``'s device (same algebra)."""

    def __init__(self, K_MM, alpha: float, total_weight: float) -> None:
        xp, _ = namespace_and_device(K_MM)
        M = K_MM.shape[0]
        trace = float(xp.sum(xp.linalg.diagonal(K_MM)))
        # A Python float: a NumPy scalar would turn a CPU array into a NumPy array.
        jitter = float(M * np.finfo(np.float64).eps * max(trace / M, 1e-300))
        T = _cholesky_with_jitter_device(xp, K_MM, jitter)
        A = _cholesky_with_jitter_device(xp, T @ T.T, alpha * M / total_weight)
        #: K_MM plus the jitter that made it positive definite (what T factorises).
        self.K_MM = T.T @ T
        self.T, self.A = _UpperTriangular(xp, T), _UpperTriangular(xp, A)

    def apply(self, V):
        """:math:`BV = T^{-1}A^{-1}V`."""
        return self.T.solve(self.A.solve(V))

    def apply_transpose(self, V):
        """:math:`B^\\top V = A^{-\\top}T^{-\\top}V`."""
        return self.A.solve(self.T.solve(V, transpose=True), transpose=True)
