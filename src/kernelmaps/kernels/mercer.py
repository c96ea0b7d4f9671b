r"""The Mercer check: is a kernel's Gram matrix on a sample symmetric positive semi-definite?

Symmetry and the sign of the smallest eigenvalue are judged against the rounding error of
the evaluation that produced the matrix — the bound each kernel family declares once
(:meth:`Kernel.rounding_error <kernelmaps.kernels.Kernel.rounding_error>`, built from
bounds such as :func:`~kernelmaps.kernels.exp_error`), or :math:`\sqrt\epsilon\max|K|` for
a kernel that declares none — never against a fixed multiple of :math:`\epsilon`: the error of
:math:`\exp(-\gamma\|x-y\|^2)` grows with :math:`\gamma\|x\|^2`, so on unscaled features it
is many times :math:`\epsilon`. ``docs/kernels.md`` derives each bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array

from kernelmaps._engine import FLOAT_DTYPES
from kernelmaps.kernels._base import Kernel
from kernelmaps.kernels._resolve import resolve_kernel
from kernelmaps.kernels._rounding import default_error
from kernelmaps.kernels._user import PrecomputedKernel

__all__ = ["MercerReport", "check_mercer"]

@dataclass(frozen=True)
class MercerReport:
    r"""Result of :func:`check_mercer`, whether a kernel's Gram matrix is symmetric PSD.

    Attributes
    ----------
    passed : bool
        Symmetric and no eigenvalue below ``-tolerance``.
    is_symmetric : bool
        Every :math:`|K_{ij} - K_{ji}|` within its rounding bound :math:`E_{ij} + E_{ji}`
        (``asymmetry_ratio <= 1``).
    max_asymmetry : float
        max :math:`|K_{ij} - K_{ji}|`, relative to max :math:`|K|`.
    min_eigenvalue : float
        Smallest eigenvalue of the symmetrised Gram matrix.
    negative_mass : float
        Sum of |negative eigenvalues| divided by the trace (sum of |eigenvalues| if the trace
        is not positive).
    tolerance : float
        The eigenvalue tolerance: ``rounding_tolerance + eigensolver_tolerance``.
    n_samples : int
        Number of sample points the Gram matrix was built on.
    worst_pair : tuple of int or None
        Indices (into the sample) of the most offending pair: the pair whose asymmetry is the
        largest multiple of its bound, or the pair whose 2×2 Gram matrix has the most
        negative eigenvalue beyond its rounding bound (``(i, i)`` when that is
        :math:`k(x_i, x_i) < 0`). None if the check passed or no 2×2 witness exists.
    worst_eigenvector : ndarray or None
        The eigenvector of the smallest eigenvalue when it is below ``-tolerance``.
    witness : tuple of int or None
        When the matrix is not PSD: sample points whose own Gram matrix already has an
        eigenvalue below minus its rounding bound — the worst pair when a 2×2 witness
        exists, else the fewest of the points weighing most in ``worst_eigenvector``
        (tried in doubling numbers). None when the matrix is PSD to rounding.
    sample_indices : ndarray
        Rows of ``X`` used.
    error_bound : str
        Where the rounding bound :math:`E` came from: the kernel's declared
        :meth:`~kernelmaps.kernels.Kernel.rounding_error`, or the default
        :math:`\sqrt\epsilon\max|K|` for a kernel that declares none.
    max_error : float
        Largest :math:`E_{ij}` (in the kernel's units).
    asymmetry_ratio : float
        max :math:`|K_{ij} - K_{ji}| / (E_{ij} + E_{ji})`; the Gram matrix is symmetric to
        rounding when it is at most 1.
    rounding_tolerance : float
        Largest row sum of :math:`(E + E^\top)/2`: a bound on the spectral norm of the
        rounding error of the symmetrised matrix, so the most its eigenvalues can move
        (at most ``n_samples · max_error``).
    eigensolver_tolerance : float
        The eigensolver's own error, :math:`10\,n\,\epsilon_{64}\max|\lambda|`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import check_mercer
    >>> X = np.random.RandomState(0).normal(size=(40, 2))
    >>> report = check_mercer("sigmoid", X)  # tanh(γ⟨x, y⟩ + c₀) is not a Mercer kernel
    >>> report.passed, report.is_symmetric, bool(report.min_eigenvalue < -report.tolerance)
    (False, True, True)
    >>> print(report.summary().splitlines()[0])
    Mercer check on 40 points: FAILED
    """

    passed: bool
    is_symmetric: bool
    max_asymmetry: float
    min_eigenvalue: float
    negative_mass: float
    tolerance: float
    n_samples: int
    worst_pair: tuple[int, int] | None = None
    worst_eigenvector: np.ndarray | None = field(default=None, repr=False)
    sample_indices: np.ndarray | None = field(default=None, repr=False)
    witness: tuple[int, ...] | None = None
    error_bound: str = ""
    max_error: float = 0.0
    asymmetry_ratio: float = 0.0
    rounding_tolerance: float = 0.0
    eigensolver_tolerance: float = 0.0

    def summary(self) -> str:
        """Describe the check in a few human-readable lines, with the thresholds used.

        Returns
        -------
        str
            The verdict, the rounding bound, the symmetry and eigenvalue tests.
        """
        verdict = "PASSED: symmetric positive semi-definite" if self.passed else "FAILED"
        lines = [
            f"Mercer check on {self.n_samples} points: {verdict}",
            f"  rounding bound E: {self.error_bound}; largest E_ij {self.max_error:.3g}",
            f"  symmetric: {self.is_symmetric} (max |K_ij - K_ji| / (E_ij + E_ji) = "
            f"{self.asymmetry_ratio:.3g}; max relative asymmetry {self.max_asymmetry:.3g})",
            f"  smallest eigenvalue: {self.min_eigenvalue:.6g} (tolerance {self.tolerance:.3g} "
            f"= largest row sum of E {self.rounding_tolerance:.3g} + eigensolver "
            f"10·n·eps·max|λ| {self.eigensolver_tolerance:.3g})",
            f"  negative eigenvalue mass / trace: {self.negative_mass:.3g}",
        ]
        if self.worst_pair is not None:
            i, j = self.worst_pair
            lines.append(f"  worst offending pair of sample points: ({i}, {j})")
        elif self.witness is not None:
            shown = ", ".join(map(str, self.witness[:12]))
            more = f", … ({len(self.witness)} points)" if len(self.witness) > 12 else ""
            lines.append(f"  no 2×2 witness; the Gram matrix of sample points [{shown}{more}] "
                         "is already indefinite beyond rounding")
        return "\n".join(lines)


def _gram(kernel: Kernel, X: np.ndarray, indices: np.ndarray) -> np.ndarray:
    # Evaluate k(X, X) as a generic two-argument call: no symmetry or diagonal is assumed,
    # so K[i, j] = k(x_i, x_j) and K[j, i] = k(x_j, x_i) are two evaluations. A precomputed
    # kernel's matrix is given: its sampled rows and columns.
    if isinstance(kernel, PrecomputedKernel):
        return X[np.ix_(indices, indices)]
    X = kernel._check(X[indices], "X")
    return kernel.evaluate(X, X)


def _rounding_bound(kernel: Kernel, X: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, str]:
    """The kernel's declared bound on the error of each value of ``K``, or the default."""
    dtype = np.dtype(K.dtype).name
    bound = None if isinstance(kernel, PrecomputedKernel) else kernel.rounding_error(
        kernel._check(X, "X"), kernel._check(X, "X"), K)
    if bound is None:
        return default_error(K), (f"none declared by {type(kernel).__name__}, so "
                                  f"sqrt(eps)·max|K| ({dtype})")
    bound = np.asarray(bound, dtype=np.float64)
    if bound.shape != K.shape or np.isnan(bound).any() or (bound < 0).any():
        raise ValueError(
            f"{type(kernel).__name__}.rounding_error must return a non-negative array of the "
            f"kernel matrix's shape {K.shape}; got {bound.shape} (with NaN or negative "
            "values?). Return None to use check_mercer's default bound.")
    return bound, f"{type(kernel).__name__}.rounding_error ({dtype})"


def check_mercer(kernel: Kernel | str | Callable, X: Any, *, max_samples: int = 1000,
                 random_state: Any = None) -> MercerReport:
    r"""Check that a kernel is a valid (Mercer) kernel on a sample of points.

    A function k is a Mercer kernel iff every Gram matrix :math:`K_{ij} = k(x_i, x_j)` is
    symmetric positive semi-definite. On (a random subsample of at most ``max_samples`` rows
    of) ``X`` this evaluates every :math:`k(x_i, x_j)` and :math:`k(x_j, x_i)`, and judges
    both properties against the rounding error :math:`E` of that evaluation — the bound
    :math:`|\hat K_{ij} - k(x_i, x_j)| \le E_{ij}` the kernel declares
    (:meth:`Kernel.rounding_error <kernelmaps.kernels.Kernel.rounding_error>`), or
    :math:`E_{ij} = \sqrt\epsilon\max|\hat K|` for a kernel that declares none (a user's
    callable):

    * **symmetric** iff :math:`|\hat K_{ij} - \hat K_{ji}| \le E_{ij} + E_{ji}` for every
      pair (plus the smallest normal number, against underflow);
    * **positive semi-definite** iff the smallest eigenvalue of
      :math:`\tfrac12(\hat K + \hat K^\top)` is at least :math:`-\tau` with

      .. math::

          \tau = \max_i \sum_j \tfrac12(E_{ij} + E_{ji})
                 + 10\,n\,\epsilon_{64}\max|\lambda| .

      The first term bounds :math:`\|\Delta\|_2` for the rounding error :math:`\Delta` of
      the symmetrised matrix (:math:`|\Delta| \le \tfrac12(E + E^\top)` entrywise, and
      the largest row sum of a symmetric non-negative matrix bounds its spectral norm), so by
      Weyl's inequality it is the most rounding can push the eigenvalues of a PSD matrix
      below 0 (at most :math:`n\max E`); the second is the eigensolver's backward error.

    A passing check is evidence on this sample, not a proof; a failing one is a proof (with
    a witness pair when a 2×2 minor is indefinite beyond its own rounding error).

    Parameters
    ----------
    kernel : str, Kernel or callable
        A kernel name, a :class:`Kernel`, a vectorised callable ``k(X, Y) -> matrix``, or
        ``"precomputed"`` (``X`` is then the kernel matrix, checked with the default bound).
        A kernel with ``gamma="scale"`` is resolved on all of ``X`` (:meth:`Kernel.resolve`).
    X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        Points to test on (``kernel="precomputed"``: their kernel matrix).
    max_samples : int, default=1000
        Subsample size (the eigen-decomposition costs O(n³)).
    random_state : int, RandomState instance or None, default=None
        Controls the subsample.

    Returns
    -------
    MercerReport
        With the bound used (``error_bound``, ``max_error``) and both thresholds
        (``asymmetry_ratio``, ``tolerance``).

    References
    ----------
    N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM, 2002
    (§3.1: rounding of inner products, whatever the order of summation).
    G. W. Stewart and J.-G. Sun, *Matrix Perturbation Theory*, Academic Press, 1990
    (Weyl's inequality, §IV.4).
    E. Anderson et al., *LAPACK Users' Guide*, 3rd ed., SIAM, 1999, §4.7 (error bounds of
    the symmetric eigensolvers).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import check_mercer
    >>> X = np.random.RandomState(0).normal(size=(50, 3))
    >>> check_mercer("rbf", X).passed
    True
    >>> check_mercer(lambda A, B: (A[:, None, 0] != B[None, :, 0]).astype(float), X).passed
    False
    >>> wine_like = 1000.0 * X  # unscaled features: far more rounding than eps, still PSD
    >>> report = check_mercer("rbf", wine_like)
    >>> report.passed, report.asymmetry_ratio <= 1.0
    (True, True)
    """
    exact = resolve_kernel(kernel, vectorized=True, owner="check_mercer")
    X = check_array(X, dtype=list(FLOAT_DTYPES), input_name="X")
    exact = exact.resolve(X)  # gamma="scale": on all of X, before the sample is drawn
    if not isinstance(max_samples, (int, np.integer)) or max_samples < 2:
        raise ValueError(f"max_samples must be an int >= 2; got {max_samples!r}.")
    n = X.shape[0]
    if n < 2:
        raise ValueError("check_mercer needs at least 2 points in X.")
    if isinstance(exact, PrecomputedKernel) and X.shape[0] != X.shape[1]:
        raise ValueError("With kernel='precomputed', X must be the square kernel matrix of the "
                         f"points, shape (n_samples, n_samples); got shape {X.shape}.")
    indices = np.arange(n)
    if n > max_samples:
        indices = np.sort(check_random_state(random_state).choice(n, max_samples, replace=False))
    computed = _gram(exact, X, indices)
    X = X[indices]
    K = np.asarray(computed, dtype=np.float64)
    if not np.isfinite(K).all():
        raise ValueError("The kernel returned non-finite values on X; it cannot be a Mercer "
                         "kernel there (check its parameters or rescale X).")
    bound, source = _rounding_bound(exact, X, np.asarray(computed))
    # Values below the smallest normal number carry an absolute error up to its size.
    floor = float(np.finfo(np.asarray(computed).dtype).smallest_normal)
    scale = max(float(np.abs(K).max()), np.finfo(np.float64).tiny)
    asymmetry = np.abs(K - K.T)
    max_asymmetry = float(asymmetry.max()) / scale
    with np.errstate(invalid="ignore"):  # inf / inf: a value with no correct digit
        ratio = np.nan_to_num(asymmetry / (bound + bound.T + 2 * floor), nan=0.0)
    asymmetry_ratio = float(ratio.max())
    is_symmetric = asymmetry_ratio <= 1.0
    eigenvalues, eigenvectors = np.linalg.eigh(0.5 * (K + K.T))
    m = K.shape[0]
    pair_bound = 0.5 * (bound + bound.T) + floor
    rounding_tolerance = float(pair_bound.sum(axis=1).max())
    eigensolver_tolerance = 10 * m * np.finfo(np.float64).eps * max(
        float(np.abs(eigenvalues).max()), np.finfo(np.float64).tiny)
    tolerance = rounding_tolerance + eigensolver_tolerance
    min_eigenvalue = float(eigenvalues[0])
    negatives = float(np.abs(eigenvalues[eigenvalues < 0]).sum())
    trace = float(np.trace(K))
    denominator = trace if trace > 0 else float(np.abs(eigenvalues).sum())
    negative_mass = float(negatives / denominator) if denominator > 0 else 0.0
    psd = min_eigenvalue >= -tolerance
    worst_pair = witness = worst_vector = None
    if not is_symmetric:
        i, j = np.unravel_index(np.argmax(ratio), ratio.shape)
        worst_pair = (int(i), int(j))
    elif not psd:
        worst_vector = eigenvectors[:, 0].copy()
        worst_pair = _psd_witness(0.5 * (K + K.T), pair_bound)
        witness = worst_pair if worst_pair is not None else _witness_subset(
            0.5 * (K + K.T), pair_bound, worst_vector)
    return MercerReport(
        passed=bool(is_symmetric and psd),
        is_symmetric=bool(is_symmetric),
        max_asymmetry=max_asymmetry,
        min_eigenvalue=min_eigenvalue,
        negative_mass=negative_mass,
        tolerance=float(tolerance),
        n_samples=int(m),
        worst_pair=worst_pair,
        worst_eigenvector=worst_vector,
        sample_indices=indices,
        witness=None if witness is None else tuple(sorted(set(witness))),
        error_bound=source,
        max_error=float(bound.max()),
        asymmetry_ratio=asymmetry_ratio,
        rounding_tolerance=rounding_tolerance,
        eigensolver_tolerance=float(eigensolver_tolerance),
    )


def _psd_witness(K: np.ndarray, bound: np.ndarray) -> tuple[int, int] | None:
    """The smallest proof that ``K`` is not PSD beyond rounding: the pair ``(i, j)`` whose
    2×2 Gram matrix (``(i, i)``: the value k(x_i, x_i)) has the most negative eigenvalue
    below minus its rounding bound (the largest row sum of ``bound`` on those entries);
    None if every 2×2 minor is PSD to rounding."""
    diag, diag_bound = np.diag(K), np.diag(bound)
    # Smallest eigenvalue of [[a, b], [b, c]]: (a + c)/2 − √(((a − c)/2)² + b²).
    smallest = 0.5 * np.add.outer(diag, diag) - np.hypot(0.5 * np.subtract.outer(diag, diag), K)
    np.fill_diagonal(smallest, diag)
    rounding = bound + np.maximum(diag_bound[:, None], diag_bound[None, :])
    np.fill_diagonal(rounding, diag_bound)
    excess = smallest + rounding  # < 0: indefinite beyond rounding
    i, j = np.unravel_index(np.argmin(excess), excess.shape)
    if excess[i, j] < 0:
        return int(min(i, j)), int(max(i, j))
    return None


def _witness_subset(K: np.ndarray, bound: np.ndarray,
                    vector: np.ndarray) -> tuple[int, ...] | None:
    """The fewest points, among the 2, 4, 8, … weighing most in the worst eigenvector,
    whose Gram matrix has an eigenvalue below minus its rounding bound (its largest row sum
    of ``bound``). O(n³) in all (the sizes double)."""
    order = np.argsort(-np.abs(vector), kind="stable")
    size = 2
    while True:
        size = min(size, len(order))
        chosen = np.sort(order[:size])
        block = np.ix_(chosen, chosen)
        if np.linalg.eigvalsh(K[block])[0] < -bound[block].sum(axis=1).max():
            return tuple(int(i) for i in chosen)
        if size == len(order):
            return None
        size *= 2
