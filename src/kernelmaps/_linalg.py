r"""Dense linear algebra of the kernel machines: Cholesky in place, SPD solves, inverse roots.

One home for the factorisations every solver needs, below the models (``models/``) and the
evaluation baseline (``evaluate/_exact.py``), so each is written once:

``cholesky_in_place`` / ``cholesky_with_jitter``
    the upper Cholesky factor :math:`R` (:math:`R^\top R = A + \delta I`) of a symmetric
    matrix, LAPACK ``potrf`` on the matrix's own memory, the jitter :math:`\delta` grown ×100
    while the matrix is not numerically positive definite;
``solve_psd``
    :math:`A^{-1}B` for a symmetric :math:`A` by Cholesky in place, falling back to least
    squares with one warning (:data:`SINGULAR_WARNING`) when :math:`A` is not positive
    definite; the matrix can then be restored (``restore_symmetric``) and factorised again,
    so several right-hand-side groups with different shifts need no copy of :math:`A`;
``lower_times_upper_in_place``
    :math:`RR^\top` from the upper factor :math:`R`, in place (LAPACK ``lauum``);
``inverse_sqrt_psd``
    :math:`(A + sI)^{-1/2}` of a symmetric PSD matrix by ``eigh`` (rounding-negative
    eigenvalues floored at 0);
``psd_spectrum``
    the eigenpairs of a symmetric PSD matrix that are not numerically zero (the closed-form
    ridge paths of :mod:`kernelmaps.tuning.ridge_path` and of the exact baseline);
``cholesky_with_jitter_device`` / ``solve_psd_device``
    the same on another array library's device (array API dispatch).

Everything here is float64 on the host: the factors are applied in every iteration of the
solvers, and a float32 triangular solve makes an iterative solver's operator inconsistent at
:math:`\varepsilon_{32}\kappa` — LAPACK has no mixed-precision triangular solve to avoid it.

Why in place: an :math:`M\times M` float64 matrix is 3.2 GB at :math:`M = 20{,}000` and an
:math:`n\times n` kernel matrix 200 MB at :math:`n = 5{,}000`; a copy per factorisation (or
per ``alpha``) doubles the peak memory for nothing. ``potrf`` and ``lauum`` overwrite one
triangle and leave the other as it was, which is what makes restoring (and Falkon's
one-buffer preconditioner, :class:`kernelmaps.models._solvers.FalkonPreconditioner`)
possible.
"""

from __future__ import annotations

import warnings
from typing import Any

import array_api_compat
import numpy as np
import scipy.linalg
from scipy.linalg import lapack

from kernelmaps._array_api import namespace_and_device

__all__ = [
    "JITTER_ATTEMPTS",
    "RELATIVE_RANK_TOL",
    "SINGULAR_WARNING",
    "cholesky_in_place",
    "cholesky_with_jitter",
    "cholesky_with_jitter_device",
    "inverse_sqrt_psd",
    "lower_times_upper_in_place",
    "mirror_lower_to_upper",
    "mirror_upper_to_lower",
    "psd_spectrum",
    "restore_symmetric",
    "solve_psd",
    "solve_psd_device",
]

#: Times the jitter may grow (×100 each) before the matrix is declared not PSD.
JITTER_ATTEMPTS = 12

#: The one warning of every solve that falls back to least squares (scikit-learn's words,
#: with the likely causes).
SINGULAR_WARNING = ("Singular matrix in solving dual problem (is the kernel PSD? is alpha "
                    "large enough?). Using least-squares solution instead.")

#: Rows per block when a triangle is copied to the other (bounds the temporaries).
_MIRROR_ROWS = 1024


def _not_positive_definite(what: str) -> ValueError:
    return ValueError(f"The {what} is not positive definite even with jitter: the "
                      "kernel is probably not PSD (see kernelmaps.check_mercer).")


def _check_in_place(matrix: np.ndarray, name: str) -> None:
    if (not isinstance(matrix, np.ndarray) or matrix.dtype != np.float64
            or not matrix.flags.c_contiguous or matrix.ndim != 2
            or matrix.shape[0] != matrix.shape[1]):
        raise ValueError(f"{name} needs a square C-contiguous float64 matrix.")


def mirror_lower_to_upper(matrix: np.ndarray) -> None:
    """Copy the strict lower triangle of ``matrix`` onto its strict upper triangle, in blocks
    of rows (temporaries of one block at most: index arrays of a whole triangle would be 8n²
    bytes)."""
    n = matrix.shape[0]
    for start in range(0, n, _MIRROR_ROWS):
        stop = min(start + _MIRROR_ROWS, n)
        matrix[start:stop, stop:] = matrix[stop:, start:stop].T
        for row in range(start, stop - 1):  # the diagonal block, row by row (no index arrays)
            matrix[row, row + 1:stop] = matrix[row + 1:stop, row]


def mirror_upper_to_lower(matrix: np.ndarray) -> None:
    """Copy the strict upper triangle onto the strict lower one (see
    :func:`mirror_lower_to_upper`)."""
    n = matrix.shape[0]
    for start in range(0, n, _MIRROR_ROWS):
        stop = min(start + _MIRROR_ROWS, n)
        matrix[stop:, start:stop] = matrix[start:stop, stop:].T
        for row in range(start, stop - 1):
            matrix[row + 1:stop, row] = matrix[row, row + 1:stop]


def restore_symmetric(matrix: np.ndarray, diagonal: np.ndarray) -> None:
    """Undo a factorisation in place: the upper triangle from the untouched strict lower
    one, and the diagonal from ``diagonal`` (saved before)."""
    mirror_lower_to_upper(matrix)
    matrix.flat[:: matrix.shape[0] + 1] = diagonal


def cholesky_in_place(matrix: np.ndarray, jitter: float, *, floor: float = 1e-12,
                      what: str = "kernel matrix") -> tuple[np.ndarray, float]:
    r"""Upper Cholesky factor of ``matrix + jitter·I`` in ``matrix``'s own memory.

    LAPACK's ``potrf`` runs on the Fortran-ordered view ``matrix.T`` (the same memory;
    ``matrix`` is symmetric), so the returned ``R`` (:math:`R^\top R`) is ``matrix``
    itself: its upper triangle holds the factor and its strict lower triangle still the
    matrix's values (use ``R`` with ``lower=False`` in ``solve_triangular``, which reads one
    triangle only). While the matrix is not numerically positive definite the jitter grows
    ×100 (at least to ``floor``): a failed attempt touches only the upper triangle and the
    diagonal, which are restored from the lower triangle first.

    Returns
    -------
    R : ndarray
        ``matrix``.
    jitter : float
        The jitter that was used.

    Raises
    ------
    ValueError
        If no jitter makes it positive definite (the kernel is probably not PSD), or
        ``matrix`` is not a square C-contiguous float64 array.
    """
    _check_in_place(matrix, "cholesky_in_place")
    n = matrix.shape[0]
    diagonal = matrix.diagonal().copy()
    for _ in range(JITTER_ATTEMPTS):
        matrix.flat[:: n + 1] = diagonal + jitter
        # LAPACK directly: scipy.linalg.cholesky overwrites the other triangle too.
        _, info = lapack.dpotrf(matrix.T, lower=1, clean=0, overwrite_a=1)
        if info == 0:
            return matrix, jitter
        if info < 0:  # pragma: no cover - an argument error, not a property of the data
            raise ValueError(f"dpotrf: illegal argument {-info}")
        restore_symmetric(matrix, diagonal)
        jitter = max(jitter * 100, floor)
    raise _not_positive_definite(what)


def cholesky_with_jitter(matrix: np.ndarray, jitter: float, *, overwrite: bool = False,
                         floor: float = 1e-12, what: str = "centre kernel matrix",
                         ) -> np.ndarray:
    """Upper Cholesky factor :math:`R` of ``matrix + jitter·I`` (:math:`R^\\top R`), the
    jitter grown as in :func:`cholesky_in_place`.

    ``overwrite=True`` is :func:`cholesky_in_place` (returns ``matrix``, whose strict lower
    triangle keeps the matrix's values); otherwise a new array holding only the factor (its
    strict lower triangle zero).
    """
    if not overwrite:
        matrix = np.array(matrix, dtype=np.float64, order="C")
    R, _ = cholesky_in_place(matrix, jitter, floor=floor, what=what)
    if not overwrite:
        R[np.tril_indices(R.shape[0], -1)] = 0.0
    return R


def lower_times_upper_in_place(matrix: np.ndarray) -> None:
    r""":math:`RR^\top` of the upper factor :math:`R` in ``matrix``'s upper triangle, in place.

    LAPACK's ``lauum`` on the Fortran view computes :math:`L^\top L` of its lower triangle
    :math:`L = R^\top`, which is :math:`RR^\top`; the strict lower triangle of ``matrix`` is
    not touched. Half the flops of ``R @ R.T`` and no M × M temporary.
    """
    _, info = lapack.dlauum(matrix.T, lower=1, overwrite_c=1)
    if info != 0:  # pragma: no cover - lauum fails only on bad arguments
        raise ValueError(f"dlauum: illegal argument {-info}")


def solve_psd(system: np.ndarray, rhs: np.ndarray, *, overwrite: bool = False,
              stacklevel: int = 2) -> np.ndarray:
    """:math:`A^{-1}B` for a symmetric ``system`` :math:`A`: Cholesky, else least squares.

    With ``overwrite=True`` (a C-contiguous float64 ``system``) the factorisation happens in
    ``system``'s memory: afterwards its strict lower triangle is unchanged and
    :func:`restore_symmetric` with the saved diagonal gives the matrix back. When it is not
    positive definite, warns with :data:`SINGULAR_WARNING` and returns the least-squares
    solution (as scikit-learn's kernel ridge does).
    """
    if not overwrite:
        system = np.array(system, dtype=np.float64, order="C")
    _check_in_place(system, "solve_psd")
    diagonal = system.diagonal().copy()
    _, info = lapack.dpotrf(system.T, lower=1, clean=0, overwrite_a=1)
    if info == 0:
        # The Fortran view: its lower triangle is Rᵀ, so LAPACK reads it without a copy.
        return scipy.linalg.cho_solve((system.T, True), rhs, check_finite=False)
    restore_symmetric(system, diagonal)
    warnings.warn(SINGULAR_WARNING, stacklevel=stacklevel + 1)
    return scipy.linalg.lstsq(system, rhs, check_finite=False)[0]


def inverse_sqrt_psd(matrix: np.ndarray, shift: float = 0.0) -> np.ndarray:
    r""":math:`(A + sI)^{-1/2}` of a symmetric PSD :math:`A` (symmetric square root), by
    ``eigh``; eigenvalues that rounding left slightly negative count as 0, so ``shift`` > 0
    keeps the result finite."""
    eigenvalues, eigenvectors = scipy.linalg.eigh(matrix, check_finite=False)
    scale = 1.0 / np.sqrt(np.maximum(eigenvalues, 0.0) + shift)
    return (eigenvectors * scale) @ eigenvectors.T


#: :func:`psd_spectrum` drops eigenvalues below this fraction of the largest: they carry
#: no signal, only rounding error.
RELATIVE_RANK_TOL = 1e-12


def psd_spectrum(matrix: np.ndarray, *, overwrite: bool = False, driver: str = "evd",
                 ) -> tuple[np.ndarray, np.ndarray]:
    r"""Eigenvalues :math:`\lambda` (ascending, shape ``(r,)``) and orthonormal eigenvectors
    (``n × r``) of a symmetric PSD matrix, the numerically zero ones dropped (below
    :data:`RELATIVE_RANK_TOL` times the largest, rounding-negative ones included).

    ``driver="evd"`` (LAPACK's divide and conquer, ``syevd``) is 1.2-1.5× faster than
    scipy's default ``"evr"`` for the whole spectrum (measured on one thread: 0.135 s
    against 0.199 s at n = 800, 0.70 s against 0.86 s at n = 1,347), but its workspace is
    :math:`2n^2` doubles more: ``"evr"`` for a large kernel matrix. ``overwrite=True`` lets
    LAPACK use ``matrix``'s memory (an ``n × n`` kernel matrix need not be copied).
    """
    lam, vectors = scipy.linalg.eigh(matrix, overwrite_a=overwrite, check_finite=False,
                                     driver=driver)
    # Ascending: the significant ones are a suffix, so a view of the columns, not a copy.
    first = int(np.searchsorted(lam, RELATIVE_RANK_TOL * max(float(lam[-1]),
                                                             np.finfo(float).tiny),
                                side="right"))
    return lam[first:], vectors[:, first:]


# ----------------------------------------------------------------------------- on a device
def cholesky_with_jitter_device(xp: Any, matrix: Any, jitter: float, *,
                                what: str = "centre kernel matrix") -> Any:
    """:func:`cholesky_with_jitter` in ``matrix``'s namespace (upper factor R, RᵀR)."""
    _, device = namespace_and_device(matrix)
    identity = xp.eye(matrix.shape[0], dtype=matrix.dtype, device=device)
    for _ in range(JITTER_ATTEMPTS):
        try:
            factor = xp.linalg.cholesky(matrix + jitter * identity, upper=True)
        except (RuntimeError, ValueError, np.linalg.LinAlgError):  # not positive definite
            factor = None
        # Some libraries (CuPy) return NaNs instead of raising: check the diagonal.
        if factor is not None and bool(xp.all(xp.isfinite(xp.linalg.diagonal(factor)))):
            return factor
        jitter = max(jitter * 100, 1e-12)
    raise _not_positive_definite(what)


def solve_psd_device(xp: Any, system: Any, rhs: Any, *, stacklevel: int = 2) -> Any:
    """:func:`solve_psd` on the device: Cholesky where the system is positive definite,
    else the least-squares (pseudo-inverse) solution with :data:`SINGULAR_WARNING`."""
    try:
        factor = xp.linalg.cholesky(system)
        positive_definite = bool(xp.all(xp.isfinite(xp.linalg.diagonal(factor))))
    except (RuntimeError, ValueError, np.linalg.LinAlgError):
        positive_definite = False
    if positive_definite:
        if array_api_compat.is_torch_array(factor):
            import torch  # only reached with torch tensors

            return torch.cholesky_solve(rhs, factor)
        return xp.linalg.solve(system, rhs)
    warnings.warn(SINGULAR_WARNING, stacklevel=stacklevel + 1)
    return xp.linalg.pinv(system) @ rhs

