r"""The Mercer check: is a kernel's Gram matrix on a sample symmetric positive semi-definite?"""

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

__all__ = ["MercerReport", "check_mercer"]

@dataclass(frozen=True)
class MercerReport:
    """Result of :func:`check_mercer`: is the kernel's Gram matrix on a sample symmetric PSD?

    Attributes
    ----------
    passed : bool
        Symmetric and no eigenvalue below ``-tolerance``.
    is_symmetric : bool
        ``max_asymmetry`` within the rounding tolerance.
    max_asymmetry : float
        max |K_ij − K_ji|, relative to max |K|.
    min_eigenvalue : float
        Smallest eigenvalue of the symmetrised Gram matrix.
    negative_mass : float
        Sum of |negative eigenvalues| divided by the trace (sum of |eigenvalues| if the trace
        is not positive).
    tolerance : float
        The eigenvalue tolerance used: ``n · eps(dtype) · max |eigenvalue| · 10``.
    n_samples : int
        Number of sample points the Gram matrix was built on.
    worst_pair : tuple of int or None
        Indices (into the sample) of the most offending pair: the most asymmetric pair, or
        the pair whose 2×2 Gram matrix is furthest from PSD (k_ij² − k_ii·k_jj largest).
        None if the check passed or no 2×2 witness exists.
    worst_eigenvector : ndarray or None
        The eigenvector of the smallest eigenvalue when it is below ``-tolerance``.
    sample_indices : ndarray
        Rows of ``X`` used.

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

    def summary(self) -> str:
        """A few human-readable lines."""
        verdict = "PASSED: symmetric positive semi-definite" if self.passed else "FAILED"
        lines = [
            f"Mercer check on {self.n_samples} points: {verdict}",
            f"  symmetric: {self.is_symmetric} (max relative asymmetry {self.max_asymmetry:.3g})",
            f"  smallest eigenvalue: {self.min_eigenvalue:.6g} (tolerance {self.tolerance:.3g})",
            f"  negative eigenvalue mass / trace: {self.negative_mass:.3g}",
        ]
        if self.worst_pair is not None:
            i, j = self.worst_pair
            lines.append(f"  worst offending pair of sample points: ({i}, {j})")
        return "\n".join(lines)


def _gram(kernel: Kernel, X: np.ndarray) -> np.ndarray:
    # Evaluate k(X, X) as a generic two-argument call: no symmetry or diagonal is assumed.
    X = kernel._check(X, "X")
    return kernel.evaluate(X, X)


def check_mercer(kernel: Kernel | str | Callable, X: Any, *, max_samples: int = 1000,
                 random_state: Any = None) -> MercerReport:
    r"""Check that a kernel is a valid (Mercer) kernel on a sample of points.

    A function k is a Mercer kernel iff every Gram matrix :math:`K_{ij} = k(x_i, x_j)` is
    symmetric positive semi-definite. On (a random subsample of at most ``max_samples`` rows
    of) ``X`` this builds K, measures its asymmetry, and eigen-decomposes its symmetric part.
    The eigenvalue tolerance scales with n and the dtype,
    :math:`\tau = 10\,n\,\epsilon\,\max|\lambda|`, because rounding alone produces
    negative eigenvalues of that size in a PSD matrix. A passing check is evidence on this
    sample, not a proof; a failing one is a proof (with a witness pair when a 2×2 minor is
    already indefinite).

    Parameters
    ----------
    kernel : str, Kernel or callable
        A kernel name, a :class:`Kernel`, or a vectorised callable ``k(X, Y) -> matrix``.
    X : array-like of shape (n_samples, n_features)
        Points to test on.
    max_samples : int, default=1000
        Subsample size (the eigen-decomposition costs O(n³)).
    random_state : int, RandomState instance or None, default=None
        Controls the subsample.

    Returns
    -------
    MercerReport

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import check_mercer
    >>> X = np.random.RandomState(0).normal(size=(50, 3))
    >>> check_mercer("rbf", X).passed
    True
    >>> check_mercer(lambda A, B: (A[:, None, 0] != B[None, :, 0]).astype(float), X).passed
    False
    """
    exact = resolve_kernel(kernel, vectorized=True, owner="check_mercer")
    X = check_array(X, dtype=list(FLOAT_DTYPES), input_name="X")
    if not isinstance(max_samples, (int, np.integer)) or max_samples < 2:
        raise ValueError(f"max_samples must be an int >= 2; got {max_samples!r}.")
    n = X.shape[0]
    if n < 2:
        raise ValueError("check_mercer needs at least 2 points in X.")
    indices = np.arange(n)
    if n > max_samples:
        indices = np.sort(check_random_state(random_state).choice(n, max_samples, replace=False))
    X = X[indices]
    K = np.asarray(_gram(exact, X), dtype=np.float64)
    if not np.isfinite(K).all():
        raise ValueError("The kernel returned non-finite values on X; it cannot be a Mercer "
                         "kernel there (check its parameters or rescale X).")
    scale = max(float(np.abs(K).max()), np.finfo(np.float64).tiny)
    eps = np.finfo(X.dtype).eps
    asymmetry = np.abs(K - K.T)
    max_asymmetry = float(asymmetry.max()) / scale
    is_symmetric = max_asymmetry <= 10 * eps
    eigenvalues, eigenvectors = np.linalg.eigh(0.5 * (K + K.T))
    m = K.shape[0]
    tolerance = 10 * m * eps * max(float(np.abs(eigenvalues).max()), np.finfo(np.float64).tiny)
    min_eigenvalue = float(eigenvalues[0])
    negatives = float(np.abs(eigenvalues[eigenvalues < 0]).sum())
    trace = float(np.trace(K))
    denominator = trace if trace > 0 else float(np.abs(eigenvalues).sum())
    negative_mass = float(negatives / denominator) if denominator > 0 else 0.0
    psd = min_eigenvalue >= -tolerance
    worst_pair = None
    worst_vector = None
    if not is_symmetric:
        i, j = np.unravel_index(np.argmax(asymmetry), asymmetry.shape)
        worst_pair = (int(i), int(j))
    elif not psd:
        worst_vector = eigenvectors[:, 0].copy()
        diag = np.diag(K)
        violation = K * K - np.outer(diag, diag)  # > 0: the 2×2 minor is indefinite
        np.fill_diagonal(violation, -np.inf)
        i, j = np.unravel_index(np.argmax(violation), violation.shape)
        negative_diag = np.flatnonzero(diag < -tolerance)
        if violation[i, j] > tolerance * scale:
            worst_pair = (int(min(i, j)), int(max(i, j)))
        elif negative_diag.size:  # k(x, x) < 0 is the smallest witness of all
            worst_pair = (int(negative_diag[0]), int(negative_diag[0]))
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
    )
