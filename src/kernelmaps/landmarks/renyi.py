"""Landmarks maximising the quadratic Rényi entropy (fixed-size LS-SVM; Suykens et al., 2002)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from kernelmaps._config import resolve_n_threads
from kernelmaps._engine import block_rows_for, reduce_blocks, single_threaded_blas
from kernelmaps.kernels import Kernel
from kernelmaps.landmarks._gram import _as_gram, _check_n_components, _check_positive_int, _Gram

#: Candidates scored together in one vectorised step of the Rényi exchange: a window of the
#: chunk (whose rows are the engine's block, see ``_renyi_subset``), not a block of its own.
#: Work scored after the first improving candidate is discarded, so the window trades
#: NumPy calls against wasted scoring; the swaps made do not depend on it (the scan is the
#: one-by-one scan, vectorised). Chosen with the method (9e9e2bb), not measured.
_RENYI_BLOCK = 256


# ------------------------------------------------------------------------ Rényi entropy
def quadratic_renyi_entropy(X: Any, kernel: Kernel | str) -> float:
    r"""Quadratic Rényi entropy of a sample, estimated with the kernel as Parzen window.

    .. math::

        H_2(x_1, \dots, x_n) = -\log \frac{1}{n^2} \sum_{i=1}^n \sum_{j=1}^n k(x_i, x_j)

    (Principe; Girolami, 2002). For a Gaussian kernel this is the entropy
    :math:`-\log\int \hat p(x)^2 dx` of the Parzen density estimate up to an additive
    constant; the kernel need not satisfy k(x, x) = 1. The double sum is accumulated in
    row blocks (on the engine's threads), so memory stays O(block · n).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The sample, or with ``kernel='precomputed'`` its square kernel matrix.
    kernel : str or Kernel
        A kernel name (default parameters), a :class:`~kernelmaps.kernels.Kernel`, or
        ``'precomputed'``.

    Returns
    -------
    entropy : float
        The estimate :math:`H_2` (natural logarithm).

    Raises
    ------
    ValueError
        If the mean kernel value is not positive (the logarithm is undefined): the estimator
        needs a kernel that is a density window, such as rbf, laplacian or chi2.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from kernelmaps.landmarks import quadratic_renyi_entropy
    >>> X = np.random.RandomState(0).uniform(size=(100, 2))
    >>> entropy = quadratic_renyi_entropy(X, "rbf")  # rbf with γ = 1/n_features
    >>> bool(np.isclose(entropy, -np.log(rbf_kernel(X, gamma=0.5).mean())))
    True
    """
    gram = _as_gram(X, kernel)
    return _entropy(_kernel_sum(gram), gram.n)


def _kernel_sum(gram: _Gram) -> float:
    """Σ_ij k(x_i, x_j) by the engine's blocked reduction (one row block of K at a time)."""
    columns = gram.columns()
    total = reduce_blocks(gram.X, lambda rows: np.asarray(gram.cross(rows, columns).sum()),
                          bytes_per_row=8 * gram.n, n_threads=resolve_n_threads())
    return float(total)


def _entropy(kernel_sum: float, n: int) -> float:
    mean = kernel_sum / float(n) ** 2
    if not mean > 0:
        raise ValueError(
            f"The quadratic Rényi entropy needs a positive mean kernel value; got {mean:.3g}. "
            "Use a kernel that is a density window (rbf, laplacian, chi2, ...)."
        )
    return -math.log(mean)


def renyi_entropy_subset(X: Any, kernel: Kernel | str, n_components: int, *,
                         random_state: int | np.random.RandomState | None = None,
                         n_passes: int = 3) -> np.ndarray:
    r"""Select rows of ``X`` whose quadratic Rényi entropy is (locally) maximal.

    Fixed-size kernel models (Suykens et al., 2002; De Brabanter et al., 2010) choose m
    prototype vectors S that maximise :math:`H_2(S) = -\log(T_S / m^2)` with
    :math:`T_S = \sum_{i,j\in S} k(x_i, x_j)`, i.e. that spread over the data's support
    like a space-filling design. Maximising :math:`H_2` is minimising :math:`T_S`. Starting
    from a uniform sample (scikit-learn's draw), each pass visits every row outside S once,
    in random order, and swaps it for the member whose exchange lowers :math:`T_S` most:

    .. math::

        \Delta(c, s) = T_{S - s + c} - T_S
                     = \big(k(x_s, x_s) - 2 r_s\big) - 2 k(x_c, x_s)
                       + \big(2 u_c + k(x_c, x_c)\big),

    with the row sums :math:`r_s = \sum_{j\in S} k(x_s, x_j)` of the members and
    :math:`u_c = \sum_{j\in S} k(x_c, x_j)`. The swap is made if :math:`\min_s \Delta < 0`.
    Compared with the reference implementation (SALSA.jl ``entropy_subset``):

    * after a swap *every* member's row sum is updated exactly,
      :math:`r_i \leftarrow r_i - k(x_i, x_s) + k(x_i, x_c)` (one O(m) vector update from
      the stored m × m kernel matrix of S), not only the swapped one's, so later
      decisions use the true :math:`T_S`;
    * the diagonal terms use :math:`k(x, x)` instead of assuming 1 (polynomial, linear or
      scaled kernels);
    * members are never candidates, and a candidate numerically identical to a member
      (duplicate rows) is never admitted;
    * the member to drop is the best one for the candidate, not a fixed one.

    The candidates' kernel values against S come in cache-sized chunks from one product
    each and are scored 256 at a time with array operations; after a swap only the
    candidates not yet visited are re-scored (the swapped column is re-evaluated and
    :math:`u_c` moves by the difference, O(d) per candidate). A pass is O(n·m·d) kernel
    work plus O(256·m + chunk·d) per swap; the passes stop early when one makes no swap.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data, or with ``kernel='precomputed'`` the square training kernel matrix.
    kernel : str or Kernel
        A kernel name (default parameters), a :class:`~kernelmaps.kernels.Kernel`, or
        ``'precomputed'``. The entropy reading needs a density window (rbf, laplacian,
        chi2, ...); with other kernels the search still minimises :math:`T_S`, the squared
        norm of the mean feature vector of S.
    n_components : int
        Size m of the subset, at most ``n_samples``.
    random_state : int, RandomState instance or None, default=None
        Source of the starting sample and the visiting order.
    n_passes : int, default=3
        Maximum number of passes over the rows outside S.

    Returns
    -------
    indices : ndarray of shape (n_components,)
        Distinct row indices.

    References
    ----------
    K. De Brabanter, J. De Brabanter, J. A. K. Suykens and B. De Moor, "Optimized
    fixed-size kernel models for large data sets", Computational Statistics & Data
    Analysis 54(6), 2010. J. A. K. Suykens et al., *Least Squares Support Vector
    Machines*, World Scientific, 2002, Ch. 6.

    Examples
    --------
    The exchange starts from the uniform draw of the same ``random_state`` and only makes
    swaps that raise the entropy:

    >>> import numpy as np
    >>> from kernelmaps.kernels import get_kernel
    >>> from kernelmaps.landmarks import (quadratic_renyi_entropy, renyi_entropy_subset,
    ...                                   uniform_subset)
    >>> X = np.random.RandomState(0).uniform(size=(200, 2))
    >>> kernel = get_kernel("rbf", gamma=10.0)
    >>> rows = renyi_entropy_subset(X, kernel, 20, random_state=0)
    >>> start = uniform_subset(X, 20, random_state=0)
    >>> bool(quadratic_renyi_entropy(X[rows], kernel) > quadratic_renyi_entropy(X[start], kernel))
    True
    """
    gram = _as_gram(X, kernel)
    m = _check_n_components(n_components, gram.n)
    n_passes = _check_positive_int("n_passes", n_passes)
    return _renyi_subset(gram, m, check_random_state(random_state), n_passes)


def _renyi_subset(gram: _Gram, m: int, random_state: np.random.RandomState,
                  n_passes: int) -> np.ndarray:
    n = gram.n
    start = random_state.permutation(n)[:m]
    if m == n:
        return start
    working_set = _RenyiWorkingSet(gram, start, duplicate_rtol=_duplicate_rtol(gram.X))
    # One chunk of candidates' kernel values against S fills about one engine block.
    chunk = block_rows_for(n - m, 2 * 8 * m)
    # The swaps are sequential and each kernel chunk is a modest product, so BLAS threads
    # cost more in synchronisation than they gain (measured on a loaded 2-core machine:
    # 13 ms vs 2 ms per 1024 × 1000 × 10 product, no gain at d = 784): one BLAS thread.
    with single_threaded_blas():
        for _ in range(n_passes):
            outside = np.ones(n, dtype=bool)
            outside[working_set.members] = False
            order = random_state.permutation(n)
            candidates = order[outside[order]]
            swaps = 0
            for chunk_start in range(0, candidates.size, chunk):
                swaps += working_set.scan(candidates[chunk_start:chunk_start + chunk])
            # The row sums are exact up to rounding after each swap; recomputing them from
            # the stored kernel matrix once per pass keeps rounding from accumulating.
            working_set.refresh()
            if swaps == 0:
                break
    return working_set.members.copy()


def _duplicate_rtol(X: Any) -> float:
    # Kernel values of identical points agree to rounding of the kernel's own arithmetic
    # (e.g. RBF's ‖x‖² + ‖y‖² − 2⟨x, y⟩ cancellation), about √ε of the input's dtype.
    dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    return float(np.sqrt(np.finfo(dtype).eps))


class _RenyiWorkingSet:
    """The working set S of the entropy maximisation, with its exact row sums.

    Keeps the m × m kernel matrix of S, the row sums r_i = Σ_{j∈S} k(x_i, x_j) and the
    diagonal k(x_i, x_i) of every member, so that a swap updates every row sum in O(m).
    """

    def __init__(self, gram: _Gram, members: np.ndarray, *, duplicate_rtol: float) -> None:
        self.gram = gram
        self.members = np.array(members, dtype=np.intp)
        self.all_diag = gram.diag()
        kernel_matrix = gram.cross(gram.rows(self.members), gram.columns(self.members))
        kernel_matrix = 0.5 * (kernel_matrix + kernel_matrix.T)
        np.fill_diagonal(kernel_matrix, self.all_diag[self.members])
        self.kernel_matrix = kernel_matrix
        self.diag = self.all_diag[self.members].copy()
        self.row_sums = kernel_matrix.sum(axis=1)
        self.duplicate_rtol = duplicate_rtol
        # A swap must lower T_S by more than the rounding of the m-term sums in Δ, so
        # that the search never swaps on noise.
        scale = max(float(np.abs(kernel_matrix).max()), np.finfo(np.float64).tiny)
        self.min_improvement = 16 * members.size * np.finfo(np.float64).eps * scale

    @property
    def total(self) -> float:
        """T_S = Σ_{i,j∈S} k(x_i, x_j)."""
        return float(self.row_sums.sum())

    def refresh(self) -> None:
        """Recompute the row sums from the stored kernel matrix of S."""
        self.row_sums = self.kernel_matrix.sum(axis=1)

    def swap(self, slot: int, candidate: int, k_candidate: np.ndarray) -> None:
        """Replace the member in ``slot`` by row ``candidate``.

        ``k_candidate`` is k(x_candidate, S) for the members *before* the swap.
        """
        new_row = k_candidate.copy()
        new_row[slot] = self.all_diag[candidate]
        # r_i ← r_i − k(x_i, x_s) + k(x_i, x_c) for every member; the slot itself gets the
        # candidate's own row sum.
        self.row_sums += new_row - self.kernel_matrix[slot]
        self.row_sums[slot] = new_row.sum()
        self.kernel_matrix[slot, :] = new_row
        self.kernel_matrix[:, slot] = new_row
        self.diag[slot] = new_row[slot]
        self.members[slot] = candidate

    def scan(self, candidates: np.ndarray) -> int:
        """Offer each candidate, in order, its best swap; return the number of swaps.

        Equivalent to visiting the candidates one by one against the current S, but
        vectorised: the kernel values of the whole chunk against S come from one product;
        candidates are scored :data:`_RENYI_BLOCK` at a time, the first improving one is
        swapped in, and scoring resumes right after it against the new S. A swap changes
        one column of the chunk's kernel values (re-evaluated for the candidates not yet
        visited) and moves their u_c by the difference.
        """
        gram = self.gram
        rows = gram.rows(candidates)
        K = gram.cross(rows, gram.columns(self.members))  # k(candidates, S)
        candidate_diag = self.all_diag[candidates]
        u = K.sum(axis=1)
        swaps = 0
        first = 0
        while first < candidates.size:
            stop = min(first + _RENYI_BLOCK, candidates.size)
            found = self._first_improving(K[first:stop], u[first:stop],
                                          candidate_diag[first:stop])
            if found is None:
                first = stop
                continue
            offset, slot = found
            j = first + offset
            self.swap(slot, int(candidates[j]), K[j])
            swaps += 1
            first = j + 1
            if first < candidates.size:
                new_column = gram.cross(rows[first:], gram.columns(candidates[j:j + 1]))[:, 0]
                u[first:] += new_column - K[first:, slot]
                K[first:, slot] = new_column
        return swaps

    def _first_improving(self, K: np.ndarray, u: np.ndarray,
                         candidate_diag: np.ndarray) -> tuple[int, int] | None:
        """(candidate offset, member slot) of the first admissible improving swap."""
        # Δ(c, s) = (k_ss − 2 r_s) − 2 k_cs + (2 u_c + k_cc); minimise over s per row.
        delta = K * -2.0
        delta += self.diag - 2.0 * self.row_sums
        slots = delta.argmin(axis=1)
        best = delta[np.arange(slots.size), slots] + 2.0 * u + candidate_diag
        for offset in np.flatnonzero(best < -self.min_improvement):
            if not self._duplicates_a_member(K[offset], candidate_diag[offset]):
                return int(offset), int(slots[offset])
        return None

    def _duplicates_a_member(self, k_candidate: np.ndarray, k_cc: float) -> bool:
        # Squared feature-space distance ‖φ(c) − φ(s)‖² = k_cc + k_ss − 2 k_cs.
        distance = k_cc + self.diag - 2.0 * k_candidate
        bound = self.duplicate_rtol * (abs(k_cc) + np.abs(self.diag))
        return bool(np.any(distance <= bound))
