r"""Landmark selection for the Nyström method.

The Nyström map :math:`z(x) = K_{mm}^{-1/2} k_m(x)` is exact on the span of its landmarks
:math:`c_1, \dots, c_m` and only as good as that span elsewhere. This module picks them.

==============  =====================================  =====================================
strategy        landmarks                               cost (n rows, m landmarks, d features)
==============  =====================================  =====================================
``uniform``     m rows drawn uniformly without          O(n) — scikit-learn's draw
                replacement
``kmeans``      k-means centres (k-means++ seeding,     O(n·m·d·(log m + iterations)); the
                Lloyd iterations); *not* rows of X      centres are not data points
``leverage``    rows sampled by ridge leverage score,   O(n·m·(d + m)) kernel values and
                estimated recursively                   triangular solves, ≈ 2 passes over X
``renyi``       rows maximising the quadratic Rényi     O(n·m·d) kernel values per pass
                entropy of the subset                   (``n_passes`` passes, default 3)
==============  =====================================  =====================================

Every function works from kernel values between rows of the training set only, so
``leverage`` and ``renyi`` also accept ``kernel="precomputed"`` (``X`` is then the square
training kernel matrix); ``kmeans`` needs coordinates.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from numbers import Integral
from typing import Any

import numpy as np
import scipy.linalg
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array

from kernelmaps._config import resolve_n_threads
from kernelmaps._engine import FLOAT_DTYPES, block_rows_for, reduce_blocks, single_threaded_blas
from kernelmaps.kernels import Kernel, PrecomputedKernel, resolve_kernel

__all__ = [
    "LANDMARK_STRATEGIES",
    "kmeans_landmarks",
    "quadratic_renyi_entropy",
    "renyi_entropy_subset",
    "ridge_leverage_subset",
    "select_landmarks",
    "strategy_options",
    "uniform_subset",
]

#: The names accepted by ``Nystroem(landmarks=...)``.
LANDMARK_STRATEGIES = ("uniform", "kmeans", "leverage", "renyi")

#: Candidates scored together in one vectorised step of the Rényi exchange.
_RENYI_BLOCK = 256
#: Smallest ridge of the leverage recursion, relative to the mean (weighted) kernel diagonal.
#: Musco & Musco use 1e-5 when a level has too few samples to set λ; a low-rank kernel can
#: also drive their λ formula to 0, where the scores would divide by rounding noise.
_MIN_RIDGE = 1e-5


# ------------------------------------------------------------------------ kernel access
class _Gram:
    """Kernel values between rows of the training set, addressed by row index.

    The selection algorithms need only k(x_i, x_j) for index sets and the diagonal, so they
    are written once against this interface; the :class:`~kernelmaps.kernels.Kernel` does the
    rest, a :class:`~kernelmaps.kernels.PrecomputedKernel` included (its columns are
    addressed by index). Blocks are returned in float64: the selections accumulate sums over
    thousands of kernel values, where float32 rounding would decide swaps.
    """

    def __init__(self, X: Any, kernel: Kernel) -> None:
        self.X = X
        self.kernel = kernel
        self.precomputed = isinstance(kernel, PrecomputedKernel)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    def rows(self, idx: Any) -> Any:
        """The data of the rows ``idx`` (points, or rows of the kernel matrix)."""
        return self.X[idx]

    def columns(self, idx: Any = None) -> Any:
        """A handle on the columns ``idx`` (``None``: all) to pass to :meth:`cross`."""
        if self.precomputed:
            return np.arange(self.n) if idx is None else np.asarray(idx)
        return self.X if idx is None else self.X[idx]

    def cross(self, rows: Any, columns: Any) -> np.ndarray:
        """The block k(rows, columns) as a float64 array."""
        with np.errstate(over="ignore", invalid="ignore"):
            block = np.asarray(self.kernel.evaluate(rows, columns), dtype=np.float64)
            finite = np.isfinite(block.sum()) or np.isfinite(block).all()
        if not finite:
            raise ValueError(
                f"The kernel {self.kernel} has non-finite values on X while selecting "
                "landmarks: check the kernel's parameters (e.g. a non-integer polynomial "
                "degree on negative inner products) or rescale X."
            )
        return block

    def diag(self) -> np.ndarray:
        """k(x_i, x_i) for every row, float64."""
        return np.asarray(self.kernel.diag(self.X), dtype=np.float64)


def _as_gram(X: Any, kernel: Kernel | str) -> _Gram:
    """Validate ``X`` and ``kernel`` of a public selection function."""
    if not isinstance(kernel, (str, Kernel)):
        raise TypeError(
            "kernel must be a kernel name such as 'rbf', a kernelmaps.kernels.Kernel such as "
            f"get_kernel('rbf', gamma=0.5), or 'precomputed'; got {kernel!r}."
        )
    kernel = resolve_kernel(kernel, owner="landmark selection")
    X = check_array(X, accept_sparse="csr", dtype=list(FLOAT_DTYPES), input_name="X")
    if isinstance(kernel, PrecomputedKernel) and X.shape[0] != X.shape[1]:
        raise ValueError(
            "With kernel='precomputed', X must be the square kernel matrix of the "
            f"training data, shape (n_samples, n_samples); got shape {X.shape}."
        )
    return _Gram(X, kernel)


def _check_n_components(n_components: Any, n_samples: int) -> int:
    if (not isinstance(n_components, Integral) or isinstance(n_components, bool)
            or n_components < 1):
        raise ValueError(f"n_components must be a positive int; got {n_components!r}.")
    if n_components > n_samples:
        raise ValueError(
            f"n_components={n_components} exceeds the number of rows of X ({n_samples}): a "
            "subset cannot be larger than the set. Lower n_components (Nystroem clamps it "
            "to n_samples with a warning)."
        )
    return int(n_components)


def _check_positive_int(name: str, value: Any) -> int:
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}.")
    return int(value)


# ------------------------------------------------------------------------ uniform
def uniform_subset(X: Any, n_components: int, *,
                   random_state: int | np.random.RandomState | None = None) -> np.ndarray:
    """Indices of ``n_components`` rows of ``X`` drawn uniformly without replacement.

    Exactly scikit-learn's draw: the first ``n_components`` entries of one permutation of
    ``range(n_samples)`` from ``random_state``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data (only its number of rows is used).
    n_components : int
        Number of landmarks m, at most ``n_samples``.
    random_state : int, RandomState instance or None, default=None
        Source of the permutation.

    Returns
    -------
    indices : ndarray of shape (n_components,)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.landmarks import uniform_subset
    >>> rows = uniform_subset(np.zeros((10, 2)), 4, random_state=0)
    >>> rows.tolist() == np.random.RandomState(0).permutation(10)[:4].tolist()  # sklearn's draw
    True
    """
    n_samples = _num_rows(X)
    m = _check_n_components(n_components, n_samples)
    return check_random_state(random_state).permutation(n_samples)[:m]


def _num_rows(X: Any) -> int:
    shape = getattr(X, "shape", None)
    if shape is None:
        X = check_array(X, accept_sparse="csr", dtype=None, input_name="X")
        shape = X.shape
    return int(shape[0])


# ------------------------------------------------------------------------ k-means
def kmeans_landmarks(X: Any, n_components: int, *,
                     random_state: int | np.random.RandomState | None = None,
                     minibatch: bool = False, max_iter: int = 100) -> np.ndarray:
    r"""k-means centres of ``X`` as Nyström landmarks (Zhang, Tsang & Kwok, 2008).

    The Nyström error of a shift-invariant kernel is bounded by the k-means quantisation
    error :math:`\sum_i \min_j \|x_i - c_j\|^2` of the landmarks, so the centres of a
    k-means clustering (scikit-learn's :class:`~sklearn.cluster.KMeans`, k-means++
    seeding, one initialisation) are good landmarks. The centres are *not* rows of ``X``.

    Cost: k-means++ seeding evaluates O(log m) candidate centres per step, i.e.
    O(n·m·d·log m); each Lloyd iteration is O(n·m·d) (at most ``max_iter``; the iterations
    stop at scikit-learn's convergence tolerance). With ``minibatch=True``,
    :class:`~sklearn.cluster.MiniBatchKMeans` replaces the full Lloyd iterations by
    mini-batch steps (batch of 1024 rows), much cheaper for large n.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data.
    n_components : int
        Number of centres m, at most ``n_samples``.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means++ initialisation (and the mini-batches).
    minibatch : bool, default=False
        Use :class:`~sklearn.cluster.MiniBatchKMeans` instead of :class:`~sklearn.cluster.KMeans`.
    max_iter : int, default=100
        Maximum number of Lloyd iterations (mini-batch: passes over the data).

    Returns
    -------
    centres : ndarray of shape (n_components, n_features)
        In the dtype of ``X`` (float32 kept).

    References
    ----------
    K. Zhang, I. W. Tsang and J. T. Kwok, "Improved Nyström low-rank approximation and
    error analysis", ICML 2008.

    Examples
    --------
    Three tight clusters get one centre each (centres, not rows of ``X``):

    >>> import numpy as np
    >>> from kernelmaps.landmarks import kmeans_landmarks
    >>> rng = np.random.RandomState(0)
    >>> X = np.concatenate([c + 0.1 * rng.normal(size=(30, 2)) for c in ([0, 0], [5, 5], [0, 5])])
    >>> sorted(np.round(kmeans_landmarks(X, 3, random_state=0)).astype(int).tolist())
    [[0, 0], [0, 5], [5, 5]]
    """
    X = check_array(X, accept_sparse="csr", dtype=list(FLOAT_DTYPES), input_name="X")
    m = _check_n_components(n_components, X.shape[0])
    max_iter = _check_positive_int("max_iter", max_iter)
    cls = MiniBatchKMeans if minibatch else KMeans
    clustering = cls(n_clusters=m, init="k-means++", n_init=1, max_iter=max_iter,
                     random_state=check_random_state(random_state))
    return np.asarray(clustering.fit(X).cluster_centers_, dtype=X.dtype)


# ------------------------------------------------------------------------ leverage
def ridge_leverage_subset(X: Any, kernel: Kernel | str, n_components: int, *,
                          random_state: int | np.random.RandomState | None = None,
                          accelerated: bool = False) -> np.ndarray:
    r"""Rows of ``X`` sampled by ridge leverage score (recursive RLS-Nyström).

    The λ-ridge leverage score of row i is

    .. math::

        \tau_i(\lambda) = \big(K (K + \lambda I)^{-1}\big)_{ii}
                        = \tfrac{1}{\lambda}\big(K - K S (S^\top K S + \lambda I)^{-1}
                          S^\top K\big)_{ii},

    the second form exact for :math:`S = I` and an accurate estimate when :math:`S` is a
    (weighted) sample that is itself drawn by leverage score. Sampling m rows with
    probabilities proportional to :math:`\tau_i` gives a Nyström approximation with
    :math:`K - \tilde K \preceq \lambda I` for :math:`m = O(d_\text{eff}(\lambda)\log
    d_\text{eff})`, the best known guarantee. Algorithm 3 of Musco & Musco computes the
    scores without ever forming K: it halves the data recursively (uniformly), and on the
    way back up estimates the scores of a set from a weighted leverage sample of its half,
    with λ chosen so that about :math:`m / (4 \log m)` directions are above it. Each level
    costs O(n_level · m · (d + m)); the levels shrink geometrically, so the total is about
    twice the top level. The final m rows are drawn without replacement with probability
    proportional to :math:`\min(1, \tau_i)`.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data, or with ``kernel='precomputed'`` the square training kernel matrix.
    kernel : str or Kernel
        A kernel name (default parameters), a :class:`~kernelmaps.kernels.Kernel`, or
        ``'precomputed'``. Must be positive semi-definite.
    n_components : int
        Number of landmarks m, at most ``n_samples``.
    random_state : int, RandomState instance or None, default=None
        Source of the recursive uniform halving and of the leverage sampling.
    accelerated : bool, default=False
        Use fewer samples on the recursive levels (Section 5.2.1 of the paper): total cost
        O(n·m) kernel values instead of O(n·m) per level, slightly worse landmarks.

    Returns
    -------
    indices : ndarray of shape (n_components,)
        Distinct row indices.

    Raises
    ------
    ValueError
        If the kernel is not positive semi-definite on the sample (the ridge system is
        then not positive definite).

    References
    ----------
    C. Musco and C. Musco, "Recursive sampling for the Nyström method", NeurIPS 2017
    (arXiv:1605.07583), Algorithm 3.

    Examples
    --------
    A small cluster far from the rest has high leverage: it gets landmarks, where a uniform
    draw of the same size misses it:

    >>> import numpy as np
    >>> from kernelmaps.kernels import get_kernel
    >>> from kernelmaps.landmarks import ridge_leverage_subset, uniform_subset
    >>> rng = np.random.RandomState(0)
    >>> X = np.concatenate([0.3 * rng.normal(size=(190, 2)), 6 + 0.3 * rng.normal(size=(10, 2))])
    >>> rows = ridge_leverage_subset(X, get_kernel("rbf", gamma=1.0), 10, random_state=0)
    >>> len(set(rows.tolist()))
    10
    >>> bool((rows >= 190).any()), bool((uniform_subset(X, 10, random_state=0) >= 190).any())
    (True, False)
    """
    gram = _as_gram(X, kernel)
    m = _check_n_components(n_components, gram.n)
    return _recursive_rls(gram, m, check_random_state(random_state), bool(accelerated))


def _recursive_rls(gram: _Gram, s: int, random_state: np.random.RandomState,
                   accelerated: bool) -> np.ndarray:
    n = gram.n
    if s >= n:
        return random_state.permutation(n)
    # The accelerated variant keeps every level's sample smaller than s so that the whole
    # recursion costs O(n·s) kernel values (paper, Section 5.2.1).
    level_size = math.ceil(math.sqrt((n * s + s**3) / (4 * n))) if accelerated else s
    oversample = max(math.log(level_size), 1.0)  # log 1 = 0 would zero every probability
    rank = math.ceil(level_size / (4 * oversample))
    n_levels = math.ceil(math.log2(n / level_size))
    perm = random_state.permutation(n)
    sizes = [n]
    for _ in range(n_levels):
        sizes.append(-(-sizes[-1] // 2))
    diag = gram.diag()[perm]
    # Positions in `perm` of the current weighted sample; the deepest level is uniform.
    sample = np.arange(sizes[-1])
    weights = np.ones(sample.size)
    for level in range(n_levels - 1, -1, -1):
        size = sizes[level]
        selected = perm[sample]
        K_ss = gram.cross(gram.rows(selected), gram.columns(selected))
        K_ss = 0.5 * (K_ss + K_ss.T)
        ridge = _rls_ridge(K_ss, weights, rank)
        scores = _ridge_leverage_scores(gram, perm[:size], gram.columns(selected), K_ss,
                                        weights, ridge, diag[:size])
        if level > 0:
            # Intermediate level: keep each point independently with probability
            # min(1, oversample·τ_i); about level_size points in expectation.
            probabilities = np.minimum(1.0, oversample * scores)
            sample = np.flatnonzero(random_state.random_sample(size) < probabilities)
            if sample.size == 0:  # vanishingly rare; fall back to a uniform sample
                probabilities = np.full(size, min(1.0, level_size / size))
                sample = random_state.choice(size, min(level_size, size), replace=False)
            weights = 1.0 / np.sqrt(probabilities[sample])
        else:
            sample = _weighted_subset(np.minimum(1.0, scores), s, random_state)
    return perm[sample]


def _rls_ridge(K_ss: np.ndarray, weights: np.ndarray, rank: int) -> float:
    r"""λ = (tr(SᵀKS) − Σ_{i≤k} λ_i(SᵀKS)) / k: the tail mass per retained direction.

    With this λ the effective dimension is O(k), so the next level samples O(k log k)
    points (Musco & Musco, Theorem 3 and Algorithm 3).
    """
    weighted = K_ss * np.outer(weights, weights)
    size = weighted.shape[0]
    floor = _MIN_RIDGE * max(float(np.trace(weighted)) / size, np.finfo(np.float64).tiny)
    if rank >= size:
        return floor
    try:
        top = scipy.linalg.eigvalsh(weighted, subset_by_index=[size - rank, size - 1],
                                    check_finite=False)
    except np.linalg.LinAlgError:
        # LAPACK's subset driver (syevr) fails on tightly clustered eigenvalues, e.g. the
        # numerically-identity kernel matrix of a very large gamma; the full one does not.
        top = scipy.linalg.eigvalsh(weighted, driver="evd", check_finite=False)[size - rank:]
    ridge = (float(np.trace(weighted)) - float(np.abs(top).sum())) / rank
    return max(ridge, floor)


def _ridge_leverage_scores(gram: _Gram, rows: np.ndarray, columns: Any, K_ss: np.ndarray,
                           weights: np.ndarray, ridge: float,
                           diag: np.ndarray) -> np.ndarray:
    r"""τ̃_i = (k_ii − k_iSᵀ (K_SS + λ W⁻²)⁻¹ k_iS) / λ for every row i, in row blocks.

    :math:`K S (S^\top K S + \lambda I)^{-1} S^\top K` with the weighted sampling matrix
    :math:`S` equals :math:`K_{:S}(K_{SS} + \lambda W^{-2})^{-1}K_{S:}`, so the weights
    enter only the diagonal of one small Cholesky factorisation.
    """
    system = K_ss + np.diag(ridge / weights**2)
    try:
        factor = scipy.linalg.cho_factor(system, check_finite=False)
    except np.linalg.LinAlgError as error:
        raise ValueError(
            "Ridge leverage scores need a positive semi-definite kernel, but the kernel "
            "matrix of the sample is indefinite. Use a PSD kernel, or "
            "landmarks='uniform' or 'renyi'."
        ) from error
    scores = np.empty(rows.size)
    step = block_rows_for(rows.size, 3 * 8 * K_ss.shape[0])
    for start in range(0, rows.size, step):
        stop = min(start + step, rows.size)
        block = gram.cross(gram.rows(rows[start:stop]), columns)
        solved = scipy.linalg.cho_solve(factor, block.T, check_finite=False)
        scores[start:stop] = diag[start:stop] - np.einsum("ij,ji->i", block, solved)
    # A residual can come out slightly negative by rounding; in theory it is >= 0.
    np.maximum(scores, 0.0, out=scores)
    scores /= ridge
    return scores


def _weighted_subset(weights: np.ndarray, size: int,
                     random_state: np.random.RandomState) -> np.ndarray:
    """``size`` distinct indices drawn with probability proportional to ``weights``."""
    positive = np.flatnonzero(weights > 0)
    if positive.size <= size:
        # Every other point has a zero residual, i.e. it is (numerically) in the span of
        # the sample already; take all the informative ones and fill up uniformly.
        rest = np.setdiff1d(np.arange(weights.size), positive)
        fill = random_state.choice(rest, size - positive.size, replace=False)
        return np.concatenate([positive, fill])
    p = weights[positive] / weights[positive].sum()
    return positive[random_state.choice(positive.size, size, replace=False, p=p)]


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
    r"""Rows of ``X`` whose quadratic Rényi entropy is (locally) maximal.

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


# ------------------------------------------------------------------------ dispatch
_StrategyFunction = Callable[..., np.ndarray]
_STRATEGY_FUNCTIONS: dict[str, _StrategyFunction] = {
    "uniform": uniform_subset,
    "kmeans": kmeans_landmarks,
    "leverage": ridge_leverage_subset,
    "renyi": renyi_entropy_subset,
}
#: Strategies whose landmarks are rows of X (they return indices); kmeans returns points.
_ROW_STRATEGIES = frozenset({"uniform", "leverage", "renyi"})
_KERNEL_STRATEGIES = frozenset({"leverage", "renyi"})


def strategy_options(strategy: str) -> tuple[str, ...]:
    """The keyword options of a strategy (accepted in ``Nystroem(landmark_params=...)``).

    Examples
    --------
    >>> from kernelmaps.landmarks import strategy_options
    >>> strategy_options("kmeans")
    ('minibatch', 'max_iter')
    >>> strategy_options("uniform")
    ()
    """
    signature = inspect.signature(_STRATEGY_FUNCTIONS[strategy])
    return tuple(name for name, p in signature.parameters.items()
                 if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "random_state")


def select_landmarks(strategy: str, X: Any, kernel: Kernel | str, n_components: int, *,
                     random_state: int | np.random.RandomState | None = None,
                     options: dict[str, Any] | None = None
                     ) -> tuple[Any, np.ndarray | None]:
    """Landmarks of ``X`` by a named strategy: ``(points, row indices or None)``.

    Parameters
    ----------
    strategy : {'uniform', 'kmeans', 'leverage', 'renyi'}
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data, or with ``kernel='precomputed'`` its square kernel matrix (then the
        points are rows of that matrix).
    kernel : str or Kernel
        Used by ``leverage`` and ``renyi``.
    n_components : int
        Number of landmarks, at most ``n_samples``.
    random_state : int, RandomState instance or None, default=None
    options : dict, default=None
        Keyword options of the strategy's function (see :func:`strategy_options`).

    Returns
    -------
    points : ndarray or sparse matrix of shape (n_components, n_features)
    indices : ndarray of shape (n_components,) or None
        Row indices of the points in ``X``; ``None`` for k-means centres.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.landmarks import select_landmarks
    >>> X = np.random.RandomState(0).uniform(size=(50, 3))
    >>> points, rows = select_landmarks("renyi", X, "rbf", 5, random_state=0)
    >>> bool(np.array_equal(points, X[rows]))
    True
    >>> centres, rows = select_landmarks("kmeans", X, "rbf", 5, random_state=0)
    >>> centres.shape, rows
    ((5, 3), None)
    """
    if strategy not in _STRATEGY_FUNCTIONS:
        raise ValueError(f"Unknown landmark strategy {strategy!r}; valid names are "
                         f"{list(LANDMARK_STRATEGIES)}, or pass an array of points.")
    options = dict(options or {})
    unknown = sorted(set(options) - set(strategy_options(strategy)))
    if unknown:
        accepted = list(strategy_options(strategy)) or "none"
        raise TypeError(
            f"landmark_params {unknown} not accepted by the {strategy!r} strategy; it "
            f"accepts {accepted}."
        )
    if strategy == "kmeans" and (isinstance(kernel, PrecomputedKernel) or (
            isinstance(kernel, str) and kernel == "precomputed")):
        raise ValueError(
            "landmarks='kmeans' needs the data's coordinates, but kernel='precomputed' gives "
            "only kernel values. Use landmarks='uniform', 'leverage' or 'renyi', which work "
            "from kernel values alone."
        )
    function = _STRATEGY_FUNCTIONS[strategy]
    if strategy in _KERNEL_STRATEGIES:
        result = function(X, kernel, n_components, random_state=random_state, **options)
    else:
        result = function(X, n_components, random_state=random_state, **options)
    if strategy in _ROW_STRATEGIES:
        return X[result], result
    return result, None
