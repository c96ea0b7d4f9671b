r"""Dense linear algebra of the kernel machines: Cholesky in place, SPD solves, inverse roots.

One home for the factorisations every solver needs, below the models (``models/``) and the
evaluation baseline (``evaluate/_exact.py``), so each is written once:

``cholesky_in_place``
    the upper Cholesky factor :math:`R` (:math:`R^\top R = A + \delta I`) of a symmetric
    matrix, LAPACK ``potrf`` on the matrix's own memory, the jitter :math:`\delta` grown
    ×:data:`JITTER_GROWTH` while the matrix is not numerically positive definite — the one
    jittered Cholesky (the FALKON preconditioner's second factor goes through it too, with
    its own way of writing the shifted matrix);
``solve_psd`` (``psd_factor`` / ``psd_factor_solve`` for a factor kept)
    :math:`A^{-1}B` for a symmetric :math:`A` by Cholesky in place, falling back to least
    squares with one warning (:data:`SINGULAR_WARNING`) when :math:`A` is not positive
    definite (a caller that must refuse such a matrix keeps the factor instead); the matrix
    can then be restored (``restore_symmetric``) and factorised again, so several
    right-hand-side groups with different shifts need no copy of :math:`A`;
``lower_times_upper_in_place``
    :math:`RR^\top` from the upper factor :math:`R`, in place (LAPACK ``lauum``);
``inverse_sqrt_psd``
    :math:`(A + sI)^{-1/2}` of a symmetric PSD matrix by ``eigh``, symmetric or in the
    eigenbasis: regularised (:math:`s > 0`, CCA's whitening) or as a pseudo-inverse root
    (:math:`s = 0`, the Nyström normalisation: numerically zero directions dropped,
    negative ones beyond rounding warned about and dropped);
``psd_spectrum``
    the eigenpairs of a symmetric PSD matrix that are not numerically zero (the closed-form
    ridge paths of :mod:`kernelmaps._ridge.path` and of the exact baseline);
``cholesky_with_jitter_device`` / ``solve_psd_device`` / ``inverse_sqrt_psd`` on a device array
    the same on another array library's device (array API dispatch).

Everything here is float64 on the host: the factors are applied in every iteration of the
solvers, and a float32 triangular solve makes an iterative solver's operator inconsistent at
:math:`\varepsilon_{32}\kappa` — LAPACK has no mixed-precision triangular solve to avoid it.

Why in place: an :math:`M\times M` float64 matrix is 3.2 GB at :math:`M = 20{,}000` and an
:math:`n\times n` kernel matrix 200 MB at :math:`n = 5{,}000`; a copy per factorisation (or
per ``alpha``) doubles the peak memory for nothing. ``potrf`` and ``lauum`` overwrite one
triangle and leave the other as it was, which is what makes restoring (and Falkon's
one-buffer preconditioner, :class:`kernelmaps.models._preconditioner.FalkonPreconditioner`)
possible.
"""

from __future__ import annotations

import ctypes
import warnings
from collections.abc import Callable
from typing import Any

import array_api_compat
import numpy as np
import scipy.linalg
import scipy.linalg.cython_lapack
from scipy.linalg import lapack

from kernelmaps._array_api import (
    float_dtypes,
    is_device_array,
    namespace_and_device,
    on_device,
    to_numpy,
)
from kernelmaps._engine import blas_for_work

__all__ = [
    "DIVIDE_AND_CONQUER_MAX",
    "EIGEN_FLOOR",
    "INVERSE_SQRT_BASES",
    "JITTER_ATTEMPTS",
    "JITTER_FLOOR",
    "JITTER_GROWTH",
    "RELATIVE_RANK_TOL",
    "SINGULAR_WARNING",
    "cholesky_in_place",
    "cholesky_with_jitter_device",
    "inverse_sqrt_psd",
    "lower_times_upper_in_place",
    "mirror_lower_to_upper",
    "mirror_upper_to_lower",
    "potrf_in_place",
    "psd_factor",
    "psd_factor_solve",
    "psd_spectrum",
    "restore_symmetric",
    "solve_psd",
    "solve_psd_device",
]

#: Each failed attempt multiplies the jitter by this: a matrix that is PSD but singular in
#: floating point needs a jitter of the order of its rounding error (ε·‖A‖), whose size is
#: known only within a few orders of magnitude; ×100 reaches it in a few attempts without
#: overshooting it by more than 100×.
JITTER_GROWTH = 100.0
#: The smallest jitter tried after a failure (a zero starting jitter grows to it): about
#: 10⁴ ε for kernel values of order 1, the rounding level of an n ~ 10⁴ Gram matrix.
JITTER_FLOOR = 1e-12
#: Times the jitter may grow before the matrix is declared not PSD: from the floor, 12
#: attempts reach 10¹², beyond any kernel matrix's rounding error (the FALKON factor used
#: the same count as a literal 12).
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


def _gil_free_dpotrf() -> Callable[..., None] | None:
    """LAPACK's ``dpotrf`` as SciPy's Cython LAPACK exports it (the library SciPy's own
    wrappers call), behind a ctypes prototype: a ctypes call releases the GIL for its
    duration, which SciPy's f2py wrapper of ``dpotrf`` does not. ``None`` where the export
    cannot be read (another Python, another SciPy): the f2py wrapper is used then."""
    try:
        capsule = scipy.linalg.cython_lapack.__pyx_capi__["dpotrf"]
        name = ctypes.pythonapi.PyCapsule_GetName
        name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        pointer = ctypes.pythonapi.PyCapsule_GetPointer
        pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                              ctypes.c_char_p]
        address = pointer(capsule, name(capsule))
    except (AttributeError, KeyError, TypeError, ValueError):  # pragma: no cover
        return None
    integer = ctypes.POINTER(ctypes.c_int)
    return ctypes.CFUNCTYPE(None, ctypes.c_char_p, integer, ctypes.c_void_p, integer,
                            integer)(address)


_DPOTRF = _gil_free_dpotrf()


def potrf_in_place(matrix: np.ndarray) -> int:
    """LAPACK ``dpotrf`` on the Fortran-ordered view ``matrix.T`` (its lower triangle: the
    upper one of the C-contiguous float64 ``matrix``), in place; returns LAPACK's ``info``.

    The one call of ``potrf`` on a kernel-sized matrix. It runs without the GIL (see
    :func:`_gil_free_dpotrf`): a 15,000² factorisation takes 10-20 s, during which
    ``compare``'s joblib threads in the same process must keep feeding its worker
    processes — SciPy's wrapper held the GIL and they sat idle. Same routine, same
    library, same numbers as ``lapack.dpotrf(matrix.T, lower=1, clean=0, overwrite_a=1)``.
    """
    n = matrix.shape[0]
    if _DPOTRF is None or not 0 < n < 2**31:
        _, info = lapack.dpotrf(matrix.T, lower=1, clean=0, overwrite_a=1)
        return int(info)
    size, info = ctypes.c_int(n), ctypes.c_int(0)
    _DPOTRF(b"L", ctypes.byref(size), matrix.ctypes.data, ctypes.byref(size),
            ctypes.byref(info))
    return info.value


def cholesky_in_place(matrix: np.ndarray, jitter: float, *, floor: float = JITTER_FLOOR,
                      what: str = "kernel matrix",
                      shifted: Callable[[float], None] | None = None,
                      restore: Callable[[], None] | None = None,
                      ) -> tuple[np.ndarray, float]:
    r"""Upper Cholesky factor of ``matrix + jitter·I`` in ``matrix``'s own memory.

    LAPACK's ``potrf`` runs on the Fortran-ordered view ``matrix.T`` (the same memory;
    ``matrix`` is symmetric), so the returned ``R`` (:math:`R^\top R`) is ``matrix``
    itself: its upper triangle holds the factor and its strict lower triangle still the
    matrix's values (use ``R`` with ``lower=False`` in ``solve_triangular``, which reads one
    triangle only). While the matrix is not numerically positive definite the jitter grows
    ×:data:`JITTER_GROWTH` (at least to ``floor``): a failed attempt touches only the upper
    triangle and the diagonal, which are restored from the lower triangle first.

    This is the one jittered ``potrf`` loop of the package. Its callers differ only in how
    the shifted matrix is written into the upper triangle and how a failed attempt is undone,
    which ``shifted`` and ``restore`` say: by default the matrix is ``matrix`` itself (its
    diagonal saved, :func:`restore_symmetric` after a failure); the FALKON preconditioner
    (:class:`kernelmaps.models._preconditioner.FalkonPreconditioner`) factorises
    :math:`TT^\top + sI`, rebuilt from :math:`T^\top` in the strict lower triangle at each
    attempt.

    Parameters
    ----------
    matrix : ndarray of shape (n, n)
        Square C-contiguous float64, overwritten.
    jitter : float
        The first shift tried.
    floor : float, default=JITTER_FLOOR
        The smallest shift tried after a failure.
    what : str, default="kernel matrix"
        The matrix's name in the error.
    shifted : callable, default=None
        ``shifted(jitter)`` writes the matrix to factorise plus ``jitter·I`` into the upper
        triangle and the diagonal of ``matrix``. Default: the diagonal saved on entry plus
        ``jitter``.
    restore : callable, default=None
        ``restore()`` undoes a failed ``potrf`` (which overwrote the upper triangle and the
        diagonal), so that ``shifted`` can run again. Default: :func:`restore_symmetric`
        with the saved diagonal.

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
    if (shifted is None) != (restore is None):
        raise TypeError("cholesky_in_place takes shifted and restore together.")
    if shifted is None or restore is None:
        n = matrix.shape[0]
        diagonal = matrix.diagonal().copy()

        def shifted(jitter: float) -> None:
            matrix.flat[:: n + 1] = diagonal + jitter

        def restore() -> None:
            restore_symmetric(matrix, diagonal)

    for _ in range(JITTER_ATTEMPTS):
        shifted(jitter)
        # LAPACK directly: scipy.linalg.cholesky overwrites the other triangle too.
        info = potrf_in_place(matrix)
        if info == 0:
            return matrix, jitter
        if info < 0:  # pragma: no cover - an argument error, not a property of the data
            raise ValueError(f"dpotrf: illegal argument {-info}")
        restore()
        jitter = max(jitter * JITTER_GROWTH, floor)
    raise _not_positive_definite(what)


def lower_times_upper_in_place(matrix: np.ndarray) -> None:
    r""":math:`RR^\top` of the upper factor :math:`R` in ``matrix``'s upper triangle, in place.

    LAPACK's ``lauum`` on the Fortran view computes :math:`L^\top L` of its lower triangle
    :math:`L = R^\top`, which is :math:`RR^\top`; the strict lower triangle of ``matrix`` is
    not touched. Half the flops of ``R @ R.T`` and no M × M temporary.
    """
    _, info = lapack.dlauum(matrix.T, lower=1, overwrite_c=1)
    if info != 0:  # pragma: no cover - lauum fails only on bad arguments
        raise ValueError(f"dlauum: illegal argument {-info}")


def psd_factor(system: np.ndarray, *, overwrite: bool = False
               ) -> tuple[np.ndarray, bool] | None:
    """The Cholesky factor of a symmetric ``system``, for :func:`psd_factor_solve`, or
    ``None`` when it is not positive definite (``system`` then as it was).

    LAPACK ``potrf`` reads the upper triangle of ``system``. With ``overwrite=True`` (a
    C-contiguous float64 ``system``) the factorisation happens in ``system``'s memory: its
    strict lower triangle is unchanged and :func:`restore_symmetric` with the saved diagonal
    gives the matrix back. What happens when the system is not positive definite is the
    caller's: :func:`solve_psd` warns and solves by least squares; the ridge leverage scores
    refuse the kernel.
    """
    if not overwrite:
        system = np.array(system, dtype=np.float64, order="C")
    _check_in_place(system, "psd_factor")
    diagonal = system.diagonal().copy()
    info = potrf_in_place(system)
    if info == 0:
        # The Fortran view: its lower triangle is Rᵀ, so LAPACK reads it without a copy.
        return system.T, True
    restore_symmetric(system, diagonal)
    return None


def psd_factor_solve(factor: tuple[np.ndarray, bool], rhs: np.ndarray) -> np.ndarray:
    """:math:`A^{-1}B` from the factor :func:`psd_factor` returned (one factorisation for
    several right-hand sides)."""
    return scipy.linalg.cho_solve(factor, rhs, check_finite=False)


def solve_psd(system: np.ndarray, rhs: np.ndarray, *, overwrite: bool = False,
              stacklevel: int = 2, warn: bool = True) -> np.ndarray:
    """:math:`A^{-1}B` for a symmetric ``system`` :math:`A`: Cholesky, else least squares.

    With ``overwrite=True`` (a C-contiguous float64 ``system``) the factorisation happens in
    ``system``'s memory (:func:`psd_factor`): afterwards its strict lower triangle is
    unchanged and :func:`restore_symmetric` with the saved diagonal gives the matrix back.
    When it is not positive definite, warns with :data:`SINGULAR_WARNING` and returns the
    least-squares solution (as scikit-learn's kernel ridge does); ``warn=False`` for a
    caller whose system is singular by design where it is singular at all (the Nyström
    pre-image's subset of regressors, whose least-squares solution is the answer).
    It runs on the BLAS threads the work pays for (:func:`kernelmaps._engine.blas_for_work`).
    """
    if not overwrite:
        system = np.array(system, dtype=np.float64, order="C")
    m = system.shape[0]
    # m³/3 for the factor, 2m² per right-hand side: small systems run on one BLAS thread
    # (see blas_for_work). Two woken BLAS threads spin on both cores after the call: a
    # 2-thread FeatureRidge fit (D = 1,000, 10,000 rows) run after another took 163-168 ms
    # of wall time with the Cholesky on two threads, 123-127 ms with it on one (load 1.5).
    with blas_for_work(m**3 / 3.0 + 2.0 * m**2 * (rhs.shape[1] if rhs.ndim > 1 else 1)):
        factor = psd_factor(system, overwrite=True)
        if factor is not None:
            return psd_factor_solve(factor, rhs)
        if warn:
            warnings.warn(SINGULAR_WARNING, stacklevel=stacklevel + 1)
        return scipy.linalg.lstsq(system, rhs, check_finite=False)[0]


#: The two bases of :func:`inverse_sqrt_psd`'s result (Nystroem's ``basis``).
INVERSE_SQRT_BASES = ("symmetric", "eigen")
#: Retained eigenvalues are floored here before the inverse square root, as in
#: scikit-learn's Nystroem (so its numbers are scikit-learn's).
EIGEN_FLOOR = 1e-12
#: Up to this size the matrix is decomposed with LAPACK's divide-and-conquer ``syevd``
#: (2.3× faster than SciPy's default ``syevr`` at m = 100, 1.5× at m = 1000, one thread),
#: whose workspace of 2m² values (64 MiB here) ``syevr`` does without.
DIVIDE_AND_CONQUER_MAX = 2048


def inverse_sqrt_psd(matrix: Any, shift: float = 0.0, *, basis: str = "symmetric",
                     eigen_tol: float | None = None, name: str = "Nystroem",
                     what: str = "landmark kernel matrix",
                     warning: type[Warning] = UserWarning) -> Any:
    r"""Inverse square root of a symmetric PSD matrix, symmetric or in its eigenbasis.

    From one eigendecomposition :math:`A = U \Lambda U^\top` of the symmetrised matrix
    (``eigh``, several times faster than the SVD scikit-learn's Nystroem uses, and the same
    matrix for a PSD :math:`A`):

    * ``basis='symmetric'``: :math:`U \Lambda^{-1/2} U^\top`, shape (m, m);
    * ``basis='eigen'``: :math:`\Lambda_r^{-1/2} U_r^\top`, shape (r, m), the rows for the
      r retained eigenvalues in decreasing order, each eigenvector's sign fixed so that its
      largest-magnitude entry is positive (deterministic output).

    The two callers want different things of the small eigenvalues, which ``shift`` says:

    ``shift > 0`` (regularised, CCA's whitening :math:`(\Sigma + rI)^{-1/2}`)
        :math:`\Lambda^{-1/2}` is :math:`(\max(\lambda, 0) + s)^{-1/2}`: every direction is
        kept, since :math:`s` bounds the amplification by :math:`s^{-1/2}`; eigenvalues
        that rounding left slightly negative count as 0, without a warning.
    ``shift = 0`` (a pseudo-inverse root, the Nyström normalisation)
        with :math:`\tau = m\,\epsilon\,\lambda_\max` the rounding level (numpy's
        ``matrix_rank`` tolerance) and the truncation threshold :math:`t = \tau` when
        ``eigen_tol`` is None, else :math:`t = \text{eigen\_tol}\cdot\lambda_\max`
        (:math:`\lambda_\max` the largest :math:`|\lambda|`):

        * :math:`\lambda > t`: inverted as :math:`\max(\lambda, 10^{-12})^{-1/2}`
          (:data:`EIGEN_FLOOR`), like scikit-learn — its numbers to 1e-8 for condition
          numbers below 1e8;
        * :math:`-\tau \le \lambda \le t`: numerically zero (duplicate landmarks, low-rank
          kernels) or truncated — the direction is dropped instead of being amplified;
        * :math:`\lambda < -\tau`: the matrix is indefinite — the direction is dropped
          (projection onto the PSD cone) and a ``warning`` reports the negative eigenvalue
          mass, unless :math:`\lambda` is within the rounding level of the dtype
          ``matrix`` was computed in (float32 kernel values of a PSD kernel have negative
          eigenvalues down to about :math:`-m\,\epsilon_{32}\lambda_\max`).
          scikit-learn silently uses :math:`|\lambda|` instead.

    On the host the decomposition is float64 with LAPACK's ``syevd`` up to
    :data:`DIVIDE_AND_CONQUER_MAX` and ``syevr`` above, on the BLAS threads the work pays
    for (:func:`kernelmaps._engine.blas_for_work`); a device array (array API dispatch) is
    decomposed on its device (in float64 where the device has it), and only the m
    eigenvalues come to the host for the decisions above.

    Parameters
    ----------
    matrix : array of shape (m, m)
        Symmetric (it is symmetrised); float32 or float64, NumPy or a device array.
    shift : float, default=0.0
        :math:`s`; see above.
    basis : {"symmetric", "eigen"}, default="symmetric"
    eigen_tol : float, default=None
        Relative truncation threshold (``shift = 0`` only).
    name, what : str
        Who asks and what the matrix is, in the warning's text.
    warning : type of Warning, default=UserWarning
        The category of the indefiniteness warning (Nystroem:
        :class:`~kernelmaps.kernels.IndefiniteKernelWarning`, which this layer cannot import).
    """
    if basis not in INVERSE_SQRT_BASES:
        raise ValueError(f"basis must be one of {list(INVERSE_SQRT_BASES)}; got {basis!r}.")
    decide = _EigenDecision(shift, eigen_tol, name, what, warning)
    if is_device_array(matrix):
        return _inverse_sqrt_psd_device(matrix, basis, decide)
    matrix = np.asarray(matrix)
    # Below this, a negative eigenvalue is rounding of the matrix's own dtype.
    input_rounding = np.finfo(matrix.dtype if matrix.dtype == np.float32 else np.float64).eps
    A = np.asarray(matrix, dtype=np.float64)
    A = 0.5 * (A + A.T)
    m = A.shape[0]
    driver = "evd" if m <= DIVIDE_AND_CONQUER_MAX else "evr"
    # About 10 m³ operations: small matrices run on one BLAS thread (see blas_for_work).
    with blas_for_work(10.0 * m**3):
        eigenvalues, eigenvectors = scipy.linalg.eigh(A, driver=driver, overwrite_a=True,
                                                      check_finite=False)
    scale, order = decide(eigenvalues, input_rounding=input_rounding, stacklevel=4)
    if basis == "symmetric":
        with blas_for_work(2.0 * m**3):
            return (eigenvectors * scale) @ eigenvectors.T
    vectors = eigenvectors[:, order]
    peaks = np.abs(vectors).argmax(axis=0)
    vectors *= np.sign(vectors[peaks, np.arange(order.size)])
    return (vectors * scale[order]).T


def _inverse_sqrt_psd_device(matrix: Any, basis: str, decide: _EigenDecision) -> Any:
    """:func:`inverse_sqrt_psd` on ``matrix``'s device: the eigendecomposition there (in
    float64 where the device has it), the eigenvalue decisions on the m eigenvalues."""
    xp, device = namespace_and_device(matrix)
    A = xp.astype(matrix, float_dtypes(xp, device)[0])
    eigenvalues, eigenvectors = xp.linalg.eigh(0.5 * (A + A.T))
    input_rounding = np.finfo(np.float32 if matrix.dtype == xp.float32 else np.float64).eps
    scale, order = decide(to_numpy(eigenvalues).astype(np.float64),
                          input_rounding=input_rounding, stacklevel=5)
    scale = on_device(scale, xp, device, eigenvectors.dtype)
    if basis == "symmetric":
        return (eigenvectors * scale) @ eigenvectors.T
    order = on_device(order, xp, device)
    vectors = xp.take(eigenvectors, order, axis=1)
    peaks = xp.argmax(xp.abs(vectors), axis=0)
    vectors *= xp.sign(xp.take_along_axis(vectors, peaks[None, :], axis=0))
    return (vectors * xp.take(scale, order)).T


class _EigenDecision:
    r"""The eigenvalue rule of :func:`inverse_sqrt_psd`, host and device alike: called with
    the ascending eigenvalues, returns ``(scale, order)``, :math:`\lambda^{-1/2}` for the
    retained eigenvalues (0 for the others) and the retained ones' positions, largest
    first; warns about negative mass beyond ``input_rounding`` (the epsilon of the dtype
    the matrix was computed in)."""

    def __init__(self, shift: float, eigen_tol: float | None, name: str, what: str,
                 warning: type[Warning]) -> None:
        self.shift, self.eigen_tol = shift, eigen_tol
        self.name, self.what, self.warning = name, what, warning

    def __call__(self, eigenvalues: np.ndarray, *, input_rounding: float,
                 stacklevel: int) -> tuple[np.ndarray, np.ndarray]:
        if self.shift > 0:  # regularised: every direction kept
            scale = 1.0 / np.sqrt(np.maximum(eigenvalues, 0.0) + self.shift)
            return scale, np.arange(eigenvalues.shape[0])[::-1]
        m = eigenvalues.shape[0]
        largest = max(float(np.abs(eigenvalues).max(initial=0.0)), np.finfo(np.float64).tiny)
        rounding = m * np.finfo(np.float64).eps * largest
        negative = eigenvalues < -m * input_rounding * largest
        if negative.any():
            mass = float(-eigenvalues[negative].sum() / np.abs(eigenvalues).sum())
            warnings.warn(
                f"{self.name}: the {self.what} is not positive semi-definite: "
                f"{int(negative.sum())} negative eigenvalue(s), the smallest "
                f"{eigenvalues.min():.3g}, holding {mass:.2%} of the eigenvalue mass "
                "(sum of |eigenvalues|). Their directions are dropped (projection onto the "
                "PSD cone). The kernel is not a Mercer kernel on this data; prefer a PSD "
                "kernel.",
                self.warning,
                stacklevel=stacklevel,
            )
        threshold = rounding if self.eigen_tol is None else self.eigen_tol * largest
        keep = eigenvalues > threshold
        scale = np.zeros_like(eigenvalues)
        scale[keep] = 1.0 / np.sqrt(np.maximum(eigenvalues[keep], EIGEN_FLOOR))
        order = np.flatnonzero(keep)[::-1]  # eigh sorts ascending; features go largest first
        return scale, order


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
    LAPACK use ``matrix``'s memory (an ``n × n`` kernel matrix need not be copied; a
    C-ordered one is passed as its transpose, the same symmetric matrix in Fortran order).
    """
    if overwrite and matrix.flags.c_contiguous and not matrix.flags.f_contiguous:
        # LAPACK needs Fortran order, and SciPy copies a C-ordered array whatever
        # overwrite_a says (n² doubles more: 2.03 against 1.03 n² at n = 1,500, tracemalloc).
        # A symmetric matrix is its own transpose: its Fortran-ordered view is the same
        # matrix (LAPACK reads its lower triangle, the C array's upper one).
        matrix = matrix.T
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
    """:func:`cholesky_in_place` in ``matrix``'s namespace (upper factor R, RᵀR), the
    jitter grown by the same rule; the array API has no in-place factorisation, so each
    attempt factorises a shifted copy."""
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
        jitter = max(jitter * JITTER_GROWTH, JITTER_FLOOR)
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

