r"""The FALKON preconditioner, on the host (one M × M buffer) and on a device.

Both implement the :class:`~kernelmaps.models._cg.Preconditioner` interface of
:func:`~kernelmaps.models._cg.preconditioned_conjugate_gradient` through one base,
:class:`_FalkonFactors`: a FALKON preconditioner is :math:`B = T^{-1}A^{-1}` with two upper
triangular factors, so everything CG needs (:math:`BV`, :math:`B^\top V`, the operator
:math:`B^\top H B`) is written once from the two solves ``solve_A`` and ``solve_T``; the
host and device classes differ only in how they hold and apply the factors.

On an array of another library (array API dispatch) the factors live on its device:
:class:`DeviceFalkonPreconditioner` factors with the namespace's Cholesky and applies the
factors by triangular solves (PyTorch) or by their inverses, computed once (libraries whose
namespace has no triangular solve).

References
----------
A. Rudi, L. Carratino and L. Rosasco, "FALKON: An optimal large scale kernel method",
NeurIPS 2017.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import array_api_compat
import numpy as np
import scipy.linalg

from kernelmaps._array_api import namespace_and_device
from kernelmaps._linalg import (
    cholesky_in_place,
    cholesky_with_jitter_device,
    lower_times_upper_in_place,
    mirror_lower_to_upper,
    mirror_upper_to_lower,
)

__all__ = ["DeviceFalkonPreconditioner", "FalkonPreconditioner"]


def _initial_jitter(trace: float, size: int) -> float:
    """The first jitter tried on :math:`K_{MM}`: M·ε times its mean diagonal, the rounding
    level of an M × M Gram matrix (the floor keeps it positive for a zero kernel). A Python
    float: a NumPy scalar would turn a device array on the CPU into a NumPy array."""
    return float(size * np.finfo(np.float64).eps * max(trace / size, 1e-300))


class _FalkonFactors(ABC):
    r"""The :class:`~kernelmaps.models._cg.Preconditioner` of FALKON, from its two factors.

    With :math:`B = T^{-1}A^{-1}` and :math:`W_V = A^{-1}V`,

    .. math::

        B^\top H B\,V = A^{-\top}\bigl(T^{-\top} K_{nM}^\top W K_{nM}\,T^{-1}W_V
                                        + \alpha W_V\bigr),

    four triangular solves and one data pass: :math:`B^\top(\alpha K_{MM})B = \alpha
    A^{-\top}A^{-1}` needs no :math:`K_{MM}`. Subclasses give ``solve_A``, ``solve_T`` and
    ``jitter``.
    """

    jitter: float

    @abstractmethod
    def solve_A(self, V: Any, *, transpose: bool = False) -> Any:
        r""":math:`A^{-1}V` (or :math:`A^{-\top}V`)."""

    @abstractmethod
    def solve_T(self, V: Any, *, transpose: bool = False) -> Any:
        r""":math:`T^{-1}V` (or :math:`T^{-\top}V`)."""

    def apply(self, V: Any) -> Any:
        """:math:`BV = T^{-1}A^{-1}V`."""
        return self.solve_T(self.solve_A(V))

    def apply_transpose(self, V: Any) -> Any:
        r""":math:`B^\top V = A^{-\top}T^{-\top}V`."""
        return self.solve_A(self.solve_T(V, transpose=True), transpose=True)

    def operator(self, matvec: Callable[[Any], Any], alpha: float) -> Callable[[Any], Any]:
        r"""``V ↦ BᵀHBV`` (see the class), ``matvec(V)`` being :math:`K_{nM}^\top W K_{nM}V`."""
        solve_A, solve_T = self.solve_A, self.solve_T

        def operator(V: Any) -> Any:
            W_V = solve_A(V)
            HBV = solve_T(matvec(solve_T(W_V)), transpose=True)
            HBV += alpha * W_V
            return solve_A(HBV, transpose=True)

        return operator


class FalkonPreconditioner(_FalkonFactors):
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
        jitter = _initial_jitter(float(np.trace(buffer)), M)
        _, self.jitter = cholesky_in_place(buffer, jitter, what="centre kernel matrix")
        self._T_diagonal = buffer.diagonal().copy()
        mirror_upper_to_lower(buffer)  # strict lower := Tᵀ: kept while A takes the upper

        def shifted(shift: float) -> None:  # upper := TTᵀ + shift·I, from T in the upper
            lower_times_upper_in_place(buffer)
            buffer.flat[:: M + 1] += shift

        def restore() -> None:  # upper := T again, from Tᵀ in the strict lower triangle
            mirror_lower_to_upper(buffer)
            buffer.flat[:: M + 1] = self._T_diagonal

        # TTᵀ + shift·I is positive definite; rounding can say otherwise when the shift is
        # tiny next to ‖T‖²: the one jittered Cholesky then tries a larger shift.
        cholesky_in_place(buffer, alpha * M / total_weight, shifted=shifted, restore=restore,
                          what="FALKON preconditioner's TTᵀ + (αM/n)·I")
        self._A_diagonal = buffer.diagonal().copy()
        self.buffer = buffer

    def solve_A(self, V: np.ndarray, *, transpose: bool = False) -> np.ndarray:
        r""":math:`A^{-1}V` (or :math:`A^{-\top}V`)."""
        self.buffer.flat[:: self.buffer.shape[0] + 1] = self._A_diagonal
        return scipy.linalg.solve_triangular(self.buffer, V, lower=False, trans=int(transpose),
                                             check_finite=False)

    def solve_T(self, V: np.ndarray, *, transpose: bool = False) -> np.ndarray:
        r""":math:`T^{-1}V` (or :math:`T^{-\top}V`), from :math:`T^\top` in the lower triangle."""
        self.buffer.flat[:: self.buffer.shape[0] + 1] = self._T_diagonal
        return scipy.linalg.solve_triangular(self.buffer, V, lower=True,
                                             trans=int(not transpose), check_finite=False)


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


class DeviceFalkonPreconditioner(_FalkonFactors):
    """:class:`FalkonPreconditioner` with its factors on ``K_MM``'s device (same algebra;
    the factors in two arrays, as the array API has no in-place factorisation)."""

    def __init__(self, K_MM, alpha: float, total_weight: float) -> None:
        xp, _ = namespace_and_device(K_MM)
        M = K_MM.shape[0]
        trace = float(xp.sum(xp.linalg.diagonal(K_MM)))
        self.jitter = _initial_jitter(trace, M)
        T = cholesky_with_jitter_device(xp, K_MM, self.jitter)
        A = cholesky_with_jitter_device(xp, T @ T.T, alpha * M / total_weight)
        self.T, self.A = _UpperTriangular(xp, T), _UpperTriangular(xp, A)

    def solve_A(self, V, *, transpose: bool = False):
        r""":math:`A^{-1}V` (or :math:`A^{-\top}V`)."""
        return self.A.solve(V, transpose=transpose)

    def solve_T(self, V, *, transpose: bool = False):
        r""":math:`T^{-1}V` (or :math:`T^{-\top}V`)."""
        return self.T.solve(V, transpose=transpose)
