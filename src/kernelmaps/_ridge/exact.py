r"""Exact kernel ridge solves, written once: one Cholesky factorisation per distinct α, in
the kernel matrix's own memory.

* :func:`solve_shifted_in_place`: :math:`(K + \alpha_j I)\,c_j = y_j` for every target
  column :math:`j`, one factorisation per distinct :math:`\alpha` (the matrix is restored
  from its untouched triangle between them, no copy) — ``KernelRidge(solver="exact")`` and
  ``KernelRidgeClassifier``;
* :func:`centred_dual_in_place`: :math:`\beta = (HKH + \alpha I)^{-1}(Y - \bar Y)` on an
  already centred :math:`K` (:func:`~kernelmaps._ridge.kernel_path.centre_kernel_in_place`),
  growing a jitter only when rounding makes the matrix singular — the exact baseline of
  ``compare``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.linalg

from kernelmaps._linalg import cholesky_in_place, restore_symmetric, solve_psd

__all__ = ["alpha_groups", "centred_dual_in_place", "lower_factor_in_place",
           "solve_shifted_in_place"]


def alpha_groups(alpha: np.ndarray, n_targets: int) -> Iterator[tuple[slice | np.ndarray,
                                                                      float]]:
    """Yield (target columns, alpha) pairs: one system per distinct alpha."""
    if alpha.size == 1:
        yield slice(None), float(alpha[0])
        return
    for value in np.unique(alpha):
        yield np.flatnonzero(alpha == value), float(value)


def solve_shifted_in_place(K: np.ndarray, Y: np.ndarray, alpha: np.ndarray, *,
                           stacklevel: int = 2) -> np.ndarray:
    """``(K + alpha_j I)⁻¹ Y[:, j]`` for every column, one Cholesky per distinct α in
    ``K``'s memory (``K`` is overwritten); ``alpha`` holds 1 or ``Y.shape[1]`` values.
    A matrix that is not positive definite falls back to least squares with one warning
    (:func:`kernelmaps._linalg.solve_psd`), ``stacklevel`` counted as if the caller had
    called ``solve_psd`` itself."""
    n = K.shape[0]
    diagonal = K.diagonal().copy()
    coefficients = np.empty_like(Y)
    for group, (column, a) in enumerate(alpha_groups(alpha, Y.shape[1])):
        if group:  # undo the previous factorisation: no copy of K per alpha
            restore_symmetric(K, diagonal)
        K.flat[:: n + 1] = diagonal + a
        coefficients[:, column] = solve_psd(K, Y[:, column], overwrite=True,
                                            stacklevel=stacklevel + 1)
    return coefficients


def centred_dual_in_place(K_centred: np.ndarray, Y_centred: np.ndarray, alpha: float,
                          notes: list[str]) -> np.ndarray:
    r""":math:`\beta = (K_c + \alpha I)^{-1} Y_c` by one Cholesky factorisation in
    ``K_centred``'s memory (overwritten). If rounding makes :math:`K_c + \alpha I`
    numerically singular, a jitter grown from :math:`n\,\epsilon\,\overline{\mathrm{diag}}`
    is added and said in ``notes``."""
    # The lower factor is a Fortran-ordered view of K_centred's memory, which LAPACK's potrs
    # reads without a copy of n² doubles.
    L = lower_factor_in_place(K_centred, alpha, notes)
    return scipy.linalg.cho_solve((L, True), Y_centred, check_finite=False)


def lower_factor_in_place(K: np.ndarray, shift: float, notes: list[str]) -> np.ndarray:
    r"""The lower Cholesky factor of :math:`K + \text{shift}\cdot I`, in ``K``'s memory.

    If rounding makes the matrix numerically singular, a jitter grown from
    :math:`n\,\epsilon\,\overline{\mathrm{diag}\,K}` (:func:`kernelmaps._linalg.cholesky_in_place`)
    is added and said in ``notes``. Returns a Fortran-ordered view of ``K`` (its upper
    triangle holds the factor's transpose; the strict upper part of the view is not zeroed).
    """
    n = K.shape[0]
    floor = n * np.finfo(np.float64).eps * max(float(np.mean(K.diagonal())), 1e-300)
    R, used = cholesky_in_place(K, shift, floor=floor)
    if used > shift:
        notes.append(f"exact baseline: the kernel matrix is numerically singular; a jitter "
                     f"{used - shift:.3g}·I was added to factorise it")
    return R.T
